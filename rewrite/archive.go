package rewrite

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/linkscan/linkscan/mailbox"
)

// Archive is what the archive action looks links up in: the history of
// `linkscan audit`. Package audit's HistoryReader implements it, reading
// its SQLite file; package rewrite itself holds no SQLite, HTTP or
// network code, and a rewrite never goes to the network.
//
// Archived may be called by several goroutines at once.
type Archive interface {
	// Archived returns what the history knows of the link whose
	// canonical URL (package uri) is canonical: its status as the last
	// audit left it ("dead", "failing", "ok" ...: ArchiveStatuses; ""
	// when the link was never audited) and, of the archived copies kept
	// for it, the one captured nearest date (copyURL "" when none is
	// kept; copyTime zero when the archive did not say). date is zero
	// when the message has no usable Date. err is a failure to read the
	// history, never "not found".
	Archived(canonical string, date time.Time) (status, copyURL string, copyTime time.Time, err error)
}

// ArchiveStatuses are the statuses of `linkscan audit`, which an archive
// rule's statuses parameter may name.
var ArchiveStatuses = []string{"ok", "redirected", "failing", "dead", "blocked", "unchecked", "offline-ok"}

// DefaultArchiveStatuses are the statuses an archive rule rewrites when
// it names none: dead links only (failing on several checks spread over
// days, as the audit decides).
var DefaultArchiveStatuses = []string{"dead"}

// ArchiveError is the failure of an Archive lookup. It is never taken for
// "not found": Rewrite returns it, and Message returns it and leaves the
// message as it was.
type ArchiveError struct {
	URL string // the canonical URL looked up
	Err error
}

func (e *ArchiveError) Error() string {
	return "rewrite: looking up " + e.URL + " in the audit history: " + e.Err.Error()
}

func (e *ArchiveError) Unwrap() error { return e.Err }

// lookupEnv is what the archive action needs beyond the link: where to
// look it up, and the date of its message.
type lookupEnv struct {
	archive Archive
	date    time.Time
	noDate  string // why date is zero, when it is
}

// RewriteWith is Rewrite with the archive that archive rules look links
// up in; l.Date is the date of the link's message (zero when unknown).
// A failed lookup gives an *ArchiveError and the link as it was.
func (r *Rules) RewriteWith(l Link, a Archive) (Result, error) {
	return r.rewrite(l, &lookupEnv{archive: a, date: l.Date})
}

// messageEnv is the lookup environment of a message's links: its Date,
// or why it has none usable.
func (r *Rules) messageEnv(m *mailbox.Message, opts *Options) *lookupEnv {
	if !r.hasArchive {
		return nil
	}
	e := &lookupEnv{archive: opts.Archive, date: m.Date}
	v := strings.TrimSpace(m.Header.Get("Date"))
	switch {
	case e.date.IsZero() && v == "":
		e.noDate = "the message has no Date field"
	case e.date.IsZero():
		e.noDate = "the message's Date field cannot be read: " + strconv.Quote(v)
	case e.date.After(time.Now().Add(futureSlack)):
		// a sender's clock far off: the copy nearest it would be the
		// latest, not one of the time the message was written
		e.date, e.noDate = time.Time{}, "the message's Date field is in the future: "+strconv.Quote(v)
	}
	return e
}

// futureSlack is how far past now a message's Date may be and still be
// taken (time zones, clocks a little fast).
const futureSlack = 48 * time.Hour

// archiveDate is the form of dates in the notes of archive changes.
const archiveDate = "2006-01-02 15:04:05Z07:00"

// archive does the archive action: a link the audit history gives one of
// the rule's statuses becomes the archived copy captured nearest its
// message's Date. Every case where it cannot is a skip with its reason;
// a failed lookup is an error.
func (r *rule) archive(st *state, ch *Change) (bool, error) {
	e := st.env
	if e == nil || e.archive == nil {
		ch.Skipped = "no audit history to look the link up in (rewrite.Options.Archive; linkscan rewrite --db)"
		return false, nil
	}
	status, cu, ct, err := e.archive.Archived(st.canonical, e.date)
	if err != nil {
		return false, &ArchiveError{URL: st.canonical, Err: err}
	}
	want := DefaultArchiveStatuses
	if r.actionParams != nil && len(r.statuses) > 0 {
		want = r.statuses
	}
	switch {
	case status == "":
		ch.Skipped = "not in the audit history (never audited)"
	case !slices.Contains(want, status):
		ch.Skipped = "the audit history says " + status + "; the rule rewrites " + strings.Join(want, ", ")
	case e.date.IsZero():
		ch.Skipped = e.noDate
		if ch.Skipped == "" {
			ch.Skipped = "no date to look for a copy near (Link.Date)"
		}
		ch.Skipped = status + " in the audit history, but " + ch.Skipped
	case cu == "":
		ch.Skipped = status + " in the audit history, which keeps no archived copy of it"
	case !goodURL(cu):
		ch.Skipped = "the archived copy " + strconv.Quote(cu) + " is not a URL"
	case cu == st.url:
		return false, nil
	}
	if ch.Skipped != "" {
		return false, nil
	}
	when := "of unknown date"
	if !ct.IsZero() {
		when = "captured " + ct.UTC().Format(archiveDate)
	}
	ch.Note = status + " in the audit history; the archived copy " + when + ", of those it keeps the nearest the message's Date " +
		e.date.UTC().Format(archiveDate)
	st.setURL(cu)
	ch.New = cu
	return true, nil
}
