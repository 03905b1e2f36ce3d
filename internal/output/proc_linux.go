package output

import "syscall"

// onProc reports whether the directory dir is on a proc file system,
// whose fd/ entries are the open descriptors of a process, not names
// of files.
func onProc(dir string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(dir, &st) == nil && st.Type == 0x9fa0 // PROC_SUPER_MAGIC
}
