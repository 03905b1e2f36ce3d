// Package pick is the link picker of `linkscan pick`: the links of a
// message, each with the line it stands on and the target it opens,
// listed full-screen for a reader to open or copy one, as urlscan and
// urlview do under mutt's pipe-message.
//
// It finds no link itself. Read takes a message (or an archive) through
// mailbox and scan.Message, the path of `linkscan scan`, and the target
// of each link is the one rewrite would write: security-gateway wrappers
// removed by rewrite.Unwrap, and, when a rules file is given, the rules
// applied as `linkscan rules test` applies them (Rules.Explain). Links
// with the same target are folded into one item with a count.
//
// The interface is a bubbletea model (github.com/charmbracelet/bubbletea
// v1, with bubbles' text input for search and lipgloss for styles).
// bubbletea was chosen over tview for three reasons: its model is a
// plain value updated by messages and rendered to a string, so the
// whole interface is tested without a terminal (model_test.go sends key
// messages and reads View); it takes any input and output, so the
// picker reads keys from /dev/tty while the message comes on standard
// input; and it hands the terminal over to a program and takes it back
// (tea.ExecProcess), which a text browser opened from the list needs.
// v1 rather than v2: it is the release bubbles and lipgloss are stable
// against.
//
// Nothing here opens the terminal or runs a browser on its own: the
// command gives the model an Opener and a Copier, and Command builds the
// browser's command line ($BROWSER, xdg-open, or --run 'CMD {}').
package pick
