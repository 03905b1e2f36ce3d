package auditspool

import (
	"errors"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/linkscan/linkscan/audit"

	"github.com/linkscan/linkscan/internal/testutil"
)

// sampleResults are results of three links, one with credentials and
// an archived copy.
func sampleResults() []audit.Result {
	t0 := time.Date(2026, 1, 10, 8, 0, 0, 0, time.UTC)
	mk := func(u string, st audit.Status, failures int) audit.Result {
		return audit.Result{Link: audit.Link{URL: u, Scheme: "http", Path: "list.mbox", Offset: 1234, Count: 2},
			Check: audit.Check{Time: t0, Status: st}, Status: st, Failures: failures}
	}
	rs := []audit.Result{mk("http://a.example/", audit.OK, 0), mk("http://b.example/x", audit.Failing, 1),
		mk("http://u:s3cret@gone.example.net/a|b", audit.Dead, 4)}
	rs[2].Archive = &audit.Capture{Source: "wayback", URL: "https://web.archive.org/web/1996/http://gone.example.net/a|b"}
	return rs
}

// TestResultStore: results come back by canonical URL (redacted, as
// results carry it), a later Put of a URL replaces the earlier, a URL
// never put is not found, and Close leaves no file.
func TestResultStore(t *testing.T) {
	dir := t.TempDir()
	s, err := NewResultStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	rs := sampleResults()
	canonicals := make([]string, len(rs))
	for i := range rs {
		canonicals[i] = rs[i].Link.URL
		rs[i].Link.URL = audit.Redact(rs[i].Link.URL) // as the auditor's results carry it
	}
	for _, r := range rs {
		if err := s.Put(r); err != nil {
			t.Fatal(err)
		}
	}
	again := rs[0]
	again.Failures = 9
	if err := s.Put(again); err != nil {
		t.Fatal(err)
	}
	if err := s.Done(); err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		canonical := canonicals[i] // rs[2]'s holds credentials
		got, ok, err := s.Lookup(canonical)
		if i == 0 {
			r = again
		}
		if err != nil || !ok || got.Link.URL != r.Link.URL || got.Failures != r.Failures || got.Status != r.Status ||
			!got.Check.Time.Equal(r.Check.Time) || !reflect.DeepEqual(got.Archive != nil, r.Archive != nil) {
			t.Errorf("Lookup(%s) = %+v, %v, %v; want %+v", canonical, got, ok, err, r)
		}
	}
	if _, ok, err := s.Lookup("http://never.example/"); ok || err != nil {
		t.Errorf("a URL never put: ok %v, %v", ok, err)
	}
	s.Close()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("%d files left", len(left))
	}
	if _, err := NewResultStore(dir + "/missing"); err == nil {
		t.Error("a store in a missing directory")
	}
}

// TestOccurrenceSpool: every occurrence comes back in the order added,
// with its place (Place puts it in a link, keeping the link's URL and
// count); an error of fn ends Each and is returned; the file is gone
// from the directory at once.
func TestOccurrenceSpool(t *testing.T) {
	dir := t.TempDir()
	s, err := NewOccurrenceSpool(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("the spool's file is in its directory")
	}
	d := time.Date(1994, 3, 23, 18, 58, 5, 0, time.FixedZone("", 3600))
	var want []audit.Link
	for i := range 1000 {
		l := audit.Link{URL: "http://a.example/" + string(rune('a'+i%26)), Path: "f.mbox", Offset: int64(i) * 100, MessageID: "m@x",
			Part: "1.2", Line: i, Column: i % 80, Date: d.Add(time.Duration(i) * time.Hour), Count: 7}
		if i%3 == 0 {
			l.MessageID, l.Part, l.Date = "", "", time.Time{}
		}
		want = append(want, l)
		if err := s.Add(l); err != nil {
			t.Fatal(err)
		}
	}
	for pass := range 2 { // Each may run again
		i := 0
		err := s.Each(func(o Occurrence) error {
			got := o.Place(audit.Link{URL: o.URL, Count: 7})
			if w := want[i]; got.URL != w.URL || got.Path != w.Path || got.Offset != w.Offset || got.MessageID != w.MessageID ||
				got.Part != w.Part || got.Line != w.Line || got.Column != w.Column || !got.Date.Equal(w.Date) || got.Count != 7 {
				t.Fatalf("pass %d, occurrence %d: %+v, want %+v", pass, i, got, w)
			}
			i++
			return nil
		})
		if err != nil || i != len(want) {
			t.Fatalf("pass %d: %d occurrences, %v", pass, i, err)
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := s.Each(func(Occurrence) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("an error of fn: %v after %d", err, n)
	}
}

// TestResultStoreRelativeDir: a relative --tmpdir works (a relative
// SQLite file name in a file: URL fails with "invalid uri authority").
func TestResultStoreRelativeDir(t *testing.T) {
	s, err := NewResultStore(testutil.RelTempDir(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := sampleResults()[0]
	if err := s.Put(r); err != nil {
		t.Fatal(err)
	}
}
