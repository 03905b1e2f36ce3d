package mailbox

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/emersion/go-message"
	// go-message decodes charsets through a package-level hook, which this
	// import sets; linkscan's own code keeps its decoder in a field and
	// does not depend on it.
	_ "github.com/emersion/go-message/charset"
)

// TestGoMessageCrossCheck reads well-formed messages with go-message too:
// every leaf part it finds, we find, with the same media type and the same
// decoded text (go-message does not descend into message/rfc822, nor
// report preamble and epilogue, so those are left out of the comparison).
func TestGoMessageCrossCheck(t *testing.T) {
	for _, name := range []string{"mime.eml", "bnews.txt"} {
		data, err := os.ReadFile(mailDir + name)
		if err != nil {
			t.Fatal(err)
		}
		// go-message reads no header that starts with a "From " line
		if bytes.HasPrefix(data, []byte("From ")) {
			data = data[bytes.IndexByte(data, '\n')+1:]
		}
		e, err := message.Read(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: go-message: %v", name, err)
		}
		var theirs []string
		err = e.Walk(func(path []int, ent *message.Entity, err error) error {
			if err != nil {
				return err
			}
			mt, params, _ := ent.Header.ContentType()
			if strings.HasPrefix(mt, "multipart/") || mt == "message/rfc822" {
				return nil
			}
			if mt == "" {
				mt = "text/plain"
			}
			body, _ := io.ReadAll(ent.Body)
			s := mt
			if strings.HasPrefix(mt, "text/plain") && params["format"] == "" {
				s += " " + string(body)
			}
			theirs = append(theirs, s)
			return nil
		})
		if err != nil {
			t.Fatalf("%s: go-message walk: %v", name, err)
		}
		var ours []string
		m := openAll(t, mailDir+name, nil)[0]
		inner := ""
		for _, p := range m.Parts() {
			if p.Where != "body" || p.ContentType == "message/rfc822" {
				if p.ContentType == "message/rfc822" {
					inner = p.Path + "."
				}
				continue
			}
			if inner != "" && strings.HasPrefix(p.Path, inner) {
				continue // inside message/rfc822, where go-message does not go
			}
			s := p.ContentType
			if p.ContentType == "text/plain" && p.Params["format"] == "" {
				s += " " + string(p.Text)
			}
			ours = append(ours, s)
		}
		if strings.Join(ours, "\n--\n") != strings.Join(theirs, "\n--\n") {
			t.Errorf("%s: parts differ from go-message's\nours   %q\ntheirs %q", name, ours, theirs)
		}
	}
}
