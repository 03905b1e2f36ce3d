package audit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/textproto"
	"net/url"
	"strings"

	"github.com/jlaffaye/ftp"
)

// ftpChecker checks ftp: URLs: connect, log in (anonymously unless the URL
// names a user), then SIZE the path, or LIST it when it names a directory
// or SIZE is refused (CWD, or LIST for the login directory).
type ftpChecker struct {
	cfg *Config
	dl  *dialer
}

func (f *ftpChecker) check(ctx context.Context, u *url.URL) Check {
	var c Check
	c.FinalURL = Redact(u.String())
	fail := func(err error) Check {
		c.Status = Failing
		var pe *textproto.Error
		if errors.As(err, &pe) {
			c.Class, c.Error = ClassProtocol, fmt.Sprintf("FTP %d %s", pe.Code, strings.TrimSpace(pe.Msg))
			if pe.Code == 550 || pe.Code == 450 {
				c.Class = ClassNotFound
			}
			c.retry = pe.Code == 421
		} else {
			c.Class, c.Error = classify(err)
			c.retry = c.Class == ClassTimeout || c.Class == ClassNetwork
		}
		c.Error = redactErr(c.Error, u)
		return c
	}
	port := u.Port()
	if port == "" {
		port = "21"
	}
	dial := func(network, address string) (net.Conn, error) {
		conn, err := f.dl.DialContext(ctx, network, address)
		if err != nil {
			return nil, err
		}
		if d, ok := ctx.Deadline(); ok {
			conn.SetDeadline(d)
		}
		return conn, nil
	}
	c.Attempts = 1
	sc, err := ftp.Dial(net.JoinHostPort(u.Hostname(), port), ftp.DialWithContext(ctx), ftp.DialWithDialFunc(dial),
		ftp.DialWithDisabledMLSD(true))
	if err != nil {
		return fail(err)
	}
	defer sc.Quit()
	user, pass := "anonymous", "linkscan@"
	if u.User != nil {
		user = u.User.Username()
		pass, _ = u.User.Password()
	}
	if err := sc.Login(user, pass); err != nil {
		return fail(err)
	}
	p := u.Path
	if p == "" {
		p = "/"
	}
	// RFC 1738: the path is relative to the login directory; its
	// segments are what CWD would take. Most servers take the whole path.
	p = strings.TrimPrefix(p, "/")
	if p == "" || strings.HasSuffix(p, "/") || strings.HasSuffix(u.Path, ";type=d") {
		p = strings.TrimSuffix(strings.TrimSuffix(p, ";type=d"), "/")
		// a directory: CWD into it (LIST of a missing directory is an
		// empty success on some servers, vsftpd among them); the login
		// directory is listed, which tries the data connection too
		var err error
		if p == "" {
			_, err = sc.List("")
		} else {
			err = sc.ChangeDir(p)
		}
		if err != nil {
			return fail(err)
		}
		c.Status = OK
		return c
	}
	p = strings.TrimSuffix(strings.TrimSuffix(p, ";type=a"), ";type=i")
	if _, err := sc.FileSize(p); err == nil {
		c.Status = OK
		return c
	}
	// A directory, or a server without SIZE: CWD into it.
	if err := sc.ChangeDir(p); err != nil {
		return fail(err)
	}
	c.Status = OK
	return c
}
