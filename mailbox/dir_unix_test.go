//go:build unix

package mailbox

import "syscall"

// mkfifo makes a FIFO at p.
func mkfifo(p string, mode uint32) error { return syscall.Mkfifo(p, mode) }
