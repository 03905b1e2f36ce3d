package main

import (
	"fmt"
	"strings"

	"github.com/linkscan/linkscan/rewrite"
)

// skipReasons are the classes of the links rewrite skipped, as the
// closing line counts them, each with the flag that changes it where
// there is one. The first whose test holds for a skip reason is its
// class; the last takes every other.
var skipReasons = []struct {
	text string
	is   func(reason string) bool
}{
	{"in DKIM-signed messages (--break-dkim)", func(r string) bool { return strings.Contains(r, "DKIM-Signature") }},
	{"in signed or encrypted messages", func(r string) bool { return strings.HasPrefix(r, "signed or encrypted message") }},
	{"cut at the length limit", func(r string) bool { return r == rewrite.SkipCut }},
	{"in wrappers that cannot be decoded offline", func(r string) bool { return strings.Contains(r, "cannot be decoded offline") }},
	{"without an archived copy to go to", func(r string) bool { return strings.Contains(r, "audit history") }},
	{"whose new form cannot be written there", func(r string) bool { return strings.Contains(r, "cannot be written as <URL:") }},
	{"in gateway links cut before their end marker", func(r string) bool { return strings.Contains(r, "cut before its end marker") }},
	{"joined from several lines, nothing proving their end", func(r string) bool { return strings.Contains(r, "nothing in the link proves where it ends") }},
	{"starting inside a longer word", func(r string) bool { return strings.Contains(r, "inside a longer word") }},
	{"in messages whose text would change outside them", func(r string) bool { return strings.HasPrefix(r, rewrite.SkipVerify) }},
	{"for other reasons (--report says each)", func(string) bool { return true }},
}

// skipCounts counts skipped links by class (skipReasons' order).
type skipCounts struct{ n []int }

func (s *skipCounts) add(reason string) {
	if s.n == nil {
		s.n = make([]int, len(skipReasons))
	}
	for i, c := range skipReasons {
		if c.is(reason) {
			s.n[i]++
			return
		}
	}
}

// line is the closing line's part on skipped links ("skipped 8 links: 8
// in DKIM-signed messages (--break-dkim)"), or "" when none was.
func (s *skipCounts) line() string {
	total := 0
	var parts []string
	for i, n := range s.n {
		if n > 0 {
			total += n
			parts = append(parts, fmt.Sprintf("%d %s", n, skipReasons[i].text))
		}
	}
	if total == 0 {
		return ""
	}
	return "skipped " + plural(total, "link", "links") + ": " + strings.Join(parts, ", ")
}
