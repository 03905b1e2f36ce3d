package mailbox

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// openDir reads a Maildir, an MH folder or a news spool, recursing into
// sub-folders. Files are read in a stable order: names sorted, numbers in
// numeric order.
func openDir(root string, o Options) (*Reader, error) {
	f := o.Format
	if f == FormatAuto {
		f = sniffDir(root)
	}
	switch f {
	case FormatMaildir, FormatMH, FormatSpool:
	default:
		return nil, fmt.Errorf("mailbox: %s is a directory; format %s needs a file", root, f)
	}
	d := &dirSrc{root: root, format: f, opts: o, stack: []string{root}, seen: map[[2]uint64]bool{}}
	return &Reader{src: d, format: f}, nil
}

// sniffDir tells a Maildir (cur/ or new/ inside) from an MH folder or a
// news spool (numeric files; a spool's articles carry Newsgroups: and
// Path:).
func sniffDir(root string) Format {
	for _, sub := range []string{"cur", "new"} {
		if fi, err := os.Stat(filepath.Join(root, sub)); err == nil && fi.IsDir() {
			return FormatMaildir
		}
	}
	found := FormatMH
	filepath.WalkDir(root, func(p string, de os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if de.IsDir() {
			if n := de.Name(); (n == "cur" || n == "new") && p != root {
				found = FormatMaildir // a tree of Maildirs
				return filepath.SkipAll
			}
			return nil
		}
		if !isNumber(de.Name()) {
			return nil
		}
		head := make([]byte, 8192)
		if fh, err := os.Open(p); err == nil {
			n, _ := io.ReadFull(fh, head)
			fh.Close()
			head = head[:n]
		}
		h, _, _ := parseHeader(head, 0, len(head), "")
		if h.Get("Newsgroups") != "" && h.Get("Path") != "" {
			found = FormatSpool
		}
		return filepath.SkipAll
	})
	return found
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

type dirSrc struct {
	root   string
	format Format
	opts   Options
	stack  []string // directories still to read
	files  []string // files of the current directory, in order
	seen   map[[2]uint64]bool
}

func (d *dirSrc) next() (*Message, error) {
	for {
		for len(d.files) > 0 {
			p := d.files[0]
			d.files = d.files[1:]
			m, err := d.readFile(p)
			if m != nil || err != nil {
				return m, err
			}
		}
		if len(d.stack) == 0 {
			return nil, io.EOF
		}
		dir := d.stack[len(d.stack)-1]
		d.stack = d.stack[:len(d.stack)-1]
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		var files, dirs []string
		for _, e := range ents {
			name := e.Name()
			full := filepath.Join(dir, name)
			if e.IsDir() {
				if d.format == FormatMaildir && name == "tmp" {
					continue // messages being delivered
				}
				if strings.HasPrefix(name, ".") && d.format != FormatMaildir {
					continue
				}
				dirs = append(dirs, full)
				continue
			}
			if !e.Type().IsRegular() && e.Type()&os.ModeSymlink == 0 {
				continue
			}
			switch d.format {
			case FormatMaildir:
				base := filepath.Base(dir)
				if strings.HasPrefix(name, ".") || (base != "cur" && base != "new") {
					continue
				}
			case FormatMH, FormatSpool:
				if !isNumber(name) { // skips ,N #N .mh_sequences overview files
					continue
				}
			}
			files = append(files, full)
		}
		if d.format != FormatMaildir {
			sort.Slice(files, func(i, j int) bool {
				a, _ := strconv.Atoi(filepath.Base(files[i]))
				b, _ := strconv.Atoi(filepath.Base(files[j]))
				return a < b
			})
		}
		d.files = files
		for i := len(dirs) - 1; i >= 0; i-- { // read in name order
			d.stack = append(d.stack, dirs[i])
		}
	}
}

// readFile reads one message file. It returns nil, nil for a file to skip
// (a crosspost already read).
func (d *dirSrc) readFile(p string) (*Message, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return &Message{Path: p, Format: d.format, Problems: []Problem{{Msg: err.Error()}}}, nil
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && d.format == FormatSpool {
		key := [2]uint64{uint64(st.Dev), uint64(st.Ino)}
		if d.seen[key] {
			return nil, nil // a crosspost: the same article under another group
		}
		d.seen[key] = true
	}
	if d.opts.SkipFile != nil && d.opts.SkipFile(p, fi.Size(), fi.ModTime()) {
		return nil, nil
	}
	f, err := os.Open(p)
	if err != nil {
		return &Message{Path: p, Format: d.format, Problems: []Problem{{Msg: err.Error()}}}, nil
	}
	defer f.Close()
	o := d.opts
	o.Format = FormatMessage
	r, err := NewReader(f, p, &o)
	if err != nil {
		return &Message{Path: p, Format: d.format, Problems: []Problem{{Msg: err.Error()}}}, nil
	}
	m, err := r.Next()
	if err == io.EOF || m == nil {
		m = &Message{Path: p, Format: d.format, Problems: []Problem{{Msg: "empty file"}}}
		err = nil
	}
	m.Format = d.format
	rel, _ := filepath.Rel(d.root, p)
	switch d.format {
	case FormatMaildir, FormatMH:
		m.Name = rel
	case FormatSpool:
		unwire(m)
		group := strings.ReplaceAll(filepath.Dir(rel), string(filepath.Separator), ".")
		m.Name = group + ":" + filepath.Base(p)
		m.Groups = xrefGroups(m.Header.Get("Xref"))
		if len(m.Groups) == 0 {
			m.Groups = []string{m.Name}
		}
	}
	return m, err
}

// xrefGroups returns the "group:number" entries of an Xref header
// (RFC 5536 §3.2.14): every group a crossposted article is filed under.
func xrefGroups(x string) []string {
	f := strings.Fields(x)
	if len(f) < 2 {
		return nil
	}
	return f[1:]
}

// unwire handles an article stored in NNTP wire format (CRLF line endings,
// a final "." line): the final line is dropped from Raw. Dot-stuffed
// lines are left as stored, so offsets stay those of the file.
func unwire(m *Message) {
	if bytes.HasSuffix(m.Raw, []byte("\r\n.\r\n")) {
		m.Raw = m.Raw[:len(m.Raw)-3]
	}
}
