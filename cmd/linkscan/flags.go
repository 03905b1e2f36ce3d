package main

import (
	"errors"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// listFlag is a flag that may be given several times, each time with one
// value or a comma-separated list: --host a --host b,c keeps a, b and c.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

// sizeFlag is a size in bytes, with an optional suffix of sizeSuffixes:
// K, M, G, T and KiB, MiB, GiB, TiB are powers of 1024, KB, MB, GB, TB
// powers of 1000, B is bytes; case does not matter ("10MB", "64MiB",
// "1G", "512k"). sizeHelp says so in the help texts.
type sizeFlag int64

func (s *sizeFlag) String() string { return strconv.FormatInt(int64(*s), 10) }

func (s *sizeFlag) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

// sizeSuffixes are the suffixes parseSize accepts, as the help writes
// them (matched in any case), in the order sizeSuffixText names them.
var sizeSuffixes = []struct {
	suffix string
	mult   int64
}{
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"B", 1},
}

// sizeSuffixText names every suffix of sizeSuffixes with its unit, for
// the help and the error of a bad size.
var sizeSuffixText = func() string {
	var pow1024, pow1000, bytes []string
	for _, sf := range sizeSuffixes {
		switch {
		case sf.mult == 1:
			bytes = append(bytes, sf.suffix)
		case sf.mult%1000 == 0:
			pow1000 = append(pow1000, sf.suffix)
		default:
			pow1024 = append(pow1024, sf.suffix)
		}
	}
	return strings.Join(pow1024, ", ") + " (powers of 1024), " +
		strings.Join(pow1000, ", ") + " (powers of 1000) or " +
		strings.Join(bytes, ", ") + " (bytes), in any case"
}()

// sizeHelp is the paragraph of the help texts on SIZE: a command's Long
// holds it as {{sizes}} (expanded in main.go).
var sizeHelp = wrap("SIZE is a number of bytes with an optional suffix: "+sizeSuffixText+"; a fraction with a suffix is rounded down to a byte: 10MB, 64MiB, 1G, 512k, 1.5G.", 72)

// parseSize reads a size as sizeFlag documents it. Fractions are allowed
// with a suffix ("1.5G"); the result is rounded down to a byte.
func parseSize(v string) (int64, error) {
	s := strings.ToLower(strings.TrimSpace(v))
	mult, cut := int64(1), 0
	for _, sf := range sizeSuffixes { // the longest that matches: KB, not B
		if len(sf.suffix) > cut && strings.HasSuffix(s, strings.ToLower(sf.suffix)) {
			mult, cut = sf.mult, len(sf.suffix)
		}
	}
	s = strings.TrimSpace(s[:len(s)-cut])
	if s == "" {
		return 0, fmt.Errorf("size %q: no number", v)
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("size %q is negative", v)
		}
		if n > math.MaxInt64/mult {
			return 0, fmt.Errorf("size %q is too large", v)
		}
		return n * mult, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(s, "xXpP_") {
		return 0, fmt.Errorf("size %q: want a number of bytes with an optional suffix: %s", v, sizeSuffixText)
	}
	if f < 0 {
		return 0, fmt.Errorf("size %q is negative", v)
	}
	if f*float64(mult) >= math.MaxInt64 {
		return 0, errors.New("size " + strconv.Quote(v) + " is too large")
	}
	return int64(f * float64(mult)), nil
}

// uniqueFlag is --unique (one record per canonical URL, with its count,
// written at the end) or --unique=first (each first occurrence written at
// once, without a count).
type uniqueFlag int

const (
	uniqueOff uniqueFlag = iota
	uniqueCount
	uniqueFirst
)

func (u *uniqueFlag) String() string {
	switch *u {
	case uniqueCount:
		return "true"
	case uniqueFirst:
		return "first"
	}
	return "false"
}

func (u *uniqueFlag) Set(s string) error {
	switch s {
	case "true", "count":
		*u = uniqueCount
	case "false":
		*u = uniqueOff
	case "first":
		*u = uniqueFirst
	default:
		return fmt.Errorf("want --unique or --unique=first, not %q", s)
	}
	return nil
}

// IsBoolFlag lets --unique stand alone.
func (u *uniqueFlag) IsBoolFlag() bool { return true }

// hostProfile is uri's IDNA profile (uri/host.go): a --host pattern's
// labels become the A-labels the host field holds.
var hostProfile = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.Transitional(false), idna.CheckHyphens(false))

// hostPattern puts a --host pattern in the form of the records' host
// field: lower case, and each label that is not ASCII as its A-label
// ("bücher.example" → "xn--bcher-kva.example"), so that it matches the
// hosts it names. A pattern that path.Match cannot read ("[x"), or a
// label that is not ASCII and holds a glob character or is not a valid
// name, is an error: it would match nothing, silently.
func hostPattern(p string) (string, error) {
	labels := strings.Split(p, ".")
	for i, l := range labels {
		ascii := true
		for j := 0; j < len(l); j++ {
			if l[j] >= 0x80 {
				ascii = false
				break
			}
		}
		if ascii {
			labels[i] = strings.ToLower(l)
			continue
		}
		if strings.ContainsAny(l, `*?[]\`) {
			return "", fmt.Errorf("--host %q: a label that is not ASCII cannot hold a glob character (* ? [ ] \\); write it as its xn-- form", p)
		}
		a, err := hostProfile.ToASCII(l)
		if err != nil {
			return "", fmt.Errorf("--host %q: %q is not a valid host name label: %v", p, l, err)
		}
		labels[i] = strings.ToLower(a)
	}
	q := strings.Join(labels, ".")
	if _, err := path.Match(q, ""); err != nil {
		return "", fmt.Errorf("--host %q: not a pattern (%v): * ? and [...] are as in shell globs, \\ quotes", p, err)
	}
	return q, nil
}
