package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// traces are marks of the project's review process or of a scratch
// machine, which comments and docs must not carry: they should say what
// the code does and why. The patterns are split so that this file does
// not match them.
var traces = regexp.MustCompile(strings.Join([]string{
	`REVIEW` + `[0-9]`,   // review ids: the word, then a round number
	`/wor` + `k/`,        // the development machine's work tree
	`\bcoo` + `rd/`,      // its coordination directory
	`/tmp/` + `u[0-9]+/`, // a helper's scratch directory
}, "|"))

// TestNoProcessTraces: no Go file, doc or script of the tree names a
// review id or a path of the development machine.
func TestNoProcessTraces(t *testing.T) {
	root := moduleRoot(t)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") && name != ".ci" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		switch ext, dir := filepath.Ext(path), filepath.Base(filepath.Dir(path)); {
		case ext == ".go" || ext == ".md" || ext == ".sh":
		case ext == "" && (dir == ".ci" || dir == "scripts"):
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := traces.FindString(line); m != "" {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d: %q speaks of the review process or a scratch path: %s", rel, i+1, m, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
