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
package pubinbox
