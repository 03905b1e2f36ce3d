package references

import (
	"reflect"
	"testing"

	"github.com/linkscan/linkscan/mailbox"
)

// TestIndexStatsSum: the counts of a run over several inputs are each
// input's summed; problems stay each input's own.
func TestIndexStatsSum(t *testing.T) {
	var run IndexStats
	run.Sum(IndexStats{Messages: 3, Skipped: 1, Passed: map[mailbox.SkipKind]int{mailbox.SkipEmpty: 2}, Problems: []string{"x"}})
	run.Sum(IndexStats{Messages: 4, Pruned: 5, Passed: map[mailbox.SkipKind]int{mailbox.SkipEmpty: 1, mailbox.SkipDirectory: 1}})
	run.Sum(IndexStats{})
	want := IndexStats{Messages: 7, Skipped: 1, Pruned: 5, Passed: map[mailbox.SkipKind]int{mailbox.SkipEmpty: 3, mailbox.SkipDirectory: 1}}
	if !reflect.DeepEqual(run, want) {
		t.Errorf("%+v, want %+v", run, want)
	}
}
