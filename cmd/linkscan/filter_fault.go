package main

import (
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"
)

// filterFaultEnv names the environment variable of filter's test hook:
// faults injected at random, for the delivery tests (docs/filter.md).
// Only the filter command reads it.
const filterFaultEnv = "LINKSCAN_FILTER_FAULT"

// faults is the fault drawn for this run, if any: LINKSCAN_FILTER_FAULT
// is a comma-separated list of KIND=PROBABILITY (crash, sleep, panic,
// error, panic-write, panic-late); one kind at most is drawn per run,
// and a crash happens at one of three points drawn too: start (before
// reading), read (once some bytes are read) or write (halfway through
// the output). panic-write panics halfway through writing the output,
// panic-late once the output is written (before the --report lines).
type faults struct {
	kind  string
	point string
	fired bool // panic-write panicked (once)
}

func parseFaults(spec string) faults {
	if spec == "" {
		return faults{}
	}
	x := rand.Float64()
	for _, item := range strings.Split(spec, ",") {
		k, p, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			p = "1"
		}
		prob, err := strconv.ParseFloat(p, 64)
		if err != nil || prob <= 0 {
			continue
		}
		if x < prob {
			f := faults{kind: k}
			if k == "crash" {
				f.point = []string{"start", "read", "write"}[rand.IntN(3)]
			}
			return f
		}
		x -= prob
	}
	return faults{}
}

// crashAt reports whether the drawn fault is a crash at point.
func (f *faults) crashAt(point string) bool { return f.kind == "crash" && f.point == point }

// kill ends the process at once, as SIGKILL does (no deferred code, no
// flush).
func (f *faults) kill() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Kill() // SIGKILL, or TerminateProcess
	}
	select {} // the signal is on its way
}

// inRewrite applies the faults of the rewrite: sleep past the timeout,
// panic, or fail.
func (f *faults) inRewrite(timeout time.Duration) error {
	switch f.kind {
	case "sleep":
		time.Sleep(timeout + time.Second)
	case "panic":
		panic("injected by " + filterFaultEnv)
	case "error":
		return failf("injected error (%s)", filterFaultEnv)
	}
	return nil
}

// crashWriter writes left bytes, then kills the process: a filter
// killed while writing its output.
type crashWriter struct {
	w     io.Writer
	left  int64
	fault *faults
}

func (c *crashWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > c.left {
		n, _ := c.w.Write(p[:c.left])
		c.left -= int64(n)
		if f, ok := c.w.(interface{ Sync() error }); ok {
			f.Sync()
		}
		c.fault.kill()
		return n, errors.New("killed")
	}
	n, err := c.w.Write(p)
	c.left -= int64(n)
	return n, err
}

// panicWriter writes left bytes, then panics: a filter that fails after
// its output began.
type panicWriter struct {
	w    io.Writer
	left int64
}

func (p *panicWriter) Write(b []byte) (int, error) {
	if int64(len(b)) > p.left {
		n, _ := p.w.Write(b[:p.left])
		p.left -= int64(n)
		panic("injected by " + filterFaultEnv + " while writing")
	}
	n, err := p.w.Write(b)
	p.left -= int64(n)
	return n, err
}
