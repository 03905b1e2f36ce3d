package record

import "strings"

// Field describes one field of a Record: its name in JSON (and as a CSV
// column), the CSV columns it takes when it is not one, and what it
// means. Fields is the one table of them: report's JSON and CSV writers,
// the "linkscan help scan" text and the table in docs/scan.md are tested
// against it.
type Field struct {
	Name string
	// Columns are the CSV columns of the field when it is not the one
	// column Name (a target spreads over five; targets is a count).
	Columns []string
	// Omitted marks fields that JSON leaves out when empty, and that
	// only some runs fill (With says which).
	Omitted bool
	With    string // the flag that fills an Omitted field
	// Doc says what the field holds, in Markdown, for docs/scan.md.
	// Fields next to one another with the same Doc share a row there.
	Doc string
}

// Fields lists every field of a Record, in the order of JSON output and
// CSV columns.
var Fields = []Field{
	{Name: "url", Doc: "the link as written, with wrappers, inserted white space, line breaks and quote prefixes removed; never holds white space (in an HTML attribute, white space around the URL is dropped, tabs and line breaks inside it removed and other white space inside it written `%20`, as browsers read it)"},
	{Name: "canonical", Doc: "canonical form ([uri.md](uri.md)); `\"\"` when none could be made (a relative link without a base)"},
	{Name: "form", Doc: "`url-wrapper`, `angle`, `quoted`, `bare`, `abbrev`, `email`, `domain` (with `--bare-domains`), or `html` for an HTML attribute"},
	{Name: "joined", Doc: "the link crossed a line break"},
	{Name: "heuristic", Doc: "joined by the mailer-wrap rule ([extract.md](extract.md))"},
	{Name: "valid", Doc: "the canonical form has no problems"},
	{Name: "problems", Doc: "extraction problems (`unterminated wrapper`, hyphen at a wrap) and URL problems with offsets"},
	{Name: "scheme", Doc: "of the canonical form"},
	{Name: "host", Doc: "of the canonical form"},
	{Name: "path", Doc: "the input file (`-` for standard input)"},
	{Name: "offset", Doc: "byte offset of the message in that file (its `From ` line for mbox)"},
	{Name: "message_id", Doc: "without angle brackets"},
	{Name: "date", Doc: "RFC 3339, `\"\"` when absent or unreadable"},
	{Name: "from", Doc: "decoded header values; newsgroups comma-separated"},
	{Name: "subject", Doc: "decoded header values; newsgroups comma-separated"},
	{Name: "newsgroups", Doc: "decoded header values; newsgroups comma-separated"},
	{Name: "part", Doc: "MIME part path (`1`, `1.2`, `4.1`); `\"\"` for a top-level preamble/epilogue and message header fields"},
	{Name: "content_type", Doc: "of the part"},
	{Name: "where", Doc: "`body`, `preamble`, `epilogue`, `header:NAME`, `html:ATTR`"},
	{Name: "line", Doc: "1-based, in the decoded part (column in characters); for `header:` links, in `Name: value`"},
	{Name: "column", Doc: "1-based, in the decoded part (column in characters); for `header:` links, in `Name: value`"},
	{Name: "start", Doc: "byte offsets of the link in the decoded part text"},
	{Name: "end", Doc: "byte offsets of the link in the decoded part text"},
	{Name: "raw_offset", Doc: "file offset of the link: exact for unencoded parts, the start of the encoded line for quoted-printable and base64, the field for headers, the tag for HTML attributes"},
	{Name: "raw_end", Doc: "file offset just past the link: exact where the encoding allows (unencoded, quoted-printable and 8-bit charset parts, format=flowed), where the file bytes that decode to the link end (for a link across a flowed line break or an HTML tag, with bytes between that are not its own); in a base64 part the end of the part's body; for a `header:` link the end of the field; for an HTML attribute and an implicit reference the same as `raw_offset`"},
	{Name: "count", Omitted: true, With: "--unique", Doc: "with `--unique`: occurrences"},
	{Name: "status", Omitted: true, With: "--resolve", Doc: "with `--resolve` (and in `linkscan resolve`): see [references.md](references.md)"},
	{Name: "target", Omitted: true, With: "--resolve", Columns: []string{"target_file", "target_offset", "target_message_id", "target_part", "target_group"},
		Doc: "with `--resolve` (and in `linkscan resolve`): see [references.md](references.md)"},
	{Name: "targets", Omitted: true, With: "--resolve", Doc: "with `--resolve` (and in `linkscan resolve`): see [references.md](references.md)"},
}

// CSVColumns returns the header row of CSV output.
func CSVColumns() []string {
	var cols []string
	for _, f := range Fields {
		if f.Columns != nil {
			cols = append(cols, f.Columns...)
		} else {
			cols = append(cols, f.Name)
		}
	}
	return cols
}

// Names returns the JSON names of the fields, in order.
func Names() []string {
	names := make([]string, len(Fields))
	for i, f := range Fields {
		names[i] = f.Name
	}
	return names
}

// MarkdownTable returns the table of fields of docs/scan.md: one row per
// run of fields with the same Doc.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| field | meaning |\n|---|---|\n")
	for i := 0; i < len(Fields); {
		j := i + 1
		for j < len(Fields) && Fields[j].Doc == Fields[i].Doc {
			j++
		}
		b.WriteString("| ")
		for k := i; k < j; k++ {
			if k > i {
				b.WriteString(", ")
			}
			b.WriteString("`" + Fields[k].Name + "`")
		}
		b.WriteString(" | " + Fields[i].Doc + " |\n")
		i = j
	}
	return b.String()
}

// Summary lists the fields for a help text: "url, canonical, ...,
// raw_offset (and count with --unique; status, target and targets with
// --resolve)".
func Summary() string {
	var always []string
	var with []string // "count with --unique", in order of flags
	byFlag := map[string][]string{}
	for _, f := range Fields {
		if !f.Omitted {
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
