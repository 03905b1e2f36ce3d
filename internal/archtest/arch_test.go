package archtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const module = "github.com/linkscan/linkscan"

// forbiddenForInternal are the packages no package under internal/ may
// import: the engines and their data sit above the utilities.
var forbiddenForInternal = []string{"extract", "record", "report", "references", "scan", "rewrite", "audit"}

// moduleRoot is the directory of go.mod, two levels up from this one.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}

var listed struct {
	sync.Once
	pkgs map[string][]string
	err  error
}

// goListImports runs go list over the module (once per test binary) and
// returns, for each of its packages (relative to the module), the
// packages of the module its non-test files import.
func goListImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	listed.Do(func() { listed.pkgs, listed.err = goList(root) })
	if listed.err != nil {
		t.Fatal(listed.err)
	}
	return listed.pkgs
}

func goList(root string) (map[string][]string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("go list needs the go command: %w", err)
	}
	cmd := exec.Command(goBin, "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w\n%s", err, stderr.Bytes())
	}
	pkgs := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		var ours []string
		for _, imp := range f[1:] {
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
				ours = append(ours, rel)
			}
		}
		pkgs[strings.TrimPrefix(f[0], module+"/")] = ours
	}
	return pkgs, nil
}

// archDoc is what docs/architecture.md says: each package's layer and
// its imports of ours ("imports of ours" column; all is true for "all
// of the above").
type archDoc struct {
	layer   map[string]int
	imports map[string][]string
	all     map[string]bool
}

var backticked = regexp.MustCompile("`([^`]+)`")

// readArchDoc reads the rooms table and the numbered list of the
// Layers section.
func readArchDoc(t *testing.T, root string) archDoc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	d := archDoc{layer: map[string]int{}, imports: map[string][]string{}, all: map[string]bool{}}
	section := ""
	layerItem := regexp.MustCompile(`^(\d+)\. (.*)$`)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if h, ok := strings.CutPrefix(line, "## "); ok {
			section = h
			continue
		}
		switch {
		case section == "Rooms and what each may import" && strings.HasPrefix(line, "| `"):
			cells := strings.Split(line, "|")
			name := strings.Trim(strings.TrimSpace(cells[1]), "`")
			last := strings.TrimSpace(cells[len(cells)-2])
			if _, dup := d.imports[name]; dup {
				t.Errorf("architecture.md: %s has two rows", name)
			}
			d.imports[name] = nil
			if last == "all of the above" {
				d.all[name] = true
				continue
			}
			for _, m := range backticked.FindAllStringSubmatch(last, -1) {
				d.imports[name] = append(d.imports[name], m[1])
			}
		case section == "Layers":
			m := layerItem.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			n, _ := strconv.Atoi(m[1])
			names, _, _ := strings.Cut(m[2], ": ")
			for _, p := range backticked.FindAllStringSubmatch(names, -1) {
				if l, dup := d.layer[p[1]]; dup {
					t.Errorf("architecture.md: %s is in layers %d and %d", p[1], l, n)
				}
				d.layer[p[1]] = n
			}
		}
	}
	if len(d.imports) == 0 || len(d.layer) == 0 {
		t.Fatalf("architecture.md: no rooms table or no Layers list found (%d rows, %d layered)", len(d.imports), len(d.layer))
	}
	return d
}

// TestLayers: every package imports only packages of lower layers, and
// the layers name every package and nothing else.
func TestLayers(t *testing.T) {
	root := moduleRoot(t)
	pkgs, doc := goListImports(t, root), readArchDoc(t, root)
	for p, imps := range pkgs {
		lp, ok := doc.layer[p]
		if !ok {
			t.Errorf("%s is in no layer of docs/architecture.md", p)
			continue
		}
		for _, imp := range imps {
			if li, ok := doc.layer[imp]; ok && li >= lp {
				t.Errorf("%s (layer %d) imports %s (layer %d): a package may import only lower layers", p, lp, imp, li)
			}
		}
	}
	for p := range doc.layer {
		if _, ok := pkgs[p]; !ok {
			t.Errorf("docs/architecture.md layers name %s, which is no package", p)
		}
	}
}

// TestImportsAsDocumented: the "imports of ours" column of each package
// is the set go list gives, and every package has its row.
func TestImportsAsDocumented(t *testing.T) {
	root := moduleRoot(t)
	pkgs, doc := goListImports(t, root), readArchDoc(t, root)
	for p, imps := range pkgs {
		want, ok := doc.imports[p]
		if !ok {
			t.Errorf("%s has no row in docs/architecture.md's table", p)
			continue
		}
		if doc.all[p] {
			continue
		}
		got := slices.Sorted(slices.Values(imps))
		want = slices.Sorted(slices.Values(want))
		if !slices.Equal(got, want) {
			t.Errorf("%s imports %q; docs/architecture.md says %q", p, got, want)
		}
	}
	for p := range doc.imports {
		if _, ok := pkgs[p]; !ok {
			t.Errorf("docs/architecture.md has a row for %s, which is no package", p)
		}
	}
}

// TestInternalBelowEngines: no package under internal/ imports an engine
// or the data the engines share.
func TestInternalBelowEngines(t *testing.T) {
	for p, imps := range goListImports(t, moduleRoot(t)) {
		if !strings.HasPrefix(p, "internal/") {
			continue
		}
		for _, imp := range imps {
			top, _, _ := strings.Cut(imp, "/")
			if slices.Contains(forbiddenForInternal, top) {
				t.Errorf("%s imports %s: internal/ packages sit below the engines", p, imp)
			}
		}
	}
}
