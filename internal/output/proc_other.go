//go:build !linux

package output

import "strings"

// onProc reports whether the directory dir is under /proc or is /dev/fd,
// whose entries are the open descriptors of a process, not names of
// files. (Where /dev/fd/N is a device, as on the BSDs, it is written in
// place as any device is.)
func onProc(dir string) bool {
	return dir == "/proc" || strings.HasPrefix(dir, "/proc/") || dir == "/dev/fd"
}
