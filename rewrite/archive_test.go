package rewrite

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/linkscan/linkscan/audit"
	"github.com/linkscan/linkscan/audit/audittest"
)

// sitePlaceholder stands for the loopback site's host in the archive
// golden files: as long as "127.0.0.1:PORT" with a port of five digits,
// so that quoted-printable lines break at the same places.
const sitePlaceholder = "old.example.net"

// auditHistory builds a history by audits of a loopback site
// (audittest.History) whose servers are closed when it returns: what
// rewrite reads of it, it reads offline. It returns the history's path
// and the site's host.
func auditHistory(t *testing.T) (path, host string) {
	path = filepath.Join(t.TempDir(), "audit.db")
	t.Run("audit", func(t *testing.T) {
		host = strings.TrimPrefix(audittest.History(t, path).URL, "http://")
	})
	if len(host) != len(sitePlaceholder) {
		t.Fatalf("the site's host %q is not as long as %q (a port of five digits)", host, sitePlaceholder)
	}
	return path, host
}

// archiveChangesJSON is changesJSON with the notes of the rules (the
// status and the capture time of archive).
func archiveChangesJSON(chs []LinkChange) []byte {
	var b bytes.Buffer
	for i, line := range bytes.SplitAfter(changesJSON(chs), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var notes []string
		for _, r := range chs[i].Rules {
			if r.Note != "" {
				notes = append(notes, r.Note)
			}
		}
		if notes != nil {
			n, _ := json.Marshal(notes)
			line = append(append(bytes.TrimSuffix(line, []byte("}\n")), `,"Notes":`...), n...)
			line = append(line, "}\n"...)
		}
		b.Write(line)
	}
	return b.Bytes()
}

// TestArchiveGolden rewrites rewrite/testdata/archive/NAME.input by
// NAME.toml with the history of audittest.History: each message's dead
// link becomes the copy captured nearest its Date; links the history
// says work, or fail but not long enough, links never audited, and
// messages without a usable Date are left as they were and reported with
// the reason. Golden files (-update), then the properties of every
// golden case (no rules give the input back; rewriting the output again
// changes nothing; every URL written is a link of the output).
func TestArchiveGolden(t *testing.T) {
	path, host := auditHistory(t)
	h, err := audit.OpenHistoryReader(path, audit.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	site := "http://" + host
	capture := func(p string, at time.Time) string { return audittest.CaptureURL(site+p, at) }
	dead := site + audittest.DeadPath
	type want struct{ old, new, skipped string }
	cases := map[string][]want{
		"archive": {
			{dead, capture(audittest.DeadPath, audittest.Captures[0]), ""}, // 1996-01-20: the copy of 1996-03-01
			{site + audittest.OKPath, "", "the audit history says ok; the rule rewrites dead"},
			{site + audittest.FailingPath, "", "the audit history says failing; the rule rewrites dead"},
			{site + audittest.NeverPath, "", "not in the audit history (never audited)"},
			{dead, capture(audittest.DeadPath, audittest.Captures[1]), ""}, // 2001-07-01 (quoted)
			{dead, capture(audittest.DeadPath, audittest.Captures[1]), ""},
			{dead, capture(audittest.DeadPath, audittest.Captures[2]), ""}, // 2011-02-01, quoted-printable
			{site + audittest.MovedPath, "", "the audit history says redirected; the rule rewrites dead"},
			{dead, capture(audittest.DeadPath, audittest.Captures[2]), ""}, // the HTML attribute
			{dead, "", "dead in the audit history, but the message has no Date field"},
			{dead, "", `dead in the audit history, but the message's Date field cannot be read: "the day before yesterday"`},
		},
		"statuses": {
			{dead, capture(audittest.DeadPath, audittest.Captures[0]), ""},
			{site + audittest.OKPath, "", "the audit history says ok; the rule rewrites dead, failing"},
			{site + audittest.FailingPath, capture(audittest.FailingPath, audittest.FailingCapture), ""},
			{site + audittest.NeverPath, "", "not in the audit history (never audited)"},
			{dead, capture(audittest.DeadPath, audittest.Captures[1]), ""},
			{dead, capture(audittest.DeadPath, audittest.Captures[1]), ""},
			{dead, capture(audittest.DeadPath, audittest.Captures[2]), ""},
			{site + audittest.MovedPath, "", "the audit history says redirected; the rule rewrites dead, failing"},
			{dead, capture(audittest.DeadPath, audittest.Captures[2]), ""},
			{dead, "", "dead in the audit history, but the message has no Date field"},
			{dead, "", `dead in the audit history, but the message's Date field cannot be read: "the day before yesterday"`},
		},
	}
	empty := emptyRules(t)
	for name, wants := range cases {
		t.Run(name, func(t *testing.T) {
			base := filepath.Join("testdata", "archive", name)
			in, err := os.ReadFile(base + ".input")
			if err != nil {
				t.Fatal(err)
			}
			data := bytes.ReplaceAll(in, []byte(sitePlaceholder), []byte(host))
			rs, err := Load(base + ".toml")
			if err != nil {
				t.Fatal(err)
			}
			if !rs.HasArchive() {
				t.Fatal("HasArchive is false")
			}
			opts := &Options{Archive: h}
			out, chs, nparts := rewriteArchive(t, rs, data, opts)
			written := lastMessages
			if len(chs) != len(wants) {
				t.Fatalf("%d changes, want %d:\n%s", len(chs), len(wants), archiveChangesJSON(chs))
			}
			for i, w := range wants {
				c := chs[i]
				newURL := w.new
				if newURL == "" {
					newURL = w.old
				}
				if c.Old != w.old || c.New != newURL || !strings.HasSuffix(c.Skipped, w.skipped) || (w.skipped == "") != (c.Skipped == "") {
					t.Errorf("change %d: %q -> %q skipped %q\nwant %q -> %q skipped %q", i, c.Old, c.New, c.Skipped, w.old, newURL, w.skipped)
				}
				if w.new != "" && !bytes.Contains(out, []byte(w.new)) && !bytes.Contains(out, []byte(w.new[:40])) {
					t.Errorf("change %d: %q is not in the output", i, w.new)
				}
			}
			back := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(host), []byte(sitePlaceholder)) }
			checkGolden(t, base+".golden", back(out))
			checkGolden(t, base+".changes.golden", back(archiveChangesJSON(chs)))
			checkProperties(t, rs, empty, data, out, opts, nparts)
			for _, mo := range written {
				checkWritten(t, mo.out, mo.chs, name)
			}
		})
	}
}

// fakeArchive answers every lookup with one answer, and counts them.
type fakeArchive struct {
	status, copyURL string
	copyTime        time.Time
	err             error

	mu    sync.Mutex
	asked []string // canonical URL and date, "URL date"
}

func (f *fakeArchive) Archived(c string, date time.Time) (string, string, time.Time, error) {
	f.mu.Lock()
	f.asked = append(f.asked, c+" "+date.UTC().Format(time.RFC3339))
	f.mu.Unlock()
	return f.status, f.copyURL, f.copyTime, f.err
}

// TestArchiveAction: the archive action link by link, with the answers an
// archive may give, and the statuses a rule may name.
func TestArchiveAction(t *testing.T) {
	date := time.Date(1999, 4, 1, 10, 0, 0, 0, time.FixedZone("", -5*3600))
	copyAt := time.Date(1999, 3, 30, 1, 2, 3, 0, time.UTC)
	const cp = "https://web.archive.org/web/19990330010203/http://gone.example/a"
	dead := &fakeArchive{status: "dead", copyURL: cp, copyTime: copyAt}
	defRules := "[[rule]]\naction = \"archive\"\n"
	wide := "[[rule]]\naction = \"archive\"\nstatuses = [\"Failing\", \"dead\", \"failing\"]\n"
	for _, tc := range []struct {
		name, rules string
		arch        Archive
		link        Link
		url         string // the result; "" the link's
		skipped     string // "" none
		note        string
	}{
		{"dead", defRules, dead, Link{URL: "HTTP://Gone.Example:80/a", Date: date}, cp, "",
			"dead in the audit history; the archived copy captured 1999-03-30 01:02:03Z, of those it keeps the nearest the message's Date 1999-04-01 15:00:00Z"},
		{"unknown capture time", defRules, &fakeArchive{status: "dead", copyURL: cp}, Link{URL: "http://gone.example/a", Date: date}, cp, "",
			"dead in the audit history; the archived copy of unknown date, of those it keeps the nearest the message's Date 1999-04-01 15:00:00Z"},
		{"no archive", defRules, nil, Link{URL: "http://gone.example/a", Date: date}, "", "no audit history to look the link up in (rewrite.Options.Archive; linkscan rewrite --db)", ""},
		{"never audited", defRules, &fakeArchive{}, Link{URL: "http://gone.example/a", Date: date}, "", "not in the audit history (never audited)", ""},
		{"ok", defRules, &fakeArchive{status: "ok", copyURL: cp}, Link{URL: "http://gone.example/a", Date: date}, "", "the audit history says ok; the rule rewrites dead", ""},
		{"failing", defRules, &fakeArchive{status: "failing", copyURL: cp}, Link{URL: "http://gone.example/a", Date: date}, "", "the audit history says failing; the rule rewrites dead", ""},
		{"failing widened", wide, &fakeArchive{status: "failing", copyURL: cp}, Link{URL: "http://gone.example/a", Date: date}, cp, "",
			"failing in the audit history; the archived copy of unknown date, of those it keeps the nearest the message's Date 1999-04-01 15:00:00Z"},
		{"no date", defRules, dead, Link{URL: "http://gone.example/a"}, "", "dead in the audit history, but no date to look for a copy near (Link.Date)", ""},
		{"no copy", defRules, &fakeArchive{status: "dead"}, Link{URL: "http://gone.example/a", Date: date}, "", "dead in the audit history, which keeps no archived copy of it", ""},
		{"copy no URL", defRules, &fakeArchive{status: "dead", copyURL: "web archive"}, Link{URL: "http://gone.example/a", Date: date}, "", `the archived copy "web archive" is not a URL`, ""},
		{"copy is the link", defRules, &fakeArchive{status: "dead", copyURL: "http://gone.example/a"}, Link{URL: "http://gone.example/a", Date: date}, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := Parse(strings.NewReader(tc.rules), "a.toml")
			if err != nil {
				t.Fatal(err)
			}
			if f, ok := tc.arch.(*fakeArchive); ok {
				f.asked = nil
			}
			res, err := rs.RewriteWith(tc.link, tc.arch)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.url
			if want == "" {
				want = tc.link.URL
			}
			var skipped, note string
			for _, c := range res.Changes {
				skipped, note = c.Skipped, c.Note
			}
			if res.URL != want || skipped != tc.skipped || note != tc.note {
				t.Errorf("got %q skipped %q note %q\nwant %q skipped %q note %q", res.URL, skipped, note, want, tc.skipped, tc.note)
			}
			if f, ok := tc.arch.(*fakeArchive); ok && tc.arch != nil {
				if len(f.asked) != 1 || !strings.HasPrefix(f.asked[0], "http://gone.example/a ") {
					t.Errorf("asked %q, want the canonical URL once", f.asked)
				}
			}
			// Rewrite has no archive: a skip, never a change
			res, err = rs.Rewrite(tc.link)
			if err != nil || res.URL != tc.link.URL || len(res.Changes) != 1 || !strings.HasPrefix(res.Changes[0].Skipped, "no audit history") {
				t.Errorf("Rewrite: %+v %v", res, err)
			}
		})
	}
}

// TestArchiveError: a lookup that fails is an *ArchiveError, from
// RewriteWith and from Message, which leaves the message as it was
// (its other changes not written) and names the link.
func TestArchiveError(t *testing.T) {
	boom := errors.New("disk I/O error")
	rs, err := Parse(strings.NewReader("[[rule]]\naction = \"map\"\nfrom-host = \"moved.example\"\nto-host = \"new.example\"\n"+
		"[[rule]]\naction = \"archive\"\nmatch.host = \"gone.example\"\n"), "a.toml")
	if err != nil {
		t.Fatal(err)
	}
	arch := &fakeArchive{err: boom}
	res, err := rs.RewriteWith(Link{URL: "http://gone.example/a", Date: time.Now()}, arch)
	var ae *ArchiveError
	if !errors.As(err, &ae) || !errors.Is(err, boom) || ae.URL != "http://gone.example/a" || res.URL != "http://gone.example/a" {
		t.Fatalf("RewriteWith: %+v %v", res, err)
	}
	for _, body := range []string{
		"Text: http://moved.example/x then http://gone.example/a\n",
		"Content-Type: text/html\n\n<a href=\"http://moved.example/x\">x</a> <a href=\"http://gone.example/a\">a</a>\n",
	} {
		msg := "From: a@example.org\nDate: Thu, 1 Apr 1999 10:00:00 -0500\nSubject: x\n"
		if !strings.HasPrefix(body, "Content-Type") {
			msg += "\n"
		}
		msg += body
		m := readOne(t, []byte(msg))
		out, chs, err := rs.Message(m, &Options{Archive: arch})
		if !errors.As(err, &ae) || !errors.Is(err, boom) {
			t.Fatalf("Message: %v", err)
		}
		if !bytes.Equal(out, []byte(msg)) {
			t.Errorf("the message was changed:\n%s", out)
		}
		if n := len(chs); n != 2 || chs[1].Old != "http://gone.example/a" || chs[1].New != chs[1].Old || chs[1].Skipped != "" ||
			chs[0].New != "http://new.example/x" {
			t.Errorf("changes: %s", changesJSON(chs))
		}
		// without an archive rule matching, nothing is looked up
		m = readOne(t, []byte(strings.ReplaceAll(msg, "gone.example", "here.example")))
		arch.asked = nil
		if out, _, err := rs.Message(m, &Options{Archive: arch}); err != nil || len(arch.asked) != 0 || bytes.Equal(out, []byte(msg)) {
			t.Errorf("no archive link: %v, asked %q", err, arch.asked)
		}
	}
}

// TestArchiveMessageDates: the message's Date reaches the archive rule;
// a message without one, with one that cannot be read, or with one in
// the future (a clock far off) is skipped with the reason.
func TestArchiveMessageDates(t *testing.T) {
	rs, err := Parse(strings.NewReader("[[rule]]\naction = \"archive\"\n"), "a.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ date, asked, skipped string }{
		{"Date: Thu, 1 Apr 1999 10:00:00 -0500\n", "1999-04-01T15:00:00Z", ""},
		{"Date: 1 Apr 99 10:00 -0500\n", "1999-04-01T15:00:00Z", ""},
		{"", "0001-01-01T00:00:00Z", "dead in the audit history, but the message has no Date field"},
		{"Date: someday\n", "0001-01-01T00:00:00Z", `dead in the audit history, but the message's Date field cannot be read: "someday"`},
		{"Date: Fri, 1 Jan 2999 00:00:00 +0000\n", "0001-01-01T00:00:00Z", `dead in the audit history, but the message's Date field is in the future: "Fri, 1 Jan 2999 00:00:00 +0000"`},
	} {
		arch := &fakeArchive{status: "dead", copyURL: "https://web.archive.org/web/1/http://gone.example/a"}
		m := readOne(t, []byte("From: a@example.org\n"+tc.date+"\nhttp://gone.example/a\n"))
		_, chs, err := rs.Message(m, &Options{Archive: arch})
		if err != nil || len(chs) != 1 {
			t.Fatalf("%q: %v %s", tc.date, err, changesJSON(chs))
		}
		if got := strings.TrimPrefix(chs[0].Skipped, "rule at line 1: "); got != tc.skipped {
			t.Errorf("%q: skipped %q, want %q", tc.date, got, tc.skipped)
		}
		if len(arch.asked) == 0 || arch.asked[0] != "http://gone.example/a "+tc.asked {
			t.Errorf("%q: asked %q, want the date %s", tc.date, arch.asked, tc.asked)
		}
	}
}

// TestArchiveRules: statuses is read, checked, and for archive only.
func TestArchiveRules(t *testing.T) {
	for _, tc := range []struct{ rules, err string }{
		{"[[rule]]\naction = \"archive\"\nstatuses = [\"dead\", \"gone\"]\n", `a.toml:3:13: unknown status "gone"`},
		{"[[rule]]\naction = \"archive\"\nstatuses = []\n", "a.toml:3:1: statuses must name at least one status"},
		{"[[rule]]\naction = \"archive\"\nstatuses = 3\n", "a.toml:3:12: a string or an array of strings is wanted here"},
		{"[[rule]]\naction = \"map\"\nfrom = \"a:\"\nto = \"b:\"\nstatuses = \"dead\"\n", "a.toml:1:3: map takes no statuses"},
		{"[[rule]]\naction = \"archive\"\nstatuses = \"dead\"\nstatuses = \"failing\"\n", "a.toml:4:1: statuses given twice"},
	} {
		_, err := Parse(strings.NewReader(tc.rules), "a.toml")
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: %v, want %q", tc.rules, err, tc.err)
		}
	}
	rs, err := Parse(strings.NewReader("[[rule]]\naction = \"archive\"\nstatuses = \"failing\"\n"), "a.toml")
	if err != nil || !rs.HasArchive() || len(rs.rules[0].statuses) != 1 || rs.rules[0].statuses[0] != "failing" {
		t.Fatalf("%v %v", rs, err)
	}
	if loadExample(t).HasArchive() || emptyRules(t).HasArchive() {
		t.Error("HasArchive true without an archive rule")
	}
}

// TestArchiveConcurrent: one HistoryReader used by several goroutines
// (run with -race), each message as it is serially.
func TestArchiveConcurrent(t *testing.T) {
	path, host := auditHistory(t)
	h, err := audit.OpenHistoryReader(path, audit.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	rs, err := Load("testdata/archive/archive.toml")
	if err != nil {
		t.Fatal(err)
	}
	var raws [][]byte
	for y := 1990; y < 2026; y++ {
		raws = append(raws, []byte("From: a@example.org\nDate: 1 Jun "+strconv.Itoa(y)+" 10:00 +0000\n\nhttp://"+host+audittest.DeadPath+"\n"))
	}
	opts := &Options{Archive: h}
	want := make([][]byte, len(raws))
	for i, raw := range raws {
		want[i], _, _ = rs.Message(readOne(t, raw), opts)
		if bytes.Equal(want[i], raw) {
			t.Fatalf("message %d not rewritten", i)
		}
	}
	got := make([][]byte, len(raws))
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(raws); i += 4 {
				got[i], _, _ = rs.Message(readOne(t, raws[i]), opts)
			}
		}(w)
	}
	wg.Wait()
	for i := range raws {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("message %d differs when rewritten concurrently", i)
		}
	}
}

// waybackArchive says every link is dead and has a copy captured on the
// message's day, but links into the Wayback Machine, which were never
// audited: as a history would after an audit of the links of a message.
type waybackArchive struct{}

func (waybackArchive) Archived(c string, date time.Time) (string, string, time.Time, error) {
	if strings.HasPrefix(c, "https://web.archive.org/") {
		return "", "", time.Time{}, nil
	}
	return "dead", "https://web.archive.org/web/" + date.UTC().Format("20060102150405") + "/" + c, date, nil
}

// FuzzArchive: any text made into a plain, flowed or HTML part in 8bit,
// quoted-printable or base64, with a Date or none, rewritten by an
// archive rule whose every link is dead: never a panic; no Date, no
// change; the output reads with as many parts, every URL written is a
// link of it, and rewriting it again changes nothing.
func FuzzArchive(f *testing.F) {
	for _, s := range []string{
		"see <URL:http://gone.example/pub/a-b/c.txt> and http://www.example.com/x?y=1\n",
		"> <URL:ftp://ftp.cs.example.edu/pub/\n>  lists/x.txt>\nwww.example.com/a/b\n",
		"<p><a href=\"https://www.example.com/?q=2&amp;r=1\">https://www.example.com/?q=2</a></p>\n",
		"Caf\u00e9 http://www.example.com/caf\u00e9 mid:x@y\n",
	} {
		for k := range uint8(3) {
			f.Add(s, k, k, k == 1, k != 2)
		}
	}
	rs, err := Parse(strings.NewReader("[[rule]]\naction = \"archive\"\n"), "a.toml")
	if err != nil {
		f.Fatal(err)
	}
	opts := &Options{Archive: waybackArchive{}}
	f.Fuzz(func(t *testing.T, text string, kind, enc uint8, crlf, dated bool) {
		if !utf8.ValidString(text) {
			return
		}
		header := ""
		if dated {
			header = "Date: Thu, 1 Apr 1999 10:00:00 -0500\n"
		}
		msg := buildMessage(builtText(text, crlf), kind, enc, crlf, header)
		m := readOne(t, []byte(msg))
		if m == nil {
			return
		}
		nparts := len(m.Parts())
		out, chs, err := rs.Message(m, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range chs {
			if !dated && c.Skipped == "" {
				t.Fatalf("a change without a Date: %s", changesJSON(chs))
			}
		}
		checkWritten(t, out, chs, "archive")
		m2 := readOne(t, out)
		if m2 == nil {
			if len(out) == 0 {
				return
			}
			t.Fatalf("output does not read:\n%s", out)
		}
		if n := len(m2.Parts()); n != nparts {
			t.Fatalf("output has %d parts, input %d", n, nparts)
		}
		again, chs2, err := rs.Message(m2, opts)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("rewriting the output again changed it (%v)\n%s\n--- again\n%s\n%s", err, out, again, changesJSON(chs2))
		}
	})
}
