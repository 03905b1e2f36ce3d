package main

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/report"
)

// escape makes text from archives or the command line safe to print on a
// terminal (report.Escape).
func escape(s string) string { return report.Escape(s) }

// console is standard error while a command runs: every line goes through
// escape, none is drawn over by the progress bar (the bar is cleared
// before a line and drawn again after, all under one lock), --quiet keeps
// the per-problem lines back, and a problem seen more than limit times
// (the same kind and text, the numbers and quoted values in the text
// aside: problemKey) is printed no more but counted, for a line at the
// end.
type console struct {
	mu    sync.Mutex
	w     io.Writer
	bar   *progressbar.ProgressBar // nil: no bar
	quiet bool
	limit int // per problem key; 0: no limit

	seen       map[string]*seenKey // problem key → times seen
	suppressed []string            // keys over the limit, in the order they went over
}

// seenKey counts the problems of one key.
type seenKey struct {
	n      int
	text   string // the first one's text
	varied bool   // a later one's text differed: the summary shows the template
}

// maxDistinctWarnings bounds the problem texts counted for the limit;
// texts past it are always printed.
const maxDistinctWarnings = 10000

func newConsole(w io.Writer) *console { return &console{w: w, seen: map[string]*seenKey{}} }

// printf prints one line (format has no newline) whatever --quiet says:
// errors about whole inputs and the final counts.
func (c *console) printf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.line(fmt.Sprintf(format, args...))
}

// problem prints one damage line unless --quiet or its text (key) went
// over the limit.
func (c *console) problem(key, line string) { c.counted(key, key, line) }

// damage prints the line of a problem found in a message unless --quiet
// or its key (problemKey) went over the limit.
func (c *console) damage(p mailbox.Problem, line string) {
	c.counted(problemKey(p), p.Msg, line)
}

// counted prints line unless --quiet or key went over the limit; text is
// what the summary shows of it.
func (c *console) counted(key, text, line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.limit > 0 {
		s, ok := c.seen[key]
		if !ok {
			s = &seenKey{text: text}
			if len(c.seen) < maxDistinctWarnings {
				c.seen[key] = s
			}
		} else if text != s.text {
			s.varied = true
		}
		n := s.n
		s.n++
		if n == c.limit {
			c.suppressed = append(c.suppressed, key)
		}
		if n >= c.limit {
			return
		}
	}
	if !c.quiet {
		c.line(line)
	}
}

// problemKey is what the warning limit counts a problem by: its kind
// (the mailbox Err value it wraps) and its text with the numbers and
// quoted values taken out ("Content-Length: N does not match ...",
// "unknown charset "…"; ..."), so that problems of one kind whose text
// differs only by such details from message to message are capped
// together. Numbers that are part of a word ("windows-1252", "UTF-8")
// stay.
func problemKey(p mailbox.Problem) string {
	t := template(p.Msg)
	if p.Err != nil {
		return p.Err.Error() + ": " + t
	}
	return t
}

// template replaces each Go-quoted string in s by "…" and each number
// that is not part of a word by N.
func template(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		ch := s[i]
		switch {
		case ch == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) { // not closed: keep the rest
				b.WriteString(s[i:])
				return b.String()
			}
			b.WriteString(`"…"`)
			i = j + 1
		case ch >= '0' && ch <= '9' && (i == 0 || !wordByte(s[i-1])):
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' && j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9') {
				j++
			}
			if j < len(s) && wordByte(s[j]) && s[j] != '-' {
				b.WriteString(s[i:j]) // "8bit", "3rd": part of a word
			} else {
				b.WriteByte('N')
			}
			i = j
		default:
			b.WriteByte(ch)
			i++
		}
	}
	return b.String()
}

// wordByte reports whether c is a letter, a digit, '-' or '_'.
func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c >= 0x80
}

// line writes s and a newline, with the bar out of the way; c.mu is held.
func (c *console) line(s string) {
	if c.bar != nil {
		c.bar.Clear()
	}
	io.WriteString(c.w, escape(s)+"\n")
	if c.bar != nil {
		c.bar.RenderBlank()
	}
}

// raw writes p to w, bytes of the command's results, with the bar out
// of the way; c.mu is held.
func (c *console) raw(w io.Writer, p []byte) error {
	if c.bar != nil {
		c.bar.Clear()
	}
	_, err := w.Write(p)
	if c.bar != nil {
		c.bar.RenderBlank()
	}
	return err
}

// summarize prints "and K more like this" for each problem key that
// went over the limit (not with --quiet: no such line was printed): with
// the problem's text when all were the same, else with its template.
func (c *console) summarize(prefix string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.quiet {
		return
	}
	for _, key := range c.suppressed {
		s := c.seen[key]
		text := s.text
		if s.varied {
			text = template(s.text)
		}
		c.line(fmt.Sprintf("%s: and %d more like this: %s", prefix, s.n-c.limit, text))
	}
}

// BytesRead advances the bar; it implements scan.Progress.
func (c *console) BytesRead(n int64) {
	c.mu.Lock()
	c.bar.Add64(n)
	c.mu.Unlock()
}

// describe sets the text beside the bar.
func (c *console) describe(s string) {
	c.mu.Lock()
	c.bar.Describe(s)
	c.mu.Unlock()
}

// finish takes the bar off the screen.
func (c *console) finish() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bar != nil {
		c.bar.Finish()
		c.bar.Clear()
		c.bar = nil
	}
}

// barWriter returns the writer a progress bar draws on w through: each
// drawing ("\r" and the bar's line) is cut to the width of the terminal
// w is, less one column, so that a narrow terminal (a split pane, 40
// columns) never wraps it: a wrapped line leaves a row behind at every
// redraw, since "\r" goes back to the start of the last row only. The bar's own fitting shrinks its bar, not its text
// (counts, sizes, rate, time). The end of a line goes first: the counts
// and the percentage at its start are kept. When w is no terminal, or
// its width is unknown, what is written goes through as it is.
func barWriter(w io.Writer) io.Writer {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return w
	}
	return &fitWriter{w: w, width: func() int {
		n, _, err := term.GetSize(int(f.Fd()))
		if err != nil {
			return 0
		}
		return n
	}}
}

// fitWriter cuts each carriage-return-separated line it is given to
// width()-1 characters (0: no cut).
type fitWriter struct {
	w     io.Writer
	width func() int
}

func (f *fitWriter) Write(p []byte) (int, error) {
	width := f.width()
	if width <= 1 {
		return f.w.Write(p)
	}
	if _, err := io.WriteString(f.w, fitLines(string(p), width-1)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// fitLines cuts each part of s between carriage returns and line feeds
// to at most max characters.
func fitLines(s string, max int) string {
	var b strings.Builder
	n := 0 // characters of the current line written
	for _, r := range s {
		if r == '\r' || r == '\n' {
			n = 0
			b.WriteRune(r)
			continue
		}
		if n < max {
			b.WriteRune(r)
		}
		n++
	}
	return b.String()
}
