package main

import (
	"fmt"
	"os"

	"github.com/linkscan/linkscan/mailbox/pubinbox"
)

// gitArchive says why the directory p cannot be rewritten when it is a
// public-inbox archive, "" otherwise: its messages are git objects that
// history holds, which no rewrite changes in place.
func gitArchive(p string) string {
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		return ""
	}
	reason, ok := pubinbox.Detect(p)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s is %s: its messages are git objects, and git history cannot be changed in place; "+
		"to rewrite them, export them first (each blob that linkscan scan reports: git --git-dir=EPOCH cat-file blob BLOB > FILE, "+
		"or an mbox made by public-inbox's own tools) and rewrite the copy", p, reason)
}
