package main

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkscan/linkscan/pick"
)

const (
	pickFixture = "../../testdata/pick/message.eml"
	pickWiki    = "https://wiki.example.org/minutes/2026-11-20"
)

// pickListWant is --list of the fixture: the <URL:> link wrapped over
// two lines of a quoted reply, a link twice, the Safe Link of the base64
// HTML part unwrapped, List-Post's link.
const pickListWant = `1  mailto:dev@lists.example.org
   header List-Post: Subject: Re: Minutes of the November meeting
2  http://archive.example.net/reports/2026/november-meeting-report.html
   part 1 (text/plain) line 2: > The old report is at <URL:http://archive.example.net/reports/
3  https://www.example.com/plain-in-html (×2)
   part 1 (text/plain) line 4: > Also https://www.example.com/plain-in-html again.
4  https://docs.example.org/draft?id=42
   part 1 (text/plain) line 7: https://docs.example.org/draft?id=42 for comments.
5  https://wiki.example.org/minutes/2026-11-20
   written: https://nam12.safelinks.protection.outlook.com/?url=https%3A%2F%2Fwiki.example.org%2Fminutes%2F2026-11-20&data=05%7C02%7Cx%40example.com&sdata=abc&reserved=0
   part 2 (text/html) line 6: The minutes are on the project wiki now.
`

// TestPickList: --list and --print need no terminal, and read the
// message from a file or from standard input.
func TestPickList(t *testing.T) {
	bin := linkscanBin(t)
	for _, c := range []struct {
		stdin bool
		args  []string
		code  int
		out   string
		err   string
	}{
		{false, []string{"pick", "--list", pickFixture}, 0, pickListWant, ""},
		{true, []string{"pick", "--list"}, 0, pickListWant, ""},
		{true, []string{"pick", "--print", "5"}, 0, pickWiki + "\n", ""},
		{false, []string{"pick", pickFixture, "--print", "2"}, 0, "http://archive.example.net/reports/2026/november-meeting-report.html\n", ""},
		{false, []string{"pick", "--print", "6", pickFixture}, 2, "", "no item 6: the message has 5 links"},
		{false, []string{"pick", "--print", "1", "--list", pickFixture}, 2, "", "usage: linkscan pick"},
		{false, []string{"pick", "--list", pickFixture, pickFixture}, 2, "", "usage: linkscan pick"},
		{false, []string{"pick", "--list", "no-such-file"}, 1, "", "no-such-file"},
	} {
		var in *os.File
		if c.stdin {
			f, err := os.Open(pickFixture)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			in = f
		}
		var r binResult
		if in != nil {
			r = runBin(t, bin, in, c.args...)
		} else {
			r = runBin(t, bin, nil, c.args...)
		}
		if r.code != c.code || r.stdout != c.out || !strings.Contains(r.stderr, c.err) {
			t.Errorf("%q: exit %d, stdout\n%s\nstderr %q; want exit %d, stdout\n%s\nstderr with %q", c.args, r.code, r.stdout, r.stderr, c.code, c.out, c.err)
		}
	}
}

// TestPickRulesList: --rules applies rewrite's rules before the
// wrappers are removed; errors in the file are a usage error.
func TestPickRulesList(t *testing.T) {
	bin := linkscanBin(t)
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.toml")
	if err := os.WriteFile(rules, []byte("[[rule]]\nname = \"no id\"\naction = \"strip-params\"\nparams = [\"id\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runBin(t, bin, nil, "pick", "--rules", rules, "--print", "4", pickFixture)
	if r.code != 0 || r.stdout != "https://docs.example.org/draft\n" {
		t.Errorf("--rules --print 4: exit %d, %q, %s", r.code, r.stdout, r.stderr)
	}
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("[[rule]]\naction = \"no-such-action\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, bin, nil, "pick", "--rules", bad, "--list", pickFixture); r.code != exitUsage || !strings.Contains(r.stderr, "bad.toml:2:") {
		t.Errorf("bad rules: exit %d, %s", r.code, r.stderr)
	}
}

// stubBrowser writes a program that records its arguments, one a line,
// to the file it returns.
func stubBrowser(t *testing.T) (prog, record string) {
	t.Helper()
	dir := t.TempDir()
	prog, record = filepath.Join(dir, "browser"), filepath.Join(dir, "opened")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> '" + record + "'\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return prog, record
}

// TestPickOpen: --open N runs $BROWSER, or --run with "{}" replaced, the
// target one argument; a failing program is exit 1.
func TestPickOpen(t *testing.T) {
	bin := linkscanBin(t)
	prog, record := stubBrowser(t)
	t.Setenv("BROWSER", prog)
	if r := runBin(t, bin, nil, "pick", "--open", "5", pickFixture); r.code != 0 {
		t.Fatalf("--open 5: exit %d: %s", r.code, r.stderr)
	}
	if r := runBin(t, bin, nil, "pick", "--open", "4", "--run", prog+" --new-tab {}", pickFixture); r.code != 0 {
		t.Fatalf("--open 4 --run: exit %d: %s", r.code, r.stderr)
	}
	got, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	if want := pickWiki + "\n--new-tab\nhttps://docs.example.org/draft?id=42\n"; string(got) != want {
		t.Errorf("opened:\n%s\nwant\n%s", got, want)
	}
	if r := runBin(t, bin, nil, "pick", "--open", "1", "--run", "false", pickFixture); r.code != exitFail || !strings.Contains(r.stderr, "opening mailto:dev@lists.example.org") {
		t.Errorf("failing --run: exit %d: %s", r.code, r.stderr)
	}
}

// tmuxPane is a picker running in a detached tmux session of its own
// server.
type tmuxPane struct {
	t    *testing.T
	sock string
}

func (p *tmuxPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", p.sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %q: %v: %s", args, err, out)
	}
	return string(out)
}

// waitFor polls the pane until cond holds of its text, for at most 15
// seconds.
func (p *tmuxPane) waitFor(what string, cond func(screen string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		s := p.tmux("capture-pane", "-p", "-t", "pick")
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("waiting for %s; the screen:\n%s", what, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitFile polls until the file holds something, for at most 15 seconds.
func waitFile(t *testing.T, name string) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		b, err := os.ReadFile(name)
		if err == nil && len(b) > 0 { // each file is written by one write
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s", name)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPickTmux drives the picker in a real terminal, tmux, as mutt's
// pipe-message runs it: the message on standard input, the list on the
// terminal. It lists the fixture's links with their context, selects
// the Safe Link (by a search in 80x24, by j in a 40-column split, with
// NO_COLOR set), copies it (y, --copy-cmd) and opens it (Enter, a stub
// $BROWSER) as its unwrapped target, and quits with q, exit 0.
func TestPickTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
	bin := linkscanBin(t)
	fixture, err := filepath.Abs(pickFixture)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		w, h    int
		noColor bool
		want    []string
	}{
		{80, 24, false, []string{
			"   header List-Post: Subject: Re: Minutes of the November meeting",
			" 2 http://archive.example.net/reports/2026/november-meeting-report.html",
			"   part 1 (text/plain) line 2: > The old report is at <URL:http://archive.examp…",
			" 3 https://www.example.com/plain-in-html (×2)",
			"   part 1 (text/plain) line 4: > Also https://www.example.com/plain-in-html aga…",
			" 5 https://wiki.example.org/minutes/2026-11-20",
			"   safelinks: https://nam12.safelinks.protection.outlook.com/?url=https%3A%2F%2…",
			"   part 2 (text/html) line 6: The minutes are on the project wiki now.",
		}},
		{40, 24, true, []string{
			" 2 http://archive.example.net/reports/2…",
			"   part 1 (text/plain) line 2: > The ol…",
			" 5 https://wiki.example.org/minutes/202…",
			"   safelinks: https://nam12.safelinks.p…",
			"   part 2 (text/html) line 6: The minut…",
		}},
	} {
		dir := t.TempDir()
		prog, record := stubBrowser(t)
		rc := filepath.Join(dir, "rc")
		p := &tmuxPane{t: t, sock: filepath.Join(dir, "tmux.sock")}
		env := "BROWSER=" + shellQuote(prog)
		if c.noColor {
			env += " NO_COLOR=1"
		}
		copied := filepath.Join(dir, "copied")
		script := env + " " + shellQuote(bin) + " pick --copy-cmd " + shellQuote("tee "+copied) + " < " + shellQuote(fixture) + "; echo $? > " + shellQuote(rc)
		p.tmux("new-session", "-d", "-s", "pick", "-x", strconv.Itoa(c.w), "-y", strconv.Itoa(c.h), "sh", "-c", script)
		t.Cleanup(func() { exec.Command("tmux", "-S", p.sock, "kill-server").Run() })

		screen := p.waitFor("the list", func(s string) bool { return strings.Contains(s, "linkscan pick: 5 links") })
		for _, w := range c.want {
			if !hasLine(screen, w) {
				t.Errorf("%dx%d: no line %q on the screen:\n%s", c.w, c.h, w, screen)
			}
		}
		if c.noColor {
			if s := p.tmux("capture-pane", "-p", "-e", "-t", "pick"); colorSGR.MatchString(s) {
				t.Errorf("NO_COLOR: colours on the screen: %q", s)
			}
		}
		if c.w == 80 { // the search
			p.tmux("send-keys", "-t", "pick", "-l", "/wiki")
			p.waitFor("the search", func(s string) bool { return strings.Contains(s, "5 links, 1 shown") })
			p.tmux("send-keys", "-t", "pick", "Enter")
		} else {
			p.tmux("send-keys", "-t", "pick", "j", "j", "j", "j")
		}
		p.waitFor("the Safe Link selected", func(s string) bool { return strings.Contains(s, "›5 https://wiki.example.org/") })
		p.tmux("send-keys", "-t", "pick", "y")
		if got := waitFile(t, copied); got != pickWiki {
			t.Errorf("%dx%d: copied %q, want %q", c.w, c.h, got, pickWiki)
		}
		p.tmux("send-keys", "-t", "pick", "Enter")
		if got := waitFile(t, record); got != pickWiki+"\n" {
			t.Errorf("%dx%d: the browser was given %q, want %q", c.w, c.h, got, pickWiki)
		}
		p.waitFor("the status", func(s string) bool { return strings.Contains(s, "opened https://wiki.example") })
		p.tmux("send-keys", "-t", "pick", "q")
		if got := waitFile(t, rc); got != "0\n" {
			t.Errorf("%dx%d: exit status %q after q", c.w, c.h, got)
		}
	}
}

// colorSGR matches an SGR sequence that sets a colour.
var colorSGR = regexp.MustCompile(`\x1b\[(?:[0-9]+;)*(?:3[0-9]|4[0-9]|9[0-7]|10[0-7])[;m]`)

// hasLine reports whether screen has a line that is want, less trailing
// spaces.
func hasLine(screen, want string) bool {
	for _, l := range strings.Split(screen, "\n") {
		if strings.TrimRight(l, " ") == want {
			return true
		}
	}
	return false
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestPickCopyOSC52: without --copy-cmd, y writes the OSC 52 sequence
// that sets the clipboard to the target, base64 encoded, to the terminal.
func TestPickCopyOSC52(t *testing.T) {
	var tty strings.Builder
	msg := copyTarget(&tty, "", pickWiki)()
	want := "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(pickWiki)) + "\x07"
	if tty.String() != want {
		t.Errorf("wrote %q, want %q", tty.String(), want)
	}
	if d, ok := msg.(pick.Done); !ok || d.Err != nil || d.Target != pickWiki || d.Action != "copied" {
		t.Errorf("done: %+v", msg)
	}
}
