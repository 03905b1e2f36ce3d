package main

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/linkscan/linkscan/audit"
	"github.com/linkscan/linkscan/rewrite"
)

// archiveFlags are the flags of the audit history that archive rules
// look links up in: rewrite's, and filter's (the same names as audit's).
type archiveFlags struct {
	db         string
	deadChecks int
	deadDays   float64
}

// archiveHelp is the help of the archive flags, for the commands'
// Long texts.
const archiveHelp = `  --db FILE          the audit history (linkscan audit --db) that archive
                     rules look links up in, read-only (default: the
                     audit's, linkscan/audit.db in the user's cache
                     directory); opened only when the rules hold an
                     archive rule, and then it must exist
  --dead-checks N    failing checks before a link is dead, as for audit
                     (default 3)
  --dead-days D      days those checks must span, as for audit (default
                     7; may be a fraction; 0: the checks alone decide)
`

// maxDeadDays bounds --dead-days: a span past it would overflow a
// time.Duration (about 106,751 days) and turn negative, calling every
// failing link dead at once.
const maxDeadDays = 100000

// deadAfter turns --dead-days into the engine's DeadAfter, the same for
// audit and rewrite: 0 days is 1 ns (the checks alone decide; the
// engine's zero means its default, 7 days); false for a value out of
// range or not a number.
func deadAfter(days float64) (time.Duration, bool) {
	if !(days >= 0 && days <= maxDeadDays) {
		return 0, false
	}
	if days == 0 {
		return time.Nanosecond, true
	}
	return time.Duration(days * float64(24*time.Hour)), true
}

// register adds --db, --dead-checks and --dead-days to fs.
func (a *archiveFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.db, "db", "", "audit history for archive rules")
	fs.IntVar(&a.deadChecks, "dead-checks", 3, "failing checks before dead")
	fs.Float64Var(&a.deadDays, "dead-days", 7, "days those checks span")
}

// archiveUsageError is an error of open that is the user's: the
// history is missing, is not one, or a flag is out of range (exit 2).
type archiveUsageError struct{ msg string }

func (e *archiveUsageError) Error() string { return e.msg }

func archiveUsage(format string, a ...any) error {
	return &archiveUsageError{fmt.Sprintf(format, a...)}
}

// open opens the history read-only when rules hold an archive rule, and
// returns it (nil, nil when they hold none: no file is touched). Its
// errors name the file; *archiveUsageError ones are usage errors
// (exit 2): a history that does not exist, a file that is not one, a
// flag out of range; others are failures to read it (exit 1). The caller closes the history.
//
// The filter calls it after the rules are loaded:
//
//	h, err := f.archive.open(rules)
//	if err != nil { ... fail: the message goes on unchanged ... }
//	if h != nil { defer h.Close(); f.opts.Archive = h }
func (a *archiveFlags) open(rules *rewrite.Rules) (*audit.HistoryReader, error) {
	if rules == nil || !rules.HasArchive() {
		return nil, nil
	}
	after, ok := deadAfter(a.deadDays)
	if a.deadChecks < 1 || !ok {
		return nil, archiveUsage("--dead-checks must be at least 1 and --dead-days from 0 to %d", maxDeadDays)
	}
	path := a.db
	if path == "" {
		p, err := audit.DefaultDBPath()
		if err != nil {
			return nil, archiveUsage("the rules hold an archive rule, no --db is given, and there is no cache directory for the default: %v", err)
		}
		path = p
	}
	h, err := audit.OpenHistoryReader(path, audit.Config{HistoryPolicy: audit.HistoryPolicy{DeadChecks: a.deadChecks, DeadAfter: after}})
	switch {
	case errors.Is(err, audit.ErrNoHistory):
		return nil, archiveUsage("the rules hold an archive rule, and the audit history %s does not exist (run linkscan audit --db %s first, or give --db FILE)", path, path)
	case errors.Is(err, audit.ErrNotHistory):
		return nil, archiveUsage("%v", err)
	case err != nil:
		return nil, err
	}
	return h, nil
}
