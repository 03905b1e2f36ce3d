//go:build unix && !(darwin || freebsd || netbsd || dragonfly)

package references

import "syscall"

// statCtime is the status-change time of st (Ctim on Linux and the
// other systems that name it so).
func statCtime(st *syscall.Stat_t) (sec, nsec int64) {
	return int64(st.Ctim.Sec), int64(st.Ctim.Nsec)
}
