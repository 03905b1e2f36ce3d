package uri

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestTablesFresh fails when tables.go is not what gen_tables.go makes
// today: regenerate it with "go generate ./uri".
func TestTablesFresh(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(goTool, "run", "gen_tables.go", "-o", "-")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("gen_tables.go: %v\n%s", err, stderr.Bytes())
	}
	got, err := os.ReadFile("tables.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, stdout.Bytes()) {
		t.Errorf("tables.go is out of date: regenerate with 'go generate ./uri'\n%s", firstDiff(string(got), stdout.String()))
	}
}

// firstDiff describes the first line where the committed and the
// generated text differ.
func firstDiff(committed, generated string) string {
	a, b := strings.Split(committed, "\n"), strings.Split(generated, "\n")
	for i := 0; i < len(a) || i < len(b); i++ {
		var la, lb string
		if i < len(a) {
			la = a[i]
		}
		if i < len(b) {
			lb = b[i]
		}
		if la != lb || i >= len(a) || i >= len(b) {
			return "line " + strconv.Itoa(i+1) + ":\ncommitted: " + la + "\ngenerated: " + lb
		}
	}
	return ""
}
