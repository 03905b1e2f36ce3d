package extract

import (
	"fmt"
	"strings"

	"github.com/linkscan/linkscan/uri"
)

// makeLink fills a Link for URL text u written in form, starting at
// column position pos of window line k.
func (s *Scanner) makeLink(u []byte, form Form, k, pos int, start, end int64, probs []string) Link {
	if len(u) > s.opt.MaxLinkLength {
		u = u[:s.opt.MaxLinkLength]
		probs = append(probs, ProblemTooLong)
	}
	l := &s.lines[k]
	lk := Link{
		URL:      string(u),
		Form:     form,
		Start:    start,
		End:      end,
		Line:     l.num,
		Column:   runeCount(s.buf[l.s:l.s+pos]) + 1,
		Problems: probs,
	}
	full := lk.URL
	switch form {
	case FormAbbrev:
		if u[0]|0x20 == 'f' {
			full = "ftp://" + full
		} else {
			full = "http://" + full
		}
	case FormEmail:
		full = "mailto:" + full
	}
	canonicalize(&lk, full)
	return lk
}

func canonicalize(lk *Link, full string) {
	// uri.Canonical does not allocate for a URL already canonical; the
	// full parse runs only for the few links with problems.
	c, err := uri.Canonical(full)
	if c == "" {
		lk.Problems = append(lk.Problems, err.Error())
		return
	}
	lk.Canonical = c
	lk.Scheme = c[:strings.IndexByte(c, ':')]
	lk.Valid = err == nil
	if err == nil {
		return
	}
	u, _ := uri.Parse(full)
	for _, p := range u.Problems {
		lk.Problems = append(lk.Problems, fmt.Sprintf("%v (offset %d)", p.Err, p.Offset))
	}
}
