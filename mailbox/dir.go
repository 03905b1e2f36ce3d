package mailbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Directories are read recursively, each directory classified by what
// is in it and each file by its name and its first bytes (docs/formats.md,
// "Directories"):
//
//   - files in the cur/ and new/ of a Maildir, numeric files of an MH
//     folder or a tradspool news spool, and the files under an INN
//     timehash tree (time-XX/) are messages, read whole; the other
//     files of an MH folder or a spool (backups such as 1.orig) are not
//     messages and are skipped;
//   - any other regular file is detected on its own, as Open would: an
//     mbox (mutt's ~/Mail), a compressed file, a single message (.eml),
//     plain text;
//   - mail client metadata, hidden files and folders, deleted MH messages,
//     binary files (images, audio, ...), files that are not regular files
//     (FIFOs, sockets, devices), symbolic links to directories, and
//     entries that cannot be read are skipped and reported (Reader.Skipped,
//     Options.OnSkip); INN timecaf and CNFS files and Outlook .msg files
//     are reported as formats to be exported first.
//
// Only regular files are ever opened, non-blocking and checked again once
// open, so that a FIFO cannot hang the reader.

// ErrUnsupported is the kind of a Skip for a file in a format that is
// recognized but not read (INN timecaf and CNFS, Outlook .msg): its
// Reason says how to read it.
var ErrUnsupported = errors.New("format not read")

// errNoMessages is the error of a directory in which nothing was read.
var errNoMessages = errors.New("no messages in the directory")

// openDir reads a directory of mail.
func openDir(root string, o Options) (*Reader, error) {
	f := o.Format
	if f == FormatAuto || f == FormatPublicInbox {
		if r, ok, err := openRegistered(root, o); ok {
			return r, err
		}
	}
	switch f {
	case FormatAuto:
		f = sniffDir(root)
	case FormatMaildir, FormatMH, FormatSpool:
	default:
		return nil, &InputError{Path: root, Offset: -1, Err: fmt.Errorf("a directory; format %s needs a file", f)}
	}
	ents, err := readDir(root)
	if err != nil {
		return nil, &InputError{Path: root, Offset: -1, Err: err}
	}
	d := &dirSrc{root: root, format: f, forced: o.Format != FormatAuto, opts: o, seen: map[[2]uint64]bool{}}
	r := &Reader{src: d, format: f, reason: d.reason(), onSkip: o.OnSkip}
	d.r = r
	r.closers = append(r.closers, d)
	d.push(root, ents, dirKind(root, ents, d))
	return r, nil
}

// sniffDir names the kind of a directory for Reader.Format: maildir (cur/
// or new/ in it, or a tree of Maildirs), spool (numeric files holding
// news articles, or a timehash tree), mh (numeric files), or folder.
func sniffDir(root string) Format {
	ents, err := readDir(root)
	if err != nil {
		return FormatFolder
	}
	switch k := dirKind(root, ents, nil); k {
	case kindMaildir:
		return FormatMaildir
	case kindMH:
		return FormatMH
	case kindSpool, kindTimehash:
		return FormatSpool
	}
	for i := range ents.Len() {
		if n := ents.name(i); ents.isDir(i) && (n == "cur" || n == "new") {
			return FormatMaildir
		}
	}
	// a tree of Maildirs, or a spool whose groups are folders: the first
	// hundred folders say (this only names the tree; each folder is
	// classified again when it is read)
	found := FormatFolder
	dirs := 0
	filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil || !de.IsDir() || p == root {
			return nil
		}
		if dirs++; dirs > 100 {
			return filepath.SkipAll
		}
		if n := de.Name(); n == "cur" || n == "new" {
			found = FormatMaildir
			return filepath.SkipAll
		}
		if isTimehashDir(de.Name()) {
			found = FormatSpool
			return filepath.SkipAll
		}
		sub, err := readDir(p)
		if err != nil {
			return nil
		}
		if k := dirKind(p, sub, nil); k == kindSpool {
			found = FormatSpool
			return filepath.SkipAll
		} else if k == kindMH && found == FormatFolder {
			found = FormatMH
		}
		return nil
	})
	return found
}

// entries is a directory listing kept small: a Maildir's cur/ may hold
// a hundred thousand names, held while they are read. The names are in
// one buffer; each entry is 12 bytes beside its name.
type entries struct {
	names []byte
	ents  []entry
}

type entry struct {
	off, n uint32
	typ    fs.FileMode // the type bits, as the directory gives them
}

func (l *entries) Len() int               { return len(l.ents) }
func (l *entries) nameBytes(i int) []byte { e := l.ents[i]; return l.names[e.off : e.off+e.n] }
func (l *entries) name(i int) string      { return string(l.nameBytes(i)) }
func (l *entries) isDir(i int) bool       { return l.ents[i].typ.IsDir() }

// readDir lists a directory: files before folders, and in each, numeric
// names first in numeric order, then the others byte-wise. It reads the
// directory in pieces, so that its full fs.DirEntry list is never held.
func readDir(dir string) (*entries, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, pathErr(err)
	}
	defer f.Close()
	l := &entries{}
	for {
		des, err := f.ReadDir(1024)
		for _, de := range des {
			name := de.Name()
			if len(l.names)+len(name) > math.MaxUint32 {
				return nil, fmt.Errorf("more names than can be listed")
			}
			l.ents = append(l.ents, entry{off: uint32(len(l.names)), n: uint32(len(name)), typ: de.Type()})
			l.names = append(l.names, name...)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, pathErr(err)
		}
	}
	// files first, then folders (MH reads a folder's sub-folders after its
	// own messages)
	slices.SortFunc(l.ents, func(a, b entry) int {
		if da, db := a.typ.IsDir(), b.typ.IsDir(); da != db {
			if da {
				return 1
			}
			return -1
		}
		return compareNames(l.names[a.off:a.off+a.n], l.names[b.off:b.off+b.n])
	})
	l.ents = slices.Clip(l.ents)
	return l, nil
}

func compareNames(a, b []byte) int {
	na, nb := isNumber(a), isNumber(b)
	switch {
	case na && nb:
		if len(a) != len(b) {
			return len(a) - len(b) // (no leading zeros in MH and spools)
		}
		return bytes.Compare(a, b)
	case na:
		return -1
	case nb:
		return 1
	}
	return bytes.Compare(a, b)
}

func isNumber[T string | []byte](s T) bool {
	if len(s) == 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// The kinds of directory.
type kind uint8

const (
	kindFolder   kind = iota // each file detected on its own
	kindMaildir              // a Maildir's root: cur/, new/, tmp/, Maildir++ folders
	kindMailMsgs             // a Maildir's cur/ or new/: every file a message
	kindMH                   // numeric files are messages
	kindSpool                // numeric files are news articles (tradspool)
	kindTimehash             // INN timehash: every file below is an article
	kindTimecaf              // INN timecaf: CAF files, not read
)

// dirKind classifies a directory by its entries. d, if not nil, gives
// the forced format and the kind of the parent.
func dirKind(dir string, ents *entries, d *dirSrc) kind {
	name := filepath.Base(dir)
	if d != nil && len(d.stack) > 0 {
		switch parent := d.stack[len(d.stack)-1].kind; {
		case parent == kindMaildir && (name == "cur" || name == "new"):
			return kindMailMsgs
		case parent == kindTimehash || parent == kindTimecaf:
			return parent
		}
	}
	switch {
	case isTimehashDir(name):
		return kindTimehash
	case strings.HasPrefix(name, "timecaf-"):
		return kindTimecaf
	}
	numeric, numbers, others := "", 0, 0
	for i := range ents.Len() {
		n := ents.nameBytes(i)
		if ents.isDir(i) && (string(n) == "cur" || string(n) == "new") {
			return kindMaildir
		}
		if !ents.ents[i].typ.IsRegular() {
			continue
		}
		switch {
		case isNumber(n):
			numbers++
			if numeric == "" {
				numeric = string(n)
			}
		case n[0] < '0' || n[0] > '9':
			if skipName(kindMH, string(n)) == "" {
				others++ // an mbox, a message file: not one of MH's
			}
		}
	}
	if d != nil && d.forced {
		switch d.format {
		case FormatMH:
			return kindMH
		case FormatSpool:
			return kindSpool
		case FormatMaildir:
			if name == "cur" || name == "new" {
				return kindMailMsgs
			}
		}
	}
	if others >= numbers {
		// no numeric file, or as many others: a folder of mboxes with
		// one named by its year (2019) is no MH folder, whose other
		// files would not be read
		return kindFolder
	}
	// a spool's articles carry Newsgroups: and Path:
	head := make([]byte, 8192)
	if f, err := openRegular(filepath.Join(dir, numeric)); err == nil {
		n, _ := io.ReadFull(f, head)
		f.Close()
		head = head[:n]
		h, _, _ := parseHeader(head, 0, len(head), "")
		if h.Get("Newsgroups") != "" && h.Get("Path") != "" {
			return kindSpool
		}
	}
	return kindMH
}

// isTimehashDir reports whether name is the top of an INN timehash tree,
// "time-" and two hex digits.
func isTimehashDir(name string) bool {
	return len(name) == 7 && strings.HasPrefix(name, "time-") && isHex(name[5]) && isHex(name[6])
}

// reason says how the directory was classified.
func (d *dirSrc) reason() string {
	switch {
	case d.forced:
		return "forced"
	case d.format == FormatMaildir:
		return "a directory with cur/ or new/ in it, or in a folder below"
	case d.format == FormatSpool:
		return "a directory of numeric files holding news articles (Newsgroups: and Path:), or an INN timehash tree (time-XX/)"
	case d.format == FormatMH:
		return "a directory of numeric files"
	}
	return "a directory: each file is detected on its own"
}

// dirState is one directory being read: its entries still to read.
type dirState struct {
	path  string
	kind  kind
	ents  *entries
	next  int // the entry to read next
	files int // files read from it so far, for the spool's group names
}

type dirSrc struct {
	root   string
	format Format
	forced bool
	opts   Options
	r      *Reader
	stack  []dirState
	seen   map[[2]uint64]bool // spool articles read (crossposts are hard links)

	sub     *Reader // a file of several messages being read (an mbox)
	subPath string

	pending  *Message // returned before anything else
	messages int      // messages returned
	skipped  int      // files passed over by Options.SkipFile
	buf      []byte
}

// Close closes the file being read, if the reading stopped inside one.
func (d *dirSrc) Close() error {
	if d.sub == nil {
		return nil
	}
	err := d.sub.Close()
	d.sub = nil
	return err
}

func (d *dirSrc) push(dir string, ents *entries, k kind) {
	d.stack = append(d.stack, dirState{path: dir, kind: k, ents: ents})
}

// skip records an entry passed over.
func (d *dirSrc) skip(p, reason string, err error) {
	d.r.addSkip(Skip{Path: p, Reason: reason, Err: err})
}

// skipKind records an entry passed over, of a kind other than
// SkipNotMessage.
func (d *dirSrc) skipKind(p, reason string, k SkipKind) {
	d.r.addSkip(Skip{Path: p, Reason: reason, Kind: k})
}

// onFile tells Options.OnFile how the file p (fi) is read.
func (d *dirSrc) onFile(p string, fi fs.FileInfo, f Format, why string) {
	if d.opts.OnFile != nil {
		d.opts.OnFile(FileRead{Path: p, Info: fi, Format: f, Reason: why})
	}
}

// kindFile is the format and the reason of a file read as one message
// because of where it is (Options.OnFile); compressed names its
// compression ("gzip"), if any.
func kindFile(k kind, compressed string) (Format, string) {
	f, why := FormatMH, "a numbered file of an MH folder: one message"
	switch k {
	case kindMailMsgs:
		f, why = FormatMaildir, "a file in a Maildir's cur/ or new/: one message"
	case kindSpool:
		f, why = FormatSpool, "a numbered file of a news spool: one article"
	case kindTimehash:
		f, why = FormatSpool, "a file of an INN timehash tree: one article"
	}
	if compressed != "" {
		why += ", " + compressed + "-compressed"
	}
	return f, why
}

// compressionOf names the compression whose magic number head starts
// with, or "".
func compressionOf(head []byte) string {
	for _, c := range compressions {
		if bytes.HasPrefix(head, c.magic) {
			return c.what
		}
	}
	return ""
}

// skipTmp records the files of a Maildir's tmp/, each a message being
// delivered; an empty tmp/, as in every healthy Maildir, is nothing to
// report. A tmp/ that cannot be listed is an entry that could not be
// read, as any other folder (Skip.Err set): what it holds is not known.
func (d *dirSrc) skipTmp(p string) {
	ents, err := readDir(p)
	if err != nil {
		d.skip(p, "Maildir tmp/ (messages being delivered) cannot be read: "+err.Error(), err)
		return
	}
	for i := range ents.Len() {
		d.skipKind(filepath.Join(p, ents.name(i)), "in Maildir tmp/ (a message being delivered)", SkipDelivering)
	}
}

// unreadable records a file that could not be read, as a Skip and as a
// message with one problem, so that callers that only print problems
// still say so.
func (d *dirSrc) unreadable(p string, off int64, err error) *Message {
	ie, ok := err.(*InputError)
	if !ok {
		ie = &InputError{Path: p, Offset: off, Err: err}
	}
	d.skip(p, ie.Err.Error(), ie)
	m := &Message{Path: p, Format: d.format, Offset: max(ie.Offset, 0)}
	m.problemErr(ie, m.Offset, "", "%v", ie.Err)
	return m
}

func (d *dirSrc) next() (*Message, error) {
	for {
		if d.sub != nil {
			m, err := d.sub.Next()
			if m != nil {
				d.messages++
			}
			if err == io.EOF || err != nil {
				d.sub.Close()
				d.sub = nil
				if err != io.EOF {
					um := d.unreadable(d.subPath, -1, err)
					if m == nil {
						return um, nil
					}
					// the message before the error now, the error next
					d.pending = um
				}
			}
			if m != nil {
				return m, nil
			}
			continue
		}
		if d.pending != nil {
			m := d.pending
			d.pending = nil
			return m, nil
		}
		if len(d.stack) == 0 {
			if d.messages == 0 && d.skipped == 0 {
				return nil, &InputError{Path: d.root, Offset: -1, Err: fmt.Errorf("%w (%d entries skipped)", errNoMessages, d.r.skipCount)}
			}
			return nil, io.EOF
		}
		top := &d.stack[len(d.stack)-1]
		if top.next == top.ents.Len() {
			d.stack[len(d.stack)-1] = dirState{}
			d.stack = d.stack[:len(d.stack)-1]
			continue
		}
		i := top.next
		top.next++
		if m := d.entry(top, top.ents.name(i), top.ents.ents[i].typ); m != nil {
			d.messages++
			return m, nil
		}
	}
}

// entry reads one directory entry: a message, a directory pushed (nil),
// or a skip (nil).
func (d *dirSrc) entry(st *dirState, name string, t fs.FileMode) *Message {
	p := filepath.Join(st.path, name)
	var fi fs.FileInfo
	if t&fs.ModeSymlink != 0 {
		var err error
		if fi, err = os.Stat(p); err != nil {
			d.skip(p, "symbolic link that cannot be followed: "+pathErr(err).Error(), pathErr(err))
			return nil
		}
		if fi.IsDir() {
			d.skipKind(p, "symbolic link to a directory, not followed (name the directory itself to read it)", SkipDirectory)
			return nil
		}
		t = fi.Mode().Type()
	}
	if t.IsDir() {
		return d.dir(st, p, name)
	}
	if !t.IsRegular() {
		d.skip(p, "not a regular file ("+FileKind(t)+")", nil)
		return nil
	}
	if why := skipName(st.kind, name); why != "" {
		d.skip(p, why, nil)
		return nil
	}
	if (st.kind == kindMH || st.kind == kindSpool) && !isNumber(name) {
		// a backup (1.orig, 1~), an editor's or a tool's file: read, it
		// would give its messages' links and Message-IDs a second time
		d.skip(p, notNumbered, nil)
		return nil
	}
	if fi == nil {
		var err error
		if fi, err = os.Lstat(p); err != nil {
			return d.unreadable(p, -1, pathErr(err))
		}
	}
	asMessage := st.kind == kindMailMsgs || st.kind == kindTimehash ||
		(st.kind == kindMH || st.kind == kindSpool) && isNumber(name)
	if st.kind == kindSpool && isNumber(name) {
		if key, ok := fileID(fi); ok {
			if d.seen[key] {
				return nil // a crosspost: the same article under another group
			}
			d.seen[key] = true
		}
	}
	if d.opts.SkipFile != nil && d.opts.SkipFile(p, fi.Size(), fi.ModTime()) {
		d.skipped++
		return nil
	}
	return d.file(st, p, fi, asMessage)
}

// dir pushes a sub-directory, or skips it, or reads it with a
// registered reader (a public-inbox archive in a folder of them): nil,
// or the message of one that cannot be read.
func (d *dirSrc) dir(st *dirState, p, name string) *Message {
	switch {
	case st.kind == kindMaildir && name == "tmp":
		d.skipTmp(p)
		return nil
	case strings.HasPrefix(name, ".") && st.kind != kindMaildir:
		d.skipKind(p, "hidden directory", SkipDirectory)
		return nil
	}
	if st.kind != kindMaildir {
		o := d.opts
		o.Format = FormatAuto
		if r, ok, err := openRegistered(p, o); ok {
			if err != nil {
				return d.unreadable(p, -1, err)
			}
			d.sub, d.subPath = r, p
			return nil
		}
	}
	ents, err := readDir(p)
	if err != nil {
		d.skip(p, "directory cannot be read: "+err.Error(), err)
		return nil
	}
	d.push(p, ents, dirKind(p, ents, d))
	return nil
}

// skipName says why a file is passed over by its name alone, or "".
func skipName(k kind, name string) string {
	lower := strings.ToLower(name)
	switch {
	case metadataNames[lower] || strings.HasPrefix(lower, "dovecot") || strings.HasPrefix(lower, "courierimap") || strings.HasPrefix(lower, ".uidvalidity") ||
		strings.HasSuffix(lower, ".msf"): // Thunderbird's folder summaries (Mork)
		return "mail client metadata"
	case (k == kindMH || k == kindSpool) && len(name) > 1 && (name[0] == ',' || name[0] == '#') && isNumber(name[1:]):
		return "deleted MH message (" + name[:1] + "N)"
	case strings.HasPrefix(name, "."):
		return "hidden file"
	case k == kindTimecaf && strings.HasSuffix(lower, ".cf"):
		return "" // told by its magic number, in file
	}
	return ""
}

// notNumbered is the reason a file of an MH folder or a news spool is
// skipped when its name is not a number.
const notNumbered = "not a message: in an MH folder or news spool only numeric names are messages (a backup such as 1.orig is not)"

// metadataNames are files mail clients and servers keep beside messages.
var metadataNames = map[string]bool{
	".mh_sequences": true, ".mh_profile": true, ".xmhcache": true, ".overview": true,
	"maildirfolder": true, "maildirsize": true, "subscriptions": true, ".subscriptions": true,
	".mutt_cache": true, "mailboxes.json": true,
	// Thunderbird's profile files beside its mbox folders
	"msgfilterrules.dat": true, "popstate.dat": true, "foldertree.json": true, "virtualfolders.dat": true,
}

// restart reads the file f again from its start, as a stream: read from
// the file itself when it can go back to its start, so that the bytes
// read already (raw, which goes back to the pool) are not held while it
// is read, else from raw and then the rest of f.
func (d *dirSrc) restart(m *Message, raw []byte, f *os.File, p string, o *Options) (*Reader, error) {
	if _, err := f.Seek(0, io.SeekStart); err == nil {
		if cap(raw) <= 4<<20 {
			rawPool.Put(m.bytes.box(raw[:0]))
		}
		return NewReader(f, p, o)
	}
	return NewReader(io.MultiReader(bytes.NewReader(raw), f), p, o)
}

// file reads a regular file: whole, as one message, when it is known to
// be one; otherwise detected on its own like a file given to Open.
func (d *dirSrc) file(st *dirState, p string, fi fs.FileInfo, asMessage bool) *Message {
	f, err := openRegular(p)
	if err != nil {
		return d.unreadable(p, -1, err)
	}
	max := d.opts.MaxMessageSize
	m := &Message{Path: p, opts: d.opts}
	// read the file into the message's own buffer: at most the limit, and
	// one byte more to tell a longer file
	want := min(fi.Size(), max) + 1
	raw := m.rawBuf()
	// first what the buffer holds (a head, at least, to tell what the
	// file is), the rest once it is known to be one message within the
	// limit: an mbox, a compressed file or a message over the limit is
	// read again from its start as a stream (restart)
	first := min(want, int64(cap(raw)))
	if !asMessage {
		first = min(first, 4096) // enough to tell an mbox
	}
	n, err := io.ReadFull(f, raw[:first])
	if err == nil && int64(n) < want && fi.Size() <= max {
		if asMessage && st.kind == kindMH && bytes.HasPrefix(raw[:n], fromCRLF) {
			asMessage = false // (see below)
		}
		head := raw[:min(n, 4096)]
		format, _ := sniff(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")))
		_, _, emlx := emlxHead(head)
		binary := false
		if asMessage {
			why, _ := skipFormat(head, p)
			binary = why != "" // skipped below: not read whole first
		}
		if !compressedMagic(head) && !binary && (asMessage || format != FormatMbox && format != FormatMMDF && !emlx) {
			var whole []byte
			if want > 4<<20 {
				whole = takeLong(want)[:want] // the last long message's buffer, if free (scratch.go)
			} else {
				whole = make([]byte, want)
			}
			copy(whole, raw[:n])
			if cap(raw) <= 4<<20 {
				rawPool.Put(m.bytes.box(raw[:0]))
			}
			raw = whole
			var k int
			k, err = io.ReadFull(f, raw[n:want])
			n += k
		}
	}
	raw = raw[:n]
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		f.Close()
		return d.unreadable(p, int64(n), err)
	}
	more := int64(n) == want // the file is longer than what was read (grew, or over the limit)
	if err := magicCut(p, raw[:min(n, 6)]); err != nil {
		// named .gz (...) and cut inside the magic number, or empty: a
		// truncated file, as when it is given alone
		f.Close()
		return d.unreadable(p, 0, err)
	}
	if !more && (n == 0 || n == 3 && bytes.Equal(raw, utf8BOM)) {
		// nothing in it: no message (not a message of 0 bytes), said
		f.Close()
		d.skipKind(p, emptyReason("", n > 0), SkipEmpty)
		return nil
	}
	// an MH folder's file that starts with "From " may be an mbox of
	// several messages: read it as one
	if asMessage && st.kind == kindMH && bytes.HasPrefix(raw, fromCRLF) {
		asMessage = false
	}
	unpacked := false
	if asMessage {
		head := raw[:min(len(raw), 4096)]
		if compressedMagic(head) {
			// a compressed message (Dovecot's Maildir compression: "Z"
			// in the flags; a gzip'd MH message): decompressed as a
			// stream, its offsets in the decompressed data, as for a
			// compressed file given alone
			kf, why := kindFile(st.kind, compressionOf(head))
			m2, pending := d.compressed(m, raw, f, p, fi, kf, why)
			if m2 == nil {
				return pending
			}
			d.pending = pending
			m, raw, unpacked = m2, nil, true
		} else if why, err := skipFormat(head, p); why != "" {
			// a binary file (an image saved beside the messages) is
			// skipped as in any other folder, unless it starts as mail
			// does (a message with NUL bytes in it is read)
			f.Close()
			if err != nil {
				return d.unreadable(p, -1, fmt.Errorf("%w: %s", err, why))
			}
			d.skip(p, why, nil)
			return nil
		}
	}
	if !asMessage {
		head := raw[:min(len(raw), 4096)]
		if why, err := skipFormat(head, p); why != "" {
			f.Close()
			if err != nil {
				return d.unreadable(p, -1, fmt.Errorf("%w: %s", err, why))
			}
			d.skip(p, why, nil)
			return nil
		}
		format, _ := sniff(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")))
		_, _, emlx := emlxHead(head)
		if compressedMagic(head) || format == FormatMbox || format == FormatMMDF || emlx || more && int64(n) > max || fi.Size() > max {
			// several messages, or compressed: read as a stream from the
			// start
			o := d.opts
			o.Format = FormatAuto
			r, err := d.restart(m, raw, f, p, &o)
			if err != nil {
				f.Close()
				return d.unreadable(p, -1, err)
			}
			r.closers = append(r.closers, f)
			if r.Empty() { // a compressed empty file
				r.Close()
				d.skipKind(p, r.FormatReason(), SkipEmpty)
				return nil
			}
			d.onFile(p, fi, r.Format(), r.FormatReason())
			d.sub, d.subPath = r, p
			return nil
		}
	}
	if unpacked {
		// read and closed
	} else if more && int64(n) > max || int64(n) < want && fi.Size() > max {
		// longer than the limit: read as a stream, which keeps the
		// structure and text past it (see overflow)
		kf, why := kindFile(st.kind, "")
		d.onFile(p, fi, kf, why)
		o := d.opts
		o.Format = FormatMessage
		r, err := d.restart(m, raw, f, p, &o)
		if err == nil {
			if s, ok := r.src.(*singleSrc); ok && !r.compressed && r.sp.ra != nil {
				s.ls.sizeHint = fi.Size()
			}
			var m2 *Message
			m2, err = r.Next()
			if m2 != nil {
				m = m2
				raw = nil
			}
			r.Close() // its spool's temporary file, if any
		}
		f.Close()
		if err != nil && err != io.EOF {
			return d.unreadable(p, -1, err)
		}
	} else {
		f.Close()
	}
	rel, _ := filepath.Rel(d.root, p)
	m.Name = rel
	if !asMessage {
		head := raw[:min(len(raw), 4096)]
		format, why := sniff(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")))
		d.onFile(p, fi, format, why)
		messageFromBytes(m, raw, fi.Size(), format == FormatText)
		return m
	}
	if raw != nil {
		kf, why := kindFile(st.kind, "")
		d.onFile(p, fi, kf, why)
		messageFromBytes(m, raw, fi.Size(), false)
	}
	switch st.kind {
	case kindMailMsgs:
		m.Format = FormatMaildir
	case kindMH:
		m.Format = FormatMH
	case kindSpool, kindTimehash:
		m.Format = FormatSpool
		unwire(m)
		m.Groups = xrefGroups(m.Header.Get("Xref"))
		if st.kind == kindSpool {
			group := strings.ReplaceAll(filepath.Dir(rel), string(filepath.Separator), ".")
			m.Name = group + ":" + filepath.Base(p)
		} else if len(m.Groups) > 0 {
			m.Name = m.Groups[0] // timehash: the path says nothing of groups
		}
		if len(m.Groups) == 0 {
			m.Groups = []string{m.Name}
		}
	}
	return m
}

// compressed reads a compressed file that is one message (in a Maildir's
// cur/ or new/, an MH folder, a spool) through the decompression Open
// uses, read from its start. It returns the message, and a message with
// one problem (an unreadable file: decompression failed, with the offset
// reached in the decompressed data) to come after it, or in its place
// when nothing was read. f is closed.
func (d *dirSrc) compressed(m *Message, raw []byte, f *os.File, p string, fi fs.FileInfo, kf Format, why string) (*Message, *Message) {
	defer f.Close()
	o := d.opts
	o.Format = FormatMessage
	r, err := d.restart(m, raw, f, p, &o)
	if err != nil {
		return nil, d.unreadable(p, -1, err)
	}
	if r.Empty() { // a message compressed from nothing
		r.Close()
		d.skipKind(p, r.FormatReason(), SkipEmpty)
		return nil, nil
	}
	d.onFile(p, fi, kf, why)
	m2, err := r.Next()
	r.Close() // the decompressor and the spool's temporary file, if any
	var bad *Message
	if err != nil && err != io.EOF {
		bad = d.unreadable(p, -1, err)
	}
	return m2, bad
}

// openRegular opens a file for reading only if it is a regular file: the
// open does not block (a FIFO put in its place after a Stat), and the
// open file is checked.
func openRegular(p string) (*os.File, error) {
	f, err := openNoBlock(p)
	if err != nil {
		return nil, pathErr(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, pathErr(err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("not a regular file (%s)", FileKind(fi.Mode()))
	}
	setBlocking(f) // back to blocking reads
	return f, nil
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

// compressedMagic reports whether head starts with a compression magic.
func compressedMagic(head []byte) bool {
	for _, c := range compressions {
		if bytes.HasPrefix(head, c.magic) {
			return true
		}
	}
	return false
}
