//go:build unix

package output

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestInputIsOutput: an open output file (standard output redirected by
// a shell) is found among the inputs however it is reached: as an input
// named, through a link, as standard input, inside an input directory,
// through a symbolic or hard link in one. /dev/null and other files are
// not inputs.
func TestInputIsOutput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.mbox")
	writeFile(t, in, "From a\n")
	md := filepath.Join(dir, "Maildir")
	for _, s := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(md, s), 0o755)
	}
	inside := filepath.Join(md, "cur", "1:2,S")
	writeFile(t, inside, "From: x\n\nbody\n")
	other := filepath.Join(dir, "other.txt")
	writeFile(t, other, "")
	hardDir := filepath.Join(dir, "hard")
	symDir := filepath.Join(dir, "sym")
	os.MkdirAll(hardDir, 0o755)
	os.MkdirAll(symDir, 0o755)
	outside := filepath.Join(dir, "links.txt")
	writeFile(t, outside, "")
	if err := os.Link(outside, filepath.Join(hardDir, "1")); err != nil {
		t.Skip("no hard links:", err)
	}
	if err := os.Symlink(filepath.Join("..", "a.mbox"), filepath.Join(symDir, "1")); err != nil {
		t.Skip("no symbolic links:", err)
	}
	symIn := filepath.Join(dir, "link.mbox")
	os.Symlink("a.mbox", symIn)
	open := func(name string) *os.File {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	stdin, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	tests := []struct {
		out    string
		inputs []string
		want   string
	}{
		{in, []string{other, in}, in},
		{in, []string{symIn}, symIn},
		{symIn, []string{in}, in},
		{in, []string{"-"}, "-"},
		{inside, []string{in, md}, md},
		{in, []string{symDir}, symDir},               // a symbolic link in a directory
		{outside, []string{hardDir}, hardDir},        // a hard link in a directory
		{outside, []string{in, md, symDir, "-"}, ""}, // none
		{other, []string{filepath.Join(dir, "gone")}, ""},
		{os.DevNull, []string{in, md, "-"}, ""},
	}
	for _, tt := range tests {
		if got := InputIsOutput(open(tt.out), stdin, tt.inputs); got != tt.want {
			t.Errorf("InputIsOutput(%s, %q) = %q, want %q", tt.out, tt.inputs, got, tt.want)
		}
	}
}

// BenchmarkInputIsOutput: standard output on a file beside a Maildir of
// 10,000 messages given as the input, the common case (scan Maildir >
// links.txt) that walks the whole directory for names.
func BenchmarkInputIsOutput(b *testing.B) {
	dir := b.TempDir()
	cur := filepath.Join(dir, "Maildir", "cur")
	os.MkdirAll(cur, 0o755)
	for i := range 10000 {
		os.WriteFile(filepath.Join(cur, strconv.Itoa(i)+":2,S"), nil, 0o644)
	}
	out, err := os.Create(filepath.Join(dir, "links.txt"))
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	b.ReportAllocs()
	for b.Loop() {
		if in := InputIsOutput(out, nil, []string{filepath.Join(dir, "Maildir")}); in != "" {
			b.Fatal(in)
		}
	}
}
