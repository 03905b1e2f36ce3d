//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// watchReader calls gone once when f is a pipe whose reader goes away
// (| head -1 has what it wanted), so that a run that writes nothing until
// its end (--unique, summaries) or slowly stops reading at once instead
// of only at its next write. poll(2) reports POLLERR (or POLLHUP) on the
// write end of a pipe without readers, whatever events are asked for.
// The returned function stops the watch and waits for it.
func watchReader(f *os.File, gone func()) (stop func()) {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return func() {}
	}
	var fd int32 = -1
	if sc, err := f.SyscallConn(); err == nil {
		sc.Control(func(d uintptr) { fd = int32(d) })
	}
	r, w, err := os.Pipe() // closing w wakes the watch up to end it
	if err != nil || fd < 0 {
		return func() {}
	}
	var wake int32 = -1
	if sc, err := r.SyscallConn(); err == nil {
		sc.Control(func(d uintptr) { wake = int32(d) })
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fds := []unix.PollFd{{Fd: fd}, {Fd: wake, Events: unix.POLLIN}}
		for {
			_, err := unix.Poll(fds, -1)
			if err == unix.EINTR {
				continue
			}
			if err != nil || fds[1].Revents != 0 {
				return
			}
			if fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
				gone()
				return
			}
		}
	}()
	return func() {
		w.Close()
		<-done
		r.Close()
	}
}
