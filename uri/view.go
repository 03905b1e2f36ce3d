package uri

import "strings"

// View is the structured reading of a URL of one of the schemes of the
// seed documents. Its concrete type is one of the types below; [URL.View]
// returns nil for other schemes. Component strings are decoded where the
// scheme's specification says what they mean after decoding (message-ids,
// content-ids, addresses); otherwise they are as written.
type View interface{ viewScheme() string }

// FTP is the view of ftp://host/cwd1/cwd2/name;type=X (RFC 1738 §3.2).
type FTP struct {
	CWD  []string `json:"cwd"`  // directory segments, decoded
	Name string   `json:"name"` // last segment, decoded
	Type string   `json:"type,omitempty"`
}

// HTTP is the view of http(s)://host:port/path?search (RFC 1738 §3.3).
type HTTP struct {
	Path   string `json:"path"`
	Search string `json:"search,omitempty"`
}

// Gopher is the view of gopher://host:port/Tselector%09search%09plus
// (RFC 1738 §3.4). Type defaults to "1" for an empty path.
type Gopher struct {
	Type       string `json:"gopher_type"`
	Selector   string `json:"selector"`
	Search     string `json:"search,omitempty"`
	GopherPlus string `json:"gopher_plus,omitempty"`
}

// Mailto is the view of mailto:addr[,addr]?hfields (RFC 1738 §3.5,
// RFC 6068).
type Mailto struct {
	Addrs   []string `json:"addrs"`
	Headers string   `json:"headers,omitempty"`
}

// News is the view of news:group, news:message-id, news:* or
// news://server/... (RFC 1738 §3.6, RFC 5538 §2).
type News struct {
	Server    string `json:"server,omitempty"`
	Group     string `json:"group,omitempty"`
	MessageID string `json:"message_id,omitempty"`
	All       bool   `json:"all,omitempty"`
}

// NNTP is the view of nntp://host:port/group/article (RFC 1738 §3.7,
// RFC 5538 §3).
type NNTP struct {
	Group   string `json:"group"`
	Article string `json:"article,omitempty"`
}

// Telnet is the view of telnet://user:password@host:port/ (RFC 1738 §3.8).
type Telnet struct {
	User     string `json:"user,omitempty"`
	Password string `json:"password,omitempty"`
	Host     string `json:"host"`
	Port     string `json:"port,omitempty"`
}

// WAIS is the view of wais://host:port/database[?search | /wtype/wpath]
// (RFC 1738 §3.9).
type WAIS struct {
	Database string `json:"database"`
	Search   string `json:"search,omitempty"`
	WType    string `json:"wtype,omitempty"`
	WPath    string `json:"wpath,omitempty"`
}

// File is the view of file://host/path (RFC 1738 §3.10). An empty host,
// or "localhost", is the local machine.
type File struct {
	Host      string `json:"host"`
	Localhost bool   `json:"localhost"`
	Path      string `json:"path"`
}

// Prospero is the view of prospero://host:port/hsoname;field=value
// (RFC 1738 §3.11).
type Prospero struct {
	HSOName string          `json:"hsoname"`
	Fields  []ProsperoField `json:"fields,omitempty"`
}

// ProsperoField is one ";field=value" of a prospero URL.
type ProsperoField struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// MID is the view of mid:message-id[/content-id] (RFC 2392 §2).
type MID struct {
	MessageID string `json:"message_id"`
	ContentID string `json:"content_id,omitempty"`
}

// CID is the view of cid:content-id (RFC 2392 §2).
type CID struct {
	ContentID string `json:"content_id"`
}

// URN is the view of urn:nid:nss (RFC 8141).
type URN struct {
	NID string `json:"nid"`
	NSS string `json:"nss"`
}

func (FTP) viewScheme() string      { return "ftp" }
func (HTTP) viewScheme() string     { return "http" }
func (Gopher) viewScheme() string   { return "gopher" }
func (Mailto) viewScheme() string   { return "mailto" }
func (News) viewScheme() string     { return "news" }
func (NNTP) viewScheme() string     { return "nntp" }
func (Telnet) viewScheme() string   { return "telnet" }
func (WAIS) viewScheme() string     { return "wais" }
func (File) viewScheme() string     { return "file" }
func (Prospero) viewScheme() string { return "prospero" }
func (MID) viewScheme() string      { return "mid" }
func (CID) viewScheme() string      { return "cid" }
func (URN) viewScheme() string      { return "urn" }

// dec decodes escapes, keeping s as written when an escape is bad.
func dec(s string) string {
	if d, ok := unescape(s); ok {
		return d
	}
	return s
}

// View returns the scheme-specific view of u, or nil if the scheme has
// none or u does not have the shape the scheme requires.
func (u *URL) View() View {
	switch u.Scheme {
	case "ftp":
		p := strings.TrimPrefix(u.Path, "/")
		var v FTP
		if i := strings.LastIndex(p, ";type="); i >= 0 && !strings.Contains(p[i:], "/") {
			v.Type = strings.ToLower(p[i+len(";type="):])
			p = p[:i]
		}
		segs := strings.Split(p, "/")
		for _, s := range segs[:len(segs)-1] {
			v.CWD = append(v.CWD, dec(s))
		}
		v.Name = dec(segs[len(segs)-1])
		if v.CWD == nil {
			v.CWD = []string{}
		}
		return v
	case "http", "https":
		return HTTP{Path: u.Path, Search: u.RawQuery}
	case "gopher":
		p := strings.TrimPrefix(u.Path, "/")
		v := Gopher{Type: "1"}
		if p != "" {
			v.Type, p = p[:1], p[1:]
		}
		parts := strings.SplitN(p, "%09", 3)
		v.Selector = dec(parts[0])
		if len(parts) > 1 {
			v.Search = dec(parts[1])
		}
		if len(parts) > 2 {
			v.GopherPlus = dec(parts[2])
		}
		return v
	case "mailto":
		v := Mailto{Headers: u.RawQuery, Addrs: []string{}}
		for a := range strings.SplitSeq(u.Opaque, ",") {
			if a != "" {
				v.Addrs = append(v.Addrs, dec(a))
			}
		}
		return v
	case "news":
		var v News
		s := u.Opaque
		if u.HasAuthority {
			v.Server = u.Host
			s = strings.TrimPrefix(u.Path, "/")
		}
		switch {
		case s == "*":
			v.All = true
		case strings.Contains(s, "@") || strings.Contains(s, "%40"):
			v.MessageID = dec(s)
		default:
			v.Group = dec(s)
		}
		return v
	case "nntp":
		g, a, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
		return NNTP{Group: dec(g), Article: a}
	case "telnet":
		return Telnet{User: dec(u.User), Password: dec(u.Password), Host: u.Host, Port: u.Port}
	case "wais":
		p := strings.TrimPrefix(u.Path, "/")
		db, rest, _ := strings.Cut(p, "/")
		v := WAIS{Database: dec(db), Search: dec(u.RawQuery)}
		if rest != "" {
			t, path, _ := strings.Cut(rest, "/")
			v.WType, v.WPath = dec(t), path
		}
		return v
	case "file":
		h := u.Host
		return File{Host: h, Localhost: h == "" || strings.EqualFold(h, "localhost"), Path: dec(u.Path)}
	case "prospero":
		p := strings.TrimPrefix(u.Path, "/")
		parts := strings.Split(p, ";")
		v := Prospero{HSOName: dec(parts[0])}
		for _, f := range parts[1:] {
			n, val, _ := strings.Cut(f, "=")
			v.Fields = append(v.Fields, ProsperoField{Name: dec(n), Value: dec(val)})
		}
		return v
	case "mid":
		// A "/" inside a message-id must be written %2F, so the first
		// literal "/" separates the content-id (RFC 2392 §2).
		m, c, _ := strings.Cut(u.Opaque, "/")
		return MID{MessageID: dec(m), ContentID: dec(c)}
	case "cid":
		return CID{ContentID: dec(u.Opaque)}
	case "urn":
		n, s, _ := strings.Cut(u.Opaque, ":")
		return URN{NID: strings.ToLower(n), NSS: s}
	}
	return nil
}

// HostOf returns the host of a URL in canonical form without parsing it
// fully: what stands between "scheme://" and the next "/", "?" or "#",
// less userinfo (up to the last "@") and port (from the first ":" after
// the host). For a mailto: URL it returns the domain of the last address
// that has one; for other URLs without an authority, "". [Analyze] gives
// the same answer.
func HostOf(canonical string) string {
	n := splitScheme(canonical)
	if n == 0 {
		return ""
	}
	rest := canonical[n+1:]
	if !strings.HasPrefix(rest, "//") {
		if canonical[:n] != "mailto" {
			return ""
		}
		if j := strings.IndexAny(rest, "?#"); j >= 0 {
			rest = rest[:j]
		}
		at := strings.LastIndexByte(rest, '@')
		if at < 0 {
			return ""
		}
		h := rest[at+1:]
		if j := strings.IndexByte(h, ','); j >= 0 {
			h = h[:j]
		}
		return h
	}
	a := rest[2:]
	if j := strings.IndexAny(a, "/?#"); j >= 0 {
		a = a[:j]
	}
	if j := strings.LastIndexByte(a, '@'); j >= 0 {
		a = a[j+1:]
	}
	if strings.HasPrefix(a, "[") {
		// as the parser reads it: the literal, and any text after it up to
		// a ":"; all of it when "]" is missing
		j := strings.IndexByte(a, ']')
		if j < 0 {
			return a
		}
		if k := strings.IndexByte(a[j:], ':'); k >= 0 {
			return a[:j+k]
		}
		return a
	}
	if j := strings.IndexByte(a, ':'); j >= 0 {
		a = a[:j]
	}
	return a
}
