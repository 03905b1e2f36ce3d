package mailbox

import (
	"strings"
	"testing"
	"testing/iotest"
)

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Format
	}{
		{"From a@b Thu Mar 24 02:31:00 1994\nSubject: x\n\nbody\n", FormatMbox},
		{"\n\nFrom a@b Thu Mar 24 02:31:00 1994\n", FormatMbox},
		{"\x01\x01\x01\x01\nFrom: a\n", FormatMMDF},
		{"From: a@b\nSubject: hi\n\nbody http://example.org/\n", FormatMessage},
		{"Received: from x by y; Thu, 24 Mar 1994 02:31:00 +0000\n\tid 1\nMessage-ID: <a@b>\n\n", FormatMessage},
		{"Subject: hi\n\nbody\n", FormatMessage},                                                         // one mail field, then a body
		{"Content-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\naGk=\r\n", FormatMessage}, // a saved MIME part
		{"Relay-Version: version B 2.10 5/3/83; site utzoo.UUCP\nPosting-Version: x\nPath: a!b\nFrom: c\n\nbody\n", FormatMessage},
		{"From: a@b\nno colon here\nSubject: hi\n\nbody\n", FormatMessage}, // damaged, still mail
		{"Subject: x\rFrom: y\r\rbody\r", FormatMessage},                   // bare CR line endings
		{"Aabc.123\nnet.general\nucbvax!a\nWed May  5 22:33:48 1982\ntitle\nbody\n", FormatMessage},
		{"Aeagle.642\r\nnet.general,fa.human-nets\r\ncbosgd!mhuxj!eagle!jerry\r\nFri Nov 19 16:14:55 1982\r\nUsenet Etiquette\r\nbody\r\n", FormatMessage},
		// one word starting with A, no colon on line 2: text, not A-news
		{"Agenda\n\n1. Welcome\n2. Review http://review.example/doc\n3. Plans\n4. AOB\n5. Close\n", FormatText},
		{"Articles\n\nhttp://one.example/\nhttp://two.example/\nhttp://three.example/\nhttp://four.example/\n", FormatText},
		{"Abc.123\nnet general\nucbvax!a\nWed May  5 22:33:48 1982\ntitle\nbody\n", FormatText}, // groups with a space
		{"Abc.12x\nnet.general\nucbvax!a\nWed May  5 22:33:48 1982\ntitle\nbody\n", FormatText}, // id not site.number
		{"Abc.123\nnet.general\nucbvax\nWed May  5 22:33:48 1982\ntitle\nbody\n", FormatText},   // path without !
		{"Abc.123\nnet.general\nucbvax!a\nsome day in May\ntitle\nbody\n", FormatText},          // no date
		{"Abc.123\ngeneral\nucbvax!a\nWed May  5 22:33:48 1982\ntitle\nbody\n", FormatText},     // no dotted group
		// text whose first line looks like a field
		{"Homepage: http://example.org/\nDocs: http://example.org/docs\nBugs: http://example.org/bugs\n", FormatText},
		{"Date: 2024-01-01\nURL: http://example.org/\n", FormatText},
		{"Subject: my bookmarks\nhttp://example.org/a\nhttp://example.org/b\n", FormatText},
		{"Subject: just one line\n", FormatText},
		{"2024-01-01T10:00:00Z: started\nerror: http://example.org/ unreachable\n", FormatText},
		{"INFO: fetching http://example.org/\nWARN: retry\nINFO: done\n", FormatText},
		{"Note: see http://example.org/\n\nmore text\n", FormatText},
		{"plain text http://example.org/\n", FormatText},
		{"From the desk of the editor\nsee http://example.org/\n", FormatText}, // not an mbox separator
		{"From - \nX-Mozilla-Status: 0001\n\nx\n", FormatMbox},
		// a From line that begins a text: nothing after it is mail
		{"From john@example.com about http://lost.example/one\nsee also http://two.example/\nand http://three.example/\n", FormatText},
		{"From - my notes http://lost2.example/\nmore http://two.example/\n", FormatText},
		{"From a@b\n\nhello\n", FormatText},
		// an mbox whose first header is damaged: told by its From_ line or by what follows
		{"From a@b Thu Mar 24 02:31:00 1994\nno colon here\n\nbody\n", FormatMbox},
		{"From a@b\nno colon\n\nbody\n\nFrom c@d\nSubject: x\n\nbody\n", FormatMbox},
		{"From a@b\r\nno colon\r\n\r\nbody\r\n\r\nFrom c@d\r\nX-Mozilla-Status: 1\r\n\r\nbody\r\n", FormatMbox},
		{"From a@b\nSubject: x\n\nbody\n", FormatMbox},
		{"From MAILER-DAEMON Thu Mar 24 02:31:00 1994\r\nX: y\r\n", FormatMbox},
		{"", FormatText},
		// URL lines are no fields
		{"From: me\nTo: you\nhttp://example.com/a\nhttp://example.com/b\n", FormatText},
		{"Date: 2024-01-01\nFrom: me\nNotes for the week\nhttp://example.com/n1\n", FormatText},
		{"http://example.com/a\nFrom: x\nTo: y\n\n", FormatText},
		{"From: me\nTo: you\nhttp://example.com/a\n", FormatMessage}, // read as a message whose header ends there
	} {
		got, why := sniff([]byte(c.in))
		if got != c.want || why == "" {
			t.Errorf("sniff(%.40q) = %s (%s), want %s", c.in, got, why, c.want)
		}
		// the Reader says the same, whole or a byte at a time
		r, err := NewReader(iotest.OneByteReader(strings.NewReader(c.in)), "x", nil)
		if c.in == "" {
			why = "empty (0 bytes): no messages" // (an empty input holds no message: Reader.Empty)
		}
		if err != nil || r.Format() != c.want || r.FormatReason() != why || r.Empty() != (c.in == "") {
			t.Errorf("NewReader(%.40q): %v %s %q", c.in, err, r.Format(), r.FormatReason())
		}
	}
}

// TestTextKeepsLinks: a URL list whose first line looks like a header
// loses nothing: every line is in the text.
func TestTextKeepsLinks(t *testing.T) {
	in := "Homepage: http://example.org/\nDocs: http://example.org/docs\n"
	ms := readAllOpts(t, in, Options{})
	if len(ms) != 1 || ms[0].Format != FormatText {
		t.Fatalf("%d messages", len(ms))
	}
	var text string
	for _, p := range ms[0].Parts() {
		text += string(p.Text)
	}
	if !strings.Contains(text, "http://example.org/docs") || !strings.Contains(text, "http://example.org/\n") {
		t.Errorf("text %q", text)
	}
}

// FuzzSniff: detection never fails, always gives a reason, and a stream
// read a byte at a time is detected the same.
func FuzzSniff(f *testing.F) {
	f.Add([]byte("From: a@b\nSubject: hi\n\nbody\n"))
	f.Add([]byte("Homepage: http://example.org/\n"))
	f.Add([]byte("Subject: x\rFrom: y\r\rbody\r"))
	f.Add([]byte("Amhtsa.157\nnet.games\nutzoo!decvax!mhtsa!rick\nWed May  5 22:33:48 1982\nRe: Raster\nbody\n"))
	f.Add([]byte("From a@b\nno colon\n\nbody\n\nFrom c@d\nSubject: x\n\nbody\n"))
	f.Add([]byte("From john@example.com about http://lost.example/one\n"))
	f.Add([]byte("Agenda\n\n1. Welcome\n2. Review http://review.example/doc\n3.\n4.\n5.\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, why := sniff(data)
		if why == "" {
			t.Fatalf("no reason for %s", got)
		}
		if got == FormatMessage && !isANews(trimLeadingEOL(data)) && !readHeaderShape(trimLeadingEOL(data)).mail() {
			t.Fatalf("message without a mail header: %q", data)
		}
	})
}

// TestANewsTextKeepsLinks: text that starts like the old A-news
// detector's article (one word with A, a line without a colon) keeps every
// link (fails if lines 2-5 are taken for header fields and lost).
func TestANewsTextKeepsLinks(t *testing.T) {
	in := "Agenda\n\n1. Welcome\n2. Review http://review.example/doc\n3. Plans http://plans.example/\n4. AOB\n5. Close http://close.example/\n"
	ms := readAllOpts(t, in, Options{})
	if len(ms) != 1 || ms[0].Format != FormatText {
		t.Fatalf("%d messages, format %v", len(ms), ms[0].Format)
	}
	var text string
	for _, p := range ms[0].Parts() {
		text += string(p.Text)
	}
	for _, u := range []string{"http://review.example/doc", "http://plans.example/", "http://close.example/"} {
		if !strings.Contains(text, u) {
			t.Errorf("%s lost from %q", u, text)
		}
	}
}

// TestFromTextKeepsLinks: a text whose first line starts "From " with an
// address or "-" keeps the links of its first line (fails if it is
// taken for an mbox and the line for an envelope).
func TestFromTextKeepsLinks(t *testing.T) {
	for _, in := range []string{
		"From john@example.com about http://lost.example/one\nsee also http://two.example/\n",
		"From - my notes http://lost.example/one\nsee also http://two.example/\n",
	} {
		ms := readAllOpts(t, in, Options{})
		if len(ms) != 1 || ms[0].Format != FormatText {
			t.Fatalf("%q: %d messages", in, len(ms))
		}
		var text string
		for _, p := range ms[0].Parts() {
			text += string(p.Text)
		}
		if !strings.Contains(text, "http://lost.example/one") || !strings.Contains(text, "http://two.example/") || len(ms[0].Problems) > 0 {
			t.Errorf("%q: text %q, problems %v", in, text, ms[0].Problems)
		}
	}
}

func trimLeadingEOL(b []byte) []byte {
	for len(b) > 0 && (b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}
