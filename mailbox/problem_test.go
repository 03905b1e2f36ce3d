package mailbox

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

func TestProblemString(t *testing.T) {
	for _, c := range []struct {
		p    Problem
		want string
	}{
		{Problem{Offset: 12, Msg: "empty message", Err: ErrEmpty}, "offset 12: empty message"},
		{Problem{Offset: 7, Part: "1.2", Msg: "bad base64"}, "offset 7, part 1.2: bad base64"},
	} {
		if got := c.p.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
		if got := c.p.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
		if got := fmt.Sprint(c.p); got != c.want {
			t.Errorf("Sprint = %q, want %q", got, c.want)
		}
	}
}

// TestProblemKinds reads damaged inputs and checks that each problem has
// the kind its text describes.
func TestProblemKinds(t *testing.T) {
	for _, c := range []struct {
		name, in string
		opts     Options
		kind     error
		text     string
	}{
		{"truncated header", "From a@b Thu Mar 24 02:31:00 1994\nSubject: x\nFrom: y", Options{}, ErrTruncated, "file ends inside the message header"},
		{"no separator", "\nhello\n\nFrom a@b Thu Mar 24 02:31:00 1994\nA: b\n\nx\n", Options{Format: FormatMbox}, ErrStructure, "no separator line"},
		{"too long", "From a@b Thu Mar 24 02:31:00 1994\nA: b\n\n" + strings.Repeat("x", 200) + "\n", Options{MaxMessageSize: 100}, ErrTooLong, "message longer than 100 bytes"},
		{"too long single", "Subject: b\n\n" + strings.Repeat("x", 200) + "\n", Options{MaxMessageSize: 100}, ErrTooLong, "message longer than 100 bytes"},
		{"no header fields", "From a@b Thu Mar 24 02:31:00 1994\n no colon\n\nbody\n", Options{}, ErrBadHeader, "no header fields"},
		{"colon-less line", "From: a@b\nno colon here\nSubject: d\n\nbody\n", Options{}, ErrBadHeader, "header line without a colon"},
		{"header too long", "From: a@b\nSubject: " + strings.Repeat("d", 300) + "\n\nbody\n", Options{MaxHeaderBytes: 100}, ErrTooLong, "header block longer than the limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ms := readAllOpts(t, c.in, c.opts)
			found := false
			for _, m := range ms {
				for _, p := range m.Problems {
					if strings.Contains(p.Msg, c.text) {
						found = true
						if !errors.Is(p, c.kind) {
							t.Errorf("%v: kind %v, want %v", p, p.Err, c.kind)
						}
					}
				}
			}
			if !found {
				t.Errorf("no problem %q in %v", c.text, problemsOf(ms))
			}
		})
	}
}

func TestInputErrorIs(t *testing.T) {
	e := &InputError{Path: "x.gz", Offset: 40, Err: fmt.Errorf("gzip: %w", fs.ErrPermission)}
	if !errors.Is(e, ErrUnreadable) || !errors.Is(e, fs.ErrPermission) {
		t.Errorf("errors.Is fails on %v", e)
	}
	if got, want := e.Error(), "x.gz: at offset 40: gzip: permission denied"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	e.Offset = -1
	if got, want := e.Error(), "x.gz: gzip: permission denied"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	var ie *InputError
	if !errors.As(fmt.Errorf("wrapped: %w", e), &ie) || ie.Path != "x.gz" {
		t.Errorf("errors.As fails")
	}
}

func readAllOpts(t *testing.T, in string, o Options) []*Message {
	t.Helper()
	r, err := NewReader(strings.NewReader(in), "test", &o)
	if err != nil {
		t.Fatal(err)
	}
	var ms []*Message
	for {
		m, err := r.Next()
		if m != nil {
			ms = append(ms, m)
		}
		if err != nil {
			break
		}
	}
	return ms
}

func problemsOf(ms []*Message) []Problem {
	var ps []Problem
	for _, m := range ms {
		ps = append(ps, m.Problems...)
	}
	return ps
}

// TestReadMessage: a message in memory reads as the same bytes through a
// Reader do, and its Raw is its own.
func TestReadMessage(t *testing.T) {
	for _, in := range []string{
		"From: a@b\nSubject: hi\nMessage-ID: <rm@x>\n\nsee http://example.org/\n",
		"From a@b Thu Mar 24 02:31:00 1994\nFrom: a@b\nSubject: env\n\nbody\n",
		"From: a@b\rSubject: cr\r\rsee http://example.org/cr\r",
		"\xef\xbb\xbfSubject: bom\n\nx\n",
	} {
		raw := []byte(in)
		m := ReadMessage(raw, "mem", nil)
		ref := readAllOpts(t, in, Options{Format: FormatMessage})[0]
		got := fmt.Sprintf("%d %d %q %q %q %v %v", m.Offset, m.Length, m.FromLine, m.Raw, m.Subject, m.Header, m.Problems)
		want := fmt.Sprintf("%d %d %q %q %q %v %v", ref.Offset, ref.Length, ref.FromLine, ref.Raw, ref.Subject, ref.Header, ref.Problems)
		if got != want || m.Path != "mem" {
			t.Errorf("%q:\ngot  %s\nwant %s", in, got, want)
		}
		if len(raw) > 0 {
			raw[len(raw)-1] = 'Z'
			if len(m.Raw) > 0 && m.Raw[len(m.Raw)-1] == 'Z' {
				t.Errorf("%q: Raw shares the caller's bytes", in)
			}
		}
		m.Release()
	}
	// over the limit: structure and text kept
	big := bigMessage(1 << 20)
	m := ReadMessage([]byte(big), "big", &Options{MaxMessageSize: 64 << 10})
	checkBig(t, "ReadMessage", m, []byte(big), 64<<10)
}
