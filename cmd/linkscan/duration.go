package main

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// durationFlag is a flag holding a duration: Go's forms (500ms, 1m30s,
// 2h) and days, d, which Go's do not have: 7d, 1.5d, 1d12h. A day is 24
// hours.
type durationFlag time.Duration

func (d *durationFlag) String() string { return time.Duration(*d).String() }

// Set takes a negative value ("-1s") too, as Go's duration flags do, so
// that each command can say which range its flag wants ("--timeout must
// be positive") rather than that the value does not parse.
func (d *durationFlag) Set(s string) error {
	neg := strings.HasPrefix(s, "-")
	v, err := parseDuration(strings.TrimPrefix(s, "-"))
	if err != nil {
		return err
	}
	if neg {
		v = -v
	}
	*d = durationFlag(v)
	return nil
}

// errDuration is the error of a duration that does not parse.
var errDuration = errors.New("not a duration (500ms, 30s, 5m, 2h, 7d, 1d12h)")

// parseDuration reads a duration as durationFlag does; a negative one
// is refused.
func parseDuration(s string) (time.Duration, error) {
	days, rest := 0.0, s
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.ParseFloat(s[:i], 64)
		if err != nil || n < 0 || n > 1e6 || strings.ContainsAny(s[:i], "eExXpP_+-") {
			return 0, errDuration
		}
		days, rest = n, s[i+1:]
	}
	var d time.Duration
	if rest != "" || days == 0 && s == rest {
		var err error
		if d, err = time.ParseDuration(rest); err != nil || d < 0 {
			return 0, errDuration
		}
	}
	return d + time.Duration(days*24*float64(time.Hour)), nil
}
