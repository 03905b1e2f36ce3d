package output

import (
	"errors"
	"os"
	"time"
)

// FIFOWait is how long Create waits for a process to open a FIFO target
// for reading (as long as rewrite waits for a locked mailbox): past it,
// Create fails with ErrNoReader rather than wait for ever.
var FIFOWait = 30 * time.Second

// ErrNoReader is the error (wrapped) of OpenNoWait and Create when no
// process opened the FIFO for reading before the deadline.
var ErrNoReader = errors.New("no process reads the FIFO")

// OpenNoWait opens name as os.OpenFile does, but with O_NONBLOCK, so that
// the open of a FIFO never waits for ever for a reader: one that no
// process reads is tried again until deadline, then ErrNoReader. Writes
// to a FIFO (or a terminal) go through the runtime's poller where the
// system has one for it: they wait for the reader as blocking writes do,
// and SetWriteDeadline bounds them. A regular file ignores the flag.
func OpenNoWait(name string, flag int, perm os.FileMode, deadline time.Time) (*os.File, error) {
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		f, err := os.OpenFile(name, flag|nonBlock, perm)
		if err == nil || !noReader(err) {
			return f, err
		}
		if !time.Now().Before(deadline) {
			return nil, &os.PathError{Op: "open", Path: name, Err: ErrNoReader}
		}
		time.Sleep(min(pause, time.Until(deadline)+time.Millisecond))
	}
}
