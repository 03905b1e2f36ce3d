package refs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkscan/linkscan/internal/inputs"
	"github.com/linkscan/linkscan/internal/testutil"
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/references"
	"github.com/linkscan/linkscan/scan"
)

func TestHosts(t *testing.T) {
	for _, tt := range []struct {
		list string
		want []string
	}{
		{"", nil},
		{" , ,", nil},
		{"news.example", []string{"news.example"}},
		{" a.example ,b.example,, c ", []string{"a.example", "b.example", "c"}},
	} {
		if got := Hosts(tt.list); !slices.Equal(got, tt.want) {
			t.Errorf("Hosts(%q) = %q, want %q", tt.list, got, tt.want)
		}
	}
}

// TestStages: the stages come in the order they must run, Resolve last
// with the resolver and statuses given.
func TestStages(t *testing.T) {
	res := &references.Resolver{}
	statuses := map[string]bool{"dangling": true}
	for _, tt := range []struct {
		o    Options
		want string
	}{
		{Options{}, "refs.Resolve"},
		{Options{Only: true}, "refs.Only refs.Resolve"},
		{Options{Implicit: true}, "refs.Implicit refs.Resolve"},
		{Options{Only: true, Implicit: true, Statuses: statuses}, "refs.Only refs.Implicit refs.Resolve"},
	} {
		st := Stages(res, tt.o)
		var names []string
		for _, s := range st {
			names = append(names, fmt.Sprintf("%T", s))
		}
		if got := strings.Join(names, " "); got != tt.want {
			t.Errorf("Stages(%+v) = %s, want %s", tt.o, got, tt.want)
			continue
		}
		r := st[len(st)-1].(Resolve)
		if r.Resolver != res || !reflect.DeepEqual(r.Statuses, tt.o.Statuses) {
			t.Errorf("Stages(%+v): Resolve %+v", tt.o, r)
		}
	}
	if r := NewResolver(nil, Options{LocalHosts: []string{"news.example"}}); !slices.Equal(r.LocalHosts, []string{"news.example"}) {
		t.Errorf("NewResolver: local hosts %q", r.LocalHosts)
	}
}

// TestProblemError: how each kind of problem reads; a failure whose
// error names its file is not given the input's name twice.
func TestProblemError(t *testing.T) {
	named := &mailbox.InputError{Path: "dir/x.mbox", Offset: -1, Err: errors.New("permission denied")}
	for _, tt := range []struct {
		p    Problem
		want string
	}{
		{Problem{Kind: Damage, Input: "a.mbox", Msg: "a.mbox:0: boundary never found"}, "a.mbox:0: boundary never found"},
		{Problem{Kind: Unreadable, Input: "dir", Msg: "dir/cur/1: permission denied"}, "dir/cur/1: permission denied"},
		{Problem{Kind: Failed, Input: "a.mbox", Err: errors.New("disk I/O error")}, "indexing a.mbox: disk I/O error"},
		{Problem{Kind: Failed, Input: "dir", Err: named}, "indexing: " + named.Error()},
	} {
		if got := tt.p.Error(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.p, got, tt.want)
		}
	}
	err := error(Problem{Kind: Failed, Input: "dir", Err: named})
	if !errors.Is(err, named.Err) {
		t.Errorf("a Failed problem does not unwrap to its error")
	}
}

// TestOpenStore: memory without a file, an SQLite file with one (its
// notice given), and an index that cannot be opened.
func TestOpenStore(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStore(Options{Memory: 1 << 20, TempDir: dir})
	if _, ok := s.(*references.Spill); !ok || err != nil {
		t.Fatalf("no index file: %T %v", s, err)
	}
	s.Close()

	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o644)
	var notices []string
	s, err = OpenStore(Options{Index: empty, Notice: func(m string) { notices = append(notices, m) }})
	if _, ok := s.(*references.SQLite); !ok || err != nil {
		t.Fatalf("index file: %T %v", s, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "empty file") {
		t.Errorf("notices %q", notices)
	}

	if s, err := OpenStore(Options{Index: dir}); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("a directory as index: %v %v", s, err)
	}
}

// failing is a store whose writes fail.
type failing struct{ references.Store }

var errWrite = errors.New("disk I/O error")

func (failing) BeginFile(string, int64, time.Time) error { return errWrite }
func (failing) Add(*references.Entry) error              { return errWrite }

// TestIndex: counts summed over the inputs; damage, an input that
// cannot be opened and a store that fails are reported, in order, with
// their kinds and inputs, and do not stop the other inputs.
func TestIndex(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.mbox")
	os.WriteFile(bad, []byte("From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <bad@x>\nContent-Type: multipart/mixed; boundary=\"z\"\n\nno boundary\n"), 0o644)
	missing := filepath.Join(dir, "missing.mbox")

	store := references.NewMemory()
	var got []Problem
	run := Index(store, []string{list, bad, missing, "../../testdata/refs/maildir"}, mailbox.Options{}, nil, func(p Problem) { got = append(got, p) })
	if run.Messages != 5+1+3 || run.Skipped != 0 {
		t.Errorf("stats %+v", run)
	}
	if len(run.Problems) != 0 || len(run.Unreadable) != 0 {
		t.Errorf("problems left in the stats: %+v", run)
	}
	if len(got) != 2 || got[0].Kind != Damage || got[0].Input != bad || !strings.HasPrefix(got[0].Msg, bad+"#0 ") ||
		got[1].Kind != Failed || got[1].Input != missing || !errors.Is(got[1], os.ErrNotExist) {
		t.Fatalf("problems %+v", got)
	}
	if !strings.HasPrefix(got[1].Error(), "indexing: ") || !strings.Contains(got[1].Error(), missing) {
		t.Errorf("a missing input: %q", got[1].Error())
	}
	if l, _ := store.Messages("minutes@example.org"); len(l) == 0 {
		t.Errorf("the inputs after the missing one were not indexed")
	}
	// again: every file unchanged, nothing to report
	got = nil
	if run := Index(store, []string{list, bad}, mailbox.Options{}, nil, func(p Problem) { got = append(got, p) }); run.Skipped != 2 || len(got) != 0 {
		t.Errorf("second run %+v, problems %+v", run, got)
	}

	// a store that fails: each input says so, with the store's error
	got = nil
	Index(failing{references.NewMemory()}, []string{list, bad}, mailbox.Options{}, nil, func(p Problem) { got = append(got, p) })
	if len(got) != 2 {
		t.Fatalf("a failing store: %+v", got)
	}
	for i, p := range got {
		if p.Kind != Failed || p.Input != []string{list, bad}[i] || !errors.Is(p, errWrite) || p.Error() != "indexing "+p.Input+": disk I/O error" {
			t.Errorf("a failing store: %+v (%q)", p, p.Error())
		}
	}
	// no report function: the problems are not asked for
	if run := Index(references.NewMemory(), []string{bad, missing}, mailbox.Options{}, nil, nil); run.Messages != 1 {
		t.Errorf("without report: %+v", run)
	}
}

// TestIndexUnreadable: a message file of a directory that cannot be
// read is reported as Unreadable, naming it, and is read again next time;
// it and the walk of its directory are incomplete until then.
func TestIndexUnreadable(t *testing.T) {
	if testutil.AsNobody(t) { // root reads files whatever their mode
		return
	}
	md := filepath.Join(t.TempDir(), "maildir")
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(md, sub), 0o755)
	}
	for i := range 2 {
		os.WriteFile(filepath.Join(md, "cur", fmt.Sprint(i)), fmt.Appendf(nil, "From: a@b\nMessage-ID: <m%d@x>\n\nbody\n", i), 0o644)
	}
	locked := filepath.Join(md, "cur", "1")
	os.Chmod(locked, 0)
	defer os.Chmod(locked, 0o644)
	store := references.NewMemory()
	var got []Problem
	run := Index(store, []string{md}, mailbox.Options{}, nil, func(p Problem) { got = append(got, p) })
	if len(got) != 1 || got[0].Kind != Unreadable || got[0].Input != md || !strings.Contains(got[0].Msg, locked) {
		t.Fatalf("problems %+v", got)
	}
	if st, _ := store.Stats(); run.Messages != 1 || st.Messages != 1 || st.Files != 2 || st.Incomplete != 2 {
		t.Errorf("the unreadable file indexed: %+v, store %+v", run, st)
	}
	os.Chmod(locked, 0o644)
	got = nil
	run = Index(store, []string{md}, mailbox.Options{}, nil, func(p Problem) { got = append(got, p) })
	if run.Messages != 1 || run.Skipped != 1 || len(got) != 0 {
		t.Errorf("second run %+v, problems %+v", run, got)
	}
	if l, _ := store.Messages("m1@x"); len(l) != 1 {
		t.Errorf("the file read again: %v", l)
	}
	if st, _ := store.Stats(); st.Files != 2 || st.Incomplete != 0 {
		t.Errorf("after the second run: %+v", st)
	}
}

// TestIndexThenScan is the wiring of resolve: standard input spooled by
// the opener, indexed, then scanned again through the same opener with
// the stages; its references resolve to "-", and the spool is gone after.
func TestIndexThenScan(t *testing.T) {
	data, err := os.ReadFile(list)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	in := &inputs.Opener{Stdin: strings.NewReader(string(data)), Spool: true, TempDir: tmp}
	store, err := OpenStore(Options{TempDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var got []Problem
	run := Index(store, []string{inputs.Stdin}, mailbox.Options{}, in.Open, func(p Problem) { got = append(got, p) })
	if run.Messages != 5 || len(got) != 0 {
		t.Fatalf("index of standard input: %+v %+v", run, got)
	}
	o := Options{Only: true, Implicit: true}
	cfg := &scan.Config{Jobs: 2, Stages: Stages(NewResolver(store, o), o)}
	status := map[string]string{}
	err = scan.Run([]string{inputs.Stdin}, func(name string) (*mailbox.Reader, error) { return in.Open(name, &cfg.Mailbox) }, cfg, nil,
		func(r *scan.Result) error {
			if r.Err != nil {
				return r.Err
			}
			for _, rec := range r.Records {
				if rec.Path != inputs.Stdin || !references.Handles(rec.Scheme) {
					t.Errorf("record %+v", rec)
				}
				if rec.Target != nil && rec.Target.File != inputs.Stdin {
					t.Errorf("target %+v", rec.Target)
				}
				status[rec.Canonical+" "+rec.Form] = rec.Status
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"mid:copy@example.org bare":                        "resolved",
		"mid:related@example.org/diagram@example.org bare": "resolved",
		"mid:root@example.org implicit":                    "resolved",
		"mid:pruned@example.org bare":                      "dangling",
	} {
		if status[key] != want {
			t.Errorf("%s: %q, want %q (all: %v)", key, status[key], want, status)
		}
	}
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}
