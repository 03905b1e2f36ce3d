package mailbox

import (
	"fmt"
	"mime"
	netmail "net/mail"
	"strings"
	"testing"
	"time"
)

// parseHeaderRef is the plain reading parseHeader must agree with: split
// into lines, unfold by appending, one string per field.
func parseHeaderRef(raw []byte, base int64, max int, part string) (Header, int, []Problem) {
	var h Header
	var probs []Problem
	for i, full := range lines(raw) {
		if i >= max {
			probs = append(probs, Problem{Offset: base + int64(i), Part: part, Msg: "header block longer than the limit; the rest is read as body"})
			return h, i, probs
		}
		line := strings.TrimRight(string(full), "\n")
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			return h, i + len(full), probs
		}
		next := base + int64(i+len(full))
		colon := strings.IndexByte(line, ':')
		switch {
		case line[0] == ' ' || line[0] == '\t':
			if len(h) == 0 {
				probs = append(probs, Problem{Offset: base + int64(i), Part: part, Msg: "header starts with a continuation line"})
				continue
			}
			h[len(h)-1].Value += " " + strings.TrimSpace(line)
			h[len(h)-1].End = next
		case colon <= 0 || strings.ContainsFunc(line[:colon], func(r rune) bool { return r <= ' ' || r >= 0x7f }):
			msg := "header line without a colon, skipped"
			if strings.HasPrefix(line, "From ") || strings.HasPrefix(line, ">From ") {
				msg = "\"From \" line inside the header, skipped"
			}
			probs = append(probs, Problem{Offset: base + int64(i), Part: part, Msg: msg})
		default:
			h = append(h, Field{line[:colon], strings.TrimSpace(line[colon+1:]), base + int64(i), next})
		}
	}
	return h, len(raw), probs
}

func sameHeader(t *testing.T, in string, max int) {
	t.Helper()
	h, body, probs := parseHeader([]byte(in), 100, max, "1")
	rh, rbody, rprobs := parseHeaderRef([]byte(in), 100, max, "1")
	got := fmt.Sprintf("%+v %d %v", []Field(h), body, probs)
	want := fmt.Sprintf("%+v %d %v", []Field(rh), rbody, rprobs)
	if len(h) == 0 && len(rh) == 0 {
		got, want = fmt.Sprint(body, probs), fmt.Sprint(rbody, rprobs)
	}
	if got != want {
		t.Errorf("%q (max %d):\ngot  %s\nwant %s", in, max, got, want)
	}
}

func TestParseHeader(t *testing.T) {
	for _, in := range []string{
		"",
		"\n",
		"Subject: hi\n\nbody",
		"Subject: hi\r\nFrom: a@b\r\n\r\nbody",
		"Subject:   spaced   \n  folded  \n\tagain\nX: y\n\n",
		"Subject:\n continued only\n\n",
		" leading continuation\nA: b\n\n",
		"From a@b Sat Jan  3 01:05:34 1996\nA: b\n\n",
		">From a@b\nA: b\n\n",
		"no colon here\nA: b\n\n",
		"Bad Name: x\nA: b\n\n",
		":empty name\n\n",
		"A: b",           // no ending at all
		"A: b\nB: c\r\n", // ends with the header
		"A: " + strings.Repeat("x", 3000) + "\n" + strings.Repeat(" y\n", 40) + "\n",
		strings.Repeat("F: v\n", 50) + "\n",
	} {
		sameHeader(t, in, 1<<20)
		sameHeader(t, in, 12)
	}
}

// FuzzHeader holds parseHeader to the plain reading.
func FuzzHeader(f *testing.F) {
	f.Add("Subject: hi\r\n folded\r\n\r\nbody", 64)
	f.Add(" x\nFrom y\nA:b\n\n", 3)
	f.Fuzz(func(t *testing.T, in string, max int) {
		if max <= 0 {
			max = 1 << 20
		}
		sameHeader(t, in, max)
	})
}

// FuzzMediaType holds parseMediaType to mime.ParseMediaType.
func FuzzMediaType(f *testing.F) {
	for _, s := range []string{
		"text/plain", "Text/HTML; Charset=\"UTF-8\"", "text/plain; charset=us-ascii; format=flowed;",
		"multipart/mixed; boundary=\"=_a b\"", "text/plain; charset*=utf-8''x", "text/plain; a=1; A=2",
		"text/plain; name=\"a\\\"b\"", "text/ plain", "text/plain;charset=", " text/plain ; x=y ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		mt, params, err := parseMediaType(s)
		wmt, wparams, werr := mime.ParseMediaType(s)
		if (err == nil) != (werr == nil) || mt != wmt || fmt.Sprint(params) != fmt.Sprint(wparams) {
			t.Errorf("%q: got %q %v %v, want %q %v %v", s, mt, params, err, wmt, wparams, werr)
		}
	})
}

// TestSummaryFirstField: the summary takes the first of repeated fields,
// whatever the case of their names, as Header.Get does.
func TestSummaryFirstField(t *testing.T) {
	raw := "subject: first\nMESSAGE-ID: <a@x>\nDate: Sat, 3 Jan 1996 01:05:34 +0000\nSubject: second\n" +
		"Message-Id: <b@x>\nfrom: A <a@x>\nFrom: B <b@x>\nNewsGroups: comp.mail, news.misc\ndate: Sun, 4 Jan 1996 00:00:00 +0000\n\nbody\n"
	r, err := NewReader(strings.NewReader(raw), "m.eml", &Options{Format: FormatMessage})
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%s|%s|%s|%s|%s", m.Subject, m.MessageID, m.From, m.Newsgroups, m.Date.Format("2006-01-02"))
	if want := "first|a@x|A <a@x>|comp.mail,news.misc|1996-01-03"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}

func TestFieldIs(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"Message-ID", "message-id", true}, {"CONTENT-TYPE", "Content-Type", true}, {"Date", "Date", true},
		{"Date", "Data", false}, {"Dat", "Date", false}, {"@", "`", false}, {"X[", "x{", false}, {"a^", "A~", false},
		{"Subject", "Subjec\u212a"[:7], false},
	} {
		if got := fieldIs(tt.a, tt.b); got != tt.want {
			t.Errorf("fieldIs(%q, %q) = %v", tt.a, tt.b, got)
		}
	}
}

// FuzzDate: a date the fast path takes is the date net/mail reads, in
// the same zone offset.
func FuzzDate(f *testing.F) {
	for _, d := range []string{"Wed, 23 Mar 1994 18:58:05 +0100", "29 Feb 2000 00:00 -2359", "29 Feb 1900 10:00:00 +0000",
		"31 Apr 2001 10:00:00 +0000", "1 Jan 0001 00:00:00 +9900"} {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, d string) {
		fast, ok := parseDate5322(d)
		if !ok {
			return
		}
		slow, err := netmail.ParseDate(d)
		if err != nil || !fast.Equal(slow) || fast.Format(time.RFC3339) != slow.Format(time.RFC3339) {
			t.Errorf("%q: fast %v, net/mail %v %v", d, fast, slow, err)
		}
	})
}

// TestDaysSinceEpoch compares with time.Date over four centuries and
// across the years 0 and 1.
func TestDaysSinceEpoch(t *testing.T) {
	for _, y := range []int{0, 1, 4, 100, 1582, 1899, 1900, 1969, 1970, 1971, 1999, 2000, 2024, 2100, 2400, 9999} {
		for m := 1; m <= 12; m++ {
			for _, d := range []int{1, 15, 28, daysIn(time.Month(m), y)} {
				want := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Unix() / 86400
				if u := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Unix(); u < 0 && u%86400 != 0 {
					want--
				}
				if got := daysSinceEpoch(y, m, d); got != want {
					t.Errorf("%04d-%02d-%02d: %d days, want %d", y, m, d, got, want)
				}
			}
		}
	}
}
