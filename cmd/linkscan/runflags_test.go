package main

import (
	"strings"
	"testing"
)

// TestRunFlags: the flags that scan and rewrite share are checked alike,
// with exit 2 and a message naming the flag.
func TestRunFlags(t *testing.T) {
	rules := writeTestFile(t, t.TempDir()+"/r.toml", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"scan", "--jobs", "-1", "x.mbox"}, "--jobs and --warn-limit must not be negative"},
		{[]string{"scan", "--warn-limit", "-2", "x.mbox"}, "--jobs and --warn-limit must not be negative"},
		{[]string{"scan", "--damage-exit", "126", "x.mbox"}, "--damage-exit must be between 0 and 125"},
		{[]string{"scan", "--progress", "sometimes", "x.mbox"}, "--progress must be auto, always or never"},
		{[]string{"rewrite", "--rules", rules, "--jobs", "-1", "--dry-run", "x.mbox"}, "--jobs and --warn-limit must not be negative"},
		{[]string{"rewrite", "--rules", rules, "--damage-exit", "-1", "--dry-run", "x.mbox"}, "--damage-exit must be between 0 and 125"},
		{[]string{"rewrite", "--rules", rules, "--progress", "often", "--dry-run", "x.mbox"}, "--progress must be auto, always or never"},
	} {
		code, _, errs := runCmd("", tc.args...)
		if code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errs, exitUsage, tc.want)
		}
	}
}
