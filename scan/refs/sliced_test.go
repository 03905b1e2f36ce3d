package refs

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/record"
	"github.com/linkscan/linkscan/scan"
)

// TestSlicedStagesSame checks that the stages of references give the same
// records when scan hands them a message's records a slice at a time
// (Config.CompactAfter, scan.SlicedStage) as when it hands them all at
// once: each kept or resolved on its own, the implicit references after
// all of the message's other records.
func TestSlicedStagesSame(t *testing.T) {
	paths := []string{list, "../../testdata/refs/maildir"}
	store, err := OpenStore(Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if run := Index(store, paths, mailbox.Options{}, nil, nil); run.Messages == 0 {
		t.Fatalf("nothing indexed: %+v", run)
	}
	for _, o := range []Options{
		{},
		{Implicit: true},
		{Only: true},
		{Only: true, Implicit: true},
		{Implicit: true, Statuses: map[string]bool{"dangling": true}},
	} {
		stages := Stages(NewResolver(store, o), o)
		for _, st := range stages {
			if _, ok := st.(scan.SlicedStage); !ok {
				t.Fatalf("%T is not a scan.SlicedStage", st)
			}
		}
		run := func(compactAfter int) []string {
			cfg := &scan.Config{Jobs: 2, Stages: stages, CompactAfter: compactAfter}
			var out []string
			err := scan.Run(paths, func(name string) (*mailbox.Reader, error) { return mailbox.Open(name, &cfg.Mailbox) }, cfg, nil,
				func(r *scan.Result) error {
					if r.Err != nil {
						return r.Err
					}
					return r.Each(func(rec *record.Record) error {
						b, err := json.Marshal(rec)
						out = append(out, string(b))
						return err
					})
				})
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		whole := run(0)
		if len(whole) == 0 {
			t.Fatalf("%+v: no records", o)
		}
		for _, n := range []int{1, 2, 3} {
			got := run(n)
			if fmt.Sprint(got) != fmt.Sprint(whole) {
				t.Errorf("%+v, CompactAfter %d: %d records\n%v\nwant %d\n%v", o, n, len(got), got, len(whole), whole)
			}
		}
	}
}
