package extract_test

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/extract"
	"github.com/linkscan/linkscan/mailbox"
)

var domainsList = flag.String("domains-list", "", "write every bare domain found in the corpus, with a line of context, to this file (for labelling)")

// corpusDir is the shared corpus beside the repository (see
// ../shared/corpus/README.md); tests that read it skip without it.
const corpusDir = "../../shared/corpus"

// TestBareDomainsPrecision measures Options.BareDomains on the text parts
// of every message of the shared corpus, and of the seed documents and
// mail fixtures of ../testdata, against the hand labels of
// testdata/domains-labels.txt ("y" a host a reader takes for a link, "n"
// not one; one distinct link text a line) and prints the figures that
// docs/extract.md reports (go test ./extract -run BareDomainsPrecision -v).
// It fails when precision falls below 0.80, or when a third of the links
// found have no label (label them, with -domains-list to see the
// contexts).
func TestBareDomainsPrecision(t *testing.T) {
	t.Run("corpus", func(t *testing.T) {
		if _, err := os.Stat(corpusDir); err != nil {
			t.Skip("no shared corpus beside the repository")
		}
		measureDomains(t, false)
	})
	t.Run("seeds", func(t *testing.T) { measureDomains(t, true) })
}

func measureDomains(t *testing.T, seeds bool) {
	labels := readLabels(t, filepath.Join("testdata", "domains-labels.txt"))
	type seen struct {
		n       int
		context string
	}
	found := map[string]*seen{}
	var msgs, parts int
	var inputs []string
	if seeds {
		for _, n := range []string{"seed-001.txt", "seed-002-unescaped.txt", "seed-004.txt", "mail/mboxrd.mbox", "mail/mime.eml", "mail/bnews.txt", "mail/anews.txt"} {
			inputs = append(inputs, filepath.Join("..", "testdata", n))
		}
	}
	ents, _ := os.ReadDir(corpusDir)
	for _, e := range ents {
		if seeds {
			break
		}
		p := filepath.Join(corpusDir, e.Name())
		if !e.IsDir() {
			if !strings.HasPrefix(e.Name(), "README") {
				inputs = append(inputs, p)
			}
			continue
		}
		sub, _ := os.ReadDir(p)
		for _, s := range sub {
			if n := s.Name(); n != "COPYING" && n != "LICENSE" && !strings.HasPrefix(n, "README") {
				inputs = append(inputs, filepath.Join(p, n))
			}
		}
	}
	opts := &extract.Options{BareDomains: true}
	for _, in := range inputs {
		r, err := mailbox.Open(in, nil)
		if err != nil {
			if seeds { // the repository's own files: a missing one would go unmeasured
				t.Fatal(err)
			}
			continue
		}
		for {
			m, err := r.Next()
			if m == nil || err != nil {
				break
			}
			msgs++
			for _, p := range m.Parts() {
				if p.Text == nil {
					continue
				}
				parts++
				for _, l := range extract.All(p.Text, opts) {
					if l.Form != extract.FormDomain {
						continue
					}
					s := found[l.URL]
					if s == nil {
						ls := bytes.LastIndexByte(p.Text[:l.Start], '\n') + 1
						le := bytes.IndexByte(p.Text[l.End:], '\n')
						if le < 0 {
							le = len(p.Text) - int(l.End)
						}
						s = &seen{context: string(p.Text[ls : int(l.End)+le])}
						found[l.URL] = s
					}
					s.n++
				}
			}
		}
		r.Close()
	}
	var yes, no, yesN, noN int
	var unlabelled []string
	for _, u := range slices.Sorted(maps.Keys(found)) {
		switch labels[u] {
		case "y":
			yes++
			yesN += found[u].n
		case "n":
			no++
			noN += found[u].n
			t.Logf("false positive: %q (%d times) in %q", u, found[u].n, strings.TrimSpace(found[u].context))
		default:
			unlabelled = append(unlabelled, u)
		}
	}
	if *domainsList != "" {
		var b strings.Builder
		for u, s := range found {
			fmt.Fprintf(&b, "%s\t%s\t%d\t%q\n", labels[u], u, s.n, strings.TrimSpace(s.context))
		}
		if err := os.WriteFile(*domainsList, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	precision := float64(yes) / float64(max(yes+no, 1))
	t.Logf("bare domains in %d messages, %d text parts: %d distinct (%d occurrences); precision %.2f distinct (%d/%d), %.2f occurrences (%d/%d)",
		msgs, parts, len(found), yesN+noN, precision, yes, yes+no, float64(yesN)/float64(max(yesN+noN, 1)), yesN, yesN+noN)
	if len(unlabelled) > 0 {
		// a change in decoding may bring a few new ones: label them
		t.Logf("%d bare domains without a label in testdata/domains-labels.txt: %q", len(unlabelled), unlabelled)
	}
	if 3*len(unlabelled) > len(found) {
		t.Errorf("%d of %d bare domains have no label: the figures mean little; label them (-domains-list)", len(unlabelled), len(found))
	}
	if precision < 0.80 {
		t.Errorf("precision %.2f below 0.80", precision)
	}
}

func readLabels(t *testing.T, name string) map[string]string {
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		lab, u, ok := strings.Cut(line, "\t")
		if !ok || (lab != "y" && lab != "n") {
			t.Fatalf("%s: bad line %q", name, line)
		}
		m[u] = lab
	}
	return m
}
