package report

import "github.com/linkscan/linkscan/internal/termesc"

// Escape makes s safe to print on a terminal (termesc.String): control
// characters, bytes that are not UTF-8 and bidirectional overrides are
// written as Go escapes.
func Escape(s string) string { return termesc.String(s) }
