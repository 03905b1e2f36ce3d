package mailbox

import "bytes"

// QuoteFrom escapes a message body for an mboxrd file: every line that
// starts with "From " after any number of ">" gets one more ">".
func QuoteFrom(body []byte) []byte { return requote(body, true) }

// UnquoteFrom undoes QuoteFrom: one ">" is removed from every line that
// starts with ">From " after any number of further ">". For an mboxo file,
// where only "From " itself was quoted, it may remove a ">" that was
// written by hand; mboxo cannot be undone exactly.
func UnquoteFrom(body []byte) []byte { return requote(body, false) }

func requote(body []byte, quote bool) []byte {
	var out []byte
	for _, line := range lines(body) {
		k := 0
		for k < len(line) && line[k] == '>' {
			k++
		}
		switch {
		case !bytes.HasPrefix(line[k:], []byte("From ")):
			out = append(out, line...)
		case quote:
			out = append(append(out, '>'), line...)
		case k > 0:
			out = append(out, line[1:]...)
		default:
			out = append(out, line...)
		}
	}
	return out
}
