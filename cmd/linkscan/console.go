package main

import (
	"fmt"
	"io"
	"sync"

	"github.com/schollz/progressbar/v3"

	"github.com/linkscan/linkscan/report"
)

// escape makes text from archives or the command line safe to print on a
// terminal (report.Escape).
func escape(s string) string { return report.Escape(s) }

// console is standard error while a command runs: every line goes through
// escape, none is drawn over by the progress bar (the bar is cleared
// before a line and drawn again after, all under one lock), --quiet keeps
// the per-problem lines back, and a problem text seen more than limit
// times is printed no more but counted, for a line at the end.
type console struct {
	mu    sync.Mutex
	w     io.Writer
	bar   *progressbar.ProgressBar // nil: no bar
	quiet bool
	limit int // per problem text; 0: no limit

	seen       map[string]int // problem text → times seen
	suppressed []string       // texts over the limit, in the order they went over
}

// maxDistinctWarnings bounds the problem texts counted for the limit;
// texts past it are always printed.
const maxDistinctWarnings = 10000

func newConsole(w io.Writer) *console { return &console{w: w, seen: map[string]int{}} }

// printf prints one line (format has no newline) whatever --quiet says:
// errors about whole inputs and the final counts.
func (c *console) printf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.line(fmt.Sprintf(format, args...))
}

// problem prints one damage line unless --quiet or its text (key) went
// over the limit.
func (c *console) problem(key, line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.limit > 0 {
		n, ok := c.seen[key]
		if ok || len(c.seen) < maxDistinctWarnings {
			c.seen[key] = n + 1
		}
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

// summarize prints "and K more like this" for each problem text that
// went over the limit (not with --quiet: no such line was printed).
func (c *console) summarize(prefix string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.quiet {
		return
	}
	for _, key := range c.suppressed {
		c.line(fmt.Sprintf("%s: and %d more like this: %s", prefix, c.seen[key]-c.limit, key))
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
