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
	for i := 0; i < len(body); {
		j := bytes.IndexByte(body[i:], '\n')
		next := len(body)
		if j >= 0 {
			next = i + j + 1
		}
		line := body[i:next]
		k := 0
		for k < len(line) && line[k] == '>' {
			k++
		}
		if bytes.HasPrefix(line[k:], []byte("From ")) {
			if quote {
				out = append(out, '>')
				out = append(out, line...)
			} else if k > 0 {
				out = append(out, line[1:]...)
			} else {
				out = append(out, line...)
			}
		} else {
			out = append(out, line...)
		}
		i = next
	}
	return out
}
