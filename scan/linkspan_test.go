package scan_test

// The property test of issue #11 §3: for every link that scan reports in
// the messages of testdata/ and ../shared/corpus/, the file bytes at the
// link's segments, decoded here by an independent decoder (transfer
// encoding, charset, HTML character references), are the link's
// characters as written; and record.RawStart, RawEnd and RawOffset agree
// with the segments' file ranges.

import (
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/ianaindex"
	"golang.org/x/text/encoding/unicode"

	"github.com/linkscan/linkscan/extract"
	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/record"
	"github.com/linkscan/linkscan/scan"
)

// spanKnown lists the links whose check is known to fail, by file (as
// walked from this directory) and raw_offset, with a piece of the failure
// message it must give. They are checked and logged, but do not fail the
// test; a failure of another kind there, or an entry that no longer fails,
// does. It is empty: keep it so, and add an entry only with the reason
// next to it.
var spanKnown = map[spanKey]string{}

type spanKey struct {
	file string
	off  int64
}

// spanLimits keep the test bounded: files larger than this are skipped
// (counted), as are messages past the count.
const (
	spanMaxFile     = 16 << 20
	spanMaxMessages = 20000
)

// spanStats counts what one run checked.
type spanStats struct {
	files, unopened, tooLarge, messages, records int
	exact, base64Checked                         int
	exactBy                                      map[string]int // exact links by part kind
	notExact                                     map[string]int // by reason
	viaRaw                                       int            // messages checked against Message.Raw (file bytes differ: bare CR, decompression)
	failures                                     []string
	known                                        []string // failures listed in spanKnown
	knownSeen                                    map[spanKey]bool
}

func (s *spanStats) notExactf(format string, args ...any) {
	if s.notExact == nil {
		s.notExact = map[string]int{}
	}
	s.notExact[fmt.Sprintf(format, args...)]++
}

func (s *spanStats) failf(format string, args ...any) {
	if len(s.failures) < 200 {
		s.failures = append(s.failures, fmt.Sprintf(format, args...))
	}
}

func TestLinkSpans(t *testing.T) {
	roots := []struct{ name, dir string }{
		{"testdata", "../testdata"},
		{"corpus", "../../shared/corpus"},
	}
	for _, root := range roots {
		t.Run(root.name, func(t *testing.T) {
			t.Parallel()
			if _, err := os.Stat(root.dir); err != nil {
				if root.name == "corpus" {
					t.Skipf("no shared corpus: %v", err)
				}
				t.Fatal(err)
			}
			st := checkSpansUnder(t, root.dir)
			reasons := make([]string, 0, len(st.notExact))
			for r, n := range st.notExact {
				reasons = append(reasons, fmt.Sprintf("%s %d", r, n))
			}
			sort.Strings(reasons)
			t.Logf("%s: %d files (%d not opened as mail, %d too large), %d messages (%d checked against Message.Raw), %d records: %d exact, %d base64 checked in the decoded bytes; not exact: %s",
				root.name, st.files, st.unopened, st.tooLarge, st.messages, st.viaRaw, st.records, st.exact, st.base64Checked, strings.Join(reasons, ", "))
			kinds := make([]string, 0, len(st.exactBy))
			for k, n := range st.exactBy {
				kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
			}
			sort.Strings(kinds)
			t.Logf("%s: exact by part: %s", root.name, strings.Join(kinds, "; "))
			for _, k := range st.known {
				t.Logf("known failure (spanKnown): %s", k)
			}
			for k := range spanKnown {
				if strings.HasPrefix(k.file, root.dir+"/") && !st.knownSeen[k] {
					t.Errorf("spanKnown %s at %d no longer fails as listed: remove it", k.file, k.off)
				}
			}
			for _, f := range st.failures {
				t.Error(f)
			}
			if st.exact == 0 {
				t.Errorf("%s: no exact link checked: the test checks nothing", root.name)
			}
		})
	}
}

// checkSpansUnder checks every file under dir.
func checkSpansUnder(t *testing.T, dir string) *spanStats {
	st := &spanStats{}
	err := filepath.WalkDir(dir, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		st.files++
		if fi, err := d.Info(); err != nil || fi.Size() > spanMaxFile {
			st.tooLarge++
			return nil
		}
		checkSpansFile(t, name, st)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// spanConfig finds the most links: e-mail addresses, bare domains, data:
// URIs, defanged links, header fields.
func spanConfig() *scan.Config {
	return &scan.Config{
		Headers: true,
		Hold:    true, // the parts are walked again after the scan
		Extract: extract.Options{Emails: true, BareDomains: true, DataURIs: true, Refang: true},
	}
}

// fileBytes reads a file as the reader sees it: decompressed when it is
// gzip or bzip2 (the offsets of messages are in the decompressed bytes).
func fileBytes(name string) ([]byte, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var r io.Reader
	switch {
	case bytes.HasPrefix(data, []byte("BZh")):
		r = bzip2.NewReader(bytes.NewReader(data))
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		g, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return data, nil
		}
		r = g
	default:
		return data, nil
	}
	d, err := io.ReadAll(io.LimitReader(r, spanMaxFile+1))
	if err != nil || len(d) > spanMaxFile {
		return data, nil // not what it looked like: the reader will say
	}
	return d, nil
}

func checkSpansFile(t *testing.T, name string, st *spanStats) {
	file, err := fileBytes(name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := mailbox.Open(name, nil)
	if err != nil {
		st.unopened++
		return
	}
	defer r.Close()
	cfg := spanConfig()
	for {
		m, err := r.Next()
		if m != nil {
			if st.messages >= spanMaxMessages {
				m.Release()
				return
			}
			st.messages++
			checkSpansMessage(name, file, m, cfg, st)
			m.Release()
		}
		if err != nil {
			if err != io.EOF && st.messages == 0 {
				st.unopened++
			}
			return
		}
	}
}

// linkKey finds the link of a record: the part's path and place, the
// link's text range.
type linkKey struct {
	part, where string
	start, end  int64
}

type partLink struct {
	p *mailbox.Part
	l extract.Link
}

func checkSpansMessage(name string, file []byte, m *mailbox.Message, cfg *scan.Config, st *spanStats) {
	res := scan.Message(m, cfg)
	// The bytes the offsets point into: the file's, unless they differ
	// from the message's (a file of bare CR line ends reads with LF);
	// then the message's, through its offset.
	src, base := file, int64(0)
	if len(m.Holes) == 0 {
		end := m.RawOffset + int64(len(m.Raw))
		if m.RawOffset < 0 || end > int64(len(file)) || !bytes.Equal(file[m.RawOffset:end], m.Raw) {
			src, base = m.Raw, m.RawOffset
			st.viaRaw++
		}
	}
	at := func(a, b int64) ([]byte, bool) {
		a, b = a-base, b-base
		if a < 0 || b < a || b > int64(len(src)) {
			return nil, false
		}
		return src[a:b], true
	}

	links := map[linkKey][]partLink{}
	htmlParts := map[string][]*mailbox.Part{} // by path
	for _, p := range m.Parts() {
		if p.Text == nil {
			continue
		}
		if len(p.AttrLinks) > 0 {
			htmlParts[p.Path] = append(htmlParts[p.Path], p)
		}
		for _, l := range extract.All(p.Text, &cfg.Extract) {
			k := linkKey{p.Path, p.Where, l.Start, l.End}
			links[k] = append(links[k], partLink{p, l})
		}
	}
	for i := range res.Records {
		rec := &res.Records[i]
		st.records++
		where := fmt.Sprintf("%s: message at %d, part %q (%s), raw_offset %d, URL %q", name, m.Offset, rec.Part, rec.Where, rec.RawOffset, rec.URL)
		switch {
		case strings.HasPrefix(rec.Where, "header:"):
			// A header field's link maps to the whole field (raw_offset,
			// raw_end): unfolding and RFC 2047 decoding keep no map.
			st.notExactf("header")
			if b, ok := at(rec.RawOffset, rec.RawEnd); !ok || !bytes.Contains(bytes.ToLower(b), []byte(strings.ToLower(strings.TrimPrefix(rec.Where, "header:")+":"))) {
				st.failf("%s: raw_offset..raw_end is not the field: %q", where, b)
			}
			if rec.RawStart != rec.RawOffset {
				st.failf("%s: raw_start %d is not the field's start", where, rec.RawStart)
			}
			continue
		case strings.HasPrefix(rec.Where, "html:"):
			// An attribute's URL is resolved, cleaned of white space, and
			// maps to its tag only: raw_offset (and raw_end) is the '<'
			// of the tag, but in a base64 part.
			st.notExactf("html attribute")
			if rec.RawStart != rec.RawOffset {
				st.failf("%s: raw_start %d is not raw_offset", where, rec.RawStart)
			}
			ps := htmlParts[rec.Part]
			if len(ps) != 1 || ps[0].Encoding == "base64" {
				continue
			}
			if b, ok := at(rec.RawOffset, rec.RawOffset+1); !ok || string(b) != "<" || rec.RawEnd != rec.RawOffset {
				st.failf("%s: raw_offset..raw_end %d..%d is not at the tag: %q", where, rec.RawOffset, rec.RawEnd, b)
			}
			continue
		}
		cands := links[linkKey{rec.Part, rec.Where, rec.Start, rec.End}]
		var pl *partLink
		for j := range cands {
			if cands[j].l.URL == rec.URL {
				pl = &cands[j]
			}
		}
		if pl == nil {
			st.failf("%s: no link of extract at text %d..%d", where, rec.Start, rec.End)
			continue
		}
		bad := checkLinkSpan(pl.p, &pl.l, rec, at, st)
		if bad == "" {
			continue
		}
		k := spanKey{filepath.ToSlash(name), rec.RawOffset}
		if why, ok := spanKnown[k]; ok && strings.Contains(bad, why) {
			if st.knownSeen == nil {
				st.knownSeen = map[spanKey]bool{}
			}
			st.knownSeen[k] = true
			st.known = append(st.known, fmt.Sprintf("%s: %s", where, bad))
			continue
		}
		st.failf("%s: %s", where, bad)
	}
}

// checkLinkSpan checks one link of a text part; it returns what is wrong,
// or "".
func checkLinkSpan(p *mailbox.Part, l *extract.Link, rec *record.Record, at func(a, b int64) ([]byte, bool), st *spanStats) string {
	segs := l.Spans()
	want := l.URL
	// The text at the segments is the URL as written: extract's own
	// property, checked here so that a failure below is the map's.
	var text []byte
	for _, s := range segs {
		text = append(text, p.Text[s.Start:s.End]...)
	}
	if l.Form == extract.FormEmail && bytes.IndexByte(text, '"') >= 0 {
		// Documented exception (extract.Link.Spans): the white space of
		// a quoted local part ("foo bar"@example.org) is written %20.
		want = spaceTo20(string(text))
		if want != l.URL {
			return fmt.Sprintf("segments' text %q with white space as %%20 is not the URL", text)
		}
		want = string(text)
	} else if string(text) != want {
		return fmt.Sprintf("segments' text %q is not the URL (extract)", text)
	}

	dec, err := newPartDecoder(p, at)
	if err != nil {
		st.notExactf("no decoder: %v", err)
		return ""
	}
	if p.Encoding == "base64" {
		// Base64 maps to the part's decoded bytes: RawSpan gives the
		// body, DecodedSpan the range there.
		if a, b, ok := p.RawSpan(int(segs[0].Start), int(segs[len(segs)-1].End)); ok || a != p.RawStart || b != p.RawEnd {
			return fmt.Sprintf("base64: RawSpan gives %d..%d exact %v, not the body %d..%d", a, b, ok, p.RawStart, p.RawEnd)
		}
		if rec.RawEnd != p.RawEnd || rec.RawStart != p.RawStart {
			return fmt.Sprintf("base64: raw_start..raw_end %d..%d is not the body %d..%d", rec.RawStart, rec.RawEnd, p.RawStart, p.RawEnd)
		}
		var got []byte
		for _, s := range segs {
			a, b, ok := p.DecodedSpan(int(s.Start), int(s.End))
			if !ok {
				st.notExactf("base64, decoded span not exact (%s)", dec.name)
				return ""
			}
			d, err := dec.fromDecoded(a, b)
			if err != nil {
				return fmt.Sprintf("base64: decoded bytes %d..%d: %v", a, b, err)
			}
			got = append(got, d...)
		}
		st.base64Checked++
		if string(got) != want {
			return fmt.Sprintf("base64: decoded bytes at the segments give %q", got)
		}
		// raw_offset: the start of the line of base64 that the link's
		// first byte came from (any character of its group of four).
		a, _, _ := p.DecodedSpan(int(segs[0].Start), int(segs[0].End))
		var starts []int64
		for c := a / 3 * 4; c < a/3*4+4 && c < len(dec.lines); c++ {
			starts = append(starts, p.RawStart+int64(dec.lines[c]))
		}
		if !slices.Contains(starts, rec.RawOffset) {
			return fmt.Sprintf("base64: raw_offset %d is not the start of the line of decoded byte %d (%v)", rec.RawOffset, a, starts)
		}
		return ""
	}

	var pieces []mailbox.RawRange
	exact := true
	for _, s := range segs {
		var ok bool
		n := len(pieces)
		pieces, ok = p.AppendRawPieces(pieces, int(s.Start), int(s.End))
		exact = exact && ok
		// RawSpan agrees with the pieces: same ends, exact only when
		// the segment is one exact piece.
		a, b, ok1 := p.RawSpan(int(s.Start), int(s.End))
		if len(pieces) > n && (a != pieces[n].Start || (ok1 || len(pieces) == n+1) && b != pieces[len(pieces)-1].End) {
			return fmt.Sprintf("RawSpan %d..%d (exact %v) differs from the pieces %v", a, b, ok1, pieces[n:])
		}
		if ok1 && !(ok && len(pieces) == n+1) {
			return fmt.Sprintf("RawSpan exact but AppendRawPieces gives %v exact %v", pieces[n:], ok)
		}
	}
	if !exact {
		if r, _ := utf8.DecodeRune(text); dec.stateful && r >= utf8.RuneSelf {
			// A link that starts with a character of a two-byte run of a
			// stateful charset (ISO-2022-JP after ESC $ B) has no bytes
			// of its own that decode to it alone: the shift before it is
			// shared with the text before.
			st.notExactf("stateful charset %s, link starting in a shifted run", dec.name)
			return ""
		}
		// Everything else maps exactly (#11 §3: QP, charsets, flowed,
		// HTML references); base64 was handled above.
		return fmt.Sprintf("not exact although %s %s %s maps exactly: pieces %v", p.ContentType, orNone(p.Encoding), dec.name, pieces)
	}
	var got []byte
	for _, pc := range pieces {
		raw, ok := at(pc.Start, pc.End)
		if !ok {
			return fmt.Sprintf("piece %d..%d outside the file", pc.Start, pc.End)
		}
		d, err := dec.decode(raw)
		if err != nil {
			return fmt.Sprintf("piece %d..%d %q: %v", pc.Start, pc.End, raw, err)
		}
		got = append(got, d...)
	}
	st.exact++
	kind := fmt.Sprintf("%s %s %s", p.ContentType, orNone(p.Encoding), strings.ToLower(dec.name))
	if len(segs) > 1 {
		kind += " segments"
	}
	if len(pieces) > len(segs) {
		kind += " pieces"
	}
	if st.exactBy == nil {
		st.exactBy = map[string]int{}
	}
	st.exactBy[kind]++
	if string(got) != want {
		var raws []string
		for _, pc := range pieces {
			raw, _ := at(pc.Start, pc.End)
			raws = append(raws, fmt.Sprintf("%d..%d %q", pc.Start, pc.End, raw))
		}
		return fmt.Sprintf("file bytes %s (%s %s %s) decode to %q", strings.Join(raws, " + "), p.ContentType, orNone(p.Encoding), dec.name, got)
	}
	first, last := pieces[0], pieces[len(pieces)-1]
	if rec.RawEnd != last.End {
		between, _ := at(min(last.End, rec.RawEnd), max(last.End, rec.RawEnd))
		if len(between) > 40 {
			between = append(between[:40:40], "..."...)
		}
		return fmt.Sprintf("raw_end %d is not the end %d of the last segment's bytes (pieces %v; bytes between %q)", rec.RawEnd, last.End, pieces, between)
	}
	if rec.RawStart != first.Start {
		return fmt.Sprintf("raw_start %d is not the start %d of the first segment's bytes (pieces %v)", rec.RawStart, first.Start, pieces)
	}
	if rec.RawOffset > first.Start {
		return fmt.Sprintf("raw_offset %d is after the start %d of the first segment's bytes", rec.RawOffset, first.Start)
	}
	// record/fields.go: raw_offset is exact for unencoded parts, the
	// start of the encoded line in quoted-printable.
	wantOff := first.Start
	if p.Encoding == "quoted-printable" {
		if body, ok := at(p.RawStart, first.Start); ok {
			wantOff = p.RawStart + int64(bytes.LastIndexAny(body, "\r\n")+1)
		}
	}
	if rec.RawOffset != wantOff {
		return fmt.Sprintf("raw_offset %d is not %d (%s: the first segment's start, or its line's in quoted-printable)", rec.RawOffset, wantOff, orNone(p.Encoding))
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "7bit"
	}
	return s
}

// spaceTo20 writes each white space character as %20 (a quoted e-mail
// local part in extract's URL).
func spaceTo20(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case ' ', '\t', '\u00a0', '\u3000', '\u2000', '\u2001', '\u2002', '\u2003', '\u2004', '\u2005',
			'\u2006', '\u2007', '\u2008', '\u2009', '\u200a', '\u202f', '\u205f', '\u1680':
			b.WriteString("%20")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// partDecoder decodes file bytes of one part the way the part says it
// was encoded, written here from the RFCs, independently of mailbox.
type partDecoder struct {
	p        *mailbox.Part
	name     string            // charset used, for reports
	enc      encoding.Encoding // nil: the bytes are UTF-8 as they stand
	stateful bool
	html     bool
	body     []byte // base64: the decoded body
	// lines holds, for each base64 character decoded, the offset in
	// the part's body of the start of its line.
	lines []int
}

var decoderCache sync.Map // label -> encoding.Encoding (or nil)

// lookupLabel finds the decoder of a MIME charset label: nil for UTF-8
// and US-ASCII; known false for a label no index knows.
func lookupLabel(label string) (enc encoding.Encoding, known bool) {
	l := strings.ToLower(strings.Trim(strings.TrimSpace(label), "\"'"))
	switch l {
	case "", "us-ascii", "ascii", "utf-8", "utf8", "ansi_x3.4-1968", "iso646-us", "us":
		return nil, true
	}
	if v, ok := decoderCache.Load(l); ok {
		if v == nil {
			return nil, false
		}
		return v.(encoding.Encoding), true
	}
	// The WHATWG names first (what mail clients do: ISO-8859-1 read as
	// Windows-1252), then IANA's.
	e, err := htmlindex.Get(l)
	if err != nil || e == nil {
		e, err = ianaindex.MIME.Encoding(l)
	}
	if err != nil || e == nil {
		decoderCache.Store(l, nil)
		return nil, false
	}
	decoderCache.Store(l, e)
	return e, true
}

func newPartDecoder(p *mailbox.Part, at func(a, b int64) ([]byte, bool)) (*partDecoder, error) {
	d := &partDecoder{p: p, html: p.ContentType == "text/html"}
	enc, known := lookupLabel(p.Charset)
	d.enc, d.name = enc, orDefault(p.Charset, "us-ascii")
	raw, ok := at(p.RawStart, p.RawEnd)
	if !ok {
		return nil, fmt.Errorf("body %d..%d outside the file", p.RawStart, p.RawEnd)
	}
	var whole []byte
	switch p.Encoding {
	case "base64":
		d.body, d.lines = decodeBase64(raw)
		whole = d.body
	case "quoted-printable":
		whole = decodeQP(raw)
	default:
		whole = raw
	}
	if l := strings.ToLower(strings.Trim(strings.TrimSpace(p.Charset), "\"'")); l == "utf-16" || l == "utf16" {
		// RFC 2781 §4.3: big-endian unless a byte order mark says
		// otherwise; the mark is at the start of the text, not of the
		// range decoded, so it is read here once.
		order := unicode.BigEndian
		if bytes.HasPrefix(whole, []byte{0xff, 0xfe}) {
			order = unicode.LittleEndian
		}
		d.enc = unicode.UTF16(order, unicode.IgnoreBOM)
	}
	if d.enc == nil && !utf8.Valid(whole) {
		// Text that is not the UTF-8 (or ASCII) it claims, or in a charset
		// nobody knows, is read as Windows-1252 (mailbox's documented
		// fallback, reported as a problem of the part).
		d.enc, d.name = charmap.Windows1252, d.name+" read as windows-1252"
	} else if !known {
		d.name += " (unknown, UTF-8)"
	}
	if d.enc != nil {
		n, _ := htmlindex.Name(d.enc)
		d.stateful = strings.HasPrefix(n, "iso-2022") || strings.Contains(strings.ToLower(d.name), "2022") // ISO 2022 shifts (HZ is not in x/text)
	}
	return d, nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// decode decodes file bytes of the part: transfer encoding, charset,
// then, in HTML, character references.
func (d *partDecoder) decode(raw []byte) ([]byte, error) {
	b := raw
	if d.p.Encoding == "quoted-printable" {
		b = decodeQP(raw)
	}
	return d.charset(b)
}

// fromDecoded decodes bytes a..b of a base64 part's decoded body.
func (d *partDecoder) fromDecoded(a, b int) ([]byte, error) {
	if a < 0 || b < a || b > len(d.body) {
		return nil, fmt.Errorf("outside the decoded body (%d bytes)", len(d.body))
	}
	return d.charset(d.body[a:b])
}

func (d *partDecoder) charset(b []byte) ([]byte, error) {
	if d.enc != nil {
		out, err := d.enc.NewDecoder().Bytes(b)
		if err != nil {
			return nil, err
		}
		b = out
	}
	if d.html {
		b = []byte(html.UnescapeString(string(b)))
	}
	return b, nil
}

// decodeQP undoes quoted-printable (RFC 2045 §6.7): "=XX" is the byte
// XX (lower-case hex digits accepted, as rule 1's note allows robust
// decoders), "=" at the end of a line (after optional white space) is a
// soft line break and goes with its line break, white space at the end
// of a line is transport padding and goes; anything else, a lone "="
// included, stands for itself.
func decodeQP(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '=':
			if i+2 < len(b) && hexVal(b[i+1]) >= 0 && hexVal(b[i+2]) >= 0 {
				out = append(out, byte(hexVal(b[i+1])<<4|hexVal(b[i+2])))
				i += 3
				continue
			}
			j := i + 1
			for j < len(b) && (b[j] == ' ' || b[j] == '\t') {
				j++
			}
			if n := lineBreak(b[j:]); n > 0 {
				i = j + n // soft line break
				continue
			}
			out = append(out, c)
			i++
		case c == ' ' || c == '\t':
			j := i
			for j < len(b) && (b[j] == ' ' || b[j] == '\t') {
				j++
			}
			if lineBreak(b[j:]) > 0 {
				i = j // padding before a hard line break
				continue
			}
			out = append(out, b[i:j]...)
			i = j
		default:
			out = append(out, c)
			i++
		}
	}
	return out
}

// lineBreak returns the length of the line break b starts with (CRLF, LF
// or a bare CR), or 0.
func lineBreak(b []byte) int {
	switch {
	case bytes.HasPrefix(b, []byte("\r\n")):
		return 2
	case len(b) > 0 && (b[0] == '\n' || b[0] == '\r'):
		return 1
	}
	return 0
}

func hexVal(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	}
	return -1
}

// decodeBase64 decodes a base64 body (RFC 2045 §6.8): characters outside
// the alphabet are ignored, decoding stops at padding, and a last group
// cut short decodes as far as it goes.
func decodeBase64(b []byte) ([]byte, []int) {
	clean := make([]byte, 0, len(b))
	var lines []int
	line := 0
	for i, c := range b {
		if c == '=' {
			break
		}
		if c == '\n' || c == '\r' {
			line = i + 1
		}
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' {
			clean = append(clean, c)
			lines = append(lines, line)
		}
	}
	if len(clean)%4 == 1 {
		clean = clean[:len(clean)-1]
	}
	out := make([]byte, base64.RawStdEncoding.DecodedLen(len(clean)))
	n, _ := base64.RawStdEncoding.Decode(out, clean)
	return out[:n], lines
}
