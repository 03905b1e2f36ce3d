package main

import (
	"io/fs"
	"os"
	"path/filepath"
)

// maildirIn returns a Maildir directory (its cur/ or new/) that the
// input path is, holds or lies in, "" if none: --backup refuses those,
// since every Maildir reader (Dovecot, mutt, notmuch, linkscan) takes
// each file in cur/ and new/ as a message, and a backup FILE+SUFFIX
// beside a message would show as a second copy of it. (An MH folder or
// news spool is fine: only numeric names are messages there, and
// FILE+SUFFIX is not numeric.)
func maildirIn(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return "" // reported as unreadable when read
	}
	if !fi.IsDir() {
		if d := filepath.Dir(filepath.Clean(path)); maildirSub(d) {
			return d
		}
		return ""
	}
	if maildirSub(filepath.Clean(path)) {
		return filepath.Clean(path)
	}
	found := ""
	filepath.WalkDir(path, func(p string, de fs.DirEntry, err error) error {
		if err != nil || !de.IsDir() {
			return nil
		}
		if maildirSub(p) {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// maildirSub reports whether dir is the cur/ or new/ of a Maildir: so
// named, beside another of cur/, new/ and tmp/.
func maildirSub(dir string) bool {
	base := filepath.Base(dir)
	if base != "cur" && base != "new" {
		return false
	}
	parent := filepath.Dir(dir)
	for _, sib := range []string{"cur", "new", "tmp"} {
		if sib == base {
			continue
		}
		if fi, err := os.Stat(filepath.Join(parent, sib)); err == nil && fi.IsDir() {
			return true
		}
	}
	return false
}
