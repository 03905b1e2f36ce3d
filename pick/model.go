package pick

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/linkscan/linkscan/internal/termesc"
)

// Done reports the end of an action the model asked for (opening or
// copying a target); the model shows it on its status line.
type Done struct {
	Action string // "opened", "copied"
	Target string
	Err    error
}

// Styles are the looks of the list. The selected item is also marked
// with "›", so that it shows without any style (NO_COLOR on a terminal
// without attributes).
type Styles struct {
	Title, Target, Selected, Wrapped, Context, Status lipgloss.Style
}

// NewStyles returns the styles, made with renderer r (the terminal's:
// its colour profile). Without colour (NO_COLOR set) only bold, faint
// and reverse video are used.
func NewStyles(r *lipgloss.Renderer, color bool) Styles {
	s := Styles{
		Title:    r.NewStyle().Bold(true),
		Target:   r.NewStyle(),
		Selected: r.NewStyle().Reverse(true).Bold(true),
		Wrapped:  r.NewStyle().Faint(true),
		Context:  r.NewStyle(),
		Status:   r.NewStyle().Bold(true),
	}
	if color {
		s.Title = s.Title.Foreground(lipgloss.Color("12"))
		s.Target = s.Target.Foreground(lipgloss.Color("14"))
		s.Context = s.Context.Foreground(lipgloss.Color("7"))
		s.Status = s.Status.Foreground(lipgloss.Color("11"))
	}
	return s
}

// Config is what a Model needs besides the items.
type Config struct {
	Title  string
	Styles Styles
	// Open and Copy return the command that opens or copies a target;
	// it ends with a Done message. nil: the key does nothing.
	Open, Copy func(target string) tea.Cmd
}

// Model is the picker's state: the items, the ones the search leaves,
// the selection and the window's size.
type Model struct {
	cfg       Config
	items     []Item
	shown     []int // indices into items of those the search leaves
	sel       int   // index into shown
	top       int   // index into shown of the first item on screen
	width     int
	height    int
	search    textinput.Model
	searching bool
	status    string
}

// New returns the model of a list of items, sized 80x24 until the
// terminal says otherwise.
func New(items []Item, cfg Config) Model {
	ti := textinput.New()
	ti.Prompt = "/"
	m := Model{cfg: cfg, items: items, width: 80, height: 24, search: ti}
	m.filter()
	return m
}

// Init starts nothing: the model waits for keys.
func (m Model) Init() tea.Cmd { return nil }

// Selected returns the selected item, false when none is shown.
func (m Model) Selected() (Item, bool) {
	if m.sel < 0 || m.sel >= len(m.shown) {
		return Item{}, false
	}
	return m.items[m.shown[m.sel]], true
}

// Update handles keys, the window's size and the end of actions.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 1), max(msg.Height, 1)
		m.scroll()
		return m, nil
	case Done:
		m.status = doneStatus(msg)
		return m, nil
	case tea.KeyMsg:
		if m.searching {
			return m.searchKey(msg)
		}
		if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
			return m.runes(msg.Runes)
		}
		return m.key(msg)
	}
	return m, nil
}

// runes handles keys typed faster than they were read, which come as
// one message ("jjj"), one at a time; a key that ends the list or asks
// for more than a move stops there, and the runes after it are dropped.
func (m Model) runes(rs []rune) (tea.Model, tea.Cmd) {
	for i, r := range rs {
		next, cmd := m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
		m = next.(Model)
		if cmd != nil || m.searching {
			if m.searching && i+1 < len(rs) {
				return m.searchKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: rs[i+1:]})
			}
			return m, cmd
		}
	}
	return m, nil
}

// doneStatus is the status line after an action.
func doneStatus(d Done) string {
	if d.Err != nil {
		return d.Action + ": " + d.Err.Error()
	}
	return d.Action + " " + d.Target
}

// key handles a key in the list.
func (m Model) key(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	m.status = ""
	switch k.String() {
	case "q", "ctrl+c":
		return m, tea.Quit
	case "esc":
		if m.search.Value() == "" {
			return m, tea.Quit
		}
		m.search.SetValue("")
		m.filter()
	case "up", "k", "ctrl+p":
		m.move(-1)
	case "down", "j", "ctrl+n", "tab":
		m.move(1)
	case "pgup", "ctrl+b":
		m.move(-m.pageItems())
	case "pgdown", "ctrl+f", " ":
		m.move(m.pageItems())
	case "home", "g":
		m.move(-len(m.shown))
	case "end", "G":
		m.move(len(m.shown))
	case "/":
		m.searching = true
		return m, m.search.Focus()
	case "enter":
		return m, m.act(m.cfg.Open)
	case "y":
		return m, m.act(m.cfg.Copy)
	}
	return m, nil
}

// act runs an action on the selected item's target.
func (m Model) act(fn func(string) tea.Cmd) tea.Cmd {
	it, ok := m.Selected()
	if !ok || fn == nil {
		return nil
	}
	return fn(it.Target)
}

// searchKey handles a key while the search is typed: the list follows
// each change; Enter keeps the search, Esc drops it.
func (m Model) searchKey(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch k.String() {
	case "enter":
		m.searching = false
		m.search.Blur()
		return m, nil
	case "up", "down":
		m.searching = false
		m.search.Blur()
		return m.key(k)
	case "esc", "ctrl+c":
		m.searching = false
		m.search.Blur()
		m.search.SetValue("")
		m.filter()
		return m, nil
	}
	var cmd tea.Cmd
	m.search, cmd = m.search.Update(k)
	m.filter()
	return m, cmd
}

// move moves the selection by n items, within the list.
func (m *Model) move(n int) {
	m.sel = min(max(m.sel+n, 0), max(len(m.shown)-1, 0))
	m.scroll()
}

// filter keeps the items whose target, link or context holds the
// search, ignoring case, and selects the first.
func (m *Model) filter() {
	q := strings.ToLower(m.search.Value())
	m.shown = m.shown[:0]
	for i := range m.items {
		it := &m.items[i]
		if q == "" || strings.Contains(strings.ToLower(it.Target+"\x00"+it.URL+"\x00"+it.Context+"\x00"+it.Where), q) {
			m.shown = append(m.shown, i)
		}
	}
	m.sel, m.top = 0, 0
}

// listHeight is the number of lines for items: the window less the
// title and the status line.
func (m *Model) listHeight() int { return max(m.height-2, 1) }

// pageItems is how many items a page key moves over.
func (m *Model) pageItems() int { return max(m.listHeight()/3, 1) }

// scroll moves the window over the list so the selection is on it.
func (m *Model) scroll() {
	if m.sel < m.top {
		m.top = m.sel
	}
	for m.top < m.sel {
		h := 0
		for i := m.top; i <= m.sel; i++ {
			h += len(m.block(i))
		}
		if h <= m.listHeight() {
			break
		}
		m.top++
	}
}

// View draws the title, the items that fit and the status line, each
// line cut to the window's width.
func (m Model) View() string {
	var lines []string
	title := fmt.Sprintf("linkscan pick: %s", plural(len(m.items), "link"))
	if len(m.shown) != len(m.items) {
		title += fmt.Sprintf(", %d shown", len(m.shown))
	}
	if m.cfg.Title != "" {
		title += " · " + termesc.String(m.cfg.Title)
	}
	lines = append(lines, m.cfg.Styles.Title.Render(m.cut(title)))
	room := m.listHeight()
	for i := m.top; i < len(m.shown) && room > 0; i++ {
		b := m.block(i)
		if len(b) > room {
			b = b[:room]
		}
		lines = append(lines, b...)
		room -= len(b)
	}
	if len(m.shown) == 0 {
		lines = append(lines, m.cut("  no link matches"))
		room--
	}
	for ; room > 0; room-- {
		lines = append(lines, "")
	}
	lines = append(lines, m.footer())
	return strings.Join(lines, "\n")
}

// footer is the search being typed, a status or the keys.
func (m Model) footer() string {
	switch {
	case m.searching:
		return m.cut(m.search.View())
	case m.status != "":
		return m.cfg.Styles.Status.Render(m.cut(termesc.String(m.status)))
	case m.search.Value() != "":
		return m.cut("/" + termesc.String(m.search.Value()) + "  esc: all  q: quit")
	}
	return m.cfg.Styles.Wrapped.Render(m.cut("↑↓/jk move  / search  ⏎ open  y copy  q quit"))
}

// block is the lines of the shown item i: its number and target (the
// whole target, wrapped, when selected), the link as written when the
// target differs, and its place and context line.
func (m Model) block(i int) []string {
	it := &m.items[m.shown[i]]
	st := m.cfg.Styles
	num := strconv.Itoa(m.shown[i] + 1)
	pad := len(strconv.Itoa(len(m.items)))
	mark := " "
	if i == m.sel {
		mark = "›"
	}
	head := fmt.Sprintf("%s%*s ", mark, pad, num)
	indent := strings.Repeat(" ", pad+2)
	target := termesc.String(it.Target)
	if it.Count > 1 {
		target += fmt.Sprintf(" (×%d)", it.Count)
	}
	var lines []string
	if i == m.sel {
		w := max(m.width-len(indent), 8)
		wrapped := strings.Split(ansi.Hardwrap(target, w, true), "\n")
		if len(wrapped) > 4 {
			wrapped = append(wrapped[:3], ansi.Truncate(strings.Join(wrapped[3:], ""), w, "…"))
		}
		for j, l := range wrapped {
			p := indent
			if j == 0 {
				p = head
			}
			lines = append(lines, st.Selected.Render(m.cut(p+l)))
		}
	} else {
		lines = append(lines, st.Target.Render(m.cut(head+target)))
	}
	if it.Wrapped() {
		via := "as written"
		if len(it.Wrappers) > 0 {
			via = string(it.Wrappers[0])
			for _, w := range it.Wrappers[1:] {
				via += "+" + string(w)
			}
		}
		if len(it.Rules) > 0 {
			via = strings.Join(it.Rules, ", ")
		}
		lines = append(lines, st.Wrapped.Render(m.cut(indent+via+": "+termesc.String(it.URL))))
	} else if it.Problem != "" {
		lines = append(lines, st.Wrapped.Render(m.cut(indent+termesc.String(it.Problem))))
	}
	ctx := it.Where
	if it.Context != "" {
		ctx += ": " + termesc.String(it.Context)
	}
	lines = append(lines, st.Context.Render(m.cut(indent+ctx)))
	return lines
}

// cut cuts s to the window's width.
func (m Model) cut(s string) string { return ansi.Truncate(s, m.width, "…") }

// plural is "1 link", "2 links".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
