package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/linkscan/linkscan/internal/testutil"
)

func collect(t *testing.T, r io.Reader) (*Collector, ReadStats, []*RecordError) {
	t.Helper()
	c := NewCollector(0)
	var bad []*RecordError
	st, err := ReadJSONL(r, c.Add, func(e *RecordError) { bad = append(bad, e) })
	if err != nil {
		t.Fatal(err)
	}
	return c, st, bad
}

// The records of `linkscan scan` collected into distinct links agree with
// what `scan --unique` counts, whichever way the input is read.
func TestReadJSONLFromScan(t *testing.T) {
	all, err := os.ReadFile("../testdata/audit/scan.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	uniq, err := os.ReadFile("../testdata/audit/scan-unique.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	u, _, _ := collect(t, bytes.NewReader(uniq))
	want := map[string]int{}
	for _, l := range u.Links() {
		want[l.URL] = l.Count
	}
	for name, r := range map[string]io.Reader{
		"whole":    bytes.NewReader(all),
		"one byte": iotest.OneByteReader(bytes.NewReader(all)),
		"half":     iotest.HalfReader(bytes.NewReader(all)),
	} {
		c, st, bad := collect(t, r)
		if len(bad) != 0 || st.Lines != int64(bytes.Count(all, []byte("\n"))) {
			t.Errorf("%s: %+v, bad %v", name, st, bad)
		}
		got := map[string]int{}
		for _, l := range c.Links() {
			got[l.URL] = l.Count
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d distinct links, --unique has %d", name, len(got), len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s counted %d, --unique says %d", name, k, got[k], v)
			}
		}
	}
	c, _, _ := collect(t, bytes.NewReader(all))
	l := c.Links()[0]
	if l.URL != "ftp://info.cern.ch/pub/www/doc;type=d" || l.Scheme != "ftp" || l.Host != "info.cern.ch" ||
		l.Path != "testdata/mail/mboxrd.mbox" || l.MessageID != "9403231758.AA14263@ptpc00.cern.ch" || l.Line != 1 ||
		l.Column != 33 || l.Part != "1" || !l.Date.Equal(time.Date(1994, 3, 23, 17, 58, 5, 0, time.UTC)) {
		t.Errorf("first link: %+v", l)
	}
}

func TestReadJSONLBadLines(t *testing.T) {
	in := strings.Join([]string{
		`{"canonical":"http://a/","url":"http://a/","date":"1996-01-02T03:04:05Z"}`,
		``,
		`not json`,
		`{"canonical":"","url":"../rel"}`,
		`{"other":1}`,
		`{"canonical":"http://a/","url":"HTTP://A/","date":"yesterday","count":3}` + "\r",
		strings.Repeat("x", MaxRecordLine+10),
		`{"canonical":"mailto:joe@example.org","url":"joe@example.org"}`,
		`{"url":"HTTP://Example.COM:80/p"}`, // no canonical: canonicalized as scan does
	}, "\n") // no newline at the end
	c, st, bad := collect(t, strings.NewReader(in))
	if st.Lines != 9 || st.Links != 4 || st.NoCanon != 1 || st.BadLines != 3 || len(bad) != 3 {
		t.Errorf("stats %+v", st)
	}
	for i, line := range []int64{3, 5, 7} {
		if i < len(bad) && bad[i].Line != line {
			t.Errorf("bad line %d reported as %d: %v", line, bad[i].Line, bad[i])
		}
	}
	ls := c.Links()
	if len(ls) != 3 || ls[0].Count != 4 || ls[1].Scheme != "mailto" || ls[0].Date.Year() != 1996 ||
		ls[2].URL != "http://example.com/p" || ls[2].Scheme != "http" || ls[2].Host != "example.com" {
		t.Errorf("links %+v", ls)
	}
	// errors of the reader and of add end the reading
	_, err := ReadJSONL(iotest.TimeoutReader(iotest.OneByteReader(strings.NewReader(in))), func(Link) error { return nil }, nil)
	if !errors.Is(err, iotest.ErrTimeout) {
		t.Errorf("reader error: %v", err)
	}
	lim := NewCollector(1)
	st, err = ReadJSONL(strings.NewReader(in), lim.Add, nil)
	if !errors.Is(err, ErrTooManyLinks) || !st.Truncated || len(lim.Links()) != 1 {
		t.Errorf("limit: %v %+v", err, st)
	}
}

func FuzzReadJSONL(f *testing.F) {
	f.Add(`{"canonical":"http://a/","url":"http://a/"}` + "\n" + `x` + "\n")
	f.Add(`{"canonical":"http://a/","count":-5,"date":"2000-01-01T00:00:00Z"}`)
	f.Fuzz(func(t *testing.T, s string) {
		c := NewCollector(0)
		st, err := ReadJSONL(strings.NewReader(s), c.Add, nil)
		if err != nil {
			t.Fatal(err)
		}
		if st.Links+st.NoCanon+st.BadLines > st.Lines {
			t.Fatalf("more outcomes than lines: %+v", st)
		}
		total := 0
		for _, l := range c.Links() {
			if l.Count < 1 {
				t.Fatalf("count %d", l.Count)
			}
			total += l.Count
		}
		if int64(len(c.Links())) > st.Links {
			t.Fatalf("%d links of %d records", len(c.Links()), st.Links)
		}
	})
}

// The disk collector agrees with the in-memory one: same links, order,
// counts, first places and dates.
func TestDiskCollectorModel(t *testing.T) {
	mem := NewCollector(0)
	disk, err := NewDiskCollector(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	seed := uint32(7)
	rnd := func(n uint32) int { seed = seed*1664525 + 1013904223; return int((seed >> 8) % n) }
	for i := 0; i < 5000; i++ {
		k := rnd(800)
		l := Link{URL: fmt.Sprintf("http://h%d.example/%d", k%37, k), Scheme: "http", Host: fmt.Sprintf("h%d.example", k%37),
			Path: fmt.Sprintf("f%d.mbox", i), Offset: int64(i * 100), MessageID: fmt.Sprintf("%d@x", i), Part: "1.2",
			Line: i, Column: k, Count: rnd(3), Cut: rnd(4) != 0}
		if k%5 != 0 {
			l.Date = time.Date(1990+k%30, 1, 2, 3, 4, 5, 0, time.FixedZone("", 3600))
		}
		if err := mem.Add(l); err != nil {
			t.Fatal(err)
		}
		if err := disk.Add(l); err != nil {
			t.Fatal(err)
		}
	}
	want := mem.Links()
	i := 0
	err = disk.Each(func(l Link) error {
		w := want[i]
		i++
		if l.URL != w.URL || l.Count != w.Count || l.Path != w.Path || l.Offset != w.Offset || l.MessageID != w.MessageID ||
			l.Part != w.Part || l.Line != w.Line || l.Column != w.Column || l.Host != w.Host || l.Scheme != w.Scheme || !l.Date.Equal(w.Date) ||
			l.Cut != w.Cut {
			return fmt.Errorf("link %d: %+v, want %+v", i, l, w)
		}
		return nil
	})
	if err != nil || i != len(want) {
		t.Fatalf("%d links of %d: %v", i, len(want), err)
	}
	if err := disk.Add(Link{URL: "http://late/"}); err == nil {
		t.Errorf("Add after Each accepted")
	}
	stop := errors.New("stop")
	if err := disk.Each(func(Link) error { return stop }); err != stop {
		t.Errorf("fn's error: %v", err)
	}
	dir := disk.dir
	if err := disk.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s left behind", dir)
	}
}

// TestDiskCollectorRelativeDir: a relative temporary directory (a
// relative --tmpdir or TMPDIR) works: the SQLite file's name is made
// absolute before it goes into a file: URL (a relative one fails with
// "invalid uri authority").
func TestDiskCollectorRelativeDir(t *testing.T) {
	c, err := NewDiskCollector(testutil.RelTempDir(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Add(Link{URL: "http://example.org/", Scheme: "http", Host: "example.org", Count: 1}); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := c.Each(func(Link) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("%d links, %v", n, err)
	}
}
