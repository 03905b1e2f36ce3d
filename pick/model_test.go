package pick

import (
	"io"
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

// testModel is the fixture's model with plain styles, sized w×h; open
// and copy record the target they are given.
func testModel(t *testing.T, w, h int, opened, copied *string) Model {
	t.Helper()
	items, _, err := Read(strings.NewReader(string(fixture(t))), "msg", Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	cfg := Config{Title: "Re: Minutes", Styles: NewStyles(r, true),
		Open: func(s string) tea.Cmd {
			*opened = s
			return func() tea.Msg { return Done{Action: "opened", Target: s} }
		},
		Copy: func(s string) tea.Cmd { *copied = s; return nil },
	}
	m, _ := New(items, cfg).Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m.(Model)
}

// keys sends each key to m; a key is a rune, or a name in braces.
func keys(m Model, ks ...string) (Model, tea.Cmd) {
	var cmd tea.Cmd
	for _, k := range ks {
		var msg tea.KeyMsg
		switch k {
		case "{enter}":
			msg = tea.KeyMsg{Type: tea.KeyEnter}
		case "{esc}":
			msg = tea.KeyMsg{Type: tea.KeyEscape}
		case "{down}":
			msg = tea.KeyMsg{Type: tea.KeyDown}
		case "{up}":
			msg = tea.KeyMsg{Type: tea.KeyUp}
		case "{end}":
			msg = tea.KeyMsg{Type: tea.KeyEnd}
		default:
			msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
		}
		var next tea.Model
		next, cmd = m.Update(msg)
		m = next.(Model)
	}
	return m, cmd
}

// checkScreen checks that the view has h lines none wider than w.
func checkScreen(t *testing.T, v string, w, h int) {
	t.Helper()
	lines := strings.Split(v, "\n")
	if len(lines) != h {
		t.Errorf("%d lines, want %d:\n%s", len(lines), h, v)
	}
	for _, l := range lines {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("line of width %d > %d: %q", n, w, l)
		}
	}
}

func TestViewSizes(t *testing.T) {
	var o, c string
	for _, sz := range [][2]int{{80, 24}, {40, 24}, {40, 10}, {20, 5}} {
		m := testModel(t, sz[0], sz[1], &o, &c)
		for range 6 {
			checkScreen(t, m.View(), sz[0], sz[1])
			m, _ = keys(m, "j")
			if it, _ := m.Selected(); !strings.Contains(m.View(), "›") || it.Target == "" {
				t.Errorf("%v: selection not on screen:\n%s", sz, m.View())
			}
		}
	}
}

func TestView80(t *testing.T) {
	var o, c string
	v := testModel(t, 80, 24, &o, &c).View()
	for _, want := range []string{
		"linkscan pick: 5 links · Re: Minutes",
		"›1 mailto:dev@lists.example.org",
		"   header List-Post: Subject: Re: Minutes of the November meeting",
		" 2 http://archive.example.net/reports/2026/november-meeting-report.html",
		"   part 1 (text/plain) line 2: > The old report is at <URL:http://archive.examp…",
		" 3 https://www.example.com/plain-in-html (×2)",
		" 5 https://wiki.example.org/minutes/2026-11-20",
		"   safelinks: https://nam12.safelinks.protection.outlook.com/?url=https%3A%2F%2…",
		"   part 2 (text/html) line 6: The minutes are on the project wiki now.",
		"↑↓/jk move  / search  ⏎ open  y copy  q quit",
	} {
		if !strings.Contains(v, want+"\n") && !strings.HasSuffix(v, want) {
			t.Errorf("no line %q in\n%s", want, v)
		}
	}
}

func TestMoveOpenCopy(t *testing.T) {
	var opened, copied string
	m := testModel(t, 80, 24, &opened, &copied)
	m, _ = keys(m, "k", "j", "j", "{down}", "{up}", "j")
	if it, _ := m.Selected(); it.Target != "https://docs.example.org/draft?id=42" {
		t.Errorf("selected %q after moves", it.Target)
	}
	m, _ = keys(m, "{end}", "j")
	m, cmd := keys(m, "{enter}")
	if opened != "https://wiki.example.org/minutes/2026-11-20" {
		t.Errorf("opened %q", opened)
	}
	next, _ := m.Update(cmd())
	if v := next.(Model).View(); !strings.Contains(v, "opened https://wiki.example.org/minutes/2026-11-20") {
		t.Errorf("no status after opening:\n%s", v)
	}
	keys(m, "g", "y")
	if copied != "mailto:dev@lists.example.org" {
		t.Errorf("copied %q", copied)
	}
	_, cmd = keys(m, "q")
	if cmd == nil || cmd() != tea.Quit() {
		t.Error("q does not quit")
	}
}

func TestSearch(t *testing.T) {
	var o, c string
	m := testModel(t, 80, 24, &o, &c)
	m, _ = keys(m, "/", "W", "i", "k", "i")
	if v := m.View(); !strings.Contains(v, "5 links, 1 shown") || !strings.Contains(v, "/Wiki") {
		t.Errorf("searching:\n%s", v)
	}
	m, _ = keys(m, "{enter}")
	if it, _ := m.Selected(); it.Target != "https://wiki.example.org/minutes/2026-11-20" {
		t.Errorf("selected %q after search", it.Target)
	}
	if o != "" {
		t.Errorf("enter that ends a search opened %q", o)
	}
	if keys(m, "{enter}"); o != it(m).Target {
		t.Errorf("enter after a search opened %q", o)
	}
	m, _ = keys(m, "j", "k") // moves stay within the one item
	if it, _ := m.Selected(); it.Target != "https://wiki.example.org/minutes/2026-11-20" {
		t.Errorf("selected %q", it.Target)
	}
	m, cmd := keys(m, "{esc}")
	if cmd != nil || len(m.shown) != 5 {
		t.Errorf("esc after a search: %d shown, cmd %v", len(m.shown), cmd)
	}
	m, _ = keys(m, "/", "n", "o", "p", "e")
	if !strings.Contains(m.View(), "no link matches") {
		t.Errorf("no match:\n%s", m.View())
	}
	m, _ = keys(m, "{esc}")
	if m.searching || len(m.shown) != 5 {
		t.Error("esc while searching does not drop the search")
	}
}

func it(m Model) Item { i, _ := m.Selected(); return i }

var colorSeq = regexp.MustCompile(`\x1b\[[0-9;]*(3[0-9]|9[0-7]|4[0-9]|10[0-7])[;m]`)

func TestNoColor(t *testing.T) {
	items, _, err := Read(strings.NewReader(string(fixture(t))), "msg", Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	plain := New(items, Config{Styles: NewStyles(r, false)}).View()
	if colorSeq.MatchString(plain) {
		t.Errorf("colour without colour: %q", plain)
	}
	if !strings.Contains(plain, "\x1b[") {
		t.Error("no attributes without colour: the selection is not shown in reverse")
	}
	if colored := New(items, Config{Styles: NewStyles(r, true)}).View(); !colorSeq.MatchString(colored) {
		t.Errorf("no colour with colour: %q", colored)
	}
}

// TestKeysReadTogether: keys typed faster than the terminal is read come
// as one message of several runes; each counts.
func TestKeysReadTogether(t *testing.T) {
	var o, c string
	m := testModel(t, 80, 24, &o, &c)
	next, _ := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jjj")})
	m = next.(Model)
	if it(m).Target != "https://docs.example.org/draft?id=42" {
		t.Errorf("after jjj: %q", it(m).Target)
	}
	next, _ = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("g/wiki")})
	m = next.(Model)
	if !m.searching || m.search.Value() != "wiki" || len(m.shown) != 1 {
		t.Errorf("after g/wiki: searching %v, %q, %d shown", m.searching, m.search.Value(), len(m.shown))
	}
	next, _ = m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	_, cmd := next.(Model).Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jqj")})
	if cmd == nil || cmd() != tea.Quit() {
		t.Error("q among other keys does not quit")
	}
}
