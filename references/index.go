package references

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/linkscan/linkscan/mailbox"
)

// Indexer adds archives to a Store.
type Indexer struct {
	Store   Store
	Mailbox mailbox.Options
	// Open opens an input; nil means mailbox.Open, with "-" refused.
	Open func(name string, opts *mailbox.Options) (*mailbox.Reader, error)
	// OnDamage, if set, is given each damage found in a message as it is
	// found, which then is not kept in IndexStats.Problems (whose memory
	// grows with the damage of an input).
	OnDamage func(Damage)
	// Wait is how long a file that another run is indexing is waited
	// for (ErrInProgress), to be passed over once that run has indexed
	// it; 0 means DefaultWait. Past it the file is an error, left to the
	// other run.
	Wait time.Duration
	// Notice, if set, is told when such a wait begins.
	Notice func(msg string)
}

// DefaultWait is how long the Indexer waits by default for another run
// to finish a file it is indexing.
const DefaultWait = 10 * time.Minute

// waitPoll is how often a waiting Indexer looks whether the other run
// has finished the file.
const waitPoll = 100 * time.Millisecond

// begin begins file in the store. When another run is indexing it, it
// waits for that run to finish it (Wait) and then reports skip: the file
// is indexed, unchanged.
func (ix *Indexer) begin(file string, size int64, mtime time.Time) (skip bool, err error) {
	wait := ix.Wait
	if wait <= 0 {
		wait = DefaultWait
	}
	var deadline time.Time
	for {
		err := ix.Store.BeginFile(file, size, mtime)
		if errors.Is(err, ErrIndexed) {
			if ix.Notice != nil {
				ix.Notice(file + ": indexed by another run meanwhile: passed over")
			}
			return true, nil
		}
		var busy *InProgressError
		if !errors.As(err, &busy) {
			return false, err
		}
		// the other run needs the index to write: the transaction ends
		if err := ix.Store.Commit(); err != nil {
			return false, err
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(wait)
			if ix.Notice != nil {
				ix.Notice(fmt.Sprintf("%s: another run (process %d) is indexing it: waiting for it to finish (at most %v)", file, busy.PID, wait))
			}
		}
		if time.Now().After(deadline) {
			return false, fmt.Errorf("%w; still after %v: it is left to that run", busy, wait)
		}
		time.Sleep(waitPoll)
		if same, err := ix.Store.Unchanged(file, size, mtime); err != nil || same {
			if same && ix.Notice != nil {
				ix.Notice(file + ": indexed by another run meanwhile: passed over")
			}
			return same, err
		}
	}
}

// Damage is a problem found in a message while indexing it; the message
// is indexed all the same.
type Damage struct {
	Path      string // the message's file
	Offset    int64  // the message's offset in it
	MessageID string // "" if none
	Problem   mailbox.Problem
}

// String returns "PATH#OFFSET <message-id>: problem", the form scan
// prints: the offset is the number after the last '#', which a Maildir
// file name with ':' in it does not make ambiguous. The text is not
// escaped: a caller printing it on a terminal escapes control
// characters.
func (d Damage) String() string {
	id := ""
	if d.MessageID != "" {
		id = " <" + d.MessageID + ">"
	}
	return fmt.Sprintf("%s#%d%s: %s", d.Path, d.Offset, id, d.Problem)
}

// IndexStats counts what one Add did.
type IndexStats struct {
	Messages int // messages added
	Skipped  int // files passed over because the index holds them unchanged
	Pruned   int // files of a directory forgotten because they are gone from it
	// Passed counts the entries of a directory passed over on purpose
	// (a mailbox.Skip without an error), by kind.
	Passed map[mailbox.SkipKind]int
	// Problems is the damage found in messages (Damage.String: "PATH#OFFSET
	// <message-id>: problem"; empty with Indexer.OnDamage set),
	// Unreadable the entries of a directory that could not be read at
	// all: message files (their problem is a mailbox.ErrUnreadable; they
	// are not indexed), folders, links that cannot be followed.
	Problems, Unreadable []string
}

// Sum adds the counts of o (Messages, Skipped, Pruned and Passed) to s,
// for the total of a run over several inputs; Problems and Unreadable,
// each input's own, are not gathered.
func (s *IndexStats) Sum(o IndexStats) {
	s.Messages += o.Messages
	s.Skipped += o.Skipped
	s.Pruned += o.Pruned
	for k, n := range o.Passed {
		if s.Passed == nil {
			s.Passed = map[mailbox.SkipKind]int{}
		}
		s.Passed[k] += n
	}
}

// Add indexes one input: a file is skipped whole when unchanged since it
// was completely indexed; in a directory, each unchanged message file is.
//
// A file counts as indexed only when its last message has been added
// (Store.EndFile, committed with it): when Add fails or the process is
// killed, what was added of an unfinished file stays in the store but the
// file is read again, and its rows replaced, by the next Add of it. A
// message file of a directory that could not be read (a message with
// problems and no bytes) is not recorded as indexed either.
//
// When a directory was read to its end and no entry of it was unreadable,
// the files indexed under it that are no longer there are forgotten
// (Store.Prune), so that references to deleted messages dangle.
func (ix *Indexer) Add(input string) (st IndexStats, err error) {
	// messages added but rolled back by a failed write are not added
	lost := lostOf(ix.Store)
	defer func() { st.Messages = max(0, st.Messages-(lostOf(ix.Store)-lost)) }()
	key := fileKeyer()      // FileKey of the files found in a directory
	inKey := FileKey(input) // and of the input itself, a link resolved
	opts := ix.Mailbox
	opts.SkipText = true
	opts.DeferParse = false // the index needs each header at once
	fi, statErr := os.Stat(input)
	isDir := statErr == nil && fi.IsDir()
	cur := "" // the file begun and not yet ended
	if statErr == nil && !isDir {
		same, err := ix.Store.Unchanged(inKey, fi.Size(), fi.ModTime())
		if err != nil {
			return st, err
		}
		if same {
			st.Skipped++
			return st, nil
		}
		skip, err := ix.begin(inKey, fi.Size(), fi.ModTime())
		if skip {
			st.Skipped++ // another run indexed it meanwhile
		}
		if skip || err != nil {
			return st, err
		}
		// the file is known to be begun at once: a run killed before
		// its first batch leaves it incomplete, not unknown
		if err := ix.Store.Commit(); err != nil {
			return st, err
		}
		cur = inKey
	} else if input == "-" {
		if err := ix.Store.BeginFile(input, 0, time.Time{}); err != nil {
			return st, err
		}
		cur = input
	}
	var skipErr error
	// the stamp of the directory's file about to be read, taken before
	// it is read: a change while it is read makes the next run read it
	// again, never the reverse
	type stamp struct {
		path  string
		size  int64
		mtime time.Time
	}
	var next stamp
	// the files of a directory that are there (read or skipped): the
	// index forgets the others at the end, unless an entry could not be
	// read (its files may be there still)
	seed := maphash.MakeSeed()
	seen := map[uint64]struct{}{}
	unreadable := false
	if isDir {
		prev := opts.OnSkip
		opts.OnSkip = func(sk mailbox.Skip) {
			if sk.Err != nil {
				unreadable = true
				// a message file comes from Next too, with its error
				// (an *InputError); a folder or a link only here
				var ie *mailbox.InputError
				if !errors.As(sk.Err, &ie) {
					st.Unreadable = append(st.Unreadable, sk.String())
				}
			} else {
				if st.Passed == nil {
					st.Passed = map[mailbox.SkipKind]int{}
				}
				st.Passed[sk.Kind]++
			}
			if prev != nil {
				prev(sk)
			}
		}
		opts.SkipFile = func(path string, size int64, mtime time.Time) bool {
			seen[maphash.String(seed, key(path))] = struct{}{}
			same, err := ix.Store.Unchanged(key(path), size, mtime)
			if err != nil && skipErr == nil {
				skipErr = err
			}
			if same {
				st.Skipped++
			} else {
				next = stamp{path, size, mtime}
			}
			return same
		}
	}
	// the epoch repositories of a git archive: each is a "file" of the
	// directory, begun when the reader comes to it (OnFile); one read
	// from a head indexed before keeps what it holds and adds the
	// commits after it; its head is recorded when it ends
	heads, _ := ix.Store.(Heads)
	var epochKey, epochHead string
	// appending: the epoch read adds to what the index holds of it
	appending := false
	var beginEpoch func(mailbox.FileRead) error // (below: it ends the file before)
	if isDir {
		if heads != nil {
			opts.EpochSince = func(repo, head string) string {
				k := key(repo)
				seen[maphash.String(seed, k)] = struct{}{}
				h, err := heads.Head(k)
				if err != nil && skipErr == nil {
					skipErr = err
				}
				if h == head {
					st.Skipped++
				}
				return h
			}
		}
		prevOnFile := opts.OnFile
		opts.OnFile = func(f mailbox.FileRead) {
			if f.Format == mailbox.FormatPublicInbox {
				if err := beginEpoch(f); err != nil && skipErr == nil {
					skipErr = err
				}
			}
			if prevOnFile != nil {
				prevOnFile(f)
			}
		}
	}
	open := ix.Open
	if open == nil {
		open = func(name string, o *mailbox.Options) (*mailbox.Reader, error) { return mailbox.Open(name, o) }
	}
	r, err := open(input, &opts)
	if err != nil {
		return st, err
	}
	defer r.Close()
	if isDir {
		// the walk counts as a file of the index until it ends: one
		// that is killed leaves the index incomplete
		if err := ix.Store.BeginFile(inKey, DirSize, time.Time{}); err != nil {
			return st, err
		}
		if err := ix.Store.Commit(); err != nil {
			return st, err
		}
	}
	// the messages of a file input are recorded under its key (a link
	// to it resolved), those of a directory's files under theirs
	entryKey := key
	if !isDir {
		entryKey = func(string) string { return inKey }
	}
	failed := false // cur could not be read: not to be recorded as indexed
	passed := ""    // the file of a directory another run indexed meanwhile
	endFile := func() error {
		if cur == "" || failed {
			return nil
		}
		if cur == epochKey && epochHead != "" && heads != nil {
			if err := heads.SetHead(cur, epochHead); err != nil {
				return err
			}
		}
		err := ix.Store.EndFile(cur)
		cur = ""
		return err
	}
	beginEpoch = func(f mailbox.FileRead) error {
		if err := endFile(); err != nil {
			return err
		}
		k := key(f.Path)
		seen[maphash.String(seed, k)] = struct{}{}
		cur, failed = "", false
		if f.Since == "" { // read whole: what it held is forgotten
			if err := ix.Store.BeginFile(k, 0, time.Time{}); err != nil {
				return err
			}
		}
		cur, epochKey, epochHead, appending = k, k, f.Head, f.Since != ""
		return nil
	}
	for {
		m, err := r.Next()
		if err == io.EOF {
			break
		}
		if m != nil {
			if isDir {
				seen[maphash.String(seed, key(m.Path))] = struct{}{}
			}
			if isDir && key(m.Path) != cur && key(m.Path) != passed {
				if err := endFile(); err != nil {
					return st, err
				}
				cur, failed = "", false
				s := next
				if s.path != m.Path {
					s = stamp{path: m.Path}
					if mfi, err := os.Stat(m.Path); err == nil {
						s.size, s.mtime = mfi.Size(), mfi.ModTime()
					}
				}
				skip, err := ix.begin(key(s.path), s.size, s.mtime)
				if err != nil {
					return st, err
				}
				passed = ""
				if skip {
					// another run indexed it meanwhile: its messages
					// are passed over
					st.Skipped++
					passed = key(m.Path)
				} else {
					cur = key(m.Path)
				}
			}
			if isDir && passed == key(m.Path) {
				m.Release()
			} else if err := ix.addMessage(m, isDir, appending, entryKey, &st, &failed); err != nil {
				return st, err
			}
		}
		if err != nil {
			return st, err
		}
		if skipErr != nil {
			return st, skipErr
		}
	}
	if err := endFile(); err != nil {
		return st, err
	}
	if isDir && !unreadable {
		n, err := ix.Store.Prune(inKey, func(p string) bool {
			_, ok := seen[maphash.String(seed, p)]
			return ok
		})
		st.Pruned = n
		if err != nil {
			return st, err
		}
		// walked to its end, every entry read: complete
		if err := ix.Store.EndFile(inKey); err != nil {
			return st, err
		}
	}
	return st, ix.Store.Commit()
}

// lostOf is the count of messages a store lost to failed writes after
// taking them (SQLite.Lost), 0 for a store that loses none.
func lostOf(s Store) int {
	if l, ok := s.(interface{ Lost() int }); ok {
		return l.Lost()
	}
	return 0
}

// addMessage adds the message m of the input (a directory: isDir) to the
// store, under entryKey, unless the store holds it already from the git
// epoch being added to (appending); it counts it and its problems in st.
// failed is set when m stands for a file of the directory that could not
// be read.
func (ix *Indexer) addMessage(m *mailbox.Message, isDir, appending bool, entryKey func(string) string, st *IndexStats, failed *bool) error {
	if isDir && m.Length == 0 && len(m.Problems) > 0 && m.Blob == "" {
		// unreadable, or empty: read again next time (a blob of a git
		// archive that cannot be read is reported and passed over: its
		// epoch's other commits count)
		*failed = true
	}
	// a file of a directory that could not be read is no message to
	// index
	if !isDir || m.Length != 0 || !unreadableFile(m) {
		e := entryOf(m, entryKey)
		m.Release() // the entry holds strings, not the message's bytes
		held := false
		if appending && e.Loc.Blob != "" {
			var err error
			if held, err = holds(ix.Store, e); err != nil {
				return err
			}
		}
		if !held {
			if err := ix.Store.Add(e); err != nil {
				return err
			}
			st.Messages++
		}
	} else {
		m.Release()
	}
	for _, p := range m.Problems {
		if errors.Is(p, mailbox.ErrUnreadable) {
			var ie *mailbox.InputError
			if errors.As(p, &ie) {
				st.Unreadable = append(st.Unreadable, ie.Error())
			} else {
				st.Unreadable = append(st.Unreadable, m.Path+": "+p.Msg)
			}
			continue
		}
		d := Damage{Path: m.Path, Offset: m.Offset, MessageID: m.MessageID, Problem: p}
		if ix.OnDamage != nil {
			ix.OnDamage(d)
		} else {
			st.Problems = append(st.Problems, d.String())
		}
	}
	return nil
}

// Refresh indexes file again, as Add does: the Resolver's Refresh, for
// a target file changed since it was indexed.
func (ix *Indexer) Refresh(file string) error {
	_, err := ix.Add(file)
	return err
}

// FileKey is the name the Store knows a file by: its absolute path,
// cleaned, with its symbolic links resolved ("-" for standard input as
// it is), so that one file has one entry however it was named
// (gen.mbox, ./gen.mbox, ../d/gen.mbox, /home/me/d/gen.mbox, or through
// a linked directory /home/me/dlink/gen.mbox) and a relative name given
// in another directory is another file, which must not reconcile the
// first one's entries away. A name whose links
// cannot be resolved (a file gone) is kept absolute and cleaned. The
// Resolver shows these names as the run's inputs were named, else
// relative to the working directory (DisplayPath).
func FileKey(path string) string {
	k := fileKeyer()(path)
	if r, err := filepath.EvalSymlinks(k); err == nil && k != "-" && k != "" {
		return r // the file itself may be a link (an input)
	}
	return k
}

// fileKeyer returns the keys of the files of one input: the working
// directory read once and each directory's links resolved once (an
// index of a large folder asks for many keys; the readers follow no
// link to a message file, so only its directory is resolved).
func fileKeyer() func(string) string {
	wd, err := os.Getwd()
	dirs := map[string]string{} // directory -> with its links resolved
	return func(path string) string {
		switch {
		case path == "-" || path == "":
			return path
		case !filepath.IsAbs(path) && err == nil:
			path = filepath.Join(wd, path)
		default:
			path = filepath.Clean(path)
		}
		dir, base := filepath.Split(path)
		d, ok := dirs[dir]
		if !ok {
			d = dir
			if r, err := filepath.EvalSymlinks(dir); err == nil {
				d = r
			}
			if len(dirs) < 1<<12 {
				dirs[dir] = d
			}
		}
		return filepath.Join(d, base)
	}
}

// DisplayPath is how a target's file (a FileKey) is shown when it is
// not in an input of the run (Resolver.Inputs): relative to the working
// directory wd when it lies under it, absolute otherwise.
func DisplayPath(key, wd string) string {
	if wd == "" || !filepath.IsAbs(key) {
		return key
	}
	if rel, err := filepath.Rel(wd, key); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel
	}
	return key
}

// unreadableFile reports whether m stands for a message file that could
// not be read: its problems are all of an unreadable input.
func unreadableFile(m *mailbox.Message) bool {
	for _, p := range m.Problems {
		if !errors.Is(p, mailbox.ErrUnreadable) {
			return false
		}
	}
	return len(m.Problems) > 0
}

// entryOf makes the index entry of a message; its parts are walked
// without decoding.
func entryOf(m *mailbox.Message, key func(string) string) *Entry {
	e := &Entry{ID: m.MessageID, Loc: Location{File: key(m.Path), Offset: m.Offset, Name: m.Name, Blob: m.Blob}}
	if e.ID == "" {
		e.ID = fmt.Sprintf("synthetic:%s:%d", e.Loc.File, m.Offset)
		e.Synthetic = true
	}
	for _, p := range m.Parts() {
		if p.ContentID != "" {
			e.Parts = append(e.Parts, PartEntry{ContentID: p.ContentID, Path: p.Path})
		}
	}
	seen := map[string]bool{}
	addGroup := func(g string) {
		if g = strings.TrimSpace(g); g != "" && !seen[g] {
			seen[g] = true
			e.Groups = append(e.Groups, g)
		}
	}
	for g := range strings.SplitSeq(m.Newsgroups, ",") {
		addGroup(g)
	}
	// "group:number" entries: a spool's own, and those of Xref: (RFC 5536
	// §3.2.14), whose first word names the server that numbered them
	articles := m.Groups[:len(m.Groups):len(m.Groups)] // appended to, never in m.Groups' own array
	if f := strings.Fields(m.Header.Get("Xref")); len(f) > 1 {
		e.Host = f[0]
		articles = append(articles, f[1:]...)
	}
	done := map[string]bool{}
	for _, a := range articles {
		if done[a] || !strings.Contains(a, ":") {
			continue
		}
		done[a] = true
		e.Articles = append(e.Articles, a)
		g, _, _ := strings.Cut(a, ":")
		addGroup(g)
	}
	return e
}

// storedName is how a location's Name and Blob are kept in one stored
// name: a message of a git archive has no file name, and its blob id is
// kept after a NUL byte, which no file name holds.
func storedName(l Location) string {
	if l.Blob != "" {
		return "\x00" + l.Blob
	}
	return l.Name
}

// loadName splits a stored name (storedName) into a Name and a Blob.
func loadName(n string) (name, blob string) {
	if b, ok := strings.CutPrefix(n, "\x00"); ok {
		return "", b
	}
	return n, ""
}

// holds reports whether the store has e's message at e's blob already:
// an epoch read from its recorded head on after a run that added some
// of its new commits and was killed before it recorded the new head.
func holds(s Store, e *Entry) (bool, error) {
	if e.Synthetic {
		return false, nil
	}
	locs, err := s.Messages(e.ID)
	if err != nil {
		return false, err
	}
	for _, l := range locs {
		if l.File == e.Loc.File && l.Blob == e.Loc.Blob {
			return true, nil
		}
	}
	return false, nil
}
