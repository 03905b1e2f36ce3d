package pubinbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// kind is how an epoch holds its messages.
type kind uint8

const (
	kindV2 kind = iota + 1 // blob "m" in each commit's tree, "d" a deletion
	kindV1                 // a file at a hash path ("ab/cdef...") per message
)

func (k kind) String() string {
	if k == kindV1 {
		return "v1"
	}
	return "v2"
}

// epoch is one git repository of an archive.
type epoch struct {
	path string
	kind kind // 0: not known yet (an empty repository holds no messages)
}

// layout is what detect found: the epochs in order, and why.
type layout struct {
	epochs []epoch
	inbox  bool // a v2 inbox (deletions hold across its epochs)
	reason string
}

// isGitDir reports whether dir is a bare git repository (or a .git
// directory): a HEAD file, an objects/ and a refs/ directory.
func isGitDir(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "HEAD"))
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	for _, d := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(dir, d)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// v2Epochs returns the epoch repositories git/N.git of a v2 inbox dir,
// in epoch order; none when dir is not one.
func v2Epochs(dir string) []epoch {
	ents, err := os.ReadDir(filepath.Join(dir, "git"))
	if err != nil {
		return nil
	}
	type numbered struct {
		n    int
		path string
	}
	var found []numbered
	for _, e := range ents {
		num, ok := strings.CutSuffix(e.Name(), ".git")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || n < 0 || strconv.Itoa(n) != num {
			continue
		}
		p := filepath.Join(dir, "git", e.Name())
		if isGitDir(p) {
			found = append(found, numbered{n, p})
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].n < found[j].n })
	out := make([]epoch, len(found))
	for i, f := range found {
		out[i] = epoch{path: f.path, kind: kindV2}
	}
	return out
}

// errNoGit is the cause given when an archive is found but git is not.
var errNoGit = errors.New("reading a public-inbox archive needs git, which is not installed (or not in PATH)")

// detect tells whether dir is a public-inbox archive: a v2 inbox
// (git/N.git epochs), or one git repository whose head commit holds a
// v2 message ("m" or "d") or v1 messages (hash paths). A repository
// without commits is an empty epoch. ok is false for anything else,
// other git repositories included.
func detect(dir string) (l layout, ok bool, err error) {
	if eps := v2Epochs(dir); len(eps) > 0 {
		if _, err := exec.LookPath("git"); err != nil {
			return l, true, errNoGit
		}
		l = layout{epochs: eps, inbox: true}
		l.reason = fmt.Sprintf("a public-inbox v2 inbox: %d epoch repositories under git/ (%s to %s)", len(eps), filepath.Base(eps[0].path), filepath.Base(eps[len(eps)-1].path))
		if len(eps) == 1 {
			l.reason = "a public-inbox v2 inbox: 1 epoch repository under git/ (" + filepath.Base(eps[0].path) + ")"
		}
		return l, true, nil
	}
	if !isGitDir(dir) {
		return l, false, nil
	}
	if _, err := exec.LookPath("git"); err != nil {
		return l, true, errNoGit
	}
	head, err := headOf(dir)
	if err != nil {
		return l, false, nil // a damaged repository: read as a folder, as before
	}
	if head == "" {
		l = layout{epochs: []epoch{{path: dir}}, reason: "an empty git repository (a public-inbox epoch without commits): no messages"}
		return l, true, nil
	}
	k, err := kindOf(dir, head)
	if err != nil || k == 0 {
		return l, false, nil
	}
	l = layout{epochs: []epoch{{path: dir, kind: k}}}
	if k == kindV2 {
		l.reason = "a public-inbox v2 epoch repository (its head commit's tree holds the message \"m\")"
	} else {
		l.reason = "a public-inbox v1 repository (its head commit's tree holds messages at hash paths ab/cdef...)"
	}
	return l, true, nil
}

// headOf returns the commit id of dir's HEAD, "" when it has no commit.
func headOf(dir string) (string, error) {
	out, err := gitOutput(dir, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		return "", nil // no commit yet
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// kindOf tells v2 from v1 by the tree of commit: only "m" or "d" is v2,
// two-hex-digit directories v1; 0 for neither.
func kindOf(dir, commit string) (kind, error) {
	out, err := gitOutput(dir, "ls-tree", "--name-only", commit)
	if err != nil {
		return 0, err
	}
	names := strings.Fields(string(out))
	if len(names) == 0 {
		return 0, nil
	}
	v2, v1 := true, true
	for _, n := range names {
		v2 = v2 && (n == "m" || n == "d")
		v1 = v1 && len(n) == 2 && isHex(n)
	}
	switch {
	case v2:
		return kindV2, nil
	case v1:
		return kindV1, nil
	}
	return 0, nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// gitOutput runs a git command on the repository dir and returns its
// standard output; an error carries the first line of its standard
// error.
func gitOutput(dir string, args ...string) ([]byte, error) {
	cmd := gitCmd(dir, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{b: &stderr, n: maxStderr}
	out, err := cmd.Output()
	if err != nil {
		return out, gitErr(args[0], err, stderr.Bytes())
	}
	return out, nil
}

// gitCmd is git run on the repository dir, with the user's and the
// system's configuration left out of what it prints.
func gitCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", append([]string{"--git-dir=" + dir, "-c", "core.quotePath=false"}, args...)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
	return cmd
}

// maxStderr bounds what is kept of a git command's standard error.
const maxStderr = 4 << 10

// limitedBuffer keeps the first n bytes written to it.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// gitErr words the failure of a git command with its standard error.
func gitErr(what string, err error, stderr []byte) error {
	msg := strings.TrimSpace(string(stderr))
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i] + " (...)"
	}
	if msg == "" {
		return fmt.Errorf("git %s: %w", what, err)
	}
	return fmt.Errorf("git %s: %w: %s", what, err, msg)
}

// Detect reports whether dir is a public-inbox archive that Open would
// read as one, and why: for the commands that refuse one (a rewrite
// cannot change git history in place).
func Detect(dir string) (reason string, ok bool) {
	l, ok, err := detect(dir)
	if err != nil {
		return "a public-inbox archive (" + err.Error() + ")", ok
	}
	return l.reason, ok
}
