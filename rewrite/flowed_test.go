package rewrite

import (
	"strings"
	"testing"
)

// TestFlowedReadBack: in a format=flowed part a link written longer can
// make a reader join the next line to it (a mailer's wrap), once the
// quote depth is taken off; the check that refuses this for "> " lines
// of plain text covers flowed text too: the message is given back as it
// was, the change reported skipped (FuzzArchive found the flowed case
// written). The same lines in plain text keep their quote marks, do not
// join, and are written.
func TestFlowedReadBack(t *testing.T) {
	rs, err := Parse(strings.NewReader("[[rule]]\naction = \"archive\"\n"), "a.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		kind uint8
	}{{"plain", 0}, {"flowed", 1}} {
		for enc := range uint8(3) {
			msg := buildMessage(">ftp://000000000\n>0#00\n", c.kind, enc, false, "Date: Thu, 1 Apr 1999 10:00:00 -0500\n")
			out, chs, err := rs.Message(readOne(t, []byte(msg)), &Options{Archive: waybackArchive{}})
			if err != nil {
				t.Fatal(err)
			}
			if c.kind == 0 {
				// plain text keeps the quote marks: the lines do not join
				if string(out) == msg || len(chs) != 1 || chs[0].Skipped != "" {
					t.Errorf("plain, encoding %d: not written:\n%s", enc, changesJSON(chs))
				}
				continue
			}
			if string(out) != msg || len(chs) != 1 || chs[0].Skipped == "" {
				t.Errorf("%s, encoding %d: the joined link was written:\n%s\n%s", c.name, enc, out, changesJSON(chs))
			}
		}
	}
}
