// Package rewrite decides how links are to be rewritten: rules files,
// the rules engine, the unwrappers of security-gateway links and the
// removal of tracking parameters. It is pure: it takes a link (its URL
// as written, canonical form, form and place in the message) and returns
// the new URL, the form to write it in and what each rule did. Message
// (message.go, splice.go) writes the results back into one message's
// bytes, keeping every byte outside the links rewritten (quoted-printable
// lines and base64 bodies encoded again only where a link changed;
// signed, encrypted and DKIM-covered mail left alone); docs/rewrite.md,
// "Byte preservation". MessageChanges gives its changes as Changes, kept
// in some tens of bytes each (changes.go), and a part's planned edits
// are kept as compactly (editlog.go), so that a message dense with links
// costs little more than its size. The `linkscan rewrite` and `linkscan
// filter` commands run it over archives and messages.
//
// The archive action (archive.go) rewrites dead links to the archived
// copy captured nearest the message's Date, as the history of `linkscan
// audit` gives them: through the Archive interface (Options.Archive,
// RewriteWith), which package audit's HistoryReader implements. This
// package imports no SQLite, HTTP or audit code and never goes to the
// network; a failed lookup is an *ArchiveError, never a skip.
//
// What is hand-written, and why:
//
//   - The unwrappers (UnwrapOnce, Unwrap). No Go library decodes these
//     formats; each is written from the format as the vendors publish or
//     show it, with vectors worked out by hand in unwrap_test.go. URL
//     Defense v3 counts its "**X" runs in bytes of UTF-8, not in
//     characters. Mimecast links hold a token, not the URL: they are
//     reported with ErrNotDecodable and never guessed.
//   - StripParams. net/url's Values reorders parameters and re-escapes
//     them; this edits the query text as written, so that everything but
//     the removed parameters stays byte for byte.
//   - Reading the rules file. The TOML syntax is go-toml's
//     (github.com/pelletier/go-toml/v2/unstable, its parser of
//     expressions); the schema on top is read here, expression by
//     expression, so that every error, of syntax or of meaning, carries
//     the line and column of the key or value at fault, and so that
//     100,000 rules read in one pass.
//   - The index of rules (index.go): exact hosts in a map, "*.domain"
//     patterns looked up for every suffix of a link's host, prefixes in a
//     radix tree; a link's lookup does not grow with the number of rules
//     filed there.
//   - The quoted-printable encoder and line decoder of the splicer
//     (splice.go). mime/quotedprintable's Writer turns every line ending
//     into CRLF (or none, in binary mode) and knows nothing of mbox
//     "From " lines, and its Reader gives no offsets; the splicer must
//     keep LF or CRLF as found, escape "From " at a line's start and map
//     file offsets to decoded ones. The tests decode its output with
//     mime/quotedprintable. base64 is encoding/base64's.
//   - The finder of link attributes in HTML (htmlAttrs): the splicer
//     needs the byte range of each attribute value in the source, which
//     golang.org/x/net/html's tokenizer does not give; values are
//     unescaped with html.UnescapeString.
//
// Rule order: every rule whose match holds applies, in file order, to the
// URL as the rules before it left it; keep stops; each rule applies at
// most once to a link. docs/rewrite.md describes the rules format.
package rewrite
