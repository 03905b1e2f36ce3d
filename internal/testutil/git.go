package testutil

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// NeedGit skips the test when git is not installed, and fails it
// instead under CI=true (.ci/run installs git).
func NeedGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("git is needed (CI=true): %v", err)
		}
		t.Skipf("git is not installed: %v", err)
	}
}

// GitCommit is one commit of a repository that GitRepo makes.
type GitCommit struct {
	Branch string            // "" is master; a new branch starts at master's tip
	Set    map[string]string // files written: path -> content
	Delete []string          // paths removed
	Merge  string            // a branch whose tip is merged in, "" none
}

// GitRepo makes a bare repository at dir (HEAD on master) holding
// commits, through git fast-import: commit i is dated a minute after
// commit i-1. When dir holds a repository already, the commits go on
// from its master. It returns the commit ids in order.
func GitRepo(t testing.TB, dir string, commits []GitCommit) []string {
	t.Helper()
	base := ""
	if out, err := exec.Command("git", "--git-dir="+dir, "rev-parse", "--verify", "-q", "master").Output(); err == nil {
		base = strings.TrimSpace(string(out))
	}
	Git(t, "", "init", "-q", "--bare", "-b", "master", dir)
	var s strings.Builder
	tips := map[string]int{} // branch -> mark of its last commit
	for i, c := range commits {
		br := c.Branch
		if br == "" {
			br = "master"
		}
		mark := i + 1
		fmt.Fprintf(&s, "commit refs/heads/%s\nmark :%d\ncommitter T <t@example.org> %d +0000\ndata 0\n", br, mark, 1600000000+60*i)
		switch _, ok := tips[br]; {
		case !ok && tips["master"] != 0:
			fmt.Fprintf(&s, "from :%d\n", tips["master"])
		case !ok && base != "":
			fmt.Fprintf(&s, "from %s\n", base)
		}
		if c.Merge != "" {
			fmt.Fprintf(&s, "merge :%d\n", tips[c.Merge])
		}
		for _, p := range c.Delete {
			fmt.Fprintf(&s, "D %s\n", p)
		}
		for _, p := range slices.Sorted(maps.Keys(c.Set)) {
			fmt.Fprintf(&s, "M 100644 inline %s\ndata %d\n%s\n", p, len(c.Set[p]), c.Set[p])
		}
		s.WriteString("\n")
		tips[br] = mark
	}
	cmd := exec.Command("git", "--git-dir="+dir, "fast-import", "--quiet", "--export-marks="+filepath.Join(dir, "marks"))
	cmd.Stdin = strings.NewReader(s.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git fast-import: %v\n%s", err, out)
	}
	marks, err := os.ReadFile(filepath.Join(dir, "marks"))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "marks"))
	ids := make([]string, len(commits))
	for _, l := range strings.Split(strings.TrimSpace(string(marks)), "\n") {
		var n int
		var id string
		if _, err := fmt.Sscanf(l, ":%d %s", &n, &id); err == nil && n >= 1 && n <= len(ids) {
			ids[n-1] = id
		}
	}
	return ids
}

// Git runs git (on the repository dir unless it is "") and returns its
// standard output, trimmed; it fails the test if git does.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	if dir != "" {
		args = append([]string{"--git-dir=" + dir}, args...)
	}
	cmd := exec.Command("git", args...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+os.TempDir())
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return strings.TrimSpace(string(out))
}

// GitLoose turns the packs of the repository dir into loose objects, so
// that one object can be removed or damaged (GitObjectPath).
func GitLoose(t testing.TB, dir string) {
	t.Helper()
	packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack"))
	for _, p := range packs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(p)
		os.Remove(strings.TrimSuffix(p, ".pack") + ".idx")
		cmd := exec.Command("git", "--git-dir="+dir, "unpack-objects", "-q")
		cmd.Stdin = strings.NewReader(string(data))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git unpack-objects: %v\n%s", err, out)
		}
	}
}

// GitObjectPath is the file of the loose object id in dir.
func GitObjectPath(dir, id string) string {
	return filepath.Join(dir, "objects", id[:2], id[2:])
}
