// Package references indexes the Message-IDs, Content-IDs and newsgroups
// of archives and resolves mid:, cid:, news: and nntp: links against them:
// the links that can be followed offline, and the ones that dangle when an
// archive is split or pruned.
//
// The rules (docs/references.md):
//
//   - mid:X is the message X; mid:X/Y the part with Content-ID Y inside
//     message X (RFC 2392 §2);
//   - cid:Y is the part with Content-ID Y in the same message, looked for
//     first in the enclosing multipart/related (RFC 2387), then in the
//     whole message;
//   - news:ID (with "@") is the article ID; news:group.name is the group,
//     resolved when the archive holds it; news:* names all groups and is
//     not a single target (RFC 5538 §2);
//   - nntp://host/group/N is resolved only when host is one of the
//     archive's own hosts, since article numbers are local to a server
//     (RFC 5538 §3);
//   - identifiers are percent-decoded before lookup (cid:foo4%25foo1@bar.net
//     is <foo4%foo1@bar.net>).
//
// Several copies of one message (crossposts, the same message in two
// files) are normal: a reference to it is resolved and lists every copy.
// A cid: or mid:X/Y that matches two different parts of one message is
// ambiguous.
//
// Three stores hold the index: Memory, compact, for one-shot runs; Spill,
// which is Memory up to a budget and an SQLite file in a temporary
// directory past it; and SQLite (modernc.org/sqlite, pure Go), a file
// that later runs and other archives add to and resolve against,
// re-reading only files that changed or were not completely indexed.
//
// The index does not lie: a file counts as indexed only once its last
// message is committed (Store.EndFile), an SQLite index is checked when
// opened after an unclean close, and a lookup that fails gives the status
// Error with a *LookupError, never Dangling.
package references

import (
	"time"

	"github.com/linkscan/linkscan/record"
)

// Location is where a message (or a part of it) is: the Target of a
// record (File, Offset, MessageID; Part for a part, Group for a group or
// a spool's "group:number", Name for a Maildir or MH file name). It is
// the same type, so that resolution hands its targets to records without
// a conversion.
type Location = record.Target

// Status says how a reference resolved.
type Status string

// The statuses.
const (
	Resolved       Status = "resolved"
	Dangling       Status = "dangling"        // nothing in the archive has that identifier
	Ambiguous      Status = "ambiguous"       // different parts match
	NotATarget     Status = "not-a-target"    // news:* and the like: no single target
	ExternalServer Status = "external-server" // nntp: to another server
	// Error: the lookup failed (the index could not be read), or found
	// nothing in an index whose building failed (Resolver.Incomplete). It
	// is never reported as Dangling: the reference may well be in the
	// archive.
	Error Status = "error"
)

// Statuses lists every Status, in the order the documentation gives them.
var Statuses = []Status{Resolved, Dangling, Ambiguous, NotATarget, ExternalServer, Error}

// Resolution is a reference's status and targets.
type Resolution struct {
	Status  Status
	Targets []Location
}

// Entry is what the index keeps of one message.
type Entry struct {
	ID        string // normalized Message-ID; synthetic for messages without one
	Synthetic bool   // ID was made up; links never resolve to it
	Loc       Location
	Parts     []PartEntry // parts that have a Content-ID
	Groups    []string    // newsgroups the message was posted to (Newsgroups:)
	Articles  []string    // "group:number" entries (spool path, Xref:)
	Host      string      // the server that filed it (first word of Xref:), if known
}

// PartEntry is a part with a Content-ID.
type PartEntry struct {
	ContentID string
	Path      string
}

// FileState is what a Store recorded of a file (Store.File).
type FileState struct {
	Size    int64 // DirSize for a directory
	ModTime time.Time
	Done    bool // completely indexed
}

// DirSize is the size BeginFile is given for a directory whose walk
// begins: the walk counts as a file of the index until EndFile, so that
// a walk that was killed leaves the index incomplete, as a file does.
// Stats counts such directories in Incomplete only, never in Files.
const DirSize = -1

// Stats describes what a store holds. Its JSON names (linkscan index
// --format json) are StatsFields', in order.
type Stats struct {
	Files      int `json:"files"`
	Incomplete int `json:"incomplete_files"` // begun and not completely indexed, directory walks too: read again when next given
	Messages   int `json:"messages"`
	MessageIDs int `json:"distinct_message_ids"`
	Synthetic  int `json:"without_message_id"`
	ContentIDs int `json:"content_ids"`
	Groups     int `json:"groups"`
	Articles   int `json:"articles"`
}

// StatsFields is the table of Stats' fields, in the order of JSON output:
// the one place their names are written (linkscan index adds its own
// after them). A test ties Stats' tags to it.
var StatsFields = record.Table{
	{Name: "files", Doc: "files in the index"},
	{Name: "incomplete_files", Doc: "files begun and not completely indexed, and directory walks not finished (a run killed or failed): read or walked again when next given"},
	{Name: "messages", Doc: "messages in the index"},
	{Name: "distinct_message_ids", Doc: "distinct Message-IDs"},
	{Name: "without_message_id", Doc: "messages without a Message-ID"},
	{Name: "content_ids", Doc: "Content-IDs (of messages and parts)"},
	{Name: "groups", Doc: "newsgroups"},
	{Name: "articles", Doc: "news articles (`group:number`)"},
}

// Heads is implemented by the stores that remember how far each epoch
// repository of a git archive (public-inbox) was indexed: Memory,
// SQLite and Spill. The Indexer then reads only the commits after that
// head (mailbox.Options.EpochSince).
type Heads interface {
	// Head returns the commit repo (a FileKey) was indexed up to, ""
	// if none.
	Head(repo string) (string, error)
	// SetHead records it, committed with the messages added before.
	SetHead(repo, head string) error
}

// Store keeps an index.
type Store interface {
	// Unchanged reports whether file was completely indexed (EndFile
	// committed) with this size and modification time; then it need not
	// be read again.
	Unchanged(file string, size int64, mtime time.Time) (bool, error)
	// BeginFile forgets what was indexed from file and records its size
	// and time, as not yet complete; the messages that follow belong to
	// it.
	BeginFile(file string, size int64, mtime time.Time) error
	// EndFile records that every message of file was added: once
	// committed, Unchanged may report it unchanged.
	EndFile(file string) error
	// File returns what the index recorded of file when it was begun
	// (BeginFile): its size and modification time, and whether it was
	// completely indexed. ok is false for a file the index does not hold.
	File(file string) (st FileState, ok bool, err error)
	// Incomplete returns the number of files begun and not completely
	// indexed, directories whose walk was begun (DirSize) included.
	Incomplete() (int, error)
	// Prune forgets the files indexed under the directory dir that keep
	// does not keep (files gone from it since they were indexed), with
	// everything indexed from them; it returns how many it forgot.
	Prune(dir string, keep func(file string) bool) (int, error)
	// Add adds a message.
	Add(e *Entry) error
	// Commit makes what was added durable (a no-op in memory).
	Commit() error

	// Messages returns the locations of the message with this id.
	Messages(id string) ([]Location, error)
	// Parts returns the parts with Content-ID cid in message id.
	Parts(id, cid string) ([]Location, error)
	// Article returns the messages filed as "group:number".
	Article(groupNumber string) ([]Location, error)
	// HasGroup reports whether the archive holds articles of group.
	HasGroup(group string) (bool, error)
	// HasHost reports whether host filed articles of the archive (the
	// first word of their Xref: headers).
	HasHost(host string) (bool, error)
	Stats() (Stats, error)
	Close() error
}
