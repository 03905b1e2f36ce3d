package rewrite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/pelletier/go-toml/v2/unstable"
)

// MaxRulesFileSize bounds the rules file read by Load and Parse (64 MiB:
// about 600,000 map rules).
const MaxRulesFileSize = 64 << 20

// maxErrors is the number of errors a rules file reports before Parse
// gives up.
const maxErrors = 20

// Rules is a parsed rules file: an ordered list of rules and the indexes
// that find the rules matching a link without trying them all. It is
// read-only after Parse and safe for concurrent use.
type Rules struct {
	file  string
	rules []*rule
	idx   index
	// hasArchive: some rule is an archive rule (HasArchive)
	hasArchive bool
}

// Len returns the number of rules.
func (r *Rules) Len() int { return len(r.rules) }

// HasArchive reports whether some rule's action is archive: only then
// is an Archive (the audit history) needed, in Options.Archive or
// RewriteWith.
func (r *Rules) HasArchive() bool { return r.hasArchive }

type action uint8

const (
	actNone action = iota
	actMap
	actReplace
	actUnwrap
	actStrip
	actCanonicalize
	actWrap
	actMidToWeb
	actDropWrapper
	actKeep
	actArchive
)

var actionNames = [...]string{
	actNone: "", actMap: "map", actReplace: "replace", actUnwrap: "unwrap", actStrip: "strip-params",
	actCanonicalize: "canonicalize", actWrap: "wrap", actMidToWeb: "mid-to-web",
	actDropWrapper: "drop-wrapper", actKeep: "keep", actArchive: "archive",
}

func (a action) String() string { return actionNames[a] }

// rule is one [[rule]] of the file. What a map rule needs is in the rule
// itself; other conditions and parameters are in structures of their own,
// nil when unused, so that 100,000 map rules stay small.
//
// Its name and a map's from and to are not strings of their own but
// lengths in text from off (name, from, to), one string for all the
// rules: read them through name, from, to, fromHost and toHost.
type rule struct {
	line int32 // of its [[rule]] header (or of its inline table)
	act  action
	// map: from and to, or from-host and to-host when byHost (a rule
	// with both is an error)
	byHost bool

	off, nName, nFrom, nTo uint32
	text                   *string // nil when no rule has any of these strings

	*matchSpec    // nil: no conditions but from or from-host
	*actionParams // nil for map, canonicalize, wrap, drop-wrapper, keep, and archive without statuses
}

// ruleStrings are the strings of a rule kept in Rules.text, while the
// rule is read.
type ruleStrings struct {
	name, from, to string
}

func (r *rule) name() string  { return r.str(r.off, r.nName) }
func (r *rule) mfrom() string { return r.str(r.off+r.nName, r.nFrom) }
func (r *rule) mto() string   { return r.str(r.off+r.nName+r.nFrom, r.nTo) }

func (r *rule) str(off, n uint32) string {
	if n == 0 {
		return ""
	}
	return (*r.text)[off : off+n]
}

// from is the prefix a map rule replaces ("" for other rules).
func (r *rule) from() string {
	if r.byHost {
		return ""
	}
	return r.mfrom()
}

// to is what replaces from.
func (r *rule) to() string {
	if r.byHost {
		return ""
	}
	return r.mto()
}

// fromHost is the host (or *.domain) a map rule replaces ("" for other
// rules).
func (r *rule) fromHost() string {
	if !r.byHost {
		return ""
	}
	return r.mfrom()
}

// toHost is what replaces fromHost.
func (r *rule) toHost() string {
	if !r.byHost {
		return ""
	}
	return r.mto()
}

// matchSpec: every condition given must hold; a list holds when any of
// its elements does.
type matchSpec struct {
	schemes   []string
	hosts     []string // exact, or "*.suffix"
	prefixes  []string
	re        *regexp.Regexp
	forms     []string
	locations []string
}

// actionParams are the parameters of replace, unwrap, strip-params,
// mid-to-web and archive.
type actionParams struct {
	pattern      *regexp.Regexp
	with         string
	maxDepth     int
	params       *ParamSet // strip-params: compiled from the next three
	paramNames   []string
	exceptParams []string // keep-params
	noDefaults   bool     // defaults = false
	exceptHosts  []string
	template     string
	statuses     []string // archive: the statuses rewritten; nil: DefaultArchiveStatuses
}

// Error is an error in a rules file, with its place: Line and Column are
// 1-based, Column counted in characters.
type Error struct {
	File         string
	Line, Column int
	Msg          string
}

func (e *Error) Error() string {
	return fmt.Sprintf("rewrite: %s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

// Position is the place and message of e as compilers write them,
// FILE:LINE:COL: message, for editors to jump to.
func (e *Error) Position() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

// Errors returns the *Error values in err, the error of Load or Parse:
// one, or each of those joined. It returns nil when err holds none (a
// file that could not be read).
func Errors(err error) []*Error {
	if e, ok := err.(*Error); ok {
		return []*Error{e}
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil
	}
	var out []*Error
	for _, x := range j.Unwrap() {
		if e, ok := x.(*Error); ok {
			out = append(out, e)
		}
	}
	return out
}

// Explanation is what the rules do to one link, for a person checking a
// rules file: the Result of Rewrite and every rule whose match held, in
// order, whether it changed the link or not.
type Explanation struct {
	Result
	Matched []string // labels of the rules that matched: names, or "rule at line N"
}

// Explain runs the rules over one link as Rewrite does and says which
// rules matched it.
func (r *Rules) Explain(l Link) (Explanation, error) {
	var ex Explanation
	res, err := r.rewriteTraced(l, nil, &ex.Matched)
	ex.Result = res
	return ex, err
}

// Load reads and parses the rules file at path.
func Load(path string) (*Rules, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("rewrite: %w", err)
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse reads a rules file (TOML; see docs/rewrite.md) from r; name is
// used in error messages. Errors are *Error values with the line and
// column of the offending key or value, joined (errors.Join) when there
// are several; a TOML syntax error stops the reading at once, other
// errors are collected, up to 20.
func Parse(r io.Reader, name string) (*Rules, error) {
	data, err := readAll(r)
	if err != nil {
		return nil, fmt.Errorf("rewrite: reading %s: %w", name, err)
	}
	if len(data) > MaxRulesFileSize {
		return nil, &Error{File: name, Line: 1, Column: 1, Msg: fmt.Sprintf("rules file larger than %d bytes", MaxRulesFileSize)}
	}
	p := &parser{file: name, data: data, line: 1}
	if len(data) > 0 {
		// data is never written after this point: the names, froms
		// and tos of the rules are slices of this one string while it
		// is parsed, then copied together by compact.
		p.text = unsafe.String(&data[0], len(data))
	}
	// room for the rules at once: the lists need not grow by copying
	if n := bytes.Count(data, []byte("[[rule]]")); n > 0 {
		p.rules = make([]*rule, 0, n)
		p.rstrs = make([]ruleStrings, 0, n)
	}
	p.parse()
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	compact(p.rules, p.rstrs)
	return newRules(name, p.rules), nil
}

// newRules makes the Rules of a parsed (or cache-decoded) list of rules:
// their file name, the derived flags, the index.
func newRules(name string, rules []*rule) *Rules {
	rs := &Rules{file: name, rules: rules}
	for _, ru := range rules {
		rs.hasArchive = rs.hasArchive || ru.act == actArchive
	}
	rs.idx.build(rs.rules)
	return rs
}

// readAll reads at most MaxRulesFileSize+1 bytes of r, in a buffer of
// the right size when r tells its size (a file, a strings.Reader), so
// that a large rules file is not copied while the buffer grows.
func readAll(r io.Reader) ([]byte, error) {
	size := int64(-1)
	switch v := r.(type) {
	case interface{ Len() int }:
		size = int64(v.Len())
	case interface{ Stat() (os.FileInfo, error) }:
		if fi, err := v.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
	}
	lr := io.LimitReader(r, MaxRulesFileSize+1)
	if size < 0 || size > MaxRulesFileSize {
		return io.ReadAll(lr)
	}
	// one byte more than the size, so that a reader that grew since is
	// still read to its end (by ReadAll's growing, then)
	buf := make([]byte, 0, size+1)
	for {
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		if len(buf) == cap(buf) {
			rest, err := io.ReadAll(lr)
			return append(buf, rest...), err
		}
	}
}

// parser turns the expressions of go-toml's parser into rules, following
// the schema of docs/rewrite.md, so that every error has its place.
type parser struct {
	file  string
	data  []byte
	text  string // data, as a string sharing its bytes
	tp    unstable.Parser
	rules []*rule
	rstrs []ruleStrings // of each rule
	slab  []rule        // rules are allocated from here, many at a time
	errs  []error

	cur     *rule
	curOff  int // of the current rule's header
	curSeen fieldSet
	keyBuf  []string
	inMatch bool // after a [rule.match] header
	version bool

	// running line count, so that each rule's line costs only the bytes
	// since the last one
	lineOff, line int
}

// field numbers, for duplicate keys
type fieldSet uint32

const (
	fName fieldSet = 1 << iota
	fAction
	fFrom
	fTo
	fFromHost
	fToHost
	fPattern
	fWith
	fMaxDepth
	fParams
	fKeepParams
	fDefaults
	fExceptHosts
	fTemplate
	fMatch // the match table itself
	fScheme
	fHost
	fPrefix
	fRegexp
	fForm
	fLocation
	fStatuses
)

var ruleFields = map[string]fieldSet{
	"name": fName, "action": fAction, "from": fFrom, "to": fTo, "from-host": fFromHost,
	"to-host": fToHost, "pattern": fPattern, "with": fWith, "max-depth": fMaxDepth,
	"params": fParams, "keep-params": fKeepParams, "defaults": fDefaults,
	"except-hosts": fExceptHosts, "template": fTemplate, "match": fMatch, "statuses": fStatuses,
}

var matchFields = map[string]fieldSet{
	"scheme": fScheme, "host": fHost, "prefix": fPrefix, "regexp": fRegexp, "form": fForm, "location": fLocation,
}

// which parameters each action takes
var actionFields = map[action]fieldSet{
	actMap:      fFrom | fTo | fFromHost | fToHost,
	actReplace:  fPattern | fWith,
	actUnwrap:   fMaxDepth,
	actStrip:    fParams | fKeepParams | fDefaults | fExceptHosts,
	actMidToWeb: fTemplate,
	actArchive:  fStatuses,
}

// mapFields are held in the rule itself, not in its actionParams.
const mapFields = fFrom | fTo | fFromHost | fToHost

const paramFields = fFrom | fTo | fFromHost | fToHost | fPattern | fWith | fMaxDepth | fParams |
	fKeepParams | fDefaults | fExceptHosts | fTemplate | fStatuses

// pos turns a byte offset into line and column (characters).
func (p *parser) pos(off int) (int, int) {
	if off > len(p.data) {
		off = len(p.data)
	}
	line, start := 1, 0
	for i := 0; i < off; i++ {
		if p.data[i] == '\n' {
			line++
			start = i + 1
		}
	}
	return line, utf8.RuneCount(p.data[start:off]) + 1
}

// lineAt is the line of off, off never decreasing between calls.
func (p *parser) lineAt(off int) int {
	if off < p.lineOff {
		l, _ := p.pos(off)
		return l
	}
	if start, end := min(p.lineOff, len(p.data)), min(off, len(p.data)); start < end {
		p.line += bytes.Count(p.data[start:end], []byte{'\n'})
	}
	p.lineOff = off
	return p.line
}

func (p *parser) errAt(off int, format string, args ...any) {
	if len(p.errs) >= maxErrors {
		return
	}
	l, c := p.pos(off)
	p.errs = append(p.errs, &Error{File: p.file, Line: l, Column: c, Msg: fmt.Sprintf(format, args...)})
}

// offset of a node: its own range, or that of its first child for nodes
// go-toml gives no range (arrays, table headers).
func (p *parser) offset(n *unstable.Node) int {
	for n != nil {
		if n.Raw.Length > 0 || n.Raw.Offset > 0 {
			return int(n.Raw.Offset)
		}
		n = n.Child()
	}
	return 0
}

func (p *parser) parse() {
	p.tp.Reset(p.data)
	for p.tp.NextExpression() {
		if len(p.errs) >= maxErrors {
			break
		}
		e := p.tp.Expression()
		switch e.Kind {
		case unstable.ArrayTable:
			key, off := p.key(e.Key())
			if key != "rule" {
				p.errAt(off, "unknown table [[%s]]: rules are [[rule]]", key)
				continue
			}
			p.finishRule()
			p.startRule(off)
		case unstable.Table:
			key, off := p.key(e.Key())
			if key != "rule.match" || p.cur == nil {
				p.errAt(off, "unknown table [%s]: only [rule.match] after a [[rule]]", key)
				continue
			}
			if p.curSeen&fMatch != 0 {
				p.errAt(off, "match given twice in this rule")
			}
			p.curSeen |= fMatch
			p.inMatch = true
		case unstable.KeyValue:
			parts, off := p.keyParts(e.Key())
			switch {
			case p.cur == nil:
				p.topLevel(parts, off, e.Value())
			case p.inMatch:
				p.matchKey(parts, off, e.Value())
			default:
				p.ruleKey(parts, off, e.Value())
			}
		}
	}
	if err := p.tp.Error(); err != nil {
		off := len(p.data)
		var pe *unstable.ParserError
		if errors.As(err, &pe) && pe.Highlight != nil {
			// the highlight is a slice of data: its offset from the
			// capacities (as Parser.Range does, without its panic for an
			// empty slice at the end)
			if o := cap(p.data) - cap(pe.Highlight); o >= 0 && o <= len(p.data) {
				off = o
			}
		}
		p.errAt(off, "%s", err.Error())
		return
	}
	p.finishRule()
}

// keyParts returns the parts of a dotted key (in a buffer reused by the
// next call) and the offset of the first; known names are not copied.
func (p *parser) keyParts(it unstable.Iterator) ([]string, int) {
	parts := p.keyBuf[:0]
	off := -1
	for it.Next() {
		n := it.Node()
		if off < 0 {
			off = p.offset(n)
		}
		k, ok := knownKey(n.Data)
		if !ok {
			k = string(n.Data)
		}
		parts = append(parts, k)
	}
	p.keyBuf = parts[:0]
	return parts, max(off, 0)
}

// knownKey returns the key name of the schema b spells (a constant: no
// allocation), as knownKeys holds them; a switch is quicker than the map
// for the keys of every rule.
func knownKey(b []byte) (string, bool) {
	switch string(b) {
	case "action":
		return "action", true
	case "from-host":
		return "from-host", true
	case "to-host":
		return "to-host", true
	case "from":
		return "from", true
	case "to":
		return "to", true
	case "name":
		return "name", true
	case "match":
		return "match", true
	}
	k, ok := knownKeys[string(b)]
	return k, ok
}

// ruleField is ruleFields[name], the common keys by a switch.
func ruleField(name string) (fieldSet, bool) {
	switch name {
	case "action":
		return fAction, true
	case "from-host":
		return fFromHost, true
	case "to-host":
		return fToHost, true
	case "from":
		return fFrom, true
	case "to":
		return fTo, true
	case "name":
		return fName, true
	}
	f, ok := ruleFields[name]
	return f, ok
}

// knownKeys holds the key names of the schema, so that reading a key
// allocates nothing.
var knownKeys = func() map[string]string {
	m := map[string]string{"version": "version", "rule": "rule"}
	for k := range ruleFields {
		m[k] = k
	}
	for k := range matchFields {
		m[k] = k
	}
	return m
}()

func (p *parser) key(it unstable.Iterator) (string, int) {
	var b strings.Builder
	off := -1
	for it.Next() {
		if off < 0 {
			off = p.offset(it.Node())
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.Write(it.Node().Data)
	}
	return b.String(), max(off, 0)
}

func (p *parser) topLevel(parts []string, off int, v *unstable.Node) {
	switch strings.Join(parts, ".") {
	case "version":
		if p.version {
			p.errAt(off, "version given twice")
		}
		p.version = true
		if v.Kind != unstable.Integer || string(v.Data) != "1" {
			p.errAt(p.offset(v), "version must be 1")
		}
	case "rule":
		if v.Kind != unstable.Array {
			p.errAt(off, "rule must be written [[rule]] or as an array of inline tables")
			return
		}
		it := v.Children()
		for it.Next() {
			t := it.Node()
			if t.Kind != unstable.InlineTable {
				p.errAt(p.offset(t), "an element of rule must be an inline table")
				continue
			}
			p.startRule(p.offset(t))
			p.inlineRule(t, false)
			p.finishRule()
		}
	default:
		p.errAt(off, "unknown key %q at the top level (only version and [[rule]])", strings.Join(parts, "."))
	}
}

// inlineRule reads the key-values of an inline table into the current
// rule (or its match when inMatch).
func (p *parser) inlineRule(t *unstable.Node, inMatch bool) {
	it := t.Children()
	for it.Next() {
		kv := it.Node()
		parts, off := p.keyParts(kv.Key())
		if inMatch {
			p.matchKey(parts, off, kv.Value())
		} else {
			p.ruleKey(parts, off, kv.Value())
		}
	}
}

func (p *parser) startRule(off int) {
	if len(p.slab) == cap(p.slab) {
		p.slab = make([]rule, 0, 512)
	}
	p.slab = append(p.slab, rule{line: int32(p.lineAt(off))})
	p.cur = &p.slab[len(p.slab)-1]
	p.rstrs = append(p.rstrs, ruleStrings{})
	p.curSeen = 0
	p.inMatch = false
	p.rules = append(p.rules, p.cur)
	p.curOff = off
}

func (p *parser) ruleKey(parts []string, off int, v *unstable.Node) {
	if len(parts) > 1 && parts[0] == "match" {
		p.curSeen |= fMatch
		p.matchKey(parts[1:], off, v)
		return
	}
	f, ok := ruleField(parts[0])
	if !ok || len(parts) > 1 {
		p.errAt(off, "unknown key %q in a rule", strings.Join(parts, "."))
		return
	}
	if f == fMatch {
		if p.curSeen&fMatch != 0 {
			p.errAt(off, "match given twice in this rule")
			return
		}
		p.curSeen |= fMatch
		if v.Kind != unstable.InlineTable {
			p.errAt(p.offset(v), "match must be a table")
			return
		}
		p.inlineRule(v, true)
		return
	}
	if p.curSeen&f != 0 {
		p.errAt(off, "%s given twice in this rule", parts[0])
		return
	}
	p.curSeen |= f
	r := p.cur
	if f&paramFields&^mapFields != 0 && r.actionParams == nil {
		r.actionParams = &actionParams{maxDepth: DefaultMaxLayers}
	}
	switch f {
	case fName:
		p.cs().name, _ = p.ref(v)
	case fAction:
		s, ok := p.ref(v)
		if !ok {
			return
		}
		for a, n := range actionNames {
			if n == s && a != int(actNone) {
				r.act = action(a)
			}
		}
		if r.act == actNone {
			p.errAt(p.offset(v), "unknown action %q (map, replace, unwrap, strip-params, canonicalize, wrap, mid-to-web, drop-wrapper, keep, archive)", s)
		}
	case fFrom:
		if s, ok := p.ref(v); ok {
			p.cs().from = lowerSchemeHost(s)
		}
	case fTo:
		p.cs().to, _ = p.ref(v)
	case fFromHost:
		if s, ok := p.ref(v); ok {
			p.cs().from, r.byHost = p.host(s, v), true
		}
	case fToHost:
		if s, ok := p.ref(v); ok {
			p.cs().to, r.byHost = p.host(s, v), true
		}
	case fPattern:
		r.pattern = p.regexp(v)
	case fWith:
		r.with, _ = p.str(v)
	case fMaxDepth:
		n, ok := p.integer(v)
		if ok && (n < 1 || n > 64) {
			p.errAt(p.offset(v), "max-depth must be between 1 and 64")
		}
		r.maxDepth = n
	case fParams:
		r.paramNames = p.strs(v)
	case fKeepParams:
		r.exceptParams = p.strs(v)
	case fDefaults:
		b, ok := p.boolean(v)
		if ok {
			r.noDefaults = !b
		}
	case fExceptHosts:
		for _, h := range p.strs(v) {
			r.exceptHosts = append(r.exceptHosts, p.host(h, v))
		}
	case fTemplate:
		r.template, _ = p.str(v)
		if !strings.Contains(r.template, "{msgid}") {
			p.errAt(p.offset(v), "template must contain {msgid}")
		}
	case fStatuses:
		ss := p.strs(v)
		if v.Kind == unstable.Array && len(ss) == 0 {
			p.errAt(off, "statuses must name at least one status (%s)", strings.Join(ArchiveStatuses, ", "))
		}
		for _, s := range ss {
			l := strings.ToLower(s)
			if !slices.Contains(ArchiveStatuses, l) {
				p.errAt(p.offset(v), "unknown status %q (%s)", s, strings.Join(ArchiveStatuses, ", "))
			}
			if !slices.Contains(r.statuses, l) {
				r.statuses = append(r.statuses, l)
			}
		}
	}
}

func (p *parser) matchKey(parts []string, off int, v *unstable.Node) {
	f, ok := matchFields[parts[0]]
	if !ok || len(parts) > 1 {
		p.errAt(off, "unknown match key %q (scheme, host, prefix, regexp, form, location)", strings.Join(parts, "."))
		return
	}
	if p.curSeen&f != 0 {
		p.errAt(off, "match.%s given twice in this rule", parts[0])
		return
	}
	p.curSeen |= f
	r := p.cur
	if r.matchSpec == nil {
		r.matchSpec = new(matchSpec)
	}
	switch f {
	case fScheme:
		for _, s := range p.strs(v) {
			if !isScheme(s) {
				p.errAt(p.offset(v), "%q is not a scheme name", s)
			}
			r.schemes = append(r.schemes, strings.ToLower(s))
		}
	case fHost:
		for _, h := range p.strs(v) {
			r.hosts = append(r.hosts, p.host(h, v))
		}
	case fPrefix:
		for _, s := range p.strs(v) {
			if s == "" {
				p.errAt(p.offset(v), "empty prefix")
			}
			r.prefixes = append(r.prefixes, lowerSchemeHost(s))
		}
	case fRegexp:
		r.re = p.regexp(v)
	case fForm:
		for _, s := range p.strs(v) {
			if !knownForm(s) {
				p.errAt(p.offset(v), "unknown form %q (%s)", s, strings.Join(forms, ", "))
			}
			r.forms = append(r.forms, s)
		}
	case fLocation:
		for _, s := range p.strs(v) {
			l := strings.ToLower(s)
			if !knownLocation(l) {
				p.errAt(p.offset(v), "unknown location %q (body, text, preamble, epilogue, html, html:ATTR, header, header:NAME)", s)
			}
			r.locations = append(r.locations, l)
		}
	}
}

// finishRule checks the rule just read as a whole.
func (p *parser) finishRule() {
	r := p.cur
	if r == nil {
		return
	}
	p.cur = nil
	off := p.curOff
	if r.act == actNone {
		if p.curSeen&fAction == 0 {
			p.errAt(off, "rule without an action")
		}
		return
	}
	if r.act != actMap && actionFields[r.act] != 0 && r.actionParams == nil {
		r.actionParams = &actionParams{maxDepth: DefaultMaxLayers}
	}
	if extra := p.curSeen & paramFields &^ actionFields[r.act]; extra != 0 {
		p.errAt(off, "%s takes no %s", r.act, fieldNames(extra))
	}
	switch r.act {
	case actMap:
		byPrefix := p.curSeen&(fFrom|fTo) != 0
		byHost := p.curSeen&(fFromHost|fToHost) != 0
		cs := p.cs()
		switch {
		case byPrefix && byHost:
			p.errAt(off, "map takes from and to, or from-host and to-host, not both")
		case byPrefix && (cs.from == "" || p.curSeen&fTo == 0):
			p.errAt(off, "map needs a non-empty from and a to")
		case byHost && (cs.from == "" || cs.to == ""):
			p.errAt(off, "map needs from-host and to-host")
		case !byPrefix && !byHost:
			p.errAt(off, "map needs from and to, or from-host and to-host")
		case byHost && strings.HasPrefix(cs.to, "*.") && !strings.HasPrefix(cs.from, "*."):
			p.errAt(off, "to-host %q has a * but from-host %q has none", cs.to, cs.from)
		}
	case actReplace:
		if r.pattern == nil || p.curSeen&fWith == 0 {
			p.errAt(off, "replace needs pattern and with")
		}
	case actMidToWeb:
		if r.template == "" {
			p.errAt(off, "mid-to-web needs a template")
		}
	case actStrip:
		var names []string
		if !r.noDefaults {
			names = DefaultTrackingParams
		}
		if len(r.paramNames) > 0 {
			names = append(append([]string(nil), names...), r.paramNames...)
		}
		r.params = NewParamSet(names, r.exceptParams)
	}
}

func fieldNames(f fieldSet) string {
	var names []string
	for n, v := range ruleFields {
		if f&v != 0 {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func (p *parser) str(v *unstable.Node) (string, bool) {
	if v.Kind != unstable.String {
		p.errAt(p.offset(v), "a string is wanted here, not %s", kindName(v.Kind))
		return "", false
	}
	return string(v.Data), true
}

// ref is str giving a slice of the file where it can: for the strings
// compact copies out before Parse returns, and for those not kept.
func (p *parser) ref(v *unstable.Node) (string, bool) {
	if v.Kind != unstable.String {
		p.errAt(p.offset(v), "a string is wanted here, not %s", kindName(v.Kind))
		return "", false
	}
	return p.string(v.Data), true
}

// cs returns the strings of the current rule.
func (p *parser) cs() *ruleStrings { return &p.rstrs[len(p.rstrs)-1] }

// compact copies the name, from and to of every rule (slices of the
// rules file, or strings of their own when lower-cased) into one string,
// so that the rules keep neither the file nor 100,000 small strings.
func compact(rules []*rule, strs []ruleStrings) {
	n := 0
	for _, cs := range strs {
		n += len(cs.name) + len(cs.from) + len(cs.to)
	}
	if n == 0 {
		return
	}
	buf := make([]byte, 0, n)
	for _, cs := range strs {
		buf = append(append(append(buf, cs.name...), cs.from...), cs.to...)
	}
	// buf is never written after this point
	text := new(string)
	*text = unsafe.String(&buf[0], len(buf))
	off := 0
	for i, r := range rules {
		cs := &strs[i]
		r.text, r.off = text, uint32(off)
		r.nName, r.nFrom, r.nTo = uint32(len(cs.name)), uint32(len(cs.from)), uint32(len(cs.to))
		off += len(cs.name) + len(cs.from) + len(cs.to)
	}
}

// string returns b as a string: a slice of p.text when b is a slice of
// p.data (a string without escapes), else a copy.
func (p *parser) string(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(p.data)))
	at := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if len(p.data) > 0 && at >= base && at-base+uintptr(len(b)) <= uintptr(len(p.data)) {
		off := int(at - base)
		return p.text[off : off+len(b)]
	}
	return string(b)
}

// strs reads a string or an array of strings.
func (p *parser) strs(v *unstable.Node) []string {
	if v.Kind == unstable.String {
		return []string{string(v.Data)}
	}
	if v.Kind != unstable.Array {
		p.errAt(p.offset(v), "a string or an array of strings is wanted here, not %s", kindName(v.Kind))
		return nil
	}
	var out []string
	it := v.Children()
	for it.Next() {
		if s, ok := p.str(it.Node()); ok {
			out = append(out, s)
		}
	}
	return out
}

func (p *parser) integer(v *unstable.Node) (int, bool) {
	if v.Kind != unstable.Integer {
		p.errAt(p.offset(v), "an integer is wanted here, not %s", kindName(v.Kind))
		return 0, false
	}
	n := 0
	for _, c := range v.Data {
		if c == '_' || c == '+' {
			continue
		}
		if c < '0' || c > '9' || n > 1<<20 {
			p.errAt(p.offset(v), "integer out of range")
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func (p *parser) boolean(v *unstable.Node) (bool, bool) {
	if v.Kind != unstable.Bool {
		p.errAt(p.offset(v), "true or false is wanted here, not %s", kindName(v.Kind))
		return false, false
	}
	return string(v.Data) == "true", true
}

func (p *parser) regexp(v *unstable.Node) *regexp.Regexp {
	s, ok := p.str(v)
	if !ok {
		return nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		p.errAt(p.offset(v), "%v", err)
		return nil
	}
	return re
}

// host checks a host pattern: a host name, or "*." and a domain. It is
// lower-cased; an IDN is written in its A-labels by the canonical form,
// so a non-ASCII host is an error here rather than a rule never matching.
func (p *parser) host(s string, v *unstable.Node) string {
	h := strings.TrimPrefix(s, "*.")
	bad, upper := h == "", false
	for i := 0; i < len(h); i++ {
		switch c := h[i]; {
		case c == '*' || c == '/' || c == '?' || c == '#' || c == '@' || c == ':' || c == ' ' || c == '\t':
			bad = true
		case 'A' <= c && c <= 'Z':
			upper = true
		}
	}
	if bad {
		p.errAt(p.offset(v), "%q is not a host name or *.domain", s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			p.errAt(p.offset(v), "host %q is not ASCII: write its A-labels (xn--...)", s)
			break
		}
	}
	if !upper {
		return s
	}
	return strings.ToLower(s)
}

func kindName(k unstable.Kind) string {
	switch k {
	case unstable.String:
		return "a string"
	case unstable.Integer:
		return "an integer"
	case unstable.Float:
		return "a number"
	case unstable.Bool:
		return "a boolean"
	case unstable.Array:
		return "an array"
	case unstable.InlineTable:
		return "a table"
	}
	return "a date or time"
}

// forms are the link forms of package extract (Form) and those scan adds
// ("html" for attributes, "implicit" for references from headers).
var forms = []string{"url-wrapper", "angle", "quoted", "bare", "abbrev", "email", "html", "implicit"}

func knownForm(s string) bool {
	for _, f := range forms {
		if f == s {
			return true
		}
	}
	return false
}

func knownLocation(l string) bool {
	switch l {
	case "body", "text", "preamble", "epilogue", "html", "header":
		return true
	}
	if n, ok := strings.CutPrefix(l, "header:"); ok {
		return n != ""
	}
	if a, ok := strings.CutPrefix(l, "html:"); ok {
		return a != ""
	}
	return false
}

// lowerSchemeHost lower-cases the scheme and the host of a prefix, the
// parts the canonical form lower-cases, so that a prefix written
// "HTTP://Example.org/Path" matches as meant.
func lowerSchemeHost(s string) string {
	c := strings.Index(s, "://")
	if c < 0 {
		if i := strings.IndexByte(s, ':'); i > 0 && isScheme(s[:i]) {
			return strings.ToLower(s[:i]) + s[i:]
		}
		return s
	}
	end := len(s)
	if i := strings.IndexAny(s[c+3:], "/?#"); i >= 0 {
		end = c + 3 + i
	}
	if l := strings.ToLower(s[:end]); l != s[:end] {
		return l + s[end:]
	}
	return s
}
