//go:build race

package mailbox

// With the race detector, sync.Pool drops a part of what is put in it on
// purpose: tests of what the pools save skip those checks.
func init() { raceEnabled = true }
