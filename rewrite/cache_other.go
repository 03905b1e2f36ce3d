//go:build !unix

package rewrite

import "io/fs"

// fileIdentity: no device and inode off unix.
func fileIdentity(fs.FileInfo) (dev, ino uint64, ok bool) { return 0, 0, false }

// fileOwner: no owner off unix.
func fileOwner(fs.FileInfo) (uid int, ok bool) { return 0, false }
