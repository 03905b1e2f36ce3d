package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/linkscan/linkscan/internal/corpus"
)

// BenchmarkAuditOffline measures what the command adds around the
// checks: the scan pass, the distinct links collected on disk, the index
// pass when mid:/news: links are found, and the answers from a history
// that knows nothing (--offline: no network). Bytes are those of the
// generated mbox. Run with -benchtime=1x..3x on a shared machine.
func BenchmarkAuditOffline(b *testing.B) {
	dir := b.TempDir()
	mbox := filepath.Join(dir, "c.mbox")
	f, err := os.Create(mbox)
	if err != nil {
		b.Fatal(err)
	}
	corpus.Write(f, 16<<20, 7)
	f.Close()
	fi, _ := os.Stat(mbox)
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		code, out, errs := runCmd("", "audit", "--offline", "--db", filepath.Join(dir, "h.db"), "--progress", "never",
			"--format", "summary", mbox)
		if code != exitOK || out == "" {
			b.Fatalf("exit %d, stderr %q", code, errs)
		}
		if i == 0 {
			b.Logf("%s", out[:min(len(out), 200)])
		}
	}
}
