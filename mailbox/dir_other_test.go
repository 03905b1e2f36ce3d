//go:build !unix

package mailbox

import "errors"

// mkfifo: no FIFOs here; the tests that need one are skipped.
func mkfifo(p string, mode uint32) error { return errors.ErrUnsupported }
