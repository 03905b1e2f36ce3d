//go:build darwin || freebsd || netbsd || dragonfly

package references

import "syscall"

// statCtime is the status-change time of st (Ctimespec on the BSDs).
func statCtime(st *syscall.Stat_t) (sec, nsec int64) {
	return int64(st.Ctimespec.Sec), int64(st.Ctimespec.Nsec)
}
