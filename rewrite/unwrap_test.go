package rewrite

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// The vectors below were worked out by hand from each format's
// definition (see the comments in unwrap.go and docs/rewrite.md):
// percent-encoding by RFC 3986 §2.1, base64url by RFC 4648 §5.
var unwrapTests = []struct {
	in      string
	want    string  // "" when not decoded
	w       Wrapper // "" when not a wrapper
	wantErr error   // sentinel, nil when decoded or not a wrapper
}{
	// Microsoft Safe Links
	{"https://nam02.safelinks.protection.outlook.com/?url=https%3A%2F%2Fexample.com%2Fpath%3Fa%3D1%26b%3D2&data=04%7C01%7C&sdata=abc%3D&reserved=0",
		"https://example.com/path?a=1&b=2", SafeLinks, nil},
	// HTML-escaped "&amp;" between the parameters, url= not first
	{"https://eur01.safelinks.protection.outlook.com/?data=05%7C02&amp;url=http%3A%2F%2Fexample.org%2F&amp;reserved=0",
		"http://example.org/", SafeLinks, nil},
	// quoted-printable debris: "=" written "=3D"
	{"https://nam12.safelinks.protection.outlook.com/?url=3Dhttps%3A%2F%2Fexample.com%2F&data=3D05%7C&reserved=3D0",
		"https://example.com/", SafeLinks, nil},
	// scheme and host in capitals; the original is an ftp URL
	{"HTTPS://NAM02.SafeLinks.Protection.Outlook.com/?url=ftp%3A%2F%2Fftp.example.edu%2Fpub%2F&reserved=0",
		"ftp://ftp.example.edu/pub/", SafeLinks, nil},
	// white space and controls decoded are escaped again, never returned raw
	{"https://nam02.safelinks.protection.outlook.com/?url=http%3A%2F%2Fexample.com%2Fa%20b%0D%0A&reserved=0",
		"http://example.com/a%20b%0D%0A", SafeLinks, nil},
	// a decoded byte that is not UTF-8 is escaped again
	{"https://nam02.safelinks.protection.outlook.com/?url=http%3A%2F%2Fexample.com%2F%E9t%C3%A9&reserved=0",
		"http://example.com/%E9té", SafeLinks, nil},
	// a "%" that starts no escape is kept as the original had it
	{"https://nam02.safelinks.protection.outlook.com/?url=http%3A%2F%2Fexample.com%2F100%&reserved=0",
		"http://example.com/100%", SafeLinks, nil},
	{"https://nam02.safelinks.protection.outlook.com/?data=x&reserved=0", "", SafeLinks, ErrMalformed},
	{"https://nam02.safelinks.protection.outlook.com/?url=&data=x&reserved=0", "", SafeLinks, ErrMalformed},
	{"https://nam02.safelinks.protection.outlook.com/?url=example.com%2Fpage&reserved=0", "", SafeLinks, ErrMalformed},
	{"https://nam02.safelinks.protection.outlook.com/other?url=http%3A%2F%2Fexample.com", "", "", nil},
	{"https://safelinks.protection.outlook.com.evil.example/?url=http%3A%2F%2Fexample.com", "", "", nil},
	{"https://safelinks.protection.outlook.com/?url=http%3A%2F%2Fexample.com", "", "", nil},
	// cut: the end marker "reserved=0" is missing (Outlook's hard wrap
	// left the rest on the next lines), or text follows it
	{"https://nam04.safelinks.protection.outlook.com/?url=https%3A%2F%2Fsashi", "", SafeLinks, ErrCut},
	{"https://nam04.safelinks.protection.outlook.com/?url=https%3A%2F%2Fexample.com%2F&data=05%7C02", "", SafeLinks, ErrCut},
	{"https://nam04.safelinks.protection.outlook.com/?url=https%3A%2F%2Fexample.com%2F&reserved=0[[PATCH/RFC]", "", SafeLinks, ErrCut},
	{"https://nam04.safelinks.protection.outlook.com/?url=https%3A%2F%2Fexample.com%2F&reserved=0<http://b.example/two>", "", SafeLinks, ErrCut},

	// Proofpoint URL Defense v1: u= percent-encoded (or, often, not at all)
	{"https://urldefense.proofpoint.com/v1/url?u=http://www.example.org/&k=oIvRg1%2BdGA%3D%3D%0A&r=abc&m=def&s=0123",
		"http://www.example.org/", URLDefenseV1, nil},
	{"https://urldefense.proofpoint.com/v1/url?u=http%3A%2F%2Fexample.org%2Fa%3Fb%3Dc&k=x",
		"http://example.org/a?b=c", URLDefenseV1, nil},
	{"https://urldefense.proofpoint.com/v1/url?k=x&amp;u=http%3A%2F%2Fexample.org%2F&amp;r=y",
		"http://example.org/", URLDefenseV1, nil},
	{"https://urldefense.proofpoint.com/v1/url?k=x&r=y", "", URLDefenseV1, ErrCut},

	// v2: percent-encode, then "%" -> "-" and "/" -> "_"; so a "-" or
	// "_" of the original is "-2D" or "-5F"
	{"https://urldefense.proofpoint.com/v2/url?u=https-3A__example.com_my-2Dpage-5F1-3Fx-3D1-26y-3Da-20b&d=DwMFaQ&c=abc&r=def&m=ghi&s=jkl&e=",
		"https://example.com/my-page_1?x=1&y=a%20b", URLDefenseV2, nil},
	{"https://urldefense.proofpoint.com/v2/url?u=3Dhttps-3A__example.com_&d=3DDwMFaQ&e=3D",
		"https://example.com/", URLDefenseV2, nil},
	{"https://urldefense.proofpoint.com/v2/url?u=https-3A__example.com_&d=DwMFaQ&c=abc", "", URLDefenseV2, ErrCut},
	{"https://urldefense.proofpoint.com/v2/url?u=https-3A__exam", "", URLDefenseV2, ErrCut},
	{"https://urldefense.proofpoint.com/v2/url?d=DwMFaQ&amp;u=http-3A__example.net_&amp;e=",
		"http://example.net/", URLDefenseV2, nil},
	// "-ZZ" is no escape: reported, not decoded into something else
	{"https://urldefense.proofpoint.com/v2/url?u=https-3A__example.com_a-ZZb&d=x&e=", "", URLDefenseV2, ErrMalformed},
	{"https://urldefense.proofpoint.com/v2/url?u=https-3A__example.com_a-2&d=x&e=", "", URLDefenseV2, ErrMalformed},

	// v3: "__" URL "__;" base64url(replaced bytes) "!!" ...
	// "*" is one replaced byte: "+" is 0x2B, base64url "Kw"
	{"https://urldefense.com/v3/__https://example.com/a*b__;Kw!!AAAA!BBBB$",
		"https://example.com/a+b", URLDefenseV3, nil},
	// a literal "*" of the original is itself replaced: 0x2A, "Kg"
	{"https://urldefense.com/v3/__https://example.org/a*b__;Kg!!x!y$",
		"https://example.org/a*b", URLDefenseV3, nil},
	// nothing replaced; "?" and "&" belong to the embedded URL
	{"https://urldefense.com/v3/__http://example.org/s?q=1&r=2__;!!x!y$",
		"http://example.org/s?q=1&r=2", URLDefenseV3, nil},
	// "__" inside the URL: the last "__;" ends it
	{"https://urldefense.com/v3/__https://example.org/__init__.py__;!!x!y$",
		"https://example.org/__init__.py", URLDefenseV3, nil},
	// "é" is two bytes C3 A9 (base64url "w6k"): a run of two, "**A"
	{"https://urldefense.com/v3/__https://example.org/caf**A__;w6k!!x!y$",
		"https://example.org/café", URLDefenseV3, nil},
	// bytes, not characters: "**A" takes C3 A9 ("é") and "*" takes "z"
	// (replacements C3 A9 7A, "w6l6"). Counting characters, "**A" would
	// take "éz" and "*" would find nothing left.
	{"https://urldefense.com/v3/__https://example.org/x**Ay*__;w6l6!!x!y$",
		"https://example.org/xéyz", URLDefenseV3, nil},
	// "€" is three bytes E2 82 AC ("4oKs"): "**B"
	{"https://urldefense.com/v3/__https://example.org/price-**B5__;4oKs!!x!y$",
		"https://example.org/price-€5", URLDefenseV3, nil},
	// one "*" for the two-byte "é" leaves A9 unused: malformed, where a
	// decoder counting characters would accept it
	{"https://urldefense.com/v3/__https://example.org/caf*__;w6k!!x!y$", "", URLDefenseV3, ErrMalformed},
	{"https://urldefense.com/v3/__https://example.org/a**Ab__;Kw!!x!y$", "", URLDefenseV3, ErrMalformed},
	{"https://urldefense.com/v3/__https://example.org/a**!b__;Kwx!!x!y$", "", URLDefenseV3, ErrMalformed},
	{"https://urldefense.com/v3/__https://example.org/a**__;Kw!!x!y$", "", URLDefenseV3, ErrMalformed},
	{"https://urldefense.com/v3/__https://example.org/a*b__;K%!!x!y$", "", URLDefenseV3, ErrMalformed},
	{"https://urldefense.com/v3/__https://example.org/a__;Kw!!x!y", "", URLDefenseV3, ErrCut},
	{"https://urldefense.com/v3/__https://example.org/a__;Kw", "", URLDefenseV3, ErrCut},
	{"https://urldefense.com/v3/__https://example.org/", "", URLDefenseV3, ErrCut},
	// text glued after the "$" (a mailer-wrap join of the next line)
	{"https://urldefense.com/v3/__https://example.org/a__;!!x!y$[PATCH]", "", URLDefenseV3, ErrCut},
	// "!" written "%21"
	{"https://urldefense.com/v3/__https://example.com/a*b__;Kw%21%21AAAA%21BBBB$",
		"https://example.com/a+b", URLDefenseV3, nil},
	// Proofpoint's US host
	{"https://urldefense.us/v3/__https://example.gov/doc__;!!x!y$",
		"https://example.gov/doc", URLDefenseV3, nil},
	{"https://urldefense.us/v2/url?u=https-3A__example.gov_&d=x&e=",
		"https://example.gov/", URLDefenseV2, nil},
	// a target written with one slash after the scheme: repaired
	{"https://urldefense.com/v3/__https:/files.example.com/a.pdf__;!!x!y$",
		"https://files.example.com/a.pdf", URLDefenseV3, nil},
	{"https://nam02.safelinks.protection.outlook.com/?url=http%3A%2Fexample.com%2F&reserved=0",
		"http://example.com/", SafeLinks, nil},
	// ... but not when the rest of the decoding fails
	{"https://urldefense.com/v3/__https:/files.example.com/a.pdf__;Kw!!x!y$", "", URLDefenseV3, ErrMalformed},
	{"https://urldefense.com/v3/__example.org__;!!x!y$", "", URLDefenseV3, ErrMalformed},
	{"https://urldefense.com/v4/__https://example.org/__;!!x$", "", URLDefense, ErrNotDecodable},
	// the start of a link a hard wrap cut: its host, its version
	{"https://urldefense.com/", "", URLDefense, ErrCut},
	{"https://urldefense.com/v3/", "", URLDefense, ErrCut},
	{"https://urldefense.com/v3/_", "", URLDefense, ErrCut},
	{"https://urldefense.proofpoint.com/v2/u", "", URLDefense, ErrCut},
	{"https://urldefense.com/about", "", "", nil},

	// Google redirects
	{"https://www.google.com/url?q=https://example.com/page%3Fid%3D7&sa=D&source=editors&ust=1&usg=AOv",
		"https://example.com/page?id=7", Google, nil},
	{"https://www.google.co.uk/url?sa=t&url=https%3A%2F%2Fexample.org%2F&ved=2a",
		"https://example.org/", Google, nil},
	{"https://google.de/url?q=http://example.net/&amp;sa=D", "http://example.net/", Google, nil},
	{"https://www.google.com/url?q=search+term&sa=D", "", Google, ErrMalformed},
	{"https://www.google.com/search?q=https://example.com/", "", "", nil},
	{"https://www.google.example/url?q=https://example.com/", "", "", nil},

	// Barracuda, hex digits in lower case
	{"https://linkprotect.cudasvc.com/url?a=https%3a%2f%2fexample.com%2fnews&c=E,1,abc,,&typo=1",
		"https://example.com/news", Barracuda, nil},
	{"https://linkprotect.cudasvc.com/url?c=E,1&typo=1", "", Barracuda, ErrCut},

	// FireEye
	{"https://protect2.fireeye.com/v1/url?k=31323334-501cfaf3-3132&q=1&e=abc&u=https%3A%2F%2Fexample.com%2Fa%2Fb",
		"https://example.com/a/b", FireEye, nil},

	// Trend Micro, with a port
	{"https://imsva91-ctp.trendmicro.com:443/wis/clicktime/v1/query?url=https%3a%2f%2fexample.com%2fdoc&umid=ABC-123&auth=abc",
		"https://example.com/doc", TrendMicro, nil},
	{"https://www.trendmicro.com/en_us/business.html?url=x", "", "", nil},

	// AWS SES click tracking: the URL is a path segment
	{"https://abcdefgh.r.us-east-1.awstrack.me/L0/https:%2F%2Fexample.com%2Fpath%3Fx=1/1/010001234-abcdef-000000/AbCd=123",
		"https://example.com/path?x=1", AWSSES, nil},
	{"https://abcdefgh.r.us-east-1.awstrack.me/L0//1/0100", "", AWSSES, ErrMalformed},

	// Mimecast holds a token: reported, never guessed
	{"https://protect-eu.mimecast.com/s/AbCdEfGhIjK?domain=example.com", "", Mimecast, ErrNotDecodable},
	{"https://url.uk.m.mimecastprotect.com/s/XyZ?domain=example.org", "", Mimecast, ErrNotDecodable},
	{"https://www.mimecast.com/s/about", "", "", nil},

	// not wrappers at all
	{"http://example.com/?url=http%3A%2F%2Fexample.org", "", "", nil},
	{"mid:12345@example.org", "", "", nil},
	{"", "", "", nil},
}

func TestUnwrapOnce(t *testing.T) {
	for _, tt := range unwrapTests {
		got, w, ok, err := UnwrapOnce(tt.in)
		if got != tt.want || w != tt.w || ok != (tt.want != "") || !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
			t.Errorf("UnwrapOnce(%q)\ngot  %q %q ok=%v err=%v\nwant %q %q ok=%v err=%v",
				tt.in, got, w, ok, err, tt.want, tt.w, tt.want != "", tt.wantErr)
		}
		if err != nil {
			var ue *UnwrapError
			if !errors.As(err, &ue) || ue.Wrapper != tt.w || ue.URL != tt.in {
				t.Errorf("UnwrapOnce(%q): error %#v does not name the wrapper and URL", tt.in, err)
			}
		}
	}
}

func TestUnwrapMimecastDomain(t *testing.T) {
	_, _, _, err := UnwrapOnce("https://protect-us.mimecast.com/s/AbC?domain=example.com")
	if err == nil || !strings.Contains(err.Error(), "example.com") || !strings.Contains(err.Error(), "mimecast") {
		t.Fatalf("error %v should name mimecast and the domain", err)
	}
}

func TestUnwrapNested(t *testing.T) {
	v2 := "https://urldefense.proofpoint.com/v2/url?u=http-3A__example.com_&d=DwMF&e="
	safe := "https://nam02.safelinks.protection.outlook.com/?url=https%3A%2F%2Furldefense.proofpoint.com%2Fv2%2Furl%3Fu%3Dhttp-3A__example.com_%26d%3DDwMF%26e%3D&data=x&reserved=0"
	mime := "https://nam02.safelinks.protection.outlook.com/?url=https%3A%2F%2Fprotect-eu.mimecast.com%2Fs%2FAbC%3Fdomain%3Dexample.com&reserved=0"
	tests := []struct {
		in      string
		max     int
		want    string
		layers  []Wrapper
		wantErr error
	}{
		{safe, 0, "http://example.com/", []Wrapper{SafeLinks, URLDefenseV2}, nil},
		{safe, 2, "http://example.com/", []Wrapper{SafeLinks, URLDefenseV2}, nil},
		{safe, 1, v2, []Wrapper{SafeLinks}, ErrTooDeep},
		{mime, 0, "https://protect-eu.mimecast.com/s/AbC?domain=example.com", []Wrapper{SafeLinks}, ErrNotDecodable},
		{"http://example.com/", 0, "http://example.com/", nil, nil},
		{"https://urldefense.com/v3/__x__;!!", 0, "https://urldefense.com/v3/__x__;!!", nil, ErrCut},
		{"https://urldefense.com/v3/__x__;!!a!b$", 0, "https://urldefense.com/v3/__x__;!!a!b$", nil, ErrMalformed},
	}
	for _, tt := range tests {
		got, layers, err := Unwrap(tt.in, tt.max)
		if got != tt.want || !slices.Equal(layers, tt.layers) || !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
			t.Errorf("Unwrap(%q, %d)\ngot  %q %v %v\nwant %q %v %v", tt.in, tt.max, got, layers, err, tt.want, tt.layers, tt.wantErr)
		}
	}
}

// wrapperMarkers: a URL none of whose lower-cased text holds one of these
// is no wrapper.
var wrapperMarkers = []string{"safelinks.protection.outlook.com", "urldefense", "google.", "cudasvc.com",
	"fireeye.com", "trendmicro.com", "awstrack.me", "mimecast"}

func FuzzUnwrap(f *testing.F) {
	for _, tt := range unwrapTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, w, ok, err := UnwrapOnce(s)
		if ok {
			if err != nil || w == "" {
				t.Fatalf("UnwrapOnce(%q): ok with err %v, wrapper %q", s, err, w)
			}
			checkClean(t, s, got)
		} else if got != "" {
			t.Fatalf("UnwrapOnce(%q): not ok but returned %q", s, got)
		}
		lower := strings.ToLower(s)
		if !slices.ContainsFunc(wrapperMarkers, func(m string) bool { return strings.Contains(lower, m) }) && (ok || err != nil || w != "") {
			t.Fatalf("UnwrapOnce(%q) of a non-wrapper: %q %q ok=%v err=%v", s, got, w, ok, err)
		}
		all, layers, err := Unwrap(s, 4)
		if len(layers) > 4 {
			t.Fatalf("Unwrap(%q, 4) removed %d layers", s, len(layers))
		}
		if len(layers) > 0 {
			checkClean(t, s, all)
		}
		if err == nil {
			if _, _, again, _ := UnwrapOnce(all); again {
				t.Fatalf("Unwrap(%q) = %q is still a wrapper", s, all)
			}
		}
	})
}

func checkClean(t *testing.T, in, got string) {
	t.Helper()
	if !hasScheme(got) || !utf8.ValidString(got) {
		t.Fatalf("unwrapped %q to %q: no scheme or not UTF-8", in, got)
	}
	for _, r := range got {
		if r <= ' ' || r == 0x7f || isSpaceRune(r) {
			t.Fatalf("unwrapped %q to %q: white space or control %U", in, got, r)
		}
	}
}

func TestEndProven(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"https://nam02.safelinks.protection.outlook.com/?url=https%3A%2F%2Fexample.com%2F&data=05%7C02&reserved=0", true},
		{"https://nam02.safelinks.protection.outlook.com/?url=https%3A%2F%2Fexample.com%2F&amp;reserved=0", true},
		{"https://nam02.safelinks.protection.outlook.com/?url=https%3A%2F%2Fexample.com%2F&data=05%7C02", false},
		{"https://nam02.safelinks.protection.outlook.com/?url=https%3A%2F%2Fexample.com%2F&reserved=0--4.98", false},
		{"https://urldefense.proofpoint.com/v2/url?u=https-3A__example.com_&d=DwMFaQ&e=", true},
		{"https://urldefense.com/v3/__https://example.com/__;!!AAAA!BBBB$", true},
		{"https://urldefense.com/v3/__https://example.com/__;!!AAAA", false},
		{"https://www.google.com/url?q=https://example.com/&sa=D&usg=AOvVaw0123456789abcdefghijkl", true},
		{"https://www.google.com/url?q=https://example.com/&sa=D", false},
		{"https://linkprotect.cudasvc.com/url?a=https%3a%2f%2fexample.com%2f&c=E,1,abc,,&typo=1", true},
		// the encoded URL is the last parameter: nothing marks its end
		{"https://protect2.fireeye.com/v1/url?k=1&q=1&e=abc&u=https%3A%2F%2Fexample.com%2Fa", false},
		{"https://urldefense.proofpoint.com/v1/url?u=http://www.example.org/&k=x&s=0123", false},
		{"https://example.com/a?reserved=0", false},
	}
	for _, tt := range tests {
		if got := EndProven(tt.in); got != tt.want {
			t.Errorf("EndProven(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestUnwrapNote: a repair of the target is said in the note, which the
// unwrap rule puts in its Change.
func TestUnwrapNote(t *testing.T) {
	in := "https://nam02.safelinks.protection.outlook.com/?url=https%3A%2F%2Furldefense.com%2Fv3%2F__https%3A%2Ffiles.example.com%2Fa__%3B%21%21x%21y%24&reserved=0"
	got, layers, notes, err := unwrap(in, 0)
	if err != nil || got != "https://files.example.com/a" || len(layers) != 2 || len(notes) != 1 || !strings.Contains(notes[0], "one slash") {
		t.Fatalf("unwrap(%q) = %q %v %q %v", in, got, layers, notes, err)
	}
	rs, err := Parse(strings.NewReader("[[rule]]\nname = \"u\"\naction = \"unwrap\"\n"), "r.toml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := rs.Rewrite(Link{URL: in, Form: "bare", Where: "body"})
	if err != nil || res.URL != got || len(res.Changes) != 1 || !strings.Contains(res.Changes[0].Note, "one slash") {
		t.Fatalf("Rewrite: %+v %v", res, err)
	}
}

// TestCutDetail: the reason says whether the end marker is missing or
// has text after it.
func TestCutDetail(t *testing.T) {
	for in, want := range map[string]string{
		"https://nam04.safelinks.protection.outlook.com/?url=https%3A%2F%2Fx.example%2F&data=1":                 `no "&reserved=0" at its end`,
		"https://nam04.safelinks.protection.outlook.com/?url=https%3A%2F%2Fx.example%2F&reserved=0[[PATCH/RFC]": `text follows its end marker "reserved=0"`,
		"https://urldefense.proofpoint.com/v2/url?u=https-3A__x.example_&d=x&e=The":                             `text follows its end marker "e="`,
		"https://urldefense.com/v3/__https://x.example/__;!!A!B$xfs/more":                                       `text follows its end marker "$"`,
		"https://urldefense.com/v3/__https://x.example/__;!!A":                                                  `no "$" at its end`,
		"https://protect2.fireeye.com/v1/url?k=1-2-3&q=1&e=4&u=":                                                "may be cut short",
	} {
		_, _, _, err := UnwrapOnce(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("UnwrapOnce(%q): %v, want %q", in, err, want)
		}
	}
}
