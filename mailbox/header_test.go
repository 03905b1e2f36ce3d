package mailbox

import (
	"errors"
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
		badName := colon <= 0 || strings.ContainsFunc(line[:colon], func(r rune) bool { return r <= ' ' || r >= 0x7f })
		ended := func(msg string) (Header, int, []Problem) {
			return h, i, append(probs, Problem{Offset: base + int64(i), Part: part, Msg: msg})
		}
		switch {
		case line[0] != ' ' && line[0] != '\t' && !badName && refURL(line):
			if !refFieldsFollow(string(raw[i+len(full):]), i+len(full), max) {
				return ended("header ended without a blank line at a URL line; read as body from here")
			}
			if len(h) == 0 {
				probs = append(probs, Problem{Offset: base + int64(i), Part: part, Msg: "URL line before the first header field, skipped"})
				continue
			}
			probs = append(probs, Problem{Offset: base + int64(i), Part: part, Msg: "URL line inside the header without indentation; read as part of the field before it (" + h[len(h)-1].Name + ")"})
			h[len(h)-1].Value += " " + strings.TrimSpace(line)
			h[len(h)-1].End = next
		case line[0] != ' ' && line[0] != '\t' && badName && !strings.HasPrefix(line, "From ") && !strings.HasPrefix(line, ">From ") &&
			!refFieldsFollow(string(raw[i+len(full):]), i+len(full), max):
			return ended("header line without a colon and no field after it: header ended without a blank line; read as body from here")
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

// refURL: the name is a URL scheme and "//" follows the colon.
func refURL(line string) bool {
	scheme, rest, _ := strings.Cut(line, ":")
	if !strings.HasPrefix(rest, "//") || scheme == "" {
		return false
	}
	for k, r := range scheme {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (k == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return true
}

// refFieldsFollow: one of the next four lines of the block that are not
// continuation lines (of the next 64 lines; the block ends at a blank
// line or at a line starting at max or later; at is rest's index in the
// whole) is a field that is no URL line.
func refFieldsFollow(rest string, at, max int) bool {
	others := 0
	for n, l := range strings.SplitAfter(rest, "\n") {
		line := strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
		if n >= 64 || line == "" || at >= max {
			return false
		}
		at += len(l)
		if line[0] == ' ' || line[0] == '\t' {
			continue
		}
		if others++; others > 4 {
			return false
		}
		colon := strings.IndexByte(line, ':')
		if colon > 0 && !strings.ContainsFunc(line[:colon], func(r rune) bool { return r <= ' ' || r >= 0x7f }) && !refURL(line) {
			return true
		}
	}
	return false
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
		// URL lines end the header
		"From: me\nTo: you\nhttp://example.com/a\nhttp://example.com/b\n",
		"From: a@b\nSubject: x\nhttps://example.com/lost\n\nbody",
		"A: b\nsvn+ssh://host/x\n\n",
		"A: b\nhttp:/x\n\n", // no "//": a field
		"A: b\n1http://x\n\n",
		// a line without a colon: skipped when fields follow, else the body
		"Date: 2024-01-01\nFrom: me\nNotes for the week\nhttp://example.com/n1\n",
		"A: b\nno colon\n\nbody",
		"A: b\nno colon\nstill none\nB: c\n\n",
		"A: b\nx\ny\nz\nw\nB: c\n\n",
		"A: b\nx\n folded\nhttp://u\nB: c\n\n",
		// a URL line that fields follow is a broken fold
		"From: a@b\nList-Archive:\nhttp://l.example/a\nMessage-ID: <r@x>\n\nbody",
		"http://first\nA: b\n\n",
		"A: b\nhttp://u\nhttp://v\nno colon\nC: d\n\n",
		"A: b\nhttp://u\nhttp://v\nno colon\nx\nC: d\n\n",
		"A: b\nx\nFrom y\nB: c\n\n",
		"A: b\nbroken=fold;\n\tc1\n\tc2\n\tc3\n\tc4\n\tc5\nB: c\n\n", // continuation lines not counted
		"A: b\nbroken\n" + strings.Repeat(" c\n", 70) + "B: c\n\n",   // but 64 lines at most
	} {
		sameHeader(t, in, 1<<20)
		sameHeader(t, in, 12)
	}
}

// FuzzHeader holds parseHeader to the plain reading.
func FuzzHeader(f *testing.F) {
	f.Add("Subject: hi\r\n folded\r\n\r\nbody", 64)
	f.Add(" x\nFrom y\nA:b\n\n", 3)
	f.Add("From: me\nhttp://example.com/a\nB: c\n\n", 64)
	f.Add("A: b\nno colon\n folded\nx\nhttps://u\nC: d\n\n", 1<<20)
	f.Add("A: b\nno colon\ny\nz\nw\nv\nC: d\n", 30)
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
		"31 Apr 2001 10:00:00 +0000", "1 Jan 0001 00:00:00 +9900", "Thu, 4 Aug 1994 15:46:18 PDT", "4 Aug 1994 15:46 MEST"} {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, d string) {
		fast, ok := parseDate5322(d)
		if !ok {
			return
		}
		slow, err := netmail.ParseDate(d)
		slow = namedZone(slow, d) // a zone name: the offset it stands for
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

// TestHeaderEndsWithoutBlankLine: a URL line, or a line without a colon
// that no field follows, ends the header: its links are
// found in the body, a problem of kind ErrNoBlankLine says where, the
// body's offsets are the file's and the message's bytes are the input's.
func TestHeaderEndsWithoutBlankLine(t *testing.T) {
	for _, c := range []struct {
		name, in string
		format   Format
		links    []string // in the text, each
		body     string   // the line the body starts with (in the file)
		fields   int
	}{
		{"url list under fields", "From: me\nTo: you\nhttp://example.com/a\nhttp://example.com/b\n", FormatMessage,
			[]string{"http://example.com/a", "http://example.com/b"}, "http://example.com/a", 2},
		{"mbox", "From a@b Mon Jan  1 00:00:00 2001\nFrom: a@b\nSubject: x\nhttp://example.com/lost\n\nhttp://example.com/body\n", FormatMbox,
			[]string{"http://example.com/lost", "http://example.com/body"}, "http://example.com/lost", 2},
		{"notes", "Date: 2024-01-01\nFrom: me\nNotes for the week\nhttp://example.com/n1\n", FormatMessage,
			[]string{"Notes for the week", "http://example.com/n1"}, "Notes for the week", 2},
		{"crlf", "From: a\r\nSubject: b\r\nftp://example.com/f\r\n\r\nx\r\n", FormatMessage,
			[]string{"ftp://example.com/f"}, "ftp://example.com/f", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			ms := readAllOpts(t, c.in, Options{Format: c.format})
			if len(ms) != 1 {
				t.Fatalf("%d messages", len(ms))
			}
			m := ms[0]
			if len(m.Header) != c.fields {
				t.Errorf("header %+v", m.Header)
			}
			if !strings.HasSuffix(c.in, string(m.Raw)) || int(m.RawOffset)+len(m.Raw) != len(c.in) {
				t.Errorf("raw %q at %d", m.Raw, m.RawOffset)
			}
			at := int64(strings.Index(c.in, c.body))
			var found *Problem
			for i, p := range m.Problems {
				if errors.Is(p, ErrNoBlankLine) {
					found = &m.Problems[i]
				}
			}
			if found == nil || found.Offset != at || !errors.Is(*found, ErrBadHeader) {
				t.Errorf("problems %v, want ErrNoBlankLine at %d", m.Problems, at)
			}
			var text string
			parts := m.Parts()
			for _, p := range parts {
				text += string(p.Text)
			}
			for _, l := range c.links {
				if !strings.Contains(text, l) {
					t.Errorf("text %q lacks %q", text, l)
				}
			}
			if len(parts) == 0 || parts[0].RawStart != at || !strings.HasPrefix(c.in[parts[0].RawStart:], c.body) {
				t.Errorf("body part %+v, want RawStart %d", parts, at)
			}
		})
	}
	// a stray line between fields is still skipped, the fields kept
	ms := readAllOpts(t, "From: a@b\nno colon\nstill none\nSubject: s\n\nhttp://example.com/x\n", Options{Format: FormatMessage})
	if len(ms) != 1 || ms[0].Subject != "s" || len(ms[0].Problems) != 2 || errors.Is(ms[0].Problems[0], ErrNoBlankLine) {
		t.Errorf("stray lines: %+v", ms[0])
	}
	// continuation lines after a stray line do not count in the look-ahead
	ms = readAllOpts(t, "From: a@b\nDKIM-Signature: v=1;\nbh=broken;\n\tb=1\n\tb=2\n\tb=3\n\tb=4\n\tb=5\nSubject: s\n\nx\n", Options{Format: FormatMessage})
	if len(ms) != 1 || ms[0].Subject != "s" {
		t.Errorf("stray line before continuation lines: %+v", ms[0])
	}
}

// TestURLLineBrokenFold: a URL line that header fields follow is a broken
// fold, not the end of the header (a message from a real archive): the
// fields after it, and so the MIME structure, are read; the
// URL is in the value of the field before it; a problem says so.
func TestURLLineBrokenFold(t *testing.T) {
	in := "From: a@b\nList-Archive:\nhttp://lists.example.org/archive\nMessage-ID: <reg@x>\nSubject: s\nMIME-Version: 1.0\n" +
		"Content-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: base64\n\n" +
		"PGEgaHJlZj0iaHR0cDovL2V4YW1wbGUuY29tL2luaHRtbCI+eDwvYT4K\n"
	ms := readAllOpts(t, in, Options{Format: FormatMessage})
	if len(ms) != 1 {
		t.Fatalf("%d messages", len(ms))
	}
	m := ms[0]
	if m.MessageID != "reg@x" || m.Subject != "s" || strings.TrimSpace(m.Header.Get("List-Archive")) != "http://lists.example.org/archive" {
		t.Errorf("header %+v", m.Header)
	}
	at := int64(strings.Index(in, "http://lists"))
	if len(m.Problems) != 1 || m.Problems[0].Offset != at || !errors.Is(m.Problems[0], ErrBadHeader) || errors.Is(m.Problems[0], ErrNoBlankLine) {
		t.Errorf("problems %v, want one at %d", m.Problems, at)
	}
	if f := m.Header[1]; f.Name != "List-Archive" || in[f.Offset:f.End] != "List-Archive:\nhttp://lists.example.org/archive\n" {
		t.Errorf("field %+v", f)
	}
	parts := m.Parts()
	if len(parts) != 1 || parts[0].ContentType != "text/html" || len(parts[0].AttrLinks) != 1 || parts[0].AttrLinks[0].URL != "http://example.com/inhtml" {
		t.Errorf("parts %+v", parts)
	}
	// detected, not forced, the same
	if ms := readAllOpts(t, in, Options{}); len(ms) != 1 || ms[0].Format != FormatMessage || ms[0].MessageID != "reg@x" {
		t.Errorf("detected: %+v", ms)
	}
}
