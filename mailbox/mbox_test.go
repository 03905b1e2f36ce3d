package mailbox

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// splitAll reads in as an mbox and describes each message as
// "offset:FromLine|Subject", read whole, a byte at a time, half reads and
// line by line (the fast paths off): the four must agree.
func splitAll(t *testing.T, in string) []string {
	t.Helper()
	read := func(r io.Reader) []string {
		rd, err := NewReader(r, "t", &Options{Format: FormatMbox})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for {
			m, err := rd.Next()
			if m != nil {
				out = append(out, fmt.Sprintf("%d:%s|%s", m.Offset, m.FromLine, m.Subject))
			}
			if err == io.EOF {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	got := read(strings.NewReader(in))
	for name, r := range map[string]io.Reader{"one byte": iotest.OneByteReader(strings.NewReader(in)), "half": iotest.HalfReader(strings.NewReader(in))} {
		if other := read(r); fmt.Sprint(other) != fmt.Sprint(got) {
			t.Errorf("%s: %q\nwhole: %q", name, other, got)
		}
	}
	lineByLine = true
	slow := read(strings.NewReader(in))
	lineByLine = false
	if fmt.Sprint(slow) != fmt.Sprint(got) {
		t.Errorf("line by line: %q\nfast: %q", slow, got)
	}
	return got
}

func TestCROnlyMessageInLFMbox(t *testing.T) {
	first := "From a@b Thu Mar 24 02:31:00 1994\nSubject: one\n\nbody one\n\n"
	for name, cr := range map[string]string{
		"LF From line":      "From c@d Thu Mar 24 02:32:00 1994\nSubject: two\r\rbody two http://example.org/cr\r\r",
		"CR From line":      "From c@d Thu Mar 24 02:32:00 1994\rSubject: two\r\rbody two http://example.org/cr\r\r",
		"no blank before":   "From c@d Thu Mar 24 02:32:00 1994\rSubject: two\r\rbody two http://example.org/cr\r",
		"CR From, LF blank": "From c@d Thu Mar 24 02:32:00 1994\rSubject: two\r\rbody two http://example.org/cr\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			third := "From e@f Thu Mar 24 02:33:00 1994\nSubject: three\n\nbody three\n"
			in := first + cr + third
			got := splitAll(t, in)
			want := []string{
				"0:From a@b Thu Mar 24 02:31:00 1994|one",
				fmt.Sprintf("%d:From c@d Thu Mar 24 02:32:00 1994|two", len(first)),
				fmt.Sprintf("%d:From e@f Thu Mar 24 02:33:00 1994|three", len(first)+len(cr)),
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("got  %q\nwant %q", got, want)
			}
			// the CR message's body is read as lines, its link in its text
			ms := readAllOpts(t, in, Options{})
			if len(ms) != 3 || !strings.Contains(string(ms[1].Raw), "http://example.org/cr") || len(ms[1].Problems) > 0 {
				t.Fatalf("%d messages; second %q %v", len(ms), ms[1].Raw, ms[1].Problems)
			}
			var text string
			for _, p := range ms[1].Parts() {
				text += string(p.Text)
			}
			if !strings.Contains(text, "body two http://example.org/cr\n") {
				t.Errorf("text %q", text)
			}
		})
	}
}

func TestNetscapeSeparators(t *testing.T) {
	msg := func(from, subj string) string {
		return from + "\nX-Mozilla-Status: 0001\nSubject: " + subj + "\n\nbody of " + subj + "\n"
	}
	for _, from := range []string{"From - ", "From -", "From - Thu Mar 24 02:31:00 1994", "From - Sat Jan  3 01:05:34 1996"} {
		// no blank line between the messages
		in := msg(from, "one") + msg(from, "two") + msg(from, "three")
		got := splitAll(t, in)
		if len(got) != 3 || !strings.HasSuffix(got[2], "|three") {
			t.Errorf("%q: %q", from, got)
		}
	}
	// "From " lines in bodies that are not followed by a header stay in
	// the body, with or without a date or a dash
	for _, body := range []string{
		"From the desk of the editor\nhello\n",
		"From the desk of the editor, Thu Mar 24 02:31:00 1994\nhello\n",
		"From - the archive\nmore text\n",
		"From - \n\nblank line after\n",
		"From a@b Thu Mar 24 02:31:00 1994\nnot: a header? no, prose follows\nand more prose\n",
		// a URL line is no header field
		"From a@b Thu Mar 24 02:31:00 1994\nhttp://example.com/a\nSee: below\n",
		"From a@b Thu Mar 24 02:31:00 1994\nNote: links\nhttp://example.com/a\n",
	} {
		in := "From a@b Thu Mar 24 02:31:00 1994\nSubject: one\n\ntext\n" + body + "\nFrom c@d Thu Mar 24 02:32:00 1994\nSubject: two\n\nx\n"
		got := splitAll(t, in)
		if len(got) != 2 || !strings.HasSuffix(got[1], "|two") {
			t.Errorf("%q split: %q", body, got)
		}
	}
	// after a blank line the loose rule stays: a "From " line with a
	// sender separates whatever follows
	in := "From a@b Thu Mar 24 02:31:00 1994\nSubject: one\n\ntext\n\nFrom - \nSubject: two\n\nx\n"
	if got := splitAll(t, in); len(got) != 2 {
		t.Errorf("after blank: %q", got)
	}
}

func TestNextLine(t *testing.T) {
	for _, c := range []struct{ in, line, rest string }{
		{"a\nb", "a", "b"}, {"a\r\nb", "a", "b"}, {"a\rb", "a", "b"}, {"a", "a", ""}, {"", "", ""},
	} {
		l, r := nextLine([]byte(c.in))
		if string(l) != c.line || string(r) != c.rest {
			t.Errorf("nextLine(%q) = %q %q", c.in, l, r)
		}
	}
	if !bareBlank([]byte("x\r\rbody")) || bareBlank([]byte("x\r\r\n")) || bareBlank([]byte("x\r\n")) {
		t.Error("bareBlank")
	}
	if bareCR([]byte("a\r\nb\rc")) != 4 || bareCR([]byte("a\r\n")) != -1 || bareCR([]byte("a\r")) != 1 {
		t.Error("bareCR")
	}
}

// TestFromLineAtBufferEnd: a "From " line that follows no blank line is
// looked past (is a header block next?), which may move the bytes in the
// read buffer; the line must still be kept as it is in the file, in the
// message (a body line) or as the next message's FromLine (a
// separator). It was kept from the moved bytes when it lay less than
// 1 KiB before the end of what was buffered.
func TestFromLineAtBufferEnd(t *testing.T) {
	for _, sep := range []bool{false, true} {
		for pad := 64<<10 - 1200; pad < 64<<10+100; pad += 37 {
			var b strings.Builder
			b.WriteString("From a@b Thu Mar 24 02:31:00 1994\nSubject: one\n\n")
			for b.Len() < pad {
				b.WriteString("padding line of the first message\n")
			}
			from := "From - Thu Mar 24 02:32:00 1994\n"
			b.WriteString(from)
			if sep {
				b.WriteString("Subject: two\n\n")
			}
			b.WriteString(strings.Repeat("body line\n", 10000)) // enough to fill the buffer again
			in := b.String()
			for name, rd := range map[string]io.Reader{"whole": strings.NewReader(in), "half": iotest.HalfReader(strings.NewReader(in))} {
				r, _ := NewReader(rd, "t", nil)
				var msgs []*Message
				for {
					m, err := r.Next()
					if err != nil {
						break
					}
					msgs = append(msgs, m)
					if got, want := string(m.Raw), in[m.RawOffset:m.RawOffset+int64(len(m.Raw))]; got != want {
						t.Fatalf("pad %d %s: message at %d differs from the file", pad, name, m.Offset)
					}
				}
				if n := len(msgs); sep && (n != 2 || msgs[1].FromLine != strings.TrimSuffix(from, "\n")) || !sep && n != 1 {
					t.Fatalf("pad %d %s: %d messages", pad, name, n)
				}
			}
		}
	}
}

// TestMMDFTruncated: an MMDF file whose last message has no closing
// ^A^A^A^A line was cut short: reported (kind ErrTruncated, at the end of
// the file), the messages kept (fails if it is read without a word).
func TestMMDFTruncated(t *testing.T) {
	const whole = "\x01\x01\x01\x01\nFrom: a@x\nMessage-ID: <m1@x>\n\nhttp://mmdf1.example/\n\x01\x01\x01\x01\n" +
		"\x01\x01\x01\x01\nFrom: b@x\nMessage-ID: <m2@x>\n\nhttp://mmdf2.example/\n\x01\x01\x01\x01\n"
	for _, c := range []struct {
		in        string
		truncated bool
	}{
		{whole, false},
		{whole + "\n\n", false},
		{strings.TrimSuffix(whole, "\x01\x01\x01\x01\n"), true},
		{strings.TrimSuffix(whole, "\n\x01\x01\x01\x01\n"), true},
	} {
		for _, lbl := range []bool{false, true} {
			lineByLine = lbl
			ms := readAllOpts(t, c.in, Options{})
			lineByLine = false
			if got := ids(ms); !slices.Equal(got, []string{"m1@x", "m2@x"}) {
				t.Fatalf("%q: ids %q", c.in, got)
			}
			if len(ms[0].Problems) > 0 {
				t.Errorf("first message: %v", ms[0].Problems)
			}
			ps := ms[1].Problems
			if !c.truncated {
				if len(ps) > 0 {
					t.Errorf("%q: %v", c.in, ps)
				}
				continue
			}
			if len(ps) != 1 || !errors.Is(ps[0], ErrTruncated) || ps[0].Offset != int64(len(c.in)) {
				t.Errorf("%q: problems %v", c.in, ps)
			}
		}
	}
}

// TestUnescapedFromAfterBlank: after a blank line, a "From " line without
// the whole From_ form (no date) separates only when a header block
// follows it (fails if "From bob@example.org about the plan:" in a
// body splits the message, its links given to a header-less message).
func TestUnescapedFromAfterBlank(t *testing.T) {
	const head = "From a@x Mon Jan  3 10:00:00 1994\nFrom: a@x\nSubject: one\n\nHello,\n\n"
	for _, c := range []struct {
		name, rest string
		n          int
	}{
		{"body line", "From bob@example.org about the plan:\n> see http://quoted.example/plan\n\nbye http://bye.example/\n", 1},
		{"body line, last", "From bob@example.org\n", 1},
		{"Netscape, header after", "From - \nX-Mozilla-Status: 0001\nSubject: two\n\nb\n", 2},
		{"no date, header after", "From b@x\nSubject: two\n\nb\n", 2},
		{"whole From_ line, no header after", "From b@x Tue Jan  4 10:00:00 1994\nno header here\n", 2},
		{"whole From_ line", "From b@x Tue Jan  4 10:00:00 1994\nSubject: two\n\nb\n", 2},
	} {
		got := splitAll(t, head+c.rest)
		if len(got) != c.n {
			t.Errorf("%s: %q", c.name, got)
		}
	}
	// the links stay with the message that has the header
	ms := readAllOpts(t, head+"From bob@example.org about the plan:\n> see http://quoted.example/plan\n", Options{})
	if len(ms) != 1 || len(ms[0].Problems) > 0 || !strings.Contains(string(ms[0].Parts()[0].Text), "http://quoted.example/plan") {
		t.Errorf("%d messages, problems %v", len(ms), ms[0].Problems)
	}
}

func TestFullFromLine(t *testing.T) {
	for line, want := range map[string]bool{
		"From a@b Thu Mar 24 02:31:00 1994":              true,
		"From a@b  Sat Jan  3 01:05:34 1996\r\n":         true,
		"From MAILER-DAEMON Thu Mar 24 02:31:00 1994\n":  true,
		"From a@b Thu Mar 24 02:31:00 PST 1994":          true,
		"From a@b Thursday Mar 24 02:31:00 1994":         false,
		"From bob@example.org about the plan:":           false,
		"From - Thu Mar 24 02:31:00 1994":                true,
		"From Thu Mar 24 02:31:00 1994":                  false, // no sender
		"From a@b Thu":                                   false,
		"From 10:00 to 12:00 in 2024 we met":             false,
		"From a@b Thu, 24 Mar 1994 02:31:00 +0000 extra": false,
	} {
		if got := fullFromLine([]byte(line)); got != want {
			t.Errorf("fullFromLine(%q) = %v", line, got)
		}
	}
	if n := testing.AllocsPerRun(100, func() { fullFromLine([]byte("From a@b Thu Mar 24 02:31:00 1994")) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// TestLimitLineReadAlike: a line that crosses MaxMessageSize is decided
// whole by overflow however it is read: whole, a byte at a time, in half
// reads, line by line (the fast paths off). A Content-Length that ends
// inside the line (pushed back when read from a stream) used to give its
// first piece to Raw; a bare CR line before "From " that fills the limit
// exactly used to be left out when the fast path's run held it.
func TestLimitLineReadAlike(t *testing.T) {
	o := &Options{MaxMessageSize: 64, MaxPartSize: 40}
	for _, c := range []struct {
		name, in string
		format   Format
		raw      string
		holes    []Hole
	}{
		{"push-back", "From 0:00 1000\nContent-Length:011\n\n" + strings.Repeat("0", 45), FormatMbox,
			"Content-Length:011\n\n", []Hole{{At: 20, Len: 45}}},
		{"bare CR before From", strings.Repeat("0", 25) + "\n" + strings.Repeat("0", 37) + "\r\rFrom ", FormatMessage,
			strings.Repeat("0", 25) + "\n" + strings.Repeat("0", 37) + "\r", []Hole{{At: 64, Len: 6}}},
	} {
		read := func(r io.Reader) string {
			oc := *o
			oc.Format = c.format
			rd, err := NewReader(r, "t", &oc)
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			m, err := rd.Next()
			if err != nil || m == nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			return fmt.Sprintf("%q %v", m.Raw, m.Holes)
		}
		want := fmt.Sprintf("%q %v", c.raw, c.holes)
		got := []string{
			read(strings.NewReader(c.in)),
			read(iotest.OneByteReader(strings.NewReader(c.in))),
			read(iotest.HalfReader(strings.NewReader(c.in))),
		}
		lineByLine = true
		got = append(got, read(strings.NewReader(c.in)))
		lineByLine = false
		for i, g := range got {
			if g != want {
				t.Errorf("%s: read %s: %s, want %s", c.name, []string{"whole", "one byte", "half", "line by line"}[i], g, want)
			}
		}
	}
}
