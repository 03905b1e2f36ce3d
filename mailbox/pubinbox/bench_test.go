package pubinbox_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/linkscan/linkscan/internal/corpus"
	"github.com/linkscan/linkscan/internal/testutil"
	"github.com/linkscan/linkscan/mailbox"
)

// The benchmarks read one v2 epoch of generated messages (internal/
// corpus's mix), packed as git gc packs: LINKSCAN_PUBINBOX_N messages
// (default 3000), made once per process under LINKSCAN_PUBINBOX_DIR (a
// temporary directory by default; given, it is kept and used again).
var bench struct {
	once  sync.Once
	dir   string
	bytes int64 // of the messages
	n     int
}

func benchEpoch(b *testing.B) (string, int64) {
	testutil.NeedGit(b)
	bench.once.Do(func() {
		n := 3000
		if v, err := strconv.Atoi(os.Getenv("LINKSCAN_PUBINBOX_N")); err == nil && v > 0 {
			n = v
		}
		root := os.Getenv("LINKSCAN_PUBINBOX_DIR")
		if root == "" {
			var err error
			if root, err = os.MkdirTemp("", "pubinbox-bench-*"); err != nil {
				b.Fatal(err)
			}
		}
		bench.dir = filepath.Join(root, strconv.Itoa(n)+".git")
		var buf bytes.Buffer
		corpus.Write(&buf, int64(n)*5000, 1) // messages average some 3.3 KB: more than n
		msgs := bytes.SplitAfter(buf.Bytes(), []byte("\nFrom "))
		var cs []testutil.GitCommit
		for i, m := range msgs {
			if len(cs) == n {
				break
			}
			if i > 0 {
				m = m[len("From "):] // the separator's start went with the message before
			}
			m = m[bytes.IndexByte(m, '\n')+1:] // the "From " line
			m = bytes.TrimSuffix(m, []byte("\nFrom "))
			cs = append(cs, testutil.GitCommit{Set: map[string]string{"m": string(m)}})
			bench.bytes += int64(len(m))
		}
		bench.n = len(cs)
		if _, err := os.Stat(bench.dir); err != nil {
			testutil.GitRepo(b, bench.dir, cs)
			testutil.Git(b, bench.dir, "repack", "-adq", "--window=50", "--depth=50")
		}
	})
	return bench.dir, bench.bytes
}

// BenchmarkReadEpoch reads every message of the epoch (headers parsed,
// parts not walked): the reader's own speed, git's included.
func BenchmarkReadEpoch(b *testing.B) {
	dir, size := benchEpoch(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		r, err := mailbox.Open(dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			m, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil || len(m.Problems) > 0 {
				b.Fatalf("%v %v", err, m.Problems)
			}
			m.Release()
			n++
		}
		r.Close()
		if n != bench.n {
			b.Fatalf("%d messages, want %d", n, bench.n)
		}
	}
}

// BenchmarkCatFileAllObjects is the floor: git cat-file --batch
// --batch-all-objects writing every object of the epoch (the messages,
// and the commits and trees, a small part) to a pipe read and dropped.
func BenchmarkCatFileAllObjects(b *testing.B) {
	dir, size := benchEpoch(b)
	b.SetBytes(size)
	for b.Loop() {
		cmd := exec.Command("git", "--git-dir="+dir, "cat-file", "--batch", "--batch-all-objects")
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, out)
		if err := cmd.Wait(); err != nil || n < size {
			b.Fatalf("%v: %d bytes", err, n)
		}
	}
}
