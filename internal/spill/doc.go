// Package spill keeps sets of distinct keys in bounded memory, spilling
// to temporary files past a memory budget. It serves linkscan's --unique
// (one record per distinct link) and summaries (the count of distinct
// links, the links per host).
//
// A [Set] holds 128-bit hashes of keys, never the keys: 24 bytes a slot in
// an open-addressing table (linear probing, at most three quarters full),
// so 32 to 64 bytes per distinct key while the table fits the budget. Each
// key gets an ordinal, the number of distinct keys added before it (0, 1,
// 2, ... in order of first [Set.Add]), and a count of its adds. When the
// table would outgrow the budget, its entries are sorted by hash and
// written as a run (a temporary file of fixed 32-byte entries), and the
// table starts empty. A key missing from the table is then looked up in
// the runs: each run keeps in memory a Bloom filter (up to ten bits a key,
// within an eighth of the budget) and the first hash of every block of
// 128 entries (0.125 bytes a key), so that a lookup costs no read for most
// new keys and one 4 KiB read per run otherwise. A key found in a run
// keeps its ordinal, so [Set.Add] answers "new or not" exactly at once,
// which lets a caller emit a key's record when it is first seen. The
// newest runs are merged like the digits of a binary counter (two runs
// of about the same size become one), so that there are about
// log2(keys/table) runs, and all of them past eight. [Set.Each] merges
// the runs, sums the counts of each key and hands every ordinal with its
// count in ordinal order, through at most 64 temporary bucket files when
// the ordinals do not fit an array in half the budget.
//
// A [Counter] sums counts per key where the keys themselves are wanted
// back (the hosts of a summary): an open-addressing table of 24-byte
// slots (32 bits of a hash of the key and its length, where it is, its
// count; at most three quarters full) and the keys in an arena of chunks
// (a length and the bytes), both within a budget; a table grows only
// while the old and new table, the arena and the keys the new table
// would hold at their mean length so far all fit. Past the budget the
// entries are sorted by key (on their first eight bytes, kept in the
// slot for the sort, then on the rest) and written as a run (a
// temporary file of a uvarint length, the key and a uvarint count per
// entry), and the table and arena start empty; runs are merged as a
// Set's are (two of about the same size become one, all of them past
// eight), summing the counts of a key. [Counter.Each] merges the runs
// with the sorted table and hands every key once with its total, in
// increasing byte order (when nothing spilled, the table as it is,
// unsorted). Keys are compared whole: a Counter has no collisions.
//
// A [Log] is the companion for payloads: an append-only sequence of byte
// records, in memory up to a limit and in a temporary file past it, read
// back in order. A caller that appends a key's payload when [Set.Add]
// reports it new finds payload i at ordinal i.
//
// # Why sorted runs and not SQLite
//
// linkscan already embeds SQLite (modernc.org/sqlite) for its Message-ID
// index, and a table with a primary key would answer the same questions.
// Runs are used instead because the work here is one lookup per link
// occurrence, tens of millions for a large archive: an SQLite insert or
// lookup goes through the SQL layer, a B-tree of variable-length cells
// and SQLite's own page cache (another memory budget to size), while a
// run lookup is a Bloom filter test and at most one read of a block, and
// runs are written and merged sequentially. Temporary files are removed
// as soon as they are created (where the system allows; otherwise at
// Close), so an interrupted run leaves nothing behind.
//
// # Collisions
//
// Keys are told apart by two 64-bit hashes (hash/maphash) with seeds
// chosen at random for each [Hasher], that is for each process, so that
// no archive can be crafted to collide. Two distinct keys among n have the
// same 128-bit hash with a probability of about n²/2¹²⁹: 1.5·10⁻²⁵ for
// ten million keys, 1.5·10⁻¹⁹ for ten billion. On a collision the second
// key is taken for the first: it is reported as not new and its adds are
// counted to the first key. The hashes are not checked against the keys.
//
// # Memory
//
// A Set's table, the arrays of counts of [Set.Each], and a Counter's
// table and arena are allocated outside the Go heap on Linux (anonymous
// mappings), so that the garbage collector's heap target (five times the
// live heap under linkscan's GOGC of 400) does not multiply them, and its
// memory limit does not make it collect again and again to keep them
// under it; elsewhere they are ordinary slices. A Counter's memory is
// its table and arena, within its budget but for one key longer than an
// arena chunk (up to 1 MiB), plus 64 KiB of write buffer while a run is
// written and 32 KiB of read buffer per run while runs are merged
// ([Counter.Memory]). A set's memory is its table,
// which grows by doubling up to the largest size whose growth (old and new
// table together) fits the budget, plus the runs' filters and block
// indexes; [Set.Memory] reports it. The block indexes are the one part
// that grows past the budget: 0.125 bytes per spilled key, 125 MB for a
// billion distinct keys.
package spill
