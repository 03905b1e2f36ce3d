package audit

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkscan/linkscan/references"
)

func TestHTTPStatuses(t *testing.T) {
	var heads, gets atomic.Int32
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			heads.Add(1)
		} else {
			gets.Add(1)
		}
		switch r.URL.Path {
		case "/ok":
		case "/nohead":
			if r.Method == http.MethodHead {
				w.WriteHeader(http.StatusMethodNotAllowed)
			}
		case "/gone":
			w.WriteHeader(http.StatusGone)
		case "/forbidden":
			w.WriteHeader(http.StatusForbidden)
		case "/auth":
			w.WriteHeader(http.StatusUnauthorized)
		case "/wall":
			w.Header().Set("Cf-Mitigated", "challenge")
			w.WriteHeader(http.StatusForbidden)
		case "/teapot":
			w.WriteHeader(418)
		case "/challenge":
			w.Header().Set("Cf-Mitigated", "challenge")
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
	})
	cases := []struct {
		path   string
		status Status
		class  Class
		code   int
	}{
		{"/ok", OK, ClassNone, 200},
		{"/nohead", OK, ClassNone, 200},
		{"/gone", Failing, ClassHTTP, 410},
		{"/missing", Failing, ClassHTTP, 404},
		{"/forbidden", Blocked, ClassHTTP, 403},
		{"/teapot", Failing, ClassHTTP, 418},
		{"/challenge", Blocked, ClassHTTP, 503},
	}
	for _, c := range cases {
		got := attemptURL(t, testConfig(nil), s.URL+c.path)
		if got.Status != c.status || got.Class != c.class || got.HTTPStatus != c.code {
			t.Errorf("%s: got %s/%s/%d (%s), want %s/%s/%d", c.path, got.Status, got.Class, got.HTTPStatus, got.Error, c.status, c.class, c.code)
		}
	}
	// DenyFails: a bare 401 or 403 is a failure; a challenge stays blocked
	deny := testConfig(nil)
	deny.DenyFails = true
	for path, want := range map[string]Status{"/forbidden": Failing, "/auth": Failing, "/wall": Blocked, "/challenge": Blocked} {
		if got := attemptURL(t, deny, s.URL+path); got.Status != want {
			t.Errorf("DenyFails %s: %s (%s), want %s", path, got.Status, got.Error, want)
		}
		if got := attemptURL(t, testConfig(nil), s.URL+path); got.Status != Blocked {
			t.Errorf("%s: %s (%s), want blocked", path, got.Status, got.Error)
		}
	}
	heads.Store(0)
	gets.Store(0)
	got := attemptURL(t, testConfig(nil), s.URL+"/nohead")
	if heads.Load() != 1 || gets.Load() != 1 || got.Attempts != 2 {
		t.Errorf("HEAD refused: %d HEAD, %d GET, %d attempts; want 1, 1, 2", heads.Load(), gets.Load(), got.Attempts)
	}
	heads.Store(0)
	gets.Store(0)
	attemptURL(t, testConfig(nil), s.URL+"/ok")
	if heads.Load() != 1 || gets.Load() != 0 {
		t.Errorf("HEAD answered: %d HEAD, %d GET; want 1, 0", heads.Load(), gets.Load())
	}
}

func TestHTTPRedirects(t *testing.T) {
	var s *httptest.Server
	s = server(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			http.Redirect(w, r, "/b", http.StatusMovedPermanently)
		case "/b":
			w.Header().Set("Location", "c") // relative to /b
			w.WriteHeader(http.StatusPermanentRedirect)
		case "/c":
		case "/t":
			http.Redirect(w, r, s.URL+"/c", http.StatusFound)
		case "/loop1":
			http.Redirect(w, r, "/loop2", http.StatusFound)
		case "/loop2":
			http.Redirect(w, r, "/loop1", http.StatusFound)
		case "/noloc":
			w.WriteHeader(http.StatusMovedPermanently)
		case "/badloc":
			http.Redirect(w, r, "javascript:alert(1)", http.StatusFound)
		case "/dead":
			http.Redirect(w, r, "/nothing", http.StatusMovedPermanently)
		default:
			if n, err := fmt.Sscanf(r.URL.Path, "/n%d", new(int)); err == nil && n == 1 {
				var i int
				fmt.Sscanf(r.URL.Path, "/n%d", &i)
				http.Redirect(w, r, fmt.Sprintf("/n%d", i+1), http.StatusFound)
				return
			}
			http.NotFound(w, r)
		}
	})
	c := attemptURL(t, testConfig(nil), s.URL+"/a")
	if c.Status != Redirected || !c.Permanent || len(c.Chain) != 2 || c.FinalURL != s.URL+"/c" {
		t.Fatalf("permanent chain: %+v", c)
	}
	if c.Chain[0] != (Hop{s.URL + "/a", 301}) || c.Chain[1] != (Hop{s.URL + "/b", 308}) {
		t.Errorf("chain %+v", c.Chain)
	}
	c = attemptURL(t, testConfig(nil), s.URL+"/t")
	if c.Status != Redirected || c.Permanent {
		t.Errorf("temporary: %+v", c)
	}
	for _, p := range []string{"/loop1", "/noloc", "/badloc", "/n0"} {
		c = attemptURL(t, testConfig(nil), s.URL+p)
		if c.Status != Failing || c.Class != ClassRedirects {
			t.Errorf("%s: %+v", p, c)
		}
	}
	cfg := testConfig(nil)
	cfg.MaxRedirects = 3
	c = attemptURL(t, cfg, s.URL+"/n0")
	if len(c.Chain) != 4 || !strings.Contains(c.Error, "more than 3") {
		t.Errorf("bound of 3: %d hops, %q", len(c.Chain), c.Error)
	}
	c = attemptURL(t, testConfig(nil), s.URL+"/dead")
	if c.Status != Failing || c.HTTPStatus != 404 || len(c.Chain) != 1 {
		t.Errorf("redirect to 404: %+v", c)
	}
}

// Credentials go to their own host only, and never appear in a result.
func TestHTTPCredentials(t *testing.T) {
	var mu sync.Mutex
	auth := map[string]string{}
	other := server(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth["other"] = r.Header.Get("Authorization")
		mu.Unlock()
	})
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth[r.URL.Path] = r.Header.Get("Authorization")
		mu.Unlock()
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/there", http.StatusFound)
		case "/away":
			http.Redirect(w, r, other.URL+"/x", http.StatusFound)
		}
	})
	withUser := strings.Replace(s.URL, "http://", "http://alice:s3cret@", 1)
	c := attemptURL(t, testConfig(nil), withUser+"/same")
	if c.Status != Redirected || auth["/same"] == "" || auth["/there"] == "" {
		t.Errorf("same host: %+v, auth %q", c, auth)
	}
	c = attemptURL(t, testConfig(nil), withUser+"/away")
	if c.Status != Redirected || auth["other"] != "" {
		t.Errorf("credentials sent to another host: %q", auth["other"])
	}
	dump := fmt.Sprintf("%+v", c)
	if strings.Contains(dump, "s3cret") || strings.Contains(dump, "alice") {
		t.Errorf("credentials in the result: %s", dump)
	}
	c = attemptURL(t, testConfig(nil), "http://alice:s3cret@"+refusedAddr(t)+"/")
	if c.Class != ClassRefused || strings.Contains(c.Error+c.FinalURL, "s3cret") {
		t.Errorf("refused with credentials: %+v", c)
	}
}

func TestHTTPHeadersNoCookies(t *testing.T) {
	var mu sync.Mutex
	var ua, cookies []string
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ua = append(ua, r.UserAgent())
		cookies = append(cookies, r.Header.Get("Cookie"))
		mu.Unlock()
		if r.URL.Path == "/" {
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "1"})
			http.Redirect(w, r, "/next", http.StatusFound)
		}
	})
	attemptURL(t, testConfig(nil), s.URL+"/")
	if len(ua) != 2 {
		t.Fatalf("%d requests, want 2", len(ua))
	}
	for i := range ua {
		if !strings.HasPrefix(ua[i], "linkscan/"+Version+" ") || !strings.Contains(ua[i], "docs/audit.md") {
			t.Errorf("User-Agent %q", ua[i])
		}
		if cookies[i] != "" {
			t.Errorf("cookie sent: %q", cookies[i])
		}
	}
}

func TestHTTPNetworkFailures(t *testing.T) {
	r := &testResolver{hosts: map[string][]string{}}
	cfg := testConfig(r)
	if c := attemptURL(t, cfg, "http://nowhere.invalid/"); c.Class != ClassDNS || c.Status != Failing {
		t.Errorf(".invalid: %+v", c)
	}
	if c := attemptURL(t, cfg, "http://"+refusedAddr(t)+"/"); c.Class != ClassRefused {
		t.Errorf("refused: %+v", c)
	}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	ts.StartTLS()
	defer ts.Close()
	c := attemptURL(t, cfg, ts.URL+"/")
	if c.Class != ClassTLSCert || !strings.Contains(c.Error, "self-signed") {
		t.Errorf("self-signed: %+v", c)
	}
	trusted := cfg
	trusted.TLS = &tls.Config{RootCAs: ts.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	if c := attemptURL(t, trusted, ts.URL+"/"); c.Status != OK {
		t.Errorf("trusted: %+v", c)
	}
}

func TestHTTPSlowAndHuge(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "/drip":
			if r.Method == http.MethodHead {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(http.StatusOK)
			for i := 0; i < 1000; i++ { // at most 100 s, unless the client goes
				if _, err := w.Write([]byte{'x'}); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-release:
					return
				case <-r.Context().Done():
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		case "/bigheader":
			w.Header().Set("X-Filler", strings.Repeat("a", 100<<10))
		case "/huge":
			if r.Method == http.MethodHead {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			buf := make([]byte, 32<<10)
			for i := 0; i < 1<<12; i++ { // up to 128 MiB, unless the client goes
				if _, err := w.Write(buf); err != nil {
					return
				}
			}
		}
	})
	cfg := testConfig(nil)
	cfg.Timeout = 300e6
	if c := attemptURL(t, cfg, s.URL+"/slow"); c.Class != ClassTimeout || !c.retry {
		t.Errorf("slow: %+v", c)
	}
	if c := attemptURL(t, cfg, s.URL+"/drip"); c.Class != ClassTimeout {
		t.Errorf("body dripped a byte at a time: %+v", c)
	}
	if c := attemptURL(t, testConfig(nil), s.URL+"/bigheader"); c.Status != Failing || c.Class != ClassProtocol || c.retry {
		t.Errorf("100 KB of headers: %+v", c)
	}
	if c := attemptURL(t, testConfig(nil), s.URL+"/huge"); c.Status != OK {
		t.Errorf("huge: %+v", c)
	}
}

// A public-looking name that resolves to loopback is refused at connect
// time unless AllowPrivate; the server sees no request.
func TestGuardRefusesPrivate(t *testing.T) {
	var hits atomic.Int32
	s := server(t, func(http.ResponseWriter, *http.Request) { hits.Add(1) })
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.URL, "http://"))
	r := &testResolver{hosts: map[string][]string{"www.example.com": {"127.0.0.1"},
		// the guard runs before the connection is attempted: no packet goes
		// to these addresses
		"intranet.example.com": {"10.1.2.3"}, "metadata.example.com": {"169.254.169.254"}, "v6.example.com": {"::1"},
		"mapped.example.com": {"::ffff:127.0.0.1"}}}
	cfg := testConfig(r)
	cfg.AllowPrivate = false
	for _, u := range []string{"http://www.example.com:" + port + "/", s.URL + "/", "ftp://www.example.com:" + port + "/",
		"gopher://www.example.com:" + port + "/", "http://intranet.example.com/", "http://metadata.example.com/latest/meta-data/",
		"http://v6.example.com:" + port + "/", "http://mapped.example.com:" + port + "/", "http://[::1]:" + port + "/"} {
		c := attemptURL(t, cfg, u)
		if c.Status != Unchecked || c.Class != ClassForbidden {
			t.Errorf("%s: %+v", u, c)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("server reached %d times", hits.Load())
	}
	cfg.AllowPrivate = true
	if c := attemptURL(t, cfg, "http://www.example.com:"+port+"/"); c.Status != OK || hits.Load() != 1 {
		t.Errorf("allowed: %+v, %d hits", c, hits.Load())
	}
	if c := attemptURL(t, cfg, "file:///etc/passwd"); c.Status != Unchecked || c.Class != ClassForbidden {
		t.Errorf("file: %+v", c)
	}
	// ports browsers refuse, as written and after a redirect; ftp on 21 is fine
	for _, u := range []string{"gopher://www.example.com:25/", "http://www.example.com:6667/", "https://www.example.com:110/",
		"ftp://www.example.com:25/x"} {
		if c := attemptURL(t, cfg, u); c.Status != Unchecked || c.Class != ClassBadPort || !strings.Contains(c.Error, "port") {
			t.Errorf("%s: %+v", u, c)
		}
	}
	if badPort("ftp", "21") || !badPort("http", "21") || badPort("http", "") || badPort("http", "8080") {
		t.Errorf("badPort")
	}
	redir := server(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "gopher://127.0.0.1:25/1", http.StatusFound)
	})
	if c := attemptURL(t, cfg, redir.URL+"/"); c.Status != Failing || c.Class != ClassRedirects {
		t.Errorf("redirect to gopher: %+v", c)
	}
	redir2 := server(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:25/", http.StatusFound)
	})
	if c := attemptURL(t, cfg, redir2.URL+"/"); c.Status != Unchecked || c.Class != ClassBadPort {
		t.Errorf("redirect to port 25: %+v", c)
	}
	anyPort := cfg
	anyPort.AnyPort = true
	if c := attemptURL(t, anyPort, redir2.URL+"/"); c.Class == ClassBadPort {
		t.Errorf("AnyPort: %+v", c)
	}
}

// TestForbidden is a table over the blocks the guard refuses (not
// globally reachable, or an IPv6 address carrying such an IPv4 one) and
// public addresses it lets through.
func TestForbidden(t *testing.T) {
	for _, c := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1", true}, {"127.1.2.3", true}, {"::1", true}, {"10.1.2.3", true}, {"172.16.0.1", true},
		{"192.168.1.1", true}, {"169.254.169.254", true}, {"fe80::1", true}, {"fe80::1%eth0", true},
		{"fc00::1", true}, {"224.0.0.1", true}, {"ff02::1", true}, {"0.0.0.0", true}, {"::", true},
		{"::ffff:127.0.0.1", true}, {"::ffff:10.0.0.1", true}, {"100.64.0.1", true}, {"255.255.255.255", true},
		{"0.1.2.3", true},
		// IANA special-purpose blocks that are not globally reachable
		{"192.0.0.1", true}, {"192.0.0.170", true}, {"192.0.2.1", true}, {"198.18.0.1", true},
		{"198.19.255.255", true}, {"198.51.100.7", true}, {"203.0.113.9", true}, {"240.0.0.1", true},
		{"2001:db8::1", true}, {"100::1", true}, {"2001:2::1", true}, {"2001:10::1", true}, {"3fff::1", true},
		{"5f00::1", true}, {"fec0::1", true}, {"100:0:0:1::1", true},
		// 2001:1::/48: three anycast addresses are global, the rest is not
		{"2001:1::", true}, {"2001:1::4", true}, {"2001:1::1:3", true},
		// IPv4 embedded in IPv6
		{"64:ff9b::7f00:1", true},                      // NAT64 of 127.0.0.1
		{"64:ff9b::a9fe:a9fe", true},                   // NAT64 of 169.254.169.254
		{"64:ff9b::a00:1", true},                       // NAT64 of 10.0.0.1
		{"64:ff9b:1::a00:1", true},                     // local-use NAT64 (RFC 8215)
		{"64:ff9b:1::808:808", true},                   // refused whatever it carries
		{"2002:7f00:1::1", true},                       // 6to4 of 127.0.0.1
		{"2002:c0a8:101::1", true},                     // 6to4 of 192.168.1.1
		{"::7f00:1", true},                             // IPv4-compatible 127.0.0.1
		{"::a9fe:a9fe", true},                          // IPv4-compatible 169.254.169.254
		{"::ffff:0:7f00:1", true},                      // IPv4-translated 127.0.0.1
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", true}, // Teredo, client 192.0.2.45 (RFC 4380's example)
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", true}, // Teredo, client 127.0.0.1
		{"2001:0:a00:1:8000:63bf:f7f7:f7f7", true},     // Teredo, server 10.0.0.1
		// allowed: public addresses, and public ones embedded
		{"93.184.216.34", false}, {"8.8.8.8", false}, {"172.32.0.1", false}, {"100.128.0.1", false},
		{"192.0.0.9", false}, {"192.0.3.1", false}, {"198.20.0.1", false},
		{"2606:4700::1111", false}, {"2a00:1450:4001:80b::200e", false}, {"2001:4860:4860::8888", false},
		{"2001:4:112::1", false}, {"2001:20::1", false},
		{"2001:1::1", false}, {"2001:1::2", false}, {"2001:1::3", false}, // PCP, TURN, DNS-SD SRP anycast
		{"2001:3::1", false}, {"2001:30::1", false},
		{"::ffff:93.184.216.34", false}, {"64:ff9b::808:808", false}, {"2002:808:808::1", false},
		{"::808:808", false}, {"2001:0:4136:e378:8000:63bf:f7f7:f7f7", false}, // Teredo, client 8.8.8.8
	} {
		if got := Forbidden(netip.MustParseAddr(c.addr)); got != c.want {
			t.Errorf("Forbidden(%s) = %v, want %v", c.addr, got, c.want)
		}
	}
}

// The guard refuses embedded and special-purpose addresses at connect
// time, where a name resolves to them, and AllowPrivate lifts it.
func TestGuardRefusesEmbedded(t *testing.T) {
	var hits atomic.Int32
	s := server(t, func(http.ResponseWriter, *http.Request) { hits.Add(1) })
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.URL, "http://"))
	r := &testResolver{hosts: map[string][]string{"nat64.example.com": {"64:ff9b::7f00:1"},
		"sixtofour.example.com": {"2002:7f00:1::1"}, "compat.example.com": {"::7f00:1"},
		"teredo.example.com": {"2001:0:4136:e378:8000:63bf:80ff:fffe"}, "bench.example.com": {"198.18.0.1"},
		"doc.example.com": {"2001:db8::1"}}}
	cfg := testConfig(r)
	cfg.AllowPrivate = false
	for _, u := range []string{"http://nat64.example.com:" + port + "/", "http://sixtofour.example.com:" + port + "/",
		"http://compat.example.com:" + port + "/", "http://teredo.example.com:" + port + "/",
		"http://bench.example.com:" + port + "/", "http://doc.example.com:" + port + "/",
		"http://[64:ff9b::7f00:1]:" + port + "/", "http://240.0.0.1:" + port + "/"} {
		c := attemptURL(t, cfg, u)
		if c.Status != Unchecked || c.Class != ClassForbidden {
			t.Errorf("%s: %+v", u, c)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("server reached %d times", hits.Load())
	}
	// the dialer's Control function is the guard, and AllowPrivate drops it
	// (no dial here: these addresses may lead anywhere on this host's network)
	if err := control("tcp", "[64:ff9b::7f00:1]:80", nil); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("control: %v", err)
	}
	if err := control("tcp", "[2606:4700::1111]:80", nil); err != nil {
		t.Errorf("control on a public address: %v", err)
	}
	if dl := newDialer(r, true, &cfg); dl.d.Control != nil {
		t.Errorf("AllowPrivate keeps the guard")
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"http://u:p@h/x":           "http://REDACTED@h/x",
		"http://u@h":               "http://REDACTED@h",
		"ftp://a:b@c@h:21/p?q=x@y": "ftp://REDACTED@h:21/p?q=x@y",
		"http://h/p@x":             "http://h/p@x",
		"http://h?a=b@c":           "http://h?a=b@c",
		"mailto:joe@example.com":   "mailto:joe@example.com",
		"no url":                   "no url",
		"https://tok@h#frag@x":     "https://REDACTED@h#frag@x",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// gopherServer answers each connection with the answer for its selector.
func gopherServer(t *testing.T, answers map[string]string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				line, _ := bufio.NewReader(c).ReadString('\n')
				c.Write([]byte(answers[strings.TrimRight(line, "\r\n")]))
			}()
		}
	}()
	return ln.Addr().String()
}

func TestGopher(t *testing.T) {
	addr := gopherServer(t, map[string]string{
		"":          "iWelcome\t\terror.host\t1\r\n1Docs\t/docs\tlocalhost\t70\r\n.\r\n",
		"/docs/a":   "plain text of a document\r\n",
		"/missing":  "3'/missing' does not exist\t\terror.host\t1\r\n.\r\n",
		"/empty":    "",
		"search\tq": "0result\t/r\th\t70\r\n",
	})
	for _, c := range []struct {
		path   string
		status Status
		class  Class
	}{
		{"/", OK, ""}, {"", OK, ""}, {"/0/docs/a", OK, ""}, {"/1/missing", Failing, ClassNotFound},
		{"/0/empty", Failing, ClassProtocol}, {"/7search%09q", OK, ""},
	} {
		got := attemptURL(t, testConfig(nil), "gopher://"+addr+c.path)
		if got.Status != c.status || got.Class != c.class {
			t.Errorf("%q: %+v", c.path, got)
		}
	}
}

func TestMailto(t *testing.T) {
	r := &testResolver{
		hosts: map[string][]string{"a-only.example": {"192.0.2.1"}},
		mx:    map[string][]string{"example.org": {"mx.example.org."}, "nomail.example": {"."}},
	}
	for _, c := range []struct {
		url    string
		mx     bool
		status Status
		class  Class
	}{
		{"mailto:joe@example.org", false, OK, ""},
		{"mailto:joe@nowhere.invalid", false, OK, ""},
		{"mailto:joe@nowhere.invalid", true, Failing, ClassNoMX},
		{"mailto:joe@example.org", true, OK, ""},
		{"mailto:joe@a-only.example", true, OK, ""},
		{"mailto:joe@nomail.example", true, Failing, ClassNoMX},
		{"mailto:joe@example.org,ann@nowhere.invalid", true, Failing, ClassNoMX},
		{"mailto:?to=joe@example.org", true, OK, ""},
		{"mailto:joe", false, Failing, ClassSyntax},
		{"mailto:", false, Failing, ClassSyntax},
		{"mailto:a%20b@@example.org", false, Failing, ClassSyntax},
		{"mailto:joe@[192.0.2.1]", true, OK, ""},
		// RFC 6068: no address, header fields only: nothing to check
		{"mailto:?subject=hi", true, OK, ""},
		{"mailto:?subject=hi&to=joe@-x.org", false, Failing, ClassSyntax},
		// labels that cannot be: leading or trailing hyphen, empty, too long, bad bytes
		{"mailto:a@-x.org", false, Failing, ClassSyntax},
		{"mailto:a@x-.org", false, Failing, ClassSyntax},
		{"mailto:a@x..org", false, Failing, ClassSyntax},
		{"mailto:a@" + strings.Repeat("x", 64) + ".org", false, Failing, ClassSyntax},
		{"mailto:a@x_y.org", false, Failing, ClassSyntax},
		{"mailto:a@xn--bcher-kva.example", false, OK, ""},
		{"mailto:a@b%C3%BCcher.example", false, OK, ""},
	} {
		cfg := testConfig(r)
		cfg.MX = c.mx
		got := attemptURL(t, cfg, c.url)
		if got.Status != c.status || got.Class != c.class {
			t.Errorf("%s (mx %v): %+v", c.url, c.mx, got)
		}
	}
}

type fakeRefs map[string]references.Status

func (f fakeRefs) Resolve(canonical string, _ *references.Context) (references.Resolution, error) {
	if s, ok := f[canonical]; ok {
		if s == references.Error {
			return references.Resolution{Status: s}, fmt.Errorf("index unreadable")
		}
		return references.Resolution{Status: s}, nil
	}
	return references.Resolution{Status: references.Dangling}, nil
}

func TestReferencesAndOthers(t *testing.T) {
	cfg := testConfig(nil)
	cfg.Refs = fakeRefs{"mid:a@b": references.Resolved, "news:x@y": references.Error}
	for _, c := range []struct {
		url    string
		status Status
		class  Class
	}{
		{"mid:a@b", OfflineOK, ""},
		{"mid:gone@b", Unchecked, ClassNotInIndex},
		{"news:x@y", Unchecked, ClassLookup},
		{"telnet://host.example/", Unchecked, ClassScheme},
		{"wais://host.example/db", Unchecked, ClassScheme},
		{"http:///nohost", Failing, ClassSyntax},
	} {
		got := attemptURL(t, cfg, c.url)
		if got.Status != c.status || got.Class != c.class {
			t.Errorf("%s: %+v", c.url, got)
		}
	}
	cfg.Refs = nil
	if got := attemptURL(t, cfg, "mid:a@b"); got.Status != Unchecked {
		t.Errorf("no index: %+v", got)
	}
}

func FuzzRedact(f *testing.F) {
	for _, s := range []string{"http://u:p@h/x", "ftp://a:b@c@h:21/p?q=x@y", "http://h/p@x", "https://tok@h#f@x", "x://@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := Redact(s)
		if Redact(r) != r {
			t.Fatalf("Redact not idempotent: %q -> %q -> %q", s, r, Redact(r))
		}
		u, err := url.Parse(s)
		if err != nil || u.User == nil || u.Opaque != "" {
			return
		}
		if p, ok := u.User.Password(); ok && len(p) > 0 {
			ru, err := url.Parse(r)
			if err != nil {
				t.Fatalf("redacted %q does not parse: %v", r, err)
			}
			if rp, ok := ru.User.Password(); ok && rp == p {
				t.Fatalf("password kept: %q -> %q", s, r)
			}
			if ru.Host != u.Host {
				t.Fatalf("host changed: %q -> %q", s, r)
			}
		}
	})
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"": 0, "0": 0, "5": 5 * time.Second, " 120 ": 2 * time.Minute, "-3": 0, "soon": 0, "1.5": 0,
		"Thu, 01 Jan 2026 00:00:30 GMT": 30 * time.Second, "Wed, 31 Dec 2025 00:00:00 GMT": 0,
		"99999999999999": time.Duration(1<<31) * time.Second,
	} {
		if got := retryAfter(v, now); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}

func FuzzRetryAfter(f *testing.F) {
	f.Add("120")
	f.Add("Thu, 01 Jan 2026 00:00:30 GMT")
	f.Fuzz(func(t *testing.T, v string) {
		if d := retryAfter(v, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)); d < 0 {
			t.Fatalf("retryAfter(%q) = %v", v, d)
		}
	})
}

func FuzzMailtoAndGopher(f *testing.F) {
	for _, s := range []string{"mailto:joe@example.org,ann@example.net?to=x@y.z", "mailto:?to=%20a@b", "gopher://h/1/sel%09query", "gopher://h", "gopher://h/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := url.Parse(s)
		if err != nil {
			return
		}
		for _, a := range mailtoAddresses(u) {
			if a == "" || a != strings.TrimSpace(a) || strings.Contains(a, ",") {
				t.Fatalf("address %q from %q", a, s)
			}
		}
		typ, sel := gopherSelector(u)
		if typ == 0 && sel == "" && (u.Path == "" || u.Path == "/") {
			t.Fatalf("root of %q has no type", s)
		}
	})
}

// FuzzForbidden: an IPv4 address is refused exactly when its IPv6 forms
// that carry it are (mapped, compatible, translated, NAT64, 6to4,
// Teredo's client with a public server), and no address makes the guard
// panic.
func FuzzForbidden(f *testing.F) {
	for _, s := range []string{"\x7f\x00\x00\x01", "\x08\x08\x08\x08", "\xc0\x00\x02\x2d", "\xa9\xfe\xa9\xfe", "\x00\x00\x00\x00",
		"\x20\x01\x00\x00\x41\x36\xe3\x78\x80\x00\x63\xbf\x3f\xff\xfd\xd2"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 16 {
			Forbidden(netip.AddrFrom16([16]byte(b)))
			return
		}
		if len(b) != 4 {
			return
		}
		v4 := [4]byte(b)
		want := Forbidden(netip.AddrFrom4(v4))
		forms := map[string][16]byte{
			"mapped":     {10: 0xff, 11: 0xff, 12: v4[0], 13: v4[1], 14: v4[2], 15: v4[3]},
			"compatible": {12: v4[0], 13: v4[1], 14: v4[2], 15: v4[3]},
			"translated": {8: 0xff, 9: 0xff, 12: v4[0], 13: v4[1], 14: v4[2], 15: v4[3]},
			"nat64":      {1: 0x64, 2: 0xff, 3: 0x9b, 12: v4[0], 13: v4[1], 14: v4[2], 15: v4[3]},
			"6to4":       {0: 0x20, 1: 0x02, 2: v4[0], 3: v4[1], 4: v4[2], 5: v4[3], 15: 1},
			// server 65.54.227.120 (public), client inverted
			"teredo": {0: 0x20, 1: 0x01, 4: 65, 5: 54, 6: 227, 7: 120, 8: 0x80, 12: ^v4[0], 13: ^v4[1], 14: ^v4[2], 15: ^v4[3]},
		}
		for name, a := range forms {
			if got := Forbidden(netip.AddrFrom16(a)); got != want {
				t.Errorf("%v: Forbidden = %v; its %s form %v: %v", netip.AddrFrom4(v4), want, name, netip.AddrFrom16(a), got)
			}
		}
	})
}
