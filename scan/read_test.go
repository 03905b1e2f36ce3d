package scan

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/linkscan/linkscan/internal/ordered"
	"github.com/linkscan/linkscan/mailbox"
)

// readEvent is what ReadInputs put in one slot, as text.
type readEvent struct{ s string }

// TestReadInputs checks the order and kinds of what ReadInputs puts on the
// feed: each input's messages, then its error (one that could not be
// opened, one cut off inside its compression), then its end; the error of
// the last input is not held back; a message's error names its input.
func TestReadInputs(t *testing.T) {
	mbox := "From a@example.org Mon Mar  7 10:00:00 1994\nSubject: one\n\nhttp://one.example/\n\n" +
		"From b@example.org Mon Mar  7 10:00:00 1994\nSubject: two\n\nhttp://two.example/\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(strings.Repeat(mbox, 200)))
	zw.Close()
	cut := gz.Bytes()[:gz.Len()/2]
	open := func(name string) (*mailbox.Reader, error) {
		switch name {
		case "a.mbox":
			return mailbox.NewReader(strings.NewReader(mbox), name, &mailbox.Options{})
		case "cut.gz":
			return mailbox.NewReader(bytes.NewReader(cut), name, &mailbox.Options{})
		}
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
	}
	for _, withEnd := range []bool{false, true} {
		for _, inputs := range [][]string{
			{"a.mbox", "missing", "a.mbox"},
			{"a.mbox", "cut.gz"},
			{"missing"},
			{"a.mbox", "a.mbox", "missing"},
		} {
			name := fmt.Sprintf("%v/end=%v", inputs, withEnd)
			t.Run(name, func(t *testing.T) {
				var want []string
				for _, in := range inputs {
					switch in {
					case "a.mbox":
						want = append(want, "msg a.mbox one", "msg a.mbox two")
					case "missing":
						want = append(want, "err missing")
					case "cut.gz":
						want = append(want, "msgs cut.gz", "err cut.gz")
					}
					if withEnd {
						want = append(want, "end "+in)
					}
				}
				h := &Inputs[readEvent]{
					Open: open,
					Message: func(it *readEvent, in string, m *mailbox.Message) {
						m.Parse()
						it.s = "msg " + in + " " + m.Subject
					},
					Err: func(it *readEvent, in string, err error) {
						if !strings.Contains(err.Error(), in) {
							t.Errorf("error %q does not name %s", err, in)
						}
						it.s = "err " + in
					},
				}
				if withEnd {
					h.End = func(it *readEvent, in string) { it.s = "end " + in }
				}
				var got []string
				err := ordered.Run(ordered.Options{Jobs: 2, BatchItems: 3},
					func(f *ordered.Feed[readEvent]) {
						if !ReadInputs(f, inputs, h) {
							t.Error("ReadInputs stopped, but nothing stopped the pipeline")
						}
					},
					func(*readEvent) {},
					func(it *readEvent) error {
						s := it.s
						// a cut file gives as many messages as its
						// decompressed part holds: fold them
						if strings.HasPrefix(s, "msg cut.gz") {
							if len(got) > 0 && got[len(got)-1] == "msgs cut.gz" {
								return nil
							}
							s = "msgs cut.gz"
						}
						got = append(got, s)
						return nil
					},
					func(it *readEvent) { *it = readEvent{} })
				if err != nil {
					t.Fatal(err)
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			})
		}
	}
}

// TestReadInputsStops checks that ReadInputs gives up when the consumer
// fails, and says so.
func TestReadInputsStops(t *testing.T) {
	mbox := strings.Repeat("From a@example.org Mon Mar  7 10:00:00 1994\nSubject: x\n\nbody\n\n", 1000)
	h := &Inputs[readEvent]{
		Open: func(name string) (*mailbox.Reader, error) {
			return mailbox.NewReader(strings.NewReader(mbox), name, &mailbox.Options{})
		},
		Message: func(it *readEvent, in string, m *mailbox.Message) { it.s = in },
		Err:     func(it *readEvent, in string, err error) { it.s = "err" },
	}
	stop := errors.New("consumer failed")
	var stopped bool
	n := 0
	err := ordered.Run(ordered.Options{Jobs: 1, BatchItems: 1},
		func(f *ordered.Feed[readEvent]) { stopped = !ReadInputs(f, []string{"a", "b", "c"}, h) },
		func(*readEvent) {},
		func(*readEvent) error {
			if n++; n == 5 {
				return stop
			}
			return nil
		},
		func(it *readEvent) { *it = readEvent{} })
	if !errors.Is(err, stop) {
		t.Fatalf("Run: %v, want %v", err, stop)
	}
	if !stopped {
		t.Error("ReadInputs read on after the consumer failed")
	}
}
