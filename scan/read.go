package scan

import (
	"errors"
	"fmt"
	"io"

	"github.com/linkscan/linkscan/internal/ordered"
	"github.com/linkscan/linkscan/mailbox"
)

// Inputs says what ReadInputs does with what it reads. Each fill function
// is given a fresh slot of the pipeline's feed to fill; ReadInputs
// commits it.
type Inputs[T any] struct {
	// Open opens an input.
	Open Opener
	// Progress, if not nil, is told of the bytes read.
	Progress Progress
	// Begin, if not nil, is called before an input is opened (a caller
	// that handles mailbox.Options.OnSkip learns there whose entries
	// follow).
	Begin func(in string)
	// Message fills a slot with a message of input in.
	Message func(it *T, in string, m *mailbox.Message)
	// Err fills a slot with the error of input in: it could not be
	// opened, or could not be read on (err names the input).
	Err func(it *T, in string, err error)
	// End, if not nil, fills a slot with the end of input in, after its
	// last message or its error.
	End func(it *T, in string)
}

// ReadInputs is the reader of an internal/ordered pipeline over archive
// inputs: it opens each input in turn, splits it into messages and puts
// them on f in order, each counted by its size against the in-flight
// bound, then its error if it has one and its end. Messages of standard
// input ("-"), which may be a pipe fed slowly, go on one batch at a time;
// the batch of each input is flushed at its end, so that an input's
// error is never held back by the next. It returns false when the
// pipeline stopped (the consumer failed).
//
// scan.Run and linkscan rewrite read their inputs through it, so that
// they split, count and order them alike.
func ReadInputs[T any](f *ordered.Feed[T], inputs []string, h *Inputs[T]) bool {
	putErr := func(in string, err error) bool {
		it := f.Slot()
		h.Err(it, in, err)
		return f.Commit(0)
	}
	end := func(in string) bool {
		if h.End == nil {
			return true
		}
		it := f.Slot()
		h.End(it, in)
		return f.Commit(0)
	}
	for _, in := range inputs {
		f.SetBatchItems(0)
		if in == "-" {
			f.SetBatchItems(1)
		}
		if h.Begin != nil {
			h.Begin(in)
		}
		r, err := h.Open(in)
		if err != nil {
			if !putErr(in, err) || !end(in) || !f.Flush() {
				return false
			}
			continue
		}
		var last int64
		for {
			m, err := r.Next()
			if h.Progress != nil {
				n := r.BytesRead()
				h.Progress.BytesRead(n - last)
				last = n
			}
			if m != nil {
				it := f.Slot()
				h.Message(it, in, m)
				if !f.Commit(int64(len(m.Raw))) {
					r.Close()
					return false
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				var ie *mailbox.InputError
				if !errors.As(err, &ie) { // an InputError names the file already
					err = fmt.Errorf("%s: %w", in, err)
				}
				if !putErr(in, err) {
					r.Close()
					return false
				}
				break
			}
		}
		r.Close()
		if !end(in) || !f.Flush() {
			return false
		}
	}
	return true
}
