package references

import (
	"encoding/json"
	"testing"

	"github.com/linkscan/linkscan/record/recordtest"
)

// TestStatsFields: Stats' JSON tags and the keys of a Stats with every
// field set are StatsFields' names, in order, and each field has a Doc.
func TestStatsFields(t *testing.T) {
	recordtest.Struct(t, StatsFields, Stats{})
	b, err := json.Marshal(Stats{1, 2, 3, 4, 5, 6, 7, 8})
	if err != nil {
		t.Fatal(err)
	}
	recordtest.JSONKeys(t, StatsFields, b)
	for _, f := range StatsFields {
		if f.Doc == "" {
			t.Errorf("field %s has no Doc", f.Name)
		}
	}
}
