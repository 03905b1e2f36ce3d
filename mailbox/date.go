package mailbox

import (
	"net/mail"
	"strings"
	"sync/atomic"
	"time"
)

// Dates of messages come in three kinds of form, tried in turn:
// parseDate5322 reads the common RFC 5322 form directly, net/mail the rest
// of RFC 5322 (obsolete forms, comments), and parseOldDate the forms from
// before RFC 822 and those broken in ways net/mail does not accept.

// parseDate reads a Date field; false when no form fits.
func parseDate(s string) (time.Time, bool) {
	if t, ok := parseDate5322(s); ok {
		return t, true
	}
	if t, err := mail.ParseDate(s); err == nil {
		return namedZone(t, s), true
	}
	t, ok := parseOldDate(s)
	return namedZone(t, s), ok
}

// numericZone reports whether s holds a numeric zone, a word of a sign
// and four digits ("-0500"): time.Parse then gives the local zone's name
// when the offset is the local one, which is no zone name of the date's.
func numericZone(s string) bool {
	for i := 0; i+5 <= len(s); i++ {
		if (s[i] == '+' || s[i] == '-') && (i == 0 || s[i-1] == ' ') && (i+5 == len(s) || s[i+5] < '0' || s[i+5] > '9') {
			if d := s[i+1 : i+5]; strings.Trim(d, "0123456789") == "" {
				return true
			}
		}
	}
	return false
}

// zoneOffsets are the offsets, in hours east of UTC, of the zone names
// old mail and news write in place of a numeric zone: those of RFC 822
// (RFC 5322 section 4.3), and the European and Japanese names common in
// the archives of the 1980s and 1990s. Names that stand for more than one
// zone (BST, IST) are not in it. time.Parse knows a name only when it is
// the local zone's, and otherwise takes it for UTC, which put such dates
// hours off, and differently on machines in different zones.
// The military letters are not either (RFC 5322: written so often with
// the wrong sign that they mean -0000, an unknown offset).
var zoneOffsets = map[string]int{
	"UT": 0, "GMT": 0, "UTC": 0, "Z": 0,
	"EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6, "PST": -8, "PDT": -7,
	"WET": 0, "WEST": 1, "CET": 1, "CEST": 2, "MET": 1, "MEST": 2,
	"EET": 2, "EEST": 3, "JST": 9, "HST": -10,
}

// namedZone gives a time read from s with a zone name the offset the
// name stands for (zoneOffsets), whatever the local zone; times of a date
// with a numeric zone, and others, are returned as they are.
func namedZone(t time.Time, s string) time.Time {
	if numericZone(s) {
		return t
	}
	name, off := t.Zone()
	h, ok := zoneOffsets[name]
	if !ok || off == h*3600 {
		return t
	}
	y, mo, d := t.Date()
	hh, mm, ss := t.Clock()
	return time.Date(y, mo, d, hh, mm, ss, t.Nanosecond(), time.FixedZone(name, h*3600))
}

// parseDate5322 reads the common form of an RFC 5322 date,
// "[Day, ]D Mon YYYY HH:MM[:SS] +HHMM", and nothing else: time.Parse and
// net/mail try several layouts and cost ten times more. Other forms fail
// here and go to net/mail.
func parseDate5322(s string) (time.Time, bool) {
	// net/mail reads a zone name only without white space around the
	// date, nor a comment after it (nor does this)
	bare := s != "" && s[0] != ' ' && s[len(s)-1] != ' ' && s[len(s)-1] != ')'
	if i := strings.IndexByte(s, ','); i >= 0 {
		// only a day name the way mail writes it; the rest goes the slow way
		if t := strings.TrimLeft(s[:i], " "); !isDayName(t) || i+1 >= len(s) || s[i+1] != ' ' {
			return time.Time{}, false
		}
		s = s[i+1:]
	}
	if strings.IndexByte(s, '\t') >= 0 {
		return time.Time{}, false // time.Parse takes runs of spaces only
	}
	var f [5]string // the first five words, split on spaces
	n, i := 0, 0
	for i < len(s) && n < len(f) {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		j := i
		for j < len(s) && s[j] != ' ' {
			j++
		}
		if j > i {
			f[n] = s[i:j]
			n++
		}
		i = j
	}
	// after the zone: nothing, or one plain comment such as "(MET)"
	if rest := strings.Trim(s[i:], " "); rest != "" &&
		(len(rest) < 2 || rest[0] != '(' || rest[len(rest)-1] != ')' || strings.ContainsAny(rest[1:len(rest)-1], "()\\\r\n")) {
		return time.Time{}, false
	}
	var named *time.Location // a zone name of old mail ("PDT"), or nil
	if bare {
		named = namedLocs[f[4]]
	}
	if n < 5 || len(f[0]) > 2 || len(f[2]) != 4 || named == nil && (len(f[4]) != 5 || f[4][0] != '+' && f[4][0] != '-') {
		return time.Time{}, false
	}
	num := func(s string) (int, bool) {
		if s == "" {
			return 0, false
		}
		n := 0
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, false
			}
			n = n*10 + int(s[i]-'0')
		}
		return n, true
	}
	day, ok1 := num(f[0])
	mon, ok2 := monthOf(f[1])
	year, ok3 := num(f[2])
	tm := f[3] // hh:mm or hh:mm:ss
	if !ok1 || !ok2 || !ok3 || (len(tm) != 5 && len(tm) != 8) || tm[2] != ':' || (len(tm) == 8 && tm[5] != ':') {
		return time.Time{}, false
	}
	hh, ok4 := num(tm[0:2])
	mm, ok5 := num(tm[3:5])
	ss, ok6 := 0, true
	if len(tm) == 8 {
		ss, ok6 = num(tm[6:8])
	}
	oh, ok7, om, ok8 := 0, true, 0, true
	if named == nil {
		oh, ok7 = num(f[4][1:3])
		om, ok8 = num(f[4][3:5])
	}
	if !ok4 || !ok5 || !ok6 || !ok7 || !ok8 || day < 1 || day > 31 || hh > 23 || mm > 59 || ss > 59 || oh > 23 || om > 59 {
		return time.Time{}, false
	}
	if day > daysIn(mon, year) {
		return time.Time{}, false // 31 Feb is no date
	}
	off := (oh*60 + om) * 60
	if named != nil {
		_, off = time.Unix(0, 0).In(named).Zone()
	} else if f[4][0] == '-' {
		off = -off
	}
	// what time.Date would compute, without its normalizing and zone lookup
	sec := daysSinceEpoch(year, int(mon), day)*86400 + int64(hh*3600+mm*60+ss-off)
	if named != nil {
		return time.Unix(sec, 0).In(named), true
	}
	return time.Unix(sec, 0).In(fixedZone(off)), true
}

// namedLocs are the zones of the names of zoneOffsets of three letters
// or more, as namedZone makes them (a name, its offset), so that
// parseDate5322 reads "Thu, 4 Aug 1994 15:46:18 PDT" as net/mail and
// namedZone read it, without them. ("UT" and "Z" net/mail reads its own
// way: they go to it.)
var namedLocs = func() map[string]*time.Location {
	m := map[string]*time.Location{}
	for name, h := range zoneOffsets {
		if len(name) >= 3 {
			m[name] = time.FixedZone(name, h*3600)
		}
	}
	return m
}()

// daysSinceEpoch counts the days from 1970-01-01 to a date of the
// proleptic Gregorian calendar (the days_from_civil algorithm of Howard
// Hinnant's "chrono-Compatible Low-Level Date Algorithms").
func daysSinceEpoch(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := (m + 9) % 12 // March is 0
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

func monthOf(s string) (time.Month, bool) {
	switch s {
	case "Jan":
		return time.January, true
	case "Feb":
		return time.February, true
	case "Mar":
		return time.March, true
	case "Apr":
		return time.April, true
	case "May":
		return time.May, true
	case "Jun":
		return time.June, true
	case "Jul":
		return time.July, true
	case "Aug":
		return time.August, true
	case "Sep":
		return time.September, true
	case "Oct":
		return time.October, true
	case "Nov":
		return time.November, true
	case "Dec":
		return time.December, true
	}
	return 0, false
}

func isDayName(s string) bool {
	switch s {
	case "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun":
		return true
	}
	return false
}

func daysIn(m time.Month, year int) int {
	switch m {
	case time.February:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}

// zones keeps the fixed zones of the offsets met, by minutes from -23:59
// to +23:59, so that a date does not allocate one each time
// (parseDate5322 takes offsets up to ±23:59, as time.Parse does).
var zones [2*24*60 - 1]atomic.Pointer[time.Location]

// fixedZone returns the zone of an offset in seconds east of UTC.
func fixedZone(off int) *time.Location {
	z := &zones[off/60+24*60-1]
	if l := z.Load(); l != nil {
		return l
	}
	l := time.FixedZone("", off)
	z.Store(l)
	return l
}

// oldDateLayouts are date forms older than RFC 822's or broken in ways
// net/mail does not accept: RFC 850/1036 B-news, ctime(3) in A-news and
// "From " lines, and two-digit years.
var oldDateLayouts = []string{
	"Monday, 02-Jan-06 15:04:05 MST",
	"Mon, 02-Jan-06 15:04:05 MST",
	"02-Jan-06 15:04:05 MST",
	"Mon Jan _2 15:04:05 2006",
	"Mon Jan _2 15:04:05 MST 2006",
	"Mon, _2 Jan 06 15:04:05 MST",
	"Mon, _2 Jan 2006 15:04 MST",
	"_2 Jan 06 15:04:05 MST",
	"Mon, _2 Jan 2006 15:04:05",
	"2006-01-02 15:04:05",
}

func parseOldDate(s string) (time.Time, bool) {
	s = strings.Join(strings.Fields(stripComments(s)), " ")
	for _, l := range oldDateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
