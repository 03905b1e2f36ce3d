package audit

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// cdxServer speaks the CDX API's JSON output for the captures of each URL;
// like the real API it answers an empty body when it has nothing. It
// ignores sort=closest: the client must pick.
func cdxServer(t *testing.T, captures map[string][][]string, queries *atomic.Int32) string {
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		queries.Add(1)
		q := r.URL.Query()
		if q.Get("output") != "json" || q.Get("closest") == "" || len(q.Get("closest")) != 14 {
			http.Error(w, "bad query", http.StatusBadRequest)
			return
		}
		rows, ok := captures[q.Get("url")]
		if !ok {
			return
		}
		out := [][]string{{"timestamp", "original", "statuscode"}}
		for _, row := range rows {
			if q.Get("filter") == "statuscode:200" && row[2] != "200" {
				continue
			}
			out = append(out, row)
		}
		json.NewEncoder(w).Encode(out)
	})
	return s.URL + "/cdx/search/cdx"
}

func TestParseCDX(t *testing.T) {
	want := time.Date(1996, 5, 1, 0, 0, 0, 0, time.UTC)
	body := `[["urlkey","timestamp","original","mimetype","statuscode","digest","length"],
["org,example)/","19961101000000","http://example.org/","text/html","200","X","1"],
["org,example)/","19960301000000","http://example.org/","text/html","200","X","1"],
["org,example)/","19960501000000","http://example.org/","text/html","404","X","1"],
["org,example)/","20150101000000","http://example.org/","text/html","200","X","1"],
["short"]]`
	cp, err := parseCDX([]byte(body), want, "https://replay/web/")
	if err != nil || cp == nil {
		t.Fatal(cp, err)
	}
	if cp.URL != "https://replay/web/19960301000000/http://example.org/" || !cp.Time.Equal(time.Date(1996, 3, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("closest 200: %+v", cp)
	}
	for _, b := range []string{"", "[]", `[["timestamp","original"]]`, " \n"} {
		if cp, err := parseCDX([]byte(b), want, ""); cp != nil || err != nil {
			t.Errorf("%q: %v %v", b, cp, err)
		}
	}
	for _, b := range []string{"{", `[["x"]]`, `<html>`} {
		if _, err := parseCDX([]byte(b), want, ""); err == nil {
			t.Errorf("%q: no error", b)
		}
	}
}

func FuzzParseCDX(f *testing.F) {
	f.Add(`[["timestamp","original","statuscode"],["19960301000000","http://a/","200"]]`)
	f.Add(`[["timestamp","original"],["1996","http://a/"]]`)
	f.Fuzz(func(t *testing.T, s string) {
		want := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
		cp, err := parseCDX([]byte(s), want, "R/")
		if err != nil && cp != nil {
			t.Fatal("capture with an error")
		}
		if cp != nil && !strings.HasPrefix(cp.URL, "R/") {
			t.Fatalf("capture URL %q", cp.URL)
		}
	})
}

func TestArchivedCopies(t *testing.T) {
	db, _ := openTestDB(t)
	dead := server(t, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	u := dead.URL + "/paper.html"
	noCopy := dead.URL + "/never-archived"
	var queries atomic.Int32
	cdx := cdxServer(t, map[string][][]string{u: {
		{"19940101000000", u, "200"},
		{"19951231000000", u, "200"},
		{"19960102000000", u, "302"},
		{"20200101000000", u, "200"},
	}}, &queries)
	clk := newFakeClock()
	cfg := testConfig(nil)
	cfg.Clock, cfg.Archives, cfg.CDX, cfg.Replay = clk, true, cdx, "https://archive.test/web/"
	l := linkFor(u)
	l.Date = time.Date(1996, 1, 3, 12, 0, 0, 0, time.UTC)
	r, err := New(cfg, db).Check(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != Failing || r.Archive == nil || r.Archive.Source != "wayback" ||
		r.Archive.URL != "https://archive.test/web/19951231000000/"+u || queries.Load() != 1 {
		t.Fatalf("%+v, archive %+v, %d queries", r, r.Archive, queries.Load())
	}
	l2 := linkFor(noCopy)
	l2.Date = l.Date
	r2, _ := New(cfg, db).Check(context.Background(), l2)
	if r2.Archive != nil || queries.Load() != 2 {
		t.Errorf("no capture: %+v", r2.Archive)
	}
	// offline: both answers come from the history, nothing is asked
	off := cfg
	off.Offline = true
	r, _ = New(off, db).Check(context.Background(), l)
	r2, _ = New(off, db).Check(context.Background(), l2)
	if r.Archive == nil || r.Archive.URL != "https://archive.test/web/19951231000000/"+u || r2.Archive != nil || queries.Load() != 2 {
		t.Errorf("offline: %+v %+v, %d queries", r.Archive, r2.Archive, queries.Load())
	}
	// an archive that cannot be reached leaves no answer behind
	down := cfg
	down.CDX = "http://" + refusedAddr(t) + "/cdx"
	l3 := linkFor(dead.URL + "/third")
	r3, err := New(down, db).Check(context.Background(), l3)
	if err != nil || r3.Archive != nil {
		t.Fatalf("%+v %v", r3.Archive, err)
	}
	if _, ok, _ := db.archived(l3.URL, "wayback", l3.Date); ok {
		t.Errorf("a failed query was kept as an answer")
	}
	// links that work are not looked up
	okSrv := server(t, func(http.ResponseWriter, *http.Request) {})
	before := queries.Load()
	if r, _ := New(cfg, db).Check(context.Background(), linkFor(okSrv.URL+"/")); r.Archive != nil || queries.Load() != before {
		t.Errorf("archive looked up for a working link")
	}
}

func TestMemento(t *testing.T) {
	var gotDatetime atomic.Value
	gate := server(t, func(w http.ResponseWriter, r *http.Request) {
		gotDatetime.Store(r.Header.Get("Accept-Datetime"))
		target := strings.TrimPrefix(r.URL.Path, "/timegate/")
		if strings.Contains(target, "unknown") {
			http.NotFound(w, r)
			return
		}
		m := "http://mementos.test/19960101120000/" + target
		w.Header().Set("Vary", "accept-datetime")
		w.Header().Set("Link", `<`+target+`>; rel="original", <http://mementos.test/19960101120000/`+target+`>; rel="memento"; datetime="Mon, 01 Jan 1996 12:00:00 GMT"`)
		w.Header().Set("Location", m)
		w.WriteHeader(http.StatusFound)
	})
	dead := server(t, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	cfg := testConfig(nil)
	cfg.Archives, cfg.CDX, cfg.TimeGate = true, "-", gate.URL+"/timegate/"
	l := linkFor(dead.URL + "/page")
	l.Date = time.Date(1996, 1, 3, 0, 0, 0, 0, time.UTC)
	r, err := New(cfg, nil).Check(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	if gotDatetime.Load() != "Wed, 03 Jan 1996 00:00:00 GMT" {
		t.Errorf("Accept-Datetime %q", gotDatetime.Load())
	}
	if r.Archive == nil || r.Archive.Source != "memento" || r.Archive.URL != "http://mementos.test/19960101120000/"+l.URL ||
		!r.Archive.Time.Equal(time.Date(1996, 1, 1, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("memento: %+v", r.Archive)
	}
	r, _ = New(cfg, nil).Check(context.Background(), linkFor(dead.URL+"/unknown"))
	if r.Archive != nil {
		t.Errorf("unknown: %+v", r.Archive)
	}
}

func TestLinkDatetime(t *testing.T) {
	v := []string{`<http://a/>; rel="original", <http://m/1>; rel="memento"; datetime="Mon, 01 Jan 1996 12:00:00 GMT", <http://m/2>; rel="last memento"; datetime="Tue, 02 Jan 1996 12:00:00 GMT"`}
	if got := linkDatetime(v, "http://m/2"); !got.Equal(time.Date(1996, 1, 2, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("m/2: %v", got)
	}
	if got := linkDatetime(v, "http://m/1"); !got.Equal(time.Date(1996, 1, 1, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("m/1: %v", got)
	}
	if got := linkDatetime(v, "http://m/3"); !got.IsZero() {
		t.Errorf("m/3: %v", got)
	}
	if got := linkDatetime([]string{"<broken", "<x>; datetime=nonsense"}, "x"); !got.IsZero() {
		t.Errorf("broken: %v", got)
	}
}

func FuzzLinkDatetime(f *testing.F) {
	f.Add(`<http://a/>; rel="original", <http://m/1>; rel="memento"; datetime="Mon, 01 Jan 1996 12:00:00 GMT"`, "http://m/1")
	f.Add(`<x>;datetime=`, "x")
	f.Fuzz(func(t *testing.T, v, target string) {
		got := linkDatetime([]string{v}, target)
		if !got.IsZero() && !strings.Contains(v, "<"+target+">") {
			t.Fatalf("a date for %q, which %q does not hold", target, v)
		}
	})
}

// Archive queries are spaced by ArchiveInterval, whatever the links.
func TestArchiveInterval(t *testing.T) {
	dead := server(t, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	var queries atomic.Int32
	cdx := cdxServer(t, map[string][][]string{}, &queries)
	clk := newFakeClock()
	cfg := testConfig(nil)
	cfg.Clock, cfg.Archives, cfg.CDX, cfg.Concurrency = clk, true, cdx, 1
	cfg.ArchiveInterval = 2 * time.Second
	var links []Link
	for i := 0; i < 3; i++ {
		links = append(links, linkFor(dead.URL+"/"+strings.Repeat("x", i+1)))
	}
	runAll(t, New(cfg, nil), links)
	w := clk.waits()
	if queries.Load() != 3 || len(w) != 2 || w[0] != 2*time.Second || w[1] != 2*time.Second {
		t.Errorf("%d queries, waits %v; want 3 queries, 2 waits of 2s", queries.Load(), w)
	}
}

// Links that differ only in their fragment ask the archives for the URL
// without it (no capture has one), once with a history, and each gets
// the copy with its own fragment; the history's readers too, from
// histories written before (copies kept under the URL with its fragment).
func TestArchivedCopiesFragments(t *testing.T) {
	db, path := openTestDB(t)
	dead := server(t, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	u := dead.URL + "/paper.html"
	var queries atomic.Int32
	// the CDX server knows u only: a query with a fragment finds nothing
	cdx := cdxServer(t, map[string][][]string{u: {{"19951231000000", u, "200"}}}, &queries)
	cfg := testConfig(nil)
	cfg.Archives, cfg.CDX, cfg.Replay = true, cdx, "https://archive.test/web/"
	cfg.Concurrency = 1 // one after the other: the second finds the first's answer
	date := time.Date(1996, 1, 3, 12, 0, 0, 0, time.UTC)
	var links []Link
	for _, f := range []string{"#sec-2", "#top", ""} {
		l := linkFor(u + f)
		l.Date = date
		links = append(links, l)
	}
	copyURL := "https://archive.test/web/19951231000000/" + u
	for _, r := range runAll(t, New(cfg, db), links) {
		_, frag, _ := strings.Cut(r.Link.URL, "#")
		want := copyURL
		if frag != "" {
			want += "#" + frag
		}
		if r.Archive == nil || r.Archive.URL != want {
			t.Errorf("%s: archive %+v, want %s", r.Link.URL, r.Archive, want)
		}
	}
	if queries.Load() != 1 {
		t.Errorf("%d CDX queries, want 1", queries.Load())
	}
	// a copy kept, by an older audit, under the URL with its fragment
	old := dead.URL + "/old.html#s"
	if err := db.keepArchived(old, "wayback", date, &Capture{Source: "wayback", URL: "https://archive.test/web/19970101000000/" + dead.URL + "/old.html",
		Time: time.Date(1997, 1, 1, 0, 0, 0, 0, time.UTC)}, date); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	h, err := OpenHistoryReader(path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for raw, want := range map[string]string{
		u + "#sec-2": copyURL + "#sec-2",
		u + "#other": copyURL + "#other", // never audited with this fragment: the page's copy
		u:            copyURL,
		old:          "https://archive.test/web/19970101000000/" + dead.URL + "/old.html#s",
	} {
		cp, err := h.Nearest(raw, date)
		if err != nil || cp == nil || cp.URL != want {
			t.Errorf("Nearest(%s) = %+v %v, want %s", raw, cp, err, want)
		}
	}
}
