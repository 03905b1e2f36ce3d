// Package pubinbox reads public-inbox archives as mailbox formats: a v2
// inbox (its epoch repositories git/0.git, git/1.git, ... in order), a
// v1 inbox, or one epoch repository. Importing it registers the reader
// with mailbox.RegisterDirReader, so that mailbox.Open detects such a
// directory like any other format (mailbox.FormatPublicInbox).
//
// Messages are read without a checkout: every message reachable from an
// epoch's head, once, oldest commit first. In v2 each commit's tree
// holds one message, the blob "m"; a commit whose tree holds "d" deletes
// that blob's message, in any epoch of the inbox. In v1 each message is
// a file at a hash path ("ab/cdef..."); a file removed or replaced drops
// the message it held. A message's Path is the epoch repository as
// given, its Blob the object id, its offsets within the blob.
//
// # git itself, not a Go implementation of it
//
// The reader runs git: "git rev-list --reverse --date-order HEAD" lists
// a v2 epoch's commits and "git cat-file --batch" answers "COMMIT:m"
// with the message's blob id and bytes (v1: "git log --raw" lists the
// files each commit adds, and cat-file gives their blobs); "git log
// --raw -- d" finds the deletions first. The alternative was
// github.com/go-git/go-git/v5, a pure-Go git. Measured side by side on
// one packed epoch of 5,000 generated messages (16.3 MB of messages, a
// 6.6 MiB pack; scripts/pubinbox-bench.sh with GOGIT=1, go-git v5.19.3,
// git 2.39), reading every "m" blob oldest first and dropping the bytes:
//
//	                           CPU (git included)   peak RSS   Go heap allocated
//	git rev-list + cat-file    0.37-0.66 s          14 MB      2 MB
//	go-git                     1.6-2.4 s            49-52 MB   143 MB
//
// go-git took about four times the CPU and three and a half times the
// memory, and its elapsed time was four to ten times longer on the
// shared machine (docs/performance.md has the figures of each run). git also reads
// every repository that git writes, which a second implementation may
// lag behind on: packs with bitmaps and multi-pack indexes, alternates
// (a v2 inbox's all.git), SHA-256 repositories, long delta chains (lore
// epochs are packed with deep ones), and a commit-graph file if there is
// one. And it is a dependency less: exec of git is all this takes, and
// git is where public-inbox archives are kept anyway (an archive is
// cloned with git to be read at all). The cost is one git process per
// epoch for the listing and one for the blobs, and a test suite that
// needs git (.ci/run installs it; without git an archive is an input
// that cannot be read).
//
// # Reading, bounded
//
// Requests go to cat-file a window of 128 at a time, from the one
// goroutine that reads the answers: the requests (under 9 KiB) always
// fit in the pipe, so writing them never waits for git, and git is
// never left without work while a message is parsed. A message is read
// into a buffer of its size (over Options.MaxMessageSize, as a stream,
// its structure and text kept); the reader holds the ids of the blobs
// read so far in the epoch (for "each once": a merge commit's "m" is a
// parent's) and of the deleted ones, some 50 bytes each.
//
// # Damage
//
// A blob that is missing, or damaged (cat-file says "missing" of an
// object it cannot inflate; "git cat-file -t" then tells which), comes
// as a message with one problem of kind mailbox.ErrUnreadable naming the
// blob and what git said; a cat-file that dies on an object is started
// again for the requests after it. An epoch whose history git cannot
// walk comes as one such message for the epoch; the next epoch is read.
package pubinbox
