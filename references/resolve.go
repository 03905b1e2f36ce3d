package references

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/uri"
)

// Resolver resolves references against a Store.
type Resolver struct {
	Store Store
	// LocalHosts are further names of the archive's own news server, for
	// nntp:// links; the hosts in the archive's Xref: headers count too.
	LocalHosts []string
	// Incomplete says that building the index failed (a full disk, an
	// index another run took over): a reference the index does not hold
	// may be in the archive, so it gets Status Error, not Dangling. cid:
	// links, found in their own message, are not affected.
	Incomplete bool
	// Inputs are the run's inputs as they were named: a target in one of
	// them, or in a directory named so, is shown under that name (the
	// index knows files by their absolute paths, FileKey), as the
	// records' path; other targets as DisplayPath shows them.
	Inputs []string

	// Refresh, if set, indexes again a target file whose size or
	// modification time is no longer what the index recorded (an
	// Indexer's Refresh); the lookup is then made again. Without it, or
	// when it fails, the file's locations are left out as a gone file's
	// are.
	Refresh func(file string) error
	// Notice, if set, is told once of each target file gone or changed
	// since it was indexed, and of an index that holds files not
	// completely indexed.
	Notice func(msg string)

	showOnce sync.Once
	wd       string      // the working directory
	named    [][2]string // FileKey of an input, and its name

	fresh freshness // what was found of the target files
}

// show returns how the target file key is shown (Inputs, DisplayPath).
func (r *Resolver) show(key string) string {
	r.showOnce.Do(func() {
		r.wd, _ = os.Getwd()
		if wd, err := filepath.EvalSymlinks(r.wd); err == nil {
			r.wd = wd // as the keys are (FileKey)
		}
		for _, in := range r.Inputs {
			if in != "-" {
				r.named = append(r.named, [2]string{FileKey(in), in})
			}
		}
	})
	for _, n := range r.named {
		if key == n[0] {
			return n[1]
		}
		if rest, ok := strings.CutPrefix(key, n[0]+string(filepath.Separator)); ok {
			return filepath.Join(n[1], rest)
		}
	}
	return DisplayPath(key, r.wd)
}

// Context is the message a link was found in: cid: links resolve inside
// it.
type Context struct {
	Loc   Location        // the message (MessageID set)
	Parts []*mailbox.Part // its parts, with Content-IDs
	Part  string          // the path of the part the link is in
}

// Handles reports whether Resolve deals with links of this scheme.
func Handles(scheme string) bool {
	switch scheme {
	case "mid", "cid", "news", "nntp":
		return true
	}
	return false
}

// Resolve resolves one link, given in canonical form. It returns a zero
// Resolution for schemes it does not handle. When the index cannot be
// read, the Resolution has Status Error and the error is returned: a
// failed lookup is never reported as Dangling.
func (r *Resolver) Resolve(canonical string, ctx *Context) (Resolution, error) {
	u, _ := uri.Parse(canonical)
	return r.ResolveURL(u, ctx)
}

// ResolveURL is Resolve for a URL already parsed (from its canonical
// form, or any form: identifiers are percent-decoded by the parse), so
// that a caller that holds the parsed URL does not parse it again. A nil
// u, or a scheme not handled, gives a zero Resolution.
func (r *Resolver) ResolveURL(u *uri.URL, ctx *Context) (Resolution, error) {
	if u == nil || !Handles(u.Scheme) {
		return Resolution{}, nil
	}
	res, err := r.resolveFresh(u, ctx)
	if err != nil {
		return Resolution{Status: Error}, &LookupError{URL: u.String(), Err: err}
	}
	if res.Status == Dangling && u.Scheme != "cid" && r.incomplete() {
		r.fresh.uncertain.Add(1)
		return Resolution{Status: Error}, nil
	}
	if len(res.Targets) > 0 && u.Scheme != "cid" {
		// the index knows files by their absolute paths (FileKey)
		t := make([]Location, len(res.Targets))
		for i, l := range res.Targets {
			l.File = r.show(l.File)
			t[i] = l
		}
		res.Targets = t
	}
	return res, nil
}

// LookupError is the error of a lookup that failed: the index could not
// be read. errors.Is(err, mailbox.ErrUnreadable) is true for it, so that
// a caller counts it as input that could not be read, not as damage in a
// message.
type LookupError struct {
	URL string
	Err error
}

func (e *LookupError) Error() string { return "cannot look up " + e.URL + ": " + e.Err.Error() }

// Unwrap returns the store's error.
func (e *LookupError) Unwrap() error { return e.Err }

// Is reports mailbox.ErrUnreadable as matching.
func (e *LookupError) Is(target error) bool { return target == mailbox.ErrUnreadable }

func (r *Resolver) resolve(u *uri.URL, ctx *Context) (Resolution, error) {
	switch v := u.View().(type) {
	case uri.MID:
		id := trimID(v.MessageID)
		if v.ContentID != "" {
			locs, err := r.located(r.Store.Parts(id, trimID(v.ContentID)))
			return partsResolution(locs), err
		}
		locs, err := r.located(r.Store.Messages(id))
		return messageResolution(locs), err
	case uri.CID:
		return cidResolution(trimID(v.ContentID), ctx), nil
	case uri.News:
		switch {
		case v.All || strings.ContainsAny(v.Group, "*?"):
			return Resolution{Status: NotATarget}, nil
		case v.MessageID != "":
			// message-ids are the same on every server (RFC 5538 §2.2)
			locs, err := r.located(r.Store.Messages(trimID(v.MessageID)))
			return messageResolution(locs), err
		case v.Server != "":
			if local, err := r.local(v.Server); err != nil || !local {
				return Resolution{Status: ExternalServer}, err
			}
		}
		return r.group(v.Group)
	case uri.NNTP:
		if local, err := r.local(u.Host); err != nil || !local {
			return Resolution{Status: ExternalServer}, err
		}
		if v.Article == "" {
			return r.group(v.Group)
		}
		locs, err := r.located(r.Store.Article(v.Group + ":" + v.Article))
		return messageResolution(locs), err
	}
	return Resolution{Status: Dangling}, nil
}

func (r *Resolver) local(host string) (bool, error) {
	for _, h := range r.LocalHosts {
		if strings.EqualFold(h, host) {
			return true, nil
		}
	}
	return r.Store.HasHost(host)
}

func (r *Resolver) group(g string) (Resolution, error) {
	ok, err := r.Store.HasGroup(g)
	if err != nil || !ok {
		return Resolution{Status: Dangling}, err
	}
	return Resolution{Status: Resolved, Targets: []Location{{Group: g}}}, nil
}

// trimID drops the angle brackets some writers leave in (mid:<x@y>).
func trimID(s string) string {
	return strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), "<"), ">")
}

// messageResolution: copies of one message are one target in several
// places, so any number of locations resolves.
func messageResolution(locs []Location) Resolution {
	if len(locs) == 0 {
		return Resolution{Status: Dangling}
	}
	return Resolution{Status: Resolved, Targets: locs}
}

// partsResolution: copies of a message repeat its part paths; two
// different paths are two different parts, and ambiguous.
func partsResolution(locs []Location) Resolution {
	if len(locs) == 0 {
		return Resolution{Status: Dangling}
	}
	for _, l := range locs[1:] {
		if l.Part != locs[0].Part {
			return Resolution{Status: Ambiguous, Targets: locs}
		}
	}
	return Resolution{Status: Resolved, Targets: locs}
}

// cidResolution looks for the Content-ID in the enclosing
// multipart/related first, then in the whole message (RFC 2387, RFC 2392).
func cidResolution(cid string, ctx *Context) Resolution {
	if ctx == nil {
		return Resolution{Status: Dangling}
	}
	var from *mailbox.Part
	for _, p := range ctx.Parts {
		if p.Path == ctx.Part {
			from = p
			break
		}
	}
	var all, near []*mailbox.Part
	for _, p := range ctx.Parts {
		if p.ContentID != cid {
			continue
		}
		all = append(all, p)
		if from != nil && from.InRelated && p.InRelated && p.Related == from.Related {
			near = append(near, p)
		}
	}
	found := all
	if len(near) > 0 {
		found = near
	}
	res := Resolution{Status: Resolved}
	switch {
	case len(found) == 0:
		return Resolution{Status: Dangling}
	case len(found) > 1:
		res.Status = Ambiguous
	}
	for _, p := range found {
		l := ctx.Loc
		l.Part = p.Path
		res.Targets = append(res.Targets, l)
	}
	return res
}
