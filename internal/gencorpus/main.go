// Command gencorpus writes a deterministic, realistic mbox of a given size
// for benchmarks:
//
//	go run ./internal/gencorpus -size 100M -seed 1 > /tmp/corpus.mbox
//	go run ./internal/gencorpus -size 100M -dense > /tmp/dense.mbox
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/linkscan/linkscan/internal/corpus"
)

func main() {
	size := flag.String("size", "10M", "approximate size: bytes, or with a K, M or G suffix")
	seed := flag.Uint64("seed", 1, "seed; the same seed gives the same bytes")
	dense := flag.Bool("dense", false, "the stress mix: a link every six lines, two thirds encoded or HTML")
	flag.Parse()
	n, err := parseSize(*size)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gencorpus:", err)
		os.Exit(2)
	}
	write := corpus.Write
	if *dense {
		write = corpus.WriteDense
	}
	if err := write(os.Stdout, n, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "gencorpus:", err)
		os.Exit(1)
	}
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}
