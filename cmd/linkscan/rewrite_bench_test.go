package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/internal/corpus"
)

// benchRules1in10 maps one host of the nine the corpus generator uses:
// about one link in ten changes.
const benchRules1in10 = "version = 1\n[[rule]]\naction = \"map\"\nfrom-host = \"ftp.uu.net\"\nto-host = \"ftp.example.org\"\n"

// mapRulesFile returns a rules file of n map rules on hosts the corpus
// does not use, and the one-in-ten rule last.
func mapRulesFile(n int) string {
	var b strings.Builder
	b.WriteString("version = 1\n")
	for i := range n {
		fmt.Fprintf(&b, "[[rule]]\naction = \"map\"\nfrom-host = \"h%d.moved.example\"\nto-host = \"h%d.example.org\"\n", i, i)
	}
	b.WriteString(benchRules1in10[len("version = 1\n"):])
	return b.String()
}

// BenchmarkRewrite runs the whole command on a generated 8 MiB mbox
// (internal/corpus), writing -o to a file: rules that change about one
// link in ten, 100,000 map rules (and the same one), and no rules (the
// copy path). The rules file is read in each iteration too: with
// rules=100000 it is part of the cost (see scripts/rewrite-perf.sh for
// large archives, where it is not).
func BenchmarkRewrite(b *testing.B) {
	dir := b.TempDir()
	in := filepath.Join(dir, "corpus.mbox")
	f, err := os.Create(in)
	if err != nil {
		b.Fatal(err)
	}
	if err := corpus.Write(f, 8<<20, 1); err != nil {
		b.Fatal(err)
	}
	f.Close()
	fi, _ := os.Stat(in)
	cases := []struct{ name, rules string }{
		{"changes=1in10", benchRules1in10},
		{"changes=1in10/rules=100000", mapRulesFile(100000)},
		{"changes=none", "version = 1\n"},
	}
	for _, c := range cases {
		rules := filepath.Join(dir, "rules.toml")
		os.WriteFile(rules, []byte(c.rules), 0o644)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(fi.Size())
			b.ReportAllocs()
			out := filepath.Join(dir, "out.mbox")
			for range b.N {
				code := run([]string{"rewrite", "--rules", rules, "--progress", "never", "-o", out, in}, nil, io.Discard, io.Discard)
				if code != exitOK && code != exitDamage {
					b.Fatalf("exit %d", code)
				}
			}
		})
	}
}
