package rewrite

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/mailbox"
)

// denseMessage is one message of n lines, each a link that hostRules
// rewrites: the link-dense message of issue #10 (330,000 links in
// 9.8 MB took 454 MB with the rewrite command).
func denseMessage(n int) []byte { return denseMessageOf("plain", n) }

// denseMessageOf is denseMessage in plain text, or in HTML (each line
// a link in an href and in the text: two links).
func denseMessageOf(kind string, n int) []byte {
	var b bytes.Buffer
	ct := "text/plain"
	if kind == "html" {
		ct = "text/html"
	}
	b.WriteString("From: a@example.org\nTo: b@example.org\nSubject: dense\nMessage-ID: <dense@example.org>\n" +
		"Date: Thu, 24 Mar 1994 02:31:00 +0000\nContent-Type: " + ct + "; charset=us-ascii\n\n")
	for i := range n {
		if kind == "html" {
			fmt.Fprintf(&b, "<a href=\"http://old.example.org/%d\">http://old.example.org/%d</a><br>\n", i, i)
			continue
		}
		fmt.Fprintf(&b, "http://old.example.org/%d\n", i)
	}
	return b.Bytes()
}

const hostRules = "[[rule]]\naction = \"map\"\nfrom-host = \"old.example.org\"\nto-host = \"new.example.org\"\n"

func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestMessageMemory bounds the heap one link of a link-dense message
// costs: what MessageChanges keeps per link (its changes), and what a
// pass holds at its fullest (memHook: the part's edits made, the new
// bytes written) beyond two copies of the message's bytes. Before the
// changes and edits were kept compactly, a link kept some 456 bytes and
// a pass held some 750 at its fullest (this test failed on that code).
func TestMessageMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a 1.5 MB message of 50,000 links")
	}
	const n = 50000
	raw := denseMessage(n)
	rs, err := Parse(strings.NewReader(hostRules), "host.toml")
	if err != nil {
		t.Fatal(err)
	}
	m := mailbox.ReadMessage(raw, "dense.eml", &mailbox.Options{MaxMessageSize: -1})
	m.Parse()
	m.Parts()
	base := liveHeap()
	peak := base
	memHook = func() { peak = max(peak, liveHeap()) }
	defer func() { memHook = nil }()
	out, chs, err := rs.MessageChanges(m, nil)
	memHook = nil
	if err != nil || chs.Len() != n {
		t.Fatalf("%d changes, %v", chs.Len(), err)
	}
	kept := float64(liveHeap()-base-uint64(cap(out))) / n
	// at the fullest: the changes, the edits and two copies of the body
	// (the body written and the message's new bytes)
	held := (float64(peak-base) - 2*float64(len(raw))) / n
	runtime.KeepAlive(out)
	runtime.KeepAlive(chs)
	runtime.KeepAlive(m)
	t.Logf("%d links in %d bytes: %.1f bytes kept per link, %.1f held at the fullest beyond two copies of the message", n, len(raw), kept, held)
	if kept > 40 {
		t.Errorf("%.1f bytes of heap kept per link, want at most 40", kept)
	}
	if held > 64 {
		t.Errorf("%.1f bytes of heap held per link at the fullest, want at most 64", held)
	}
	if want := strings.ReplaceAll(string(raw), "old.example.org", "new.example.org"); string(out) != want {
		t.Error("output is not the input with the host changed")
	}
}

// BenchmarkDenseMessage rewrites a link-dense message (one link per
// line, every one changed by a host map rule): the changes and edits of
// tens of thousands of links in one message. links=50000 is 1.4 MB; in
// HTML (an href and the same link as text on each line) the part's
// attributes are found and placed too (their line numbers were once
// counted from the part's start for each: time in the square of the
// part's size).
func BenchmarkDenseMessage(b *testing.B) {
	rs, err := Parse(strings.NewReader(hostRules), "host.toml")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		kind string
		n    int
	}{{"plain", 1000}, {"plain", 50000}, {"html", 25000}} {
		n := c.n
		if c.kind == "html" {
			n *= 2
		}
		b.Run(fmt.Sprintf("%s/links=%d", c.kind, n), func(b *testing.B) {
			raw := denseMessageOf(c.kind, c.n)
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				m := mailbox.ReadMessage(raw, "dense.eml", &mailbox.Options{MaxMessageSize: -1})
				_, chs, err := rs.MessageChanges(m, nil)
				if err != nil || chs.Len() != n {
					b.Fatalf("%d changes, %v", chs.Len(), err)
				}
				m.Release()
			}
			b.ReportMetric(float64(n), "links")
		})
	}
}
