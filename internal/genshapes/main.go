// Command genshapes writes the inputs of the shape benchmark
// (scripts/shapes.sh): each shape of internal/shapes, a message repeated
// to about -size bytes, as DIR/NAME.mbox (the maildir shape as the
// Maildir DIR/maildir):
//
//	go run ./internal/genshapes -size 20M -seeds DIR -lore MBOX -mbox MBOX OUTDIR [SHAPE...]
//
// -seeds names a directory of the seed documents (001_*.txt ... 004_*.txt);
// without it, or for a document it lacks, a built-in text stands in. The
// lore and mboxsrc shapes need -lore and -mbox.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/linkscan/linkscan/internal/shapes"
)

func main() {
	size := flag.String("size", "20M", "approximate size of each shape: bytes, or with a K or M suffix")
	seeds := flag.String("seeds", "", "directory of the seed documents")
	lore := flag.String("lore", "", "an mbox of modern list mail (the lore shape)")
	mbox := flag.String("mbox", "", "an mbox of 1999 list mail (the mboxsrc shape)")
	list := flag.Bool("list", false, "list the shapes that can be built, a name a line, and exit")
	flag.Parse()
	d, err := shapes.Load(*seeds, *lore, *mbox)
	if err != nil {
		fail(err)
	}
	if *list {
		for _, s := range shapes.All {
			if d.Available(s) {
				fmt.Println(s.Name)
			}
		}
		return
	}
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "genshapes: name the output directory")
		os.Exit(2)
	}
	n, err := parseSize(*size)
	if err != nil {
		fail(err)
	}
	dir, want := flag.Arg(0), flag.Args()[1:]
	for _, s := range shapes.All {
		if len(want) > 0 && !slices.Contains(want, s.Name) || !d.Available(s) {
			continue
		}
		if s.Name == "maildir" {
			err = shapes.WriteMaildir(filepath.Join(dir, "maildir"), n, d)
		} else {
			err = writeFile(filepath.Join(dir, s.Name+".mbox"), s.Name, n, d)
		}
		if err != nil {
			fail(err)
		}
	}
}

func writeFile(path, name string, n int64, d shapes.Docs) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := shapes.Write(f, name, n, d); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v * mult, err
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "genshapes:", err)
	os.Exit(1)
}
