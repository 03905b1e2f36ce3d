package audit

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/url"
	"strings"
)

// gopherPeek is how many bytes of a gopher answer are read.
const gopherPeek = 1024

// gopherChecker checks gopher: URLs (RFC 4266): the selector is sent over
// TCP and the first bytes of the answer read. An empty answer, or one
// whose first line is an error item (type 3), fails.
type gopherChecker struct {
	dl *dialer
}

// gopherSelector returns the item type and selector of a gopher URL path:
// "/1/pub" is type '1', selector "/pub"; "" and "/" are the root menu.
func gopherSelector(u *url.URL) (byte, string) {
	p := u.Path
	if p == "" || p == "/" {
		return '1', ""
	}
	p = strings.TrimPrefix(p, "/")
	// A %09 in the URL (a tab once decoded) separates a search string;
	// it is sent as it is.
	return p[0], p[1:]
}

func (g *gopherChecker) check(ctx context.Context, u *url.URL) Check {
	c := Check{Attempts: 1, FinalURL: Redact(u.String())}
	fail := func(cl Class, msg string) Check {
		c.Status, c.Class, c.Error = Failing, cl, msg
		c.retry = cl == ClassTimeout || cl == ClassNetwork
		return c
	}
	_, sel := gopherSelector(u)
	if strings.ContainsAny(sel, "\r\n") {
		return fail(ClassSyntax, "selector holds a line break")
	}
	port := u.Port()
	if port == "" {
		port = "70"
	}
	conn, err := g.dl.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		cl, msg := classify(err)
		return fail(cl, msg)
	}
	defer conn.Close()
	if d, ok := ctx.Deadline(); ok {
		conn.SetDeadline(d)
	}
	if _, err := io.WriteString(conn, sel+"\r\n"); err != nil {
		cl, msg := classify(err)
		return fail(cl, msg)
	}
	buf := make([]byte, gopherPeek)
	n, err := io.ReadFull(conn, buf)
	buf = buf[:n]
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		cl, msg := classify(err)
		return fail(cl, msg)
	}
	if n == 0 {
		return fail(ClassProtocol, "empty answer")
	}
	line := buf
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	if line[0] == '3' && bytes.Count(line, []byte{'\t'}) >= 1 {
		msg := strings.TrimSpace(string(line[1:]))
		if i := strings.IndexByte(msg, '\t'); i >= 0 {
			msg = msg[:i]
		}
		return fail(ClassNotFound, "gopher error item: "+clip(msg, 200))
	}
	c.Status = OK
	return c
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
