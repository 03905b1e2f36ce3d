package pick

import (
	"errors"
	"strings"
)

// ErrUnsafeTarget is returned by Command for a target that a program
// could take for an option.
var ErrUnsafeTarget = errors.New("target begins with '-'")

// Command returns the command line that opens target: run (the --run
// template, its words split on white space, "{}" in them replaced by the
// target, the target added as a last word when no word holds "{}"), or
// else the first program of browser (the $BROWSER list, programs
// separated by ':', "%s" standing for the target as in run's "{}"), or
// else xdg-open. No shell reads the line: the target is one word
// whatever it holds.
func Command(run, browser, target string) ([]string, error) {
	if strings.HasPrefix(target, "-") {
		return nil, ErrUnsafeTarget
	}
	if words := strings.Fields(run); len(words) > 0 {
		return fill(words, "{}", target), nil
	}
	for b := range strings.SplitSeq(browser, ":") {
		if words := strings.Fields(b); len(words) > 0 {
			return fill(words, "%s", target), nil
		}
	}
	return []string{"xdg-open", target}, nil
}

// fill replaces mark in words by target, or adds target as a last word
// when no word holds mark.
func fill(words []string, mark, target string) []string {
	out := make([]string, 0, len(words)+1)
	found := false
	for _, w := range words {
		if strings.Contains(w, mark) {
			found = true
			w = strings.ReplaceAll(w, mark, target)
		}
		out = append(out, w)
	}
	if !found {
		out = append(out, target)
	}
	return out
}
