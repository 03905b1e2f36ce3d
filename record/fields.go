package record

import "strings"

// Field describes one field of a report: its name in JSON (and as a CSV
// column), the CSV columns it takes when it is not one, and what it
// means. A Table lists the fields of one kind of record; Fields is
// scan's, and the other reports (audit's records, rewrite's change
// lines) have theirs, taking the fields they share with scan's records
// from Shared, so that one name has one meaning everywhere.
type Field struct {
	Name string
	// Columns are the CSV columns of the field when it is not the one
	// column Name (a target spreads over five; targets is a count).
	Columns []string
	// Omitted marks fields that JSON leaves out when empty (and, in
	// Fields, that only some runs fill: With says which).
	Omitted bool
	With    string // the flag that fills an Omitted field
	// Doc says what the field holds, in Markdown, for the docs' tables.
	// Fields next to one another with the same Doc (and Note) share a
	// row there.
	Doc string
	// Note adds to a Shared field's Doc what one report's table says
	// of it alone (the Doc is the shared meaning, kept as it is).
	Note string
}

// Table is the list of fields of one kind of record, in the order of
// JSON output and CSV columns: the one place their names are written.
// The writers, the help texts and the docs' tables are tested against it
// (record/recordtest).
type Table []Field

// SharedFields are the fields other records share with Record.
type SharedFields struct {
	Scheme, Host                                                                     Field
	Path, Blob, Offset, MessageID, Part, ContentType, Where, Line, Column, RawOffset Field
}

// Shared defines, once, the fields that scan's records (Fields) share
// with the records of other reports: what a link is (scheme, host) and
// where it was found (path ... raw_offset). The tables of audit's report
// and of rewrite's change lines take them from here, and their tests
// check that a name they share with Record is one of these.
var Shared = SharedFields{
	Scheme:      Field{Name: "scheme", Doc: "of the canonical form"},
	Host:        Field{Name: "host", Doc: "of the canonical form"},
	Path:        Field{Name: "path", Doc: "the input file (`-` for standard input)"},
	Blob:        Field{Name: "blob", Doc: "the git object id of the message when the input is a public-inbox archive (`path` is then its epoch repository, `offset` and the `raw_*` fields lie within the blob); `\"\"` for other inputs"},
	Offset:      Field{Name: "offset", Doc: "byte offset of the message in that file (its `From ` line for mbox)"},
	MessageID:   Field{Name: "message_id", Doc: "without angle brackets"},
	Part:        Field{Name: "part", Doc: "MIME part path (`1`, `1.2`, `4.1`); `\"\"` for a top-level preamble/epilogue and message header fields"},
	ContentType: Field{Name: "content_type", Doc: "of the part"},
	Where:       Field{Name: "where", Doc: "`body`, `preamble`, `epilogue`, `header:NAME`, `html:ATTR`"},
	Line:        Field{Name: "line", Doc: "1-based, in the decoded part (column in characters); for `header:` links, in `Name: value`"},
	Column:      Field{Name: "column", Doc: "1-based, in the decoded part (column in characters); for `header:` links, in `Name: value`"},
	RawOffset:   Field{Name: "raw_offset", Doc: "file offset of the link: exact for unencoded parts, the start of the encoded line for quoted-printable and base64, the field for headers, the tag for HTML attributes"},
}

// All returns the shared fields, in the order of the struct.
func (s SharedFields) All() Table {
	return Table{s.Scheme, s.Host, s.Path, s.Blob, s.Offset, s.MessageID, s.Part, s.ContentType, s.Where, s.Line, s.Column, s.RawOffset}
}

// Fields lists every field of a Record, in the order of JSON output and
// CSV columns.
var Fields = Table{
	{Name: "url", Doc: "the link as written, with wrappers, inserted white space, line breaks and quote prefixes removed; never holds white space (in an HTML attribute, white space around the URL is dropped, tabs and line breaks inside it removed and other white space inside it written `%20`, as browsers read it)"},
	{Name: "canonical", Doc: "canonical form ([uri.md](uri.md)); `\"\"` when none could be made (a relative link without a base)"},
	{Name: "form", Doc: "`url-wrapper`, `angle`, `quoted`, `bare`, `abbrev`, `email`, `domain` (with `--bare-domains`), or `html` for an HTML attribute"},
	{Name: "joined", Doc: "the link crossed a line break"},
	{Name: "heuristic", Doc: "joined by the mailer-wrap rule ([extract.md](extract.md))"},
	{Name: "valid", Doc: "the canonical form has no problems, and the link carries no quoted-printable debris ([extract.md](extract.md))"},
	{Name: "problems", Doc: "extraction problems (`unterminated wrapper`, hyphen at a wrap, a security gateway link without its end marker, quoted-printable debris) and URL problems with offsets"},
	Shared.Scheme,
	Shared.Host,
	Shared.Path,
	Shared.Blob,
	Shared.Offset,
	Shared.MessageID,
	{Name: "date", Doc: "RFC 3339, `\"\"` when absent or unreadable"},
	{Name: "from", Doc: "decoded header values; newsgroups comma-separated"},
	{Name: "subject", Doc: "decoded header values; newsgroups comma-separated"},
	{Name: "newsgroups", Doc: "decoded header values; newsgroups comma-separated"},
	Shared.Part,
	Shared.ContentType,
	Shared.Where,
	Shared.Line,
	Shared.Column,
	{Name: "start", Doc: "byte offsets of the link in the decoded part text"},
	{Name: "end", Doc: "byte offsets of the link in the decoded part text"},
	Shared.RawOffset,
	{Name: "raw_start", Doc: "file offset where the bytes that decode to the link begin: exact where the encoding allows (unencoded, quoted-printable and 8-bit charset parts, format=flowed); in a base64 part the start of the part's body; for a `header:` link the start of the field; for an HTML attribute and an implicit reference the same as `raw_offset`"},
	{Name: "raw_end", Doc: "file offset just past the link: exact where the encoding allows (unencoded, quoted-printable and 8-bit charset parts, format=flowed), where the file bytes that decode to the link end (for a link across a flowed line break or an HTML tag, with bytes between that are not its own); in a base64 part the end of the part's body; for a `header:` link the end of the field; for an HTML attribute and an implicit reference the same as `raw_offset`"},
	{Name: "count", Omitted: true, With: "--unique", Doc: "with `--unique`: occurrences"},
	{Name: "status", Omitted: true, With: "--resolve", Doc: "with `--resolve` (and in `linkscan resolve`): see [references.md](references.md)"},
	{Name: "target", Omitted: true, With: "--resolve", Columns: targetColumns(),
		Doc: "with `--resolve` (and in `linkscan resolve`): see [references.md](references.md)"},
	{Name: "targets", Omitted: true, With: "--resolve", Doc: "with `--resolve` (and in `linkscan resolve`): see [references.md](references.md)"},
}

// TargetFields is the table of a Target's fields, as a record's target
// and targets hold them in JSON. CSV gives the target's in the columns of
// Fields' target: those of the fields before name, "target_" before their
// names (name is JSON's only).
var TargetFields = Table{
	{Name: "file", Omitted: true, Doc: "the input file the target is in"},
	{Name: "offset", Doc: "byte offset of the target message in that file"},
	{Name: "message_id", Omitted: true, Doc: "the target message's Message-ID, without angle brackets"},
	{Name: "part", Omitted: true, Doc: "the MIME part path, for a `cid:` link"},
	{Name: "group", Omitted: true, Doc: "a newsgroup, or a news spool's `group:number` for an article"},
	{Name: "blob", Omitted: true, Doc: "the git object id of the target message in a public-inbox archive (`file` is its epoch repository)"},
	{Name: "name", Omitted: true, Doc: "the file name of a Maildir or MH message"},
}

// targetColumns returns the CSV columns of a record's target.
func targetColumns() []string {
	var cols []string
	for _, f := range TargetFields {
		if f.Name == "name" {
			break
		}
		cols = append(cols, "target_"+f.Name)
	}
	return cols
}

// CSVColumns returns the header row of scan's CSV output
// (Fields.CSVColumns).
func CSVColumns() []string { return Fields.CSVColumns() }

// Summary lists scan's fields for its help text (Fields.Summary).
func Summary() string { return Fields.Summary() }

// CSVColumns returns the header row of the table's CSV output: each
// field's Columns, or its Name.
func (t Table) CSVColumns() []string {
	var cols []string
	for _, f := range t {
		if f.Columns != nil {
			cols = append(cols, f.Columns...)
		} else {
			cols = append(cols, f.Name)
		}
	}
	return cols
}

// Names returns the JSON names of the fields, in order.
func (t Table) Names() []string {
	names := make([]string, len(t))
	for i, f := range t {
		names[i] = f.Name
	}
	return names
}

// Lookup returns the field named name, and whether there is one.
func (t Table) Lookup(name string) (Field, bool) {
	for _, f := range t {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// Meaning returns what the docs' table says of f: its Doc, then its Note.
func (f Field) Meaning() string {
	if f.Note == "" {
		return f.Doc
	}
	return f.Doc + "; " + f.Note
}

// MarkdownTable returns the table's fields as a Markdown table, for the
// docs: one row per run of fields with the same Meaning.
func (t Table) MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| field | meaning |\n|---|---|\n")
	for i := 0; i < len(t); {
		j := i + 1
		for j < len(t) && t[j].Meaning() == t[i].Meaning() {
			j++
		}
		b.WriteString("| ")
		for k := i; k < j; k++ {
			if k > i {
				b.WriteString(", ")
			}
			b.WriteString("`" + t[k].Name + "`")
		}
		b.WriteString(" | " + t[i].Meaning() + " |\n")
		i = j
	}
	return b.String()
}

// Summary lists the fields for a help text: "url, canonical, ...,
// raw_end (and count with --unique; status, target and targets with
// --resolve)". The fields a flag fills (With) come last, by flag.
func (t Table) Summary() string {
	var always []string
	var with []string // "count with --unique", in order of flags
	byFlag := map[string][]string{}
	for _, f := range t {
		if f.With == "" {
			always = append(always, f.Name)
			continue
		}
		if _, ok := byFlag[f.With]; !ok {
			with = append(with, f.With)
		}
		byFlag[f.With] = append(byFlag[f.With], f.Name)
	}
	s := strings.Join(always, ", ")
	if len(with) > 0 {
		var parts []string
		for _, flag := range with {
			parts = append(parts, andList(byFlag[flag])+" with "+flag)
		}
		s += " (and " + strings.Join(parts, "; ") + ")"
	}
	return s
}

// andList joins names as "a, b and c".
func andList(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
