package mailbox

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// TestForcedFormatLiveFeed: with the format forced, the first message of
// a pipe comes out of Next as soon as the next one begins, without
// waiting for the 4 KiB the detection reads. The writer
// blocks after the first message and the separator of the second until
// Next has returned (or a generous time has passed: then the test fails;
// it asserts the order of events, not a speed).
func TestForcedFormatLiveFeed(t *testing.T) {
	for _, c := range []struct {
		name   string
		format Format
		first  string // written, then the writer waits
		rest   string
		id     string
	}{
		{"mbox", FormatMbox,
			"From a@b Mon Jan  1 00:00:00 2001\nMessage-ID: <m1@x>\nSubject: one\n\nhttp://example.com/1\n\nFrom a@b Mon Jan  1 00:00:01 2001\n",
			"Message-ID: <m2@x>\n\nhttp://example.com/2\n", "m1@x"},
		{"mbox crlf", FormatMbox,
			"From a@b Mon Jan  1 00:00:00 2001\r\nMessage-ID: <c1@x>\r\n\r\nx\r\n\r\nFrom a@b Mon Jan  1 00:00:01 2001\r\n",
			"Message-ID: <c2@x>\r\n\r\ny\r\n", "c1@x"},
		{"bom", FormatMbox,
			"\xef\xbb\xbfFrom a@b Mon Jan  1 00:00:00 2001\nMessage-ID: <b1@x>\n\nx\n\nFrom a@b Mon Jan  1 00:00:01 2001\n",
			"Message-ID: <b2@x>\n\ny\n", "b1@x"},
		{"mmdf", FormatMMDF,
			"\x01\x01\x01\x01\nMessage-ID: <d1@x>\n\nx\n\x01\x01\x01\x01\n\x01\x01\x01\x01\n",
			"Message-ID: <d2@x>\n\ny\n\x01\x01\x01\x01\n", "d1@x"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			release := make(chan struct{})
			go func() {
				pw.Write([]byte(c.first))
				<-release
				pw.Write([]byte(c.rest))
				pw.Close()
			}()
			type result struct {
				m   *Message
				r   *Reader
				err error
			}
			got := make(chan result, 1)
			go func() {
				r, err := NewReader(pr, "pipe", &Options{Format: c.format})
				if err != nil {
					got <- result{err: err}
					return
				}
				m, err := r.Next()
				got <- result{m, r, err}
			}()
			var res result
			select {
			case res = <-got:
			case <-time.After(20 * time.Second):
				close(release) // let the reader finish, then fail
				res = <-got
				t.Fatalf("the first message did not come before the writer went on (got %v)", res.err)
			}
			close(release)
			if res.err != nil || res.m == nil || res.m.MessageID != c.id {
				t.Fatalf("first: %+v %v", res.m, res.err)
			}
			if c.name == "bom" && res.m.Offset != 3 {
				t.Errorf("offset %d after the BOM", res.m.Offset)
			}
			m, err := res.r.Next()
			if err != nil || m == nil || m.MessageID == c.id || m.MessageID == "" {
				t.Fatalf("second: %+v %v", m, err)
			}
			if _, err := res.r.Next(); err != io.EOF {
				t.Errorf("end: %v", err)
			}
		})
	}
}

// TestDecompress: the exported decompressor gives the content of each
// codec and of a plain stream, and a cut stream's error as an
// *InputError with the name and the decompressed offset; compress/gzip's
// own "gzip: " prefix is not doubled.
func TestDecompress(t *testing.T) {
	data := testMbox(40)
	for _, what := range []string{"gz", "xz", "zst", ""} {
		in := data
		if what != "" {
			in = compressWith(t, what, data)
		}
		rc, got, err := Decompress(bytes.NewReader(in), "x")
		if err != nil {
			t.Fatal(err)
		}
		out, err := io.ReadAll(iotest.OneByteReader(rc))
		rc.Close()
		if err != nil || !bytes.Equal(out, data) || (got == "") != (what == "") {
			t.Errorf("%q: %q, %d bytes, %v", what, got, len(out), err)
		}
	}
	gzd := compressWith(t, "gz", data)
	rc, _, err := Decompress(bytes.NewReader(gzd[:len(gzd)/2]), "cut.gz")
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(rc)
	var ie *InputError
	if !errors.As(err, &ie) || ie.Path != "cut.gz" || ie.Offset != int64(len(out)) || ie.Offset == 0 {
		t.Errorf("cut: %d bytes, %v", len(out), err)
	}
	// trailing garbage: compress/gzip says "gzip: invalid header"
	rc, _, _ = Decompress(bytes.NewReader(append(gzd, "garbage after the stream"...)), "trail.gz")
	_, err = io.ReadAll(rc)
	if err == nil || strings.Contains(err.Error(), "gzip: gzip:") || !strings.Contains(err.Error(), "gzip: invalid header") {
		t.Errorf("trailing garbage: %v", err)
	}
}
