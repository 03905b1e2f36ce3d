// Command rewritecorpus runs the check of package rewrite/rewritecheck
// over every message of the mbox files given (or of the files of the
// directories given): rewrite with the shipped unwrappers and
// --break-dkim, then the oracle's word, extent and target checks. It
// prints the figures and every failure, and exits 1 when a check
// failed. scripts/rewrite-corpus.sh runs it.
//
//	go run ./rewrite/rewritecheck/rewritecorpus [-v] PATH...
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/rewrite/rewritecheck"
)

func main() {
	verbose := flag.Bool("v", false, "print the whole gateway links not unwrapped too")
	flag.Parse()
	var files []string
	for _, a := range flag.Args() {
		st, err := os.Stat(a)
		if err != nil {
			fmt.Fprintln(os.Stderr, "rewritecorpus:", err)
			os.Exit(2)
		}
		if !st.IsDir() {
			files = append(files, a)
			continue
		}
		ents, err := os.ReadDir(a)
		if err != nil {
			fmt.Fprintln(os.Stderr, "rewritecorpus:", err)
			os.Exit(2)
		}
		for _, e := range ents {
			if e.Type().IsRegular() && filepath.Ext(e.Name()) == ".mbox" {
				files = append(files, filepath.Join(a, e.Name()))
			}
		}
	}
	rs := rewritecheck.Rules()
	var r rewritecheck.Result
	for _, f := range files {
		rd, err := mailbox.Open(f, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "rewritecorpus:", err)
			os.Exit(2)
		}
		for {
			m, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "rewritecorpus:", f, err)
				break
			}
			rewritecheck.Message(rs, m.Raw, fmt.Sprintf("%s#%d", f, m.Offset), &r)
		}
		rd.Close()
	}
	fmt.Printf("files %d\n%s", len(files), r.Report(*verbose))
	if r.Failed() {
		os.Exit(1)
	}
}
