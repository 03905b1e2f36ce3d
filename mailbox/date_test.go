package mailbox

import (
	"net/mail"
	"testing"
	"time"
)

// TestDateZoneNames: a date written with a zone name is read at the
// offset the name stands for (TestDateZoneNamesLocal: whichever zone the
// machine is in); names that are not in zoneOffsets stay as time.Parse
// reads them.
func TestDateZoneNames(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string // RFC 3339 in UTC
		off  int    // seconds east of UTC
	}{
		{"Thu, 1 Apr 1999 10:00:00 EST", "1999-04-01T15:00:00Z", -5 * 3600},
		{"Thu, 1 Apr 1999 10:00:00 EDT", "1999-04-01T14:00:00Z", -4 * 3600},
		{"Mon, 5 Jul 1993 08:30:00 PST", "1993-07-05T16:30:00Z", -8 * 3600},
		{"5 Jul 93 08:30:00 PDT", "1993-07-05T15:30:00Z", -7 * 3600},
		{"Tue, 2 Mar 1993 12:00:00 CST", "1993-03-02T18:00:00Z", -6 * 3600},
		{"Tue, 2 Mar 1993 12:00:00 MDT", "1993-03-02T18:00:00Z", -6 * 3600},
		{"Tue, 2 Mar 1993 12:00:00 GMT", "1993-03-02T12:00:00Z", 0},
		{"Tue, 2 Mar 1993 12:00:00 UT", "1993-03-02T12:00:00Z", 0},
		{"Tue, 2 Mar 1993 12:00:00 MET", "1993-03-02T11:00:00Z", 3600},
		{"Tue, 2 Mar 1993 12:00:00 MEST", "1993-03-02T10:00:00Z", 2 * 3600},
		{"Tue, 2 Mar 1993 12:00:00 JST", "1993-03-02T03:00:00Z", 9 * 3600},
		{"Friday, 19-Nov-82 16:14:55 EST", "1982-11-19T21:14:55Z", -5 * 3600}, // RFC 850, the old layouts
		{"Wed Nov 19 16:14:55 EST 1982", "1982-11-19T21:14:55Z", -5 * 3600},
		{"Tue, 2 Mar 1993 12:00:00 -0500 (EST)", "1993-03-02T17:00:00Z", -5 * 3600}, // numeric wins, comment ignored
		{"Tue, 2 Mar 1993 12:00:00 XYZT", "1993-03-02T12:00:00Z", 0},                // unknown: as time.Parse
	} {
		got, ok := parseDate(tt.in)
		if !ok {
			t.Errorf("%q: not read", tt.in)
			continue
		}
		if s := got.UTC().Format(time.RFC3339); s != tt.want {
			t.Errorf("%q: %s, want %s", tt.in, s, tt.want)
		}
		if _, off := got.Zone(); off != tt.off {
			t.Errorf("%q: offset %d, want %d", tt.in, off, tt.off)
		}
	}
}

// TestDateZoneNamesLocal: the local zone does not change what a named
// zone means (time.Parse uses the local zone's offset for its own
// abbreviation, and UTC for any other).
func TestDateZoneNamesLocal(t *testing.T) {
	for _, name := range []string{"America/New_York", "Asia/Tokyo", "Europe/Berlin", "Asia/Shanghai", "America/Havana"} {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Logf("no zone data for %s: %v", name, err)
			continue
		}
		saved := time.Local
		time.Local = loc
		got, ok := parseDate("Thu, 1 Apr 1999 10:00:00 EST")
		got2, ok2 := parseDate("Thu, 1 Apr 1999 10:00:00 CET")
		// a numeric zone equal to the local offset: time.Parse names it
		// with the local abbreviation (CST in Shanghai), which must not
		// be taken for RFC 822's CST
		got3, ok3 := parseDate("Mon, 1 Jan 01 12:00:00 +0800")
		time.Local = saved
		if !ok3 || got3.UTC().Format(time.RFC3339) != "2001-01-01T04:00:00Z" {
			t.Errorf("local %s: +0800 read as %v %v", name, got3, ok3)
		}
		if !ok || got.UTC().Format(time.RFC3339) != "1999-04-01T15:00:00Z" {
			t.Errorf("local %s: EST read as %v %v", name, got, ok)
		}
		if !ok2 || got2.UTC().Format(time.RFC3339) != "1999-04-01T09:00:00Z" {
			t.Errorf("local %s: CET read as %v %v", name, got2, ok2)
		}
	}
}

// TestDateNamedZoneFast: a common RFC 5322 date with a zone name of
// zoneOffsets, which parseDate5322 reads itself, is the time net/mail
// and namedZone read from it: the same instant, offset and zone name.
func TestDateNamedZoneFast(t *testing.T) {
	for name := range zoneOffsets {
		for _, s := range []string{"Thu, 4 Aug 1994 15:46:18 ", "4 Aug 1994 15:46 ", "Sun, 29 Feb 2004 00:00:59 ", "Fri, 31 Dec 1999 23:59:59 "} {
			in := s + name
			want, err := mail.ParseDate(in)
			got, ok := parseDate(in)
			if err != nil {
				if _, fast := parseDate5322(in); fast {
					t.Errorf("%q: read here, not by net/mail (%v)", in, err)
				}
				continue
			}
			want = namedZone(want, in)
			wn, wo := want.Zone()
			gn, gom := got.Zone()
			if !ok || !got.Equal(want) || wo != gom || wn != gn {
				t.Errorf("%q: %v (%s %d), want %v (%s %d)", in, got, gn, gom, want, wn, wo)
			}
		}
	}
}
