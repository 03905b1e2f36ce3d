package refs

import (
	"errors"
	"strings"

	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/references"
	"github.com/linkscan/linkscan/scan"
)

// This file is the index-then-scan wiring every command that resolves
// references shares (resolve, scan --resolve, index, audit): open the
// index, index the inputs, make the Resolver, compose the stages. A
// command calls these in a few lines and keeps its flags, its messages
// and its exit statuses; standard input, read twice (index, then scan),
// is spooled by an internal/inputs.Opener whose Open both passes get.

// Options say where the index is and how references are resolved.
type Options struct {
	// Index is an SQLite index file, kept between runs; "" keeps the
	// index in memory (references.Spill) up to Memory bytes (0 or less:
	// references.DefaultMemoryBudget) and in a temporary SQLite file in
	// TempDir ("": os.TempDir()) past it.
	Index   string
	Memory  int64
	TempDir string
	// Notice, if set, receives what the user should know although it is
	// no error: a zero-byte index file taken as new, an index checked
	// after an unclean close, the move of the index out of memory.
	Notice func(msg string)

	// LocalHosts are further names of the archive's own news server
	// (nntp:// links to them resolve; the hosts of Xref: headers count
	// too).
	LocalHosts []string
	// Only keeps only the records of mid:, cid:, news: and nntp: links;
	// Implicit adds the implicit references (In-Reply-To, References,
	// attribution lines); Statuses, if not empty, keeps only the records
	// of those statuses.
	Only, Implicit bool
	Statuses       map[string]bool
	// Mailbox is how a target file changed since it was indexed is read
	// when the Resolver indexes it again: as the inputs were.
	Mailbox mailbox.Options
}

// OpenStore opens the index o names: the SQLite file o.Index, or a
// store in memory that moves to a temporary file past o.Memory.
func OpenStore(o Options) (references.Store, error) {
	if o.Index == "" {
		return references.NewSpill(o.Memory, o.TempDir, o.Notice), nil
	}
	return references.OpenSQLiteOptions(o.Index, &references.SQLiteOptions{Notice: o.Notice})
}

// Hosts splits a comma-separated list of host names (as --nntp-host
// gives it), leaving out white space and empty names.
func Hosts(list string) []string {
	var hosts []string
	for h := range strings.SplitSeq(list, ",") {
		if h = strings.TrimSpace(h); h != "" {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// ProblemKind tells the problems of indexing apart.
type ProblemKind int

// The kinds of Problem.
const (
	// Damage is damage found in a message; the message is indexed all
	// the same.
	Damage ProblemKind = iota + 1
	// Unreadable is a message file of a directory that could not be read
	// at all (a mailbox.ErrUnreadable); it is not recorded as indexed,
	// and is read again next time.
	Unreadable
	// Failed is an input that could not be indexed, or not to its end;
	// Err says why.
	Failed
)

// Problem is a problem met while indexing an input.
type Problem struct {
	Kind ProblemKind
	// Input is the input as it was given (a file, a directory, "-").
	Input string
	// Msg is the problem of Damage ("PATH:OFFSET: problem") and of
	// Unreadable (naming the file), as references.IndexStats gives them.
	Msg string
	// Err is the error of Failed.
	Err error
}

// Error returns Msg, or for Failed "indexing INPUT: error" ("indexing:
// error" when the error names its file, as a *mailbox.InputError does).
func (p Problem) Error() string {
	if p.Kind != Failed {
		return p.Msg
	}
	var ie *mailbox.InputError
	if errors.As(p.Err, &ie) {
		return "indexing: " + p.Err.Error()
	}
	return "indexing " + p.Input + ": " + p.Err.Error()
}

// Unwrap returns Err.
func (p Problem) Unwrap() error { return p.Err }

// Index adds paths to store, in order, and returns what it did, summed
// over the inputs (their Problems and Unreadable lists are left out:
// report is given them). It reads with open (nil: mailbox.Open; pass a
// spooling internal/inputs.Opener's Open to read standard input again
// afterwards) and mb, and calls report, if not nil, for each problem in
// the order met: for each input, its unreadable files, the damage in its
// messages, then the error that stopped it. An input that fails does not
// stop the others.
func Index(store references.Store, paths []string, mb mailbox.Options, open func(string, *mailbox.Options) (*mailbox.Reader, error), report func(Problem)) references.IndexStats {
	if report == nil {
		report = func(Problem) {}
	}
	ix := &references.Indexer{Store: store, Mailbox: mb, Open: open}
	var run references.IndexStats
	for _, p := range paths {
		st, err := ix.Add(p)
		run.Sum(st)
		for _, msg := range st.Unreadable {
			report(Problem{Kind: Unreadable, Input: p, Msg: msg})
		}
		for _, msg := range st.Problems {
			report(Problem{Kind: Damage, Input: p, Msg: msg})
		}
		if err != nil {
			report(Problem{Kind: Failed, Input: p, Err: err})
		}
	}
	return run
}

// NewResolver returns a Resolver over store with o's local hosts and
// notices. A target file changed since it was indexed is indexed again,
// read with o.Mailbox (Resolver.Refresh).
func NewResolver(store references.Store, o Options) *references.Resolver {
	ix := &references.Indexer{Store: store, Mailbox: o.Mailbox, Notice: o.Notice}
	return &references.Resolver{Store: store, LocalHosts: o.LocalHosts, Notice: o.Notice, Refresh: ix.Refresh}
}

// Stages returns the stages of references o asks for, in the order they
// must run, before any other stage: Only (with o.Only), Implicit (with
// o.Implicit), then Resolve against res (with o.Statuses).
func Stages(res *references.Resolver, o Options) []scan.Stage {
	var st []scan.Stage
	if o.Only {
		st = append(st, Only{})
	}
	if o.Implicit {
		st = append(st, Implicit{})
	}
	return append(st, Resolve{Resolver: res, Statuses: o.Statuses})
}
