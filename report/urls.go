package report

import "io"

// urlsWriter writes the url field of each record on a line of its own,
// for xargs, sort | uniq -c and mail readers' URL pickers. The URL goes
// through Escape: a link holds no control character, and one that did
// could drive a terminal.
type urlsWriter struct {
	nopCounter
	w io.Writer
}

func (u urlsWriter) Write(r *Record) error {
	_, err := io.WriteString(u.w, Escape(r.URL)+"\n")
	return err
}

func (urlsWriter) Close() error { return nil }
