package mailbox

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

var maildirFiles = flag.Int("maildir.files", 100000, "files in the Maildir of BenchmarkMaildir")

// BenchmarkMaildir builds a Maildir of -maildir.files small messages (100
// 000 by default) in a temporary directory and reads it as a scan does:
// each message split, parsed, walked and released. It reports the peak
// resident memory of the process (VmHWM, setup included) and the live heap
// at the end; a Maildir of 50 000 files took 6.2 GB before the directory
// reader read each file into the message's pooled buffer.
//
//	go test -run XXX -bench Maildir -benchtime 1x ./mailbox
func BenchmarkMaildir(b *testing.B) {
	root := b.TempDir()
	n := *maildirFiles
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(root, sub), 0o755)
	}
	var size int64
	for i := range n {
		sub, flags := "cur", ":2,S"
		if i%10 == 9 {
			sub, flags = "new", ""
		}
		msg := fmt.Sprintf("From: a%d@example.org\nTo: list@example.org\nSubject: message %d\nMessage-ID: <%d@example.org>\n"+
			"Date: Thu, 24 Mar 1994 02:31:00 +0000\nContent-Type: text/plain; charset=us-ascii\n\n"+
			"Hello,\n\nsee http://example.org/%d and <URL:ftp://ftp.example.org/pub/%d>.\n%s\n-- \nA. N. Other\n",
			i, i, i, i, i, strings.Repeat("Some more words of the message body to make it a typical size.\n", 20))
		size += int64(len(msg))
		if err := os.WriteFile(filepath.Join(root, sub, fmt.Sprintf("%d.M%dP1.bench%s", 1700000000+i, i, flags)), []byte(msg), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		r, err := Open(root, &Options{DeferParse: true})
		if err != nil {
			b.Fatal(err)
		}
		count := 0
		for {
			m, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			m.Parse()
			for _, p := range m.Parts() {
				_ = p.Text
			}
			m.Release()
			count++
		}
		r.Close()
		if count != n {
			b.Fatalf("%d messages, want %d", count, n)
		}
	}
	b.StopTimer()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-heap-MiB")
	if hwm := peakRSS(); hwm > 0 {
		b.ReportMetric(float64(hwm)/(1<<20), "peak-RSS-MiB")
	}
}

// peakRSS returns the process's peak resident memory (VmHWM), or 0 where
// /proc does not say.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestMaildirMemory reads a Maildir of 5000 files and checks that the
// reader recycles its buffers: what a read of the whole Maildir allocates
// stays near the size of the messages, not a buffer per file of the
// stream reader's size (64 KiB read buffers and 1 MiB message buffers).
func TestMaildirMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 5000 files")
	}
	root := t.TempDir()
	const n = 5000
	os.MkdirAll(filepath.Join(root, "cur"), 0o755)
	os.MkdirAll(filepath.Join(root, "new"), 0o755)
	var size int64
	for i := range n {
		msg := fmt.Sprintf("From: a@example.org\nSubject: %d\nMessage-ID: <%d@example.org>\n\nhttp://example.org/%d\n", i, i, i)
		size += int64(len(msg))
		os.WriteFile(filepath.Join(root, "cur", fmt.Sprintf("%d.x:2,S", i)), []byte(msg), 0o644)
	}
	read := func() {
		r, err := Open(root, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for {
			m, err := r.Next()
			if err != nil {
				break
			}
			m.Parts()
			m.Release()
		}
	}
	read() // fill the pools
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	read()
	runtime.ReadMemStats(&after)
	perFile := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("%d bytes allocated per file", perFile)
	// a few KiB per file: names, the header's fields, parts; not 64 KiB
	if perFile > 8<<10 {
		t.Errorf("%d bytes allocated per file (messages average %d bytes)", perFile, size/n)
	}
}

// TestSingleFileOneBuffer: a large message file named alone is read into
// one buffer of its size, not grown in copies.
func TestSingleFileOneBuffer(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.eml")
	body := strings.Repeat("a line of text in a large message, http://example.org/\n", 80000) // 4.4 MB
	os.WriteFile(p, []byte("From: a@example.org\nSubject: big\n\n"+body), 0o644)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := Open(p, &Options{SkipText: true})
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Next()
	runtime.ReadMemStats(&after)
	r.Close()
	if err != nil || len(m.Raw) != len(body)+34 {
		t.Fatalf("%v, %d bytes", err, len(m.Raw))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(m.Raw))*3/2 {
		t.Errorf("%d bytes allocated to read %d", alloc, len(m.Raw))
	}
}
