package mailbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// clMsg writes an mbox message: a separator line, a Subject, the given
// Content-Length field (if not "") and the body, with eol line endings.
func clMsg(subject, cl, body, eol string) string {
	h := "From a@example.org Sat Jan  1 00:00:00 2000" + eol + "Subject: " + subject + eol
	if cl != "" {
		h += "Content-Length: " + cl + eol
	}
	return h + eol + body
}

// clRead reads in as an mbox whole, a byte at a time, in halves and line
// by line (the fast paths off), with the given message size limit (0:
// the default), and describes its messages: "offset:Subject" and, for
// each Content-Length problem, "!offset". The four ways must agree.
func clRead(t *testing.T, in string, limit int64) (msgs []string, probs []string) {
	t.Helper()
	read := func(r io.Reader) string {
		rd, err := NewReader(r, "t", &Options{Format: FormatMbox, MaxMessageSize: limit})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for {
			m, err := rd.Next()
			if m != nil {
				fmt.Fprintf(&b, "%d:%s", m.Offset, m.Subject)
				for _, p := range m.Problems {
					if errors.Is(p, ErrContentLength) {
						if !errors.Is(p, ErrStructure) || !strings.Contains(p.Msg, "Content-Length") {
							t.Errorf("problem %v: not of kind ErrStructure, or not saying Content-Length", p)
						}
						fmt.Fprintf(&b, " !%d", p.Offset)
					}
				}
				b.WriteByte('\n')
			}
			if err == io.EOF {
				return b.String()
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	got := read(strings.NewReader(in))
	for name, r := range map[string]io.Reader{"one byte": iotest.OneByteReader(strings.NewReader(in)), "half": iotest.HalfReader(strings.NewReader(in))} {
		if other := read(r); other != got {
			t.Errorf("%s:\n%s\nwhole:\n%s", name, other, got)
		}
	}
	lineByLine = true
	slow := read(strings.NewReader(in))
	lineByLine = false
	if slow != got {
		t.Errorf("line by line:\n%s\nfast:\n%s", slow, got)
	}
	for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		f := strings.Fields(l)
		msgs = append(msgs, f[0])
		probs = append(probs, f[1:]...)
	}
	return msgs, probs
}

// TestContentLengthDisagrees: a Content-Length (mboxcl, mboxcl2) that
// does not agree with where its message ends is reported at the field,
// of kind ErrContentLength, and the message is split at its "From "
// lines as before; one that agrees as real writers write it (without the
// blank line before the next "From " line, or with it; counted with the
// other line ending after a conversion; the last blank line missing at
// the end of the file) is no damage.
func TestContentLengthDisagrees(t *testing.T) {
	const body = "one line\nFrom here on, an unescaped From line\nhttp://example.org/\n" // 71 bytes
	next := clMsg("next", "", "next body\n", "\n")
	n := func(k int) string { return fmt.Sprint(k) }
	type want struct {
		msgs  string // offsets and subjects
		probs string // offsets of Content-Length problems
	}
	for _, c := range []struct {
		name string
		in   string
		want want
	}{
		// agreeing: no problem, the body's "From " line kept inside
		{"without the blank line (mutt, Mail::Box)", clMsg("one", n(len(body)), body, "\n") + "\n" + next,
			want{"0:one @:next", ""}},
		{"with the blank line", clMsg("one", n(len(body)+1), body, "\n") + "\n" + next,
			want{"0:one @:next", ""}},
		{"no blank line before From (Netscape)", clMsg("one", n(len(body)), body, "\n") + next,
			want{"0:one @:next", ""}},
		{"last, without the blank line", clMsg("one", n(len(body)), body, "\n") + "\n",
			want{"0:one", ""}},
		{"last, the blank line counted but missing", clMsg("one", n(len(body)+1), body, "\n"),
			want{"0:one", ""}},
		{"last, the last line ending missing", clMsg("one", n(len(body)), body[:len(body)-1], "\n"),
			want{"0:one", ""}},
		{"empty body", clMsg("one", "0", "", "\n") + "\n" + next, want{"0:one @:next", ""}},
		// counted with the other line ending (a file converted after the
		// field was written): split at "From " lines, no problem
		{"CRLF counted, LF file", clMsg("one", n(len("one line\r\nhttp://example.org/\r\n")), "one line\nhttp://example.org/\n", "\n") + "\n" + next,
			want{"0:one @:next", ""}},
		{"CRLF counted with the blank line, LF file", clMsg("one", n(len("one line\r\nhttp://example.org/\r\n\r\n")), "one line\nhttp://example.org/\n", "\n") + "\n" + next,
			want{"0:one @:next", ""}},
		{"LF counted, CRLF file", clMsg("one", n(len("one line\nhttp://example.org/\n")), "one line\r\nhttp://example.org/\r\n", "\r\n") + "\r\n" + next,
			want{"0:one @:next", ""}},
		{"LF counted, CRLF file, last", clMsg("one", n(len("one line\nhttp://example.org/\n")), "one line\r\nhttp://example.org/\r\n", "\r\n"),
			want{"0:one", ""}},

		// disagreeing: reported at the field, split at "From " lines
		{"into a line of the body", clMsg("one", "5", "body of two http://example.org/two\n", "\n") + "\n" + next,
			want{"0:one @:next", "!cl"}},
		{"before the separator, short by a line", clMsg("one", n(len(body)-10), body, "\n") + "\n" + next,
			want{"0:one @:next", "!cl"}},
		{"into the next From line", clMsg("one", "12", "body\n", "\n") + "\n" + next,
			want{"0:one @:next", "!cl"}},
		{"into the next message's body", clMsg("one", "40", "body\n", "\n") + "\n" + next,
			want{"0:one @:next", "!cl"}},
		{"past the end of the file", clMsg("one", "999", "body\n", "\n") + "\n",
			want{"0:one", "!cl"}},
		{"past the end by two line endings", clMsg("one", "7", "body\n", "\n"),
			want{"0:one", "!cl"}},
		{"the blank line counted but not missing", clMsg("one", "7", "body\n", "\n") + "\n",
			want{"0:one", "!cl"}},
		{"two blank lines before From", clMsg("one", "5", "body\n", "\n") + "\n\n" + next,
			want{"0:one @:next", "!cl"}},
		{"not a number", clMsg("one", "many", "body\n", "\n") + "\n" + next,
			want{"0:one @:next", "!cl"}},
		{"negative", clMsg("one", "-5", "body\n", "\n") + "\n" + next,
			want{"0:one @:next", "!cl"}},
		{"CRLF file, into a line", clMsg("one", "3", "body\r\n", "\r\n") + "\r\n" + next,
			want{"0:one @:next", "!cl"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			msgs, probs := clRead(t, c.in, 0)
			// "@" stands for the offset of the message "next"
			c.want.msgs = strings.Replace(c.want.msgs, "@", fmt.Sprint(strings.LastIndex(c.in, next)), 1)
			// "!cl": a problem at the Content-Length field
			c.want.probs = strings.Replace(c.want.probs, "!cl", fmt.Sprintf("!%d", strings.Index(c.in, "Content-Length:")), 1)
			if got := strings.Join(msgs, " "); got != c.want.msgs {
				t.Errorf("messages %s, want %s", got, c.want.msgs)
			}
			if got := strings.Join(probs, " "); got != c.want.probs {
				t.Errorf("Content-Length problems at %q, want %q", got, c.want.probs)
			}
		})
	}
}

// TestContentLengthProblemText: the problem says what the field said and
// where the message ended.
func TestContentLengthProblemText(t *testing.T) {
	next := clMsg("next", "", "next body\n", "\n")
	in := clMsg("one", "5", "body of two http://example.org/two\n", "\n") + "\n" + next + clMsg("bad", "12 bytes", "x\n", "\n") + "\n" + clMsg("last", "99", "y\n", "\n")
	ms := readAllOpts(t, in, Options{})
	var got []string
	for _, m := range ms {
		for _, p := range m.Problems {
			got = append(got, p.String())
		}
	}
	bad, last := strings.Index(in, "Content-Length: 12 bytes"), strings.Index(in, "Content-Length: 99")
	want := []string{
		`offset 57: Content-Length: 5 does not match the message: its body is 36 bytes, from offset 76 to the next "From " line (offset 112); split there`,
		fmt.Sprintf(`offset %d: Content-Length "12 bytes" is not a number of bytes; the message ends at its next "From " line`, bad),
		fmt.Sprintf(`offset %d: Content-Length: 99 does not match the message: its body is 2 bytes, from offset %d to the end of the file; split there`, last, last+20),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, p := range []int{57, bad, last} {
		if !strings.HasPrefix(in[p:], "Content-Length:") {
			t.Errorf("offset %d is not a Content-Length field", p)
		}
	}
}

// TestContentLengthOverLimit: past the message size limit the
// Content-Length is not followed, and is checked against the message's
// end all the same.
func TestContentLengthOverLimit(t *testing.T) {
	body := strings.Repeat("a line of text, http://example.org/\n", 100) // 3600 bytes
	next := clMsg("next", "", "next body\n", "\n")
	for _, c := range []struct {
		cl    int
		probs string
	}{{len(body), ""}, {len(body) + 1, ""}, {len(body) - 36, "!57"}, {len(body) + 50, "!57"}} {
		first := clMsg("one", fmt.Sprint(c.cl), body, "\n") + "\n"
		msgs, probs := clRead(t, first+next, 1024)
		if got := strings.Join(msgs, " "); got != fmt.Sprintf("0:one %d:next", len(first)) {
			t.Errorf("Content-Length %d: messages %s", c.cl, got)
		}
		if got := strings.Join(probs, " "); got != c.probs {
			t.Errorf("Content-Length %d: problems at %q, want %q", c.cl, got, c.probs)
		}
	}
}

// TestLineAfterPushBack: a line begun in the bytes pushed back (a
// Content-Length that ends inside the next "From " line) is read whole,
// so that the separator is seen: before, the two messages were one.
func TestLineAfterPushBack(t *testing.T) {
	for _, cl := range []string{"8", "12", "13"} {
		first := clMsg("one", cl, "body\n", "\n") + "\n"
		if msgs, _ := clRead(t, first+clMsg("two", "", "b\n", "\n"), 0); strings.Join(msgs, " ") != fmt.Sprintf("0:one %d:two", len(first)) {
			t.Errorf("Content-Length %s: messages %v", cl, msgs)
		}
	}
}

// FuzzContentLength writes an mbox of the fuzzed bodies with
// Content-Length fields as writers write them (without the blank line
// before the next "From " line, with it, or counted with the other line
// ending), "From " lines left unescaped in the bodies, and reads it: the
// messages come out as written without a Content-Length problem (where
// the field is not followed, the bodies must have no "From " line for
// that). With one field made wrong by delta (outside what is tolerated),
// the message reports it, or it was followed (it lands on a separator).
func FuzzContentLength(f *testing.F) {
	f.Add([]byte("one\nFrom here\n\x00two\n"), uint8(0), int8(0), false)
	f.Add([]byte("one\nFrom here\n\x00two\n"), uint8(1), int8(3), true)
	f.Add([]byte("a\n\nb\x00\x00c"), uint8(2), int8(-7), false)
	f.Add([]byte("x\x00From y\n"), uint8(5), int8(9), true)
	f.Fuzz(func(t *testing.T, data []byte, form uint8, delta int8, crlf bool) {
		eol := "\n"
		if crlf {
			eol = "\r\n"
		}
		var bodies []string
		for _, b := range bytes.SplitN(data, []byte{0}, 6) {
			s := strings.ReplaceAll(string(b), "\r", "")
			if s != "" && !strings.HasSuffix(s, "\n") {
				s += "\n"
			}
			bodies = append(bodies, strings.ReplaceAll(s, "\n", eol))
		}
		k := int(uint8(delta)) % len(bodies)
		var in strings.Builder
		var clOffs []int
		fromLines := false
		for i, b := range bodies {
			lines := strings.Count(b, eol)
			cl := len(b)
			switch form % 3 {
			case 1:
				cl += len(eol) // with the blank line
			case 2: // the other line ending
				if crlf {
					cl -= lines
				} else {
					cl += lines
				}
				fromLines = fromLines || strings.HasPrefix(b, "From ") || strings.Contains(b, "\nFrom ")
			}
			if i == k && delta != 0 {
				// what agrees: the body and its blank line as stored,
				// with LF or with CRLF line endings, with or without the
				// blank line, each also as before From-quoting (one '>'
				// fewer on each ">From " line: bodyTally.agrees)
				lf := strings.ReplaceAll(b+eol, "\r\n", "\n")
				quoted := 0
				for _, l := range strings.Split(lf, "\n") {
					if strings.HasPrefix(strings.TrimLeft(l, ">"), "From ") && strings.HasPrefix(l, ">") {
						quoted++
					}
				}
				agree := false
				for _, v := range []string{b + eol, lf, strings.ReplaceAll(lf, "\n", "\r\n")} {
					blank := 1
					if strings.HasSuffix(v, "\r\n") {
						blank = 2
					}
					for _, q := range []int{0, quoted} {
						agree = agree || cl+int(delta) == len(v)-q || cl+int(delta) == len(v)-blank-q
					}
				}
				if !agree && cl+int(delta) >= 0 {
					cl += int(delta)
				} else {
					delta = 0
				}
			}
			in.WriteString("From a@example.org Sat Jan  1 00:00:00 2000" + eol + fmt.Sprintf("Subject: %d", i) + eol)
			clOffs = append(clOffs, in.Len())
			in.WriteString(fmt.Sprintf("Content-Length: %d", cl) + eol + eol + b + eol)
		}
		rd, err := NewReader(strings.NewReader(in.String()), "fuzz", &Options{Format: FormatMbox})
		if err != nil {
			t.Fatal(err)
		}
		var ms []*Message
		for {
			m, err := rd.Next()
			if m != nil {
				ms = append(ms, m)
			}
			if err != nil {
				break
			}
		}
		reported := func(m *Message, off int) bool {
			for _, p := range m.Problems {
				if errors.Is(p, ErrContentLength) && p.Offset == int64(off) {
					return true
				}
			}
			return false
		}
		if delta == 0 {
			if fromLines {
				return // split at the bodies' "From " lines (reported or not: FuzzSplitReaders)
			}
			if len(ms) != len(bodies) {
				t.Fatalf("%d messages, want %d:\n%q", len(ms), len(bodies), in.String())
			}
			for i, m := range ms {
				if m.Subject != fmt.Sprint(i) {
					t.Errorf("message %d: subject %q", i, m.Subject)
				}
				for _, p := range m.Problems {
					if errors.Is(p, ErrContentLength) {
						t.Errorf("message %d: %v\n%q", i, p, in.String())
					}
				}
			}
			return
		}
		// the message with the wrong field: reported, or followed
		for _, m := range ms {
			if m.Subject != fmt.Sprint(k) || !strings.HasPrefix(in.String()[m.Offset:], "From ") || m.Offset+int64(len(m.FromLine)) > int64(clOffs[k]) || int64(clOffs[k]) >= m.Offset+m.Length {
				continue
			}
			if reported(m, clOffs[k]) {
				return
			}
			cl := m.Header.Get("Content-Length")
			bodyOff := m.RawOffset + int64(bytes.Index(m.Raw, []byte(eol+eol))+2*len(eol))
			end := m.Offset + m.Length
			if n, err := strconv.ParseInt(cl, 10, 64); err == nil && bodyOff+n <= end {
				if rest := in.String()[bodyOff+n : end]; rest == "" || rest == "\n" || rest == "\r\n" {
					return // followed: it lands on a separator (after a blank line)
				}
			}
			t.Fatalf("message %d, Content-Length %s, body %d bytes: not reported\n%q", k, cl, end-bodyOff, in.String())
		}
	})
}

// TestContentLengthNotReadFirst: a Content-Length that does not land on a
// separator, in a file (read again at an offset), is not followed: the
// bytes it covers (8 MiB here) are not read into memory and pushed back
// before the message is split by its "From " lines. From a stream they
// must be; the split and the problem are the same.
func TestContentLengthNotReadFirst(t *testing.T) {
	const cl = 8 << 20
	in := clMsg("one", fmt.Sprint(cl), "body\n", "\n") + "\n"
	for i := 0; len(in) < cl+(1<<20); i++ {
		in += clMsg(fmt.Sprint(i), "", longBody(64<<10, "\n", false), "\n") + "\n"
	}
	var want string
	for _, way := range []string{"stream", "file"} {
		var rd io.Reader = struct{ io.Reader }{strings.NewReader(in)}
		if way == "file" {
			rd = strings.NewReader(in)
		}
		r, err := NewReader(rd, "in", &Options{Format: FormatMbox, TempDir: t.TempDir(), DeferParse: true})
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m, err := r.Next()
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintf("%d+%d %v", m.Offset, m.Length, m.Problems)
		if way == "stream" {
			want = got
		} else if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
			t.Errorf("%s: %d bytes allocated for a message of %d", way, alloc, m.Length)
		}
		if got != want || len(m.Problems) != 1 || !errors.Is(m.Problems[0], ErrContentLength) {
			t.Errorf("%s: %s; from a stream %s", way, got, want)
		}
		r.Close()
	}
}

// TestContentLengthOrdinaryArchives: two ordinary archives whose
// Content-Length is right and must not be reported as damage. (1) mutt/Solaris mboxcl2 whose
// body has no final newline: the field counts the body as stored, the
// writer's line ending follows; accepted when followed (landsOn) and, the
// same, when checked past MaxMessageSize. (2) Python's mailbox.mbox: a
// message with its own Content-Length, a body line "From here" quoted
// ">From here" (one byte more than the field counts). A footer added
// after the field was written is still reported.
func TestContentLengthOrdinaryArchives(t *testing.T) {
	body1 := strings.Repeat("line of text\n", 20) + "no final newline"
	body2 := strings.Repeat("line of text\n", 20)
	mutt := clMsg("a", strconv.Itoa(len(body1)), body1, "\n") + "\n" + clMsg("b", strconv.Itoa(len(body2)), body2, "\n") + "\n"
	pyBody := "hello\n>From here on, all is well\n>>From there too\nbye\n"
	py := clMsg("s0", strconv.Itoa(len(pyBody)-2), pyBody, "\n") + "\n" + clMsg("s1", strconv.Itoa(len(pyBody)-2), pyBody, "\n") + "\n"
	pyCRLF := strings.ReplaceAll(py, "\n", "\r\n")
	footer := clMsg("f", strconv.Itoa(len(pyBody)-2), pyBody+"-- \nlist footer\n", "\n") + "\n" + clMsg("g", "", "b\n", "\n")
	for _, c := range []struct {
		name, in string
		probs    int
	}{
		{"mutt, no final newline", mutt, 0},
		{"python From-quoting", py, 0},
		{"python From-quoting, CRLF", pyCRLF, 0},
		{"footer after the field", footer, 1},
	} {
		for _, limit := range []int64{0, 60} {
			msgs, probs := clRead(t, c.in, limit)
			if len(msgs) != 2 || len(probs) != c.probs {
				t.Errorf("%s, limit %d: msgs %v problems %v", c.name, limit, msgs, probs)
			}
		}
	}
}

// longLinePushBack is a stream mbox whose Content-Length does not land
// and whose body is one line of n bytes: the bytes the field covered are
// pushed back and read again.
func longLinePushBack(n int) []byte {
	var b bytes.Buffer
	b.WriteString("From a@b Sat Jan  1 00:00:00 2000\nSubject: a\nContent-Length: " + strconv.Itoa(n-10) + "\n\n")
	b.WriteString(strings.Repeat("x", n))
	b.WriteString("\nFrom a@b Sat Jan  1 00:00:00 2000\nSubject: b\n\nbye\n")
	return b.Bytes()
}

// TestLongLinePushBack: such a line, not the start of a From line, is
// returned in pieces instead of being joined to the rest of its line;
// the split is the same (a From line cut by the field is still joined:
// TestLineAfterPushBack).
func TestLongLinePushBack(t *testing.T) {
	in := string(longLinePushBack(300 << 10))
	msgs, _ := clRead(t, in, 0)
	if len(msgs) != 2 || msgs[1] != strconv.Itoa(strings.Index(in, "\nFrom ")+1)+":b" {
		t.Errorf("msgs %v", msgs)
	}
}

// BenchmarkLongLinePushBack: the memory a 4 MiB one-line body costs when
// its Content-Length does not land, read from a stream: the pushed-back
// bytes are returned in pieces, not copied to be joined with the rest of
// the line (which cost 30.5 MB an op at 4 MiB against 18.5 MB).
func BenchmarkLongLinePushBack(b *testing.B) {
	in := longLinePushBack(4 << 20)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		rd, err := NewReader(iotest.HalfReader(bytes.NewReader(in)), "t", &Options{Format: FormatMbox})
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := rd.Next(); err != nil {
				break
			}
		}
	}
}
