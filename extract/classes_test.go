package extract

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/linkscan/linkscan/uri"
)

// The classes of issue #12, one table each. Every case runs through
// check (URL, form, flags, a problem, offsets, segments, host, line and
// column); cases marked vary run again inside (), double and single
// quotes, <>, after "> ", before ".", between words and on a line of its
// own. Cases not marked change meaning in some context on purpose (a
// "> " before only the first of two lines, white space inside <...>,
// a C1 control inside "...").

type classCase struct {
	name string
	in   string
	opts *Options
	want []want
	vary bool
}

// long makes a line of at least minWrapLine characters that ends with u,
// as a mailer that wraps at 72 columns leaves it.
func long(u string) string {
	pad := "Please find the document we discussed at the meeting at"
	for len([]rune(pad))+1+len([]rune(u)) < 72 {
		pad += " x"
	}
	return pad + " " + u
}

func bare(u string) want   { return want{u, FormBare, false, false, ""} }
func joined(u string) want { return want{u, FormBare, true, true, ""} }

var falseJoinCases = []classCase{
	// never a continuation
	{name: "sig-separator", in: long("http://a.example/images/icon_smile.gif") + "\n-- \nJohn", want: []want{bare("http://a.example/images/icon_smile.gif")}, vary: true},
	{name: "sig-separator-no-space", in: long("http://a.example/x/icon_smile.gif") + "\n--\nJohn", want: []want{bare("http://a.example/x/icon_smile.gif")}, vary: true},
	{name: "original-message", in: long("http://a.example/Some/Page") + "\n-----Original Message-----\nFrom: x", want: []want{bare("http://a.example/Some/Page")}, vary: true},
	{name: "forwarded", in: long("http://a.example/a-b-") + "\n---------- Forwarded message ---------", want: []want{bare("http://a.example/a-b-")}, vary: true},
	{name: "mailman-rule", in: long("http://a.example/list_") + "\n_______________________________________________\nlist mailing list", want: []want{bare("http://a.example/list_")}, vary: true},
	{name: "tilde-rule", in: long("http://a.example/x?y=") + "\n~~~~~~~~~~~~~~~~~~~~", want: []want{bare("http://a.example/x?y=")}, vary: true},
	{name: "equals-rule", in: long("http://a.example/p/") + "\n======================", want: []want{bare("http://a.example/p/")}, vary: true},
	{name: "list-dash", in: long("http://a.example/first/item-") + "\n- second item", want: []want{bare("http://a.example/first/item-")}, vary: true},
	{name: "list-star", in: long("http://a.example/first_") + "\n* second item", want: []want{bare("http://a.example/first_")}, vary: true},
	{name: "list-number", in: long("http://a.example/first_") + "\n2. second item", want: []want{bare("http://a.example/first_")}, vary: true},
	{name: "list-paren", in: long("http://a.example/first&") + "\n2) second item", want: []want{bare("http://a.example/first&")}, vary: true},
	{name: "new-sentence", in: long("http://a.example/wiki/") + "\nThanks for your help.", want: []want{bare("http://a.example/wiki/")}, vary: true},
	{name: "new-sentence-after-hyphen", in: long("http://a.example/x-") + "\nRegards, John", want: []want{bare("http://a.example/x-")}, vary: true},
	{name: "hyphen-then-prose", in: long("http://a.example/some-") + "\nand then we went home", want: []want{bare("http://a.example/some-")}, vary: true},
	{name: "new-url", in: long("http://a.example/x_") + "\nhttp://b.example/y", want: []want{bare("http://a.example/x_"), bare("http://b.example/y")}},
	{name: "new-mailto", in: long("http://a.example/x_") + "\nmailto:x@b.example", want: []want{bare("http://a.example/x_"), bare("mailto:x@b.example")}},
	{name: "new-www", in: long("http://a.example/x-") + "\nwww.b.example/y", want: []want{bare("http://a.example/x-"), {"www.b.example/y", FormAbbrev, false, false, ""}}},
	{name: "quoted-rule", in: "> " + long("http://a.example/x/icon.gif") + "\n> -- \n> John", want: []want{bare("http://a.example/x/icon.gif")}, vary: true},
	// modern list mail (issue #21)
	{name: "sig-with-name", in: long("https://lore.kernel.org/all/20250102-lkp@a.example/T/--") + "\n-- Daniel", want: []want{bare("https://lore.kernel.org/all/20250102-lkp@a.example/T/--")}, vary: true},
	{name: "bisect-hash", in: long("https://git.a.example/pub/scm/linux#") + "\n# good: [6613476e225e] Linux 6.8-rc1", want: []want{bare("https://git.a.example/pub/scm/linux#")}, vary: true},
	{name: "hash-patch", in: long("https://lore.kernel.org/r/1588.stgit@a.example/") + "\n# [PATCH 00/14] fscache: Rewrite", want: []want{bare("https://lore.kernel.org/r/1588.stgit@a.example/")}, vary: true},
	{name: "bracket-patch", in: long("https://lore.kernel.org/linux-nfs/20190318.GA1@a.example/T") + "\n[[PATCH/RFC] NFSv4: do not block other mounts]", want: []want{bare("https://lore.kernel.org/linux-nfs/20190318.GA1@a.example/T")}, vary: true},
	{name: "bracket-footnote", in: long("https://a.example/x_") + "\n[2] see above", want: []want{bare("https://a.example/x_")}, vary: true},
	{name: "label-diff", in: "> >  T:\tgit git://git.a.example/pub/scm/fs/xfs/xfs-linux.git\n> > -P:\tDocumentation/filesystems/x.rst", want: []want{bare("git://git.a.example/pub/scm/fs/xfs/xfs-linux.git")}},
	{name: "label-subject", in: long("https://a.example/pub/x_") + "\nxfs: fix the rmap walk", want: []want{bare("https://a.example/pub/x_")}, vary: true},
	{name: "numbered-list", in: "  679. http://www.library.a.example/Catalogue/76523471236%2Fwen44\n  680. --4.98\n", want: []want{bare("http://www.library.a.example/Catalogue/76523471236%2Fwen44")}},
	{name: "numbered-list-short", in: "1. " + long("http://a.example/first_") + "\n2. second_item", want: []want{bare("http://a.example/first_")}},
	// still joined: the shapes of real wraps
	{name: "seed-001", in: "  679.         http://www.library.my.town.va.us/Catalogue/76523471236%2Fwen44\n  680. --4.98\n",
		want: []want{joined("http://www.library.my.town.va.us/Catalogue/76523471236%2Fwen44--4.98")}},
	{name: "hyphen-word-alone", in: long("http://a.example/some-") + "\nthing", want: []want{joined("http://a.example/some-thing")}},
	{name: "hyphen-file", in: long("http://a.example/some-") + "\nthing.html for details", want: []want{joined("http://a.example/some-thing.html")}},
	{name: "query-value", in: long("http://a.example/q?id=") + "\n12345 is the one", want: []want{joined("http://a.example/q?id=12345")}},
	{name: "wiki-underscore", in: long("http://a.example/wiki/Some_") + "\nPage", want: []want{joined("http://a.example/wiki/Some_Page")}},
	{name: "query-after-question", in: long("http://a.example/article.php?") + "\nid=12345&view=full first.", want: []want{joined("http://a.example/article.php?id=12345&view=full")}},
	{name: "question-one-param-alone", in: long("http://a.example/page?") + "\nid=12345\nThanks", want: []want{joined("http://a.example/page?id=12345")}},
	{name: "question-one-param-prose", in: long("http://a.example/page?") + "\nid=12345 is mine", want: []want{bare("http://a.example/page")}},
	{name: "question-then-sentence", in: long("http://a.example/page?") + "\nyes, that one.", want: []want{bare("http://a.example/page")}},
	{name: "path-continues", in: long("http://a.example/pub/") + "\ndocs/x.txt", want: []want{joined("http://a.example/pub/docs/x.txt")}},
}

var endCases = []classCase{
	{name: "paren-inside-word", in: "(http://a.example/x)tail", want: []want{bare("http://a.example/x")}, vary: true},
	{name: "two-parens", in: "(http://a.example/)(http://b.example/)", want: []want{bare("http://a.example/"), bare("http://b.example/")}},
	{name: "markdown-two", in: "[text](http://a.org)[t2](mailto:x@y.org)", want: []want{bare("http://a.org"), bare("mailto:x@y.org")}},
	{name: "footnote", in: "(http://host.example/)[2]", want: []want{bare("http://host.example/")}, vary: true},
	{name: "outlook-header", in: "[mailto:owner@lists.example]On Behalf Of Jane", want: []want{bare("mailto:owner@lists.example")}, vary: true},
	{name: "outlook-emails", in: "[mailto:owner@lists.example]On Behalf Of Jane", opts: &Options{Emails: true}, want: []want{bare("mailto:owner@lists.example")}, vary: true},
	{name: "balanced-kept", in: "http://a.example/wiki/Foo_(bar)_baz", want: []want{bare("http://a.example/wiki/Foo_(bar)_baz")}, vary: true},
	{name: "ipv6-kept", in: "http://[2001:db8::1]:8080/x", want: []want{bare("http://[2001:db8::1]:8080/x")}, vary: true},
	{name: "trailing-at", in: "http://a.example/x@ y", want: []want{bare("http://a.example/x")}},
	{name: "trailing-bar", in: "|http://a.example/x|", want: []want{bare("http://a.example/x")}, vary: true},
	{name: "bars-in-query", in: "http://a.example/q?a=1||b=2", want: []want{{"http://a.example/q?a=1||b=2", FormBare, false, false, "not allowed"}}, vary: true},
	{name: "at-inside", in: "http://a.example/@user/x", want: []want{bare("http://a.example/@user/x")}, vary: true},
	{name: "apostrophe-balanced", in: "http://a.example/x'y'", want: []want{bare("http://a.example/x'y'")}, vary: true},
	{name: "apostrophe-balanced-dot", in: "see http://a.example/x'y'.", want: []want{bare("http://a.example/x'y'")}, vary: true},
	{name: "apostrophe-unbalanced", in: "http://a.example/x' and", want: []want{bare("http://a.example/x")}},
	{name: "apostrophe-around", in: "'http://a.example/x'", want: []want{bare("http://a.example/x")}},
	{name: "wiki-italics", in: "''http://a.example/x''", want: []want{bare("http://a.example/x")}, vary: true},
	{name: "wiki-bold", in: "'''http://a.example/x''' and", want: []want{bare("http://a.example/x")}},
	{name: "fullwidth-bar", in: "http://a.example/x｜次のページ", want: []want{bare("http://a.example/x")}},
	{name: "cjk-full-stop", in: "http://a.example/x。次", want: []want{bare("http://a.example/x")}},
	{name: "cjk-brackets", in: "「http://a.example/x」です", want: []want{bare("http://a.example/x")}, vary: true},
	{name: "cjk-comma", in: "http://a.example/x、http://b.example/y", want: []want{bare("http://a.example/x"), bare("http://b.example/y")}},
	{name: "fullwidth-parens", in: "（http://a.example/x）", want: []want{bare("http://a.example/x")}, vary: true},
	{name: "fullwidth-comma", in: "http://a.example/x，y", want: []want{bare("http://a.example/x")}},
	{name: "c1-nel", in: "http://a.example/x\u0085y", want: []want{bare("http://a.example/x")}},
	{name: "c1-csi", in: "http://a.example/x\u009by", want: []want{bare("http://a.example/x")}},
	{name: "data-img", in: `<img src="data:image/gif;base64,R0lGODlhAQABAIAAAP">`, want: nil, vary: true},
	{name: "data-bare", in: "data:text/plain,hello there", want: nil, vary: true},
	{name: "data-wrapper", in: "<URL:data:text/plain,hello>", want: nil, vary: true},
	{name: "data-on", in: `<img src="data:image/gif;base64,R0lGODlhAQABAIAAAP">`, opts: &Options{DataURIs: true},
		want: []want{{"data:image/gif;base64,R0lGODlhAQABAIAAAP", FormQuoted, false, false, ""}}},
	{name: "data-then-link", in: "data:text/plain,x http://a.example/", want: []want{bare("http://a.example/")}},
}

var startCases = []classCase{
	{name: "glued-dots", in: "see...http://a.example/x", want: []want{bare("http://a.example/x")}},
	{name: "glued-word", in: "wordhttp://a.example/", want: []want{bare("http://a.example/")}},
	{name: "glued-dot-https", in: "as spam.https://netec.example/", want: []want{bare("https://netec.example/")}, vary: true},
	{name: "glued-mailto", in: "Email:mailto:x@a.example", want: []want{bare("mailto:x@a.example")}, vary: true},
	{name: "glued-digit", in: "1http://a.example/", want: []want{bare("http://a.example/")}, vary: true},
	{name: "typo-htpp", in: "htpp://a.example/x", want: nil},
	{name: "typo-htp", in: "htp://a.example/x", want: nil},
	{name: "typo-ttps", in: "ttps://a.example/x", want: nil},
	{name: "defanged-off", in: "hxxp://a[.]example/x and hxxps://b.example/", want: nil},
	{name: "not-scheme-2go", in: "2go://a.example/x", want: nil, vary: true},
	{name: "unknown-hier", in: "magic://a/b/c", want: nil},
	{name: "unknown-in-angle", in: "<magic://a/b/c>", want: []want{{"magic://a/b/c", FormAngle, false, false, ""}}, vary: true},
	{name: "unknown-in-wrapper", in: "<URL:htpp://a.example/x>", want: []want{{"htpp://a.example/x", FormWrapper, false, false, ""}}, vary: true},
	{name: "unknown-in-quotes", in: `"htpp://a.example/x"`, want: nil, vary: true},
	{name: "dkim-h", in: "h=x-gm-message-state:mime-version:from:date:message-id:subject:to;", want: nil, vary: true},
	{name: "dkim-ymail", in: "X-YMail-JAS:X-Apparently-From:X-YMail-OSG:Received", want: nil, vary: true},
	{name: "cdo", in: "X-MICROSOFT-CDO-BUSYSTATUS:BUSY\nX-MICROSOFT-CDO-IMPORTANCE:1\nX-MICROSOFT-CDO-OWNERAPPTID:-1234", want: nil, vary: true},
	{name: "header-like", in: "Tel:+1-555-0100\nFax:+1-555-0101\nData:none\nNews:today", want: nil},
	{name: "header-like-quoted", in: `"Tel:+1-555-0100" "News:today"`, want: nil},
	{name: "x-opaque", in: "x-foo:bar baz", want: nil, vary: true},
	{name: "x-hier", in: "x-my-app://open/x", want: []want{bare("x-my-app://open/x")}, vary: true},
	{name: "tel-lower", in: "tel:+1-555-0100", want: []want{bare("tel:+1-555-0100")}, vary: true},
	{name: "file-triple", in: "file:///etc/motd", want: []want{bare("file:///etc/motd")}, vary: true},
	{name: "matrix", in: "matrix:u/alice:a.example", want: []want{bare("matrix:u/alice:a.example")}, vary: true},
	{name: "ssh", in: "ssh://git@a.example/repo", want: []want{bare("ssh://git@a.example/repo")}, vary: true},
	// compound and common schemes: found whole, the scheme kept
	{name: "svn+ssh", in: "svn+ssh://svn.a.example/repo/trunk", want: []want{bare("svn+ssh://svn.a.example/repo/trunk")}, vary: true},
	{name: "git+ssh", in: "git+ssh://git@a.example/x.git", want: []want{bare("git+ssh://git@a.example/x.git")}, vary: true},
	{name: "git+https", in: "git+https://a.example/x.git", want: []want{bare("git+https://a.example/x.git")}, vary: true},
	{name: "bzr+ssh", in: "bzr+ssh://bazaar.a.example/x", want: []want{bare("bzr+ssh://bazaar.a.example/x")}, vary: true},
	{name: "mongodb+srv", in: "mongodb+srv://db.a.example/test", want: []want{bare("mongodb+srv://db.a.example/test")}, vary: true},
	{name: "redis", in: "redis://cache.a.example:6379/0", want: []want{bare("redis://cache.a.example:6379/0")}, vary: true},
	{name: "rediss", in: "rediss://cache.a.example:6380/0", want: []want{bare("rediss://cache.a.example:6380/0")}, vary: true},
	{name: "postgres", in: "postgres://user@db.a.example:5432/app", want: []want{bare("postgres://user@db.a.example:5432/app")}, vary: true},
	{name: "postgresql", in: "postgresql://db.a.example/app?sslmode=require", want: []want{bare("postgresql://db.a.example/app?sslmode=require")}, vary: true},
	{name: "mongodb", in: "mongodb://db1.a.example,db2.a.example/app", want: []want{bare("mongodb://db1.a.example,db2.a.example/app")}, vary: true},
	{name: "amqp", in: "amqp://guest@mq.a.example/vhost", want: []want{bare("amqp://guest@mq.a.example/vhost")}, vary: true},
	{name: "sftp", in: "sftp://a.example/pub/x.tar.gz", want: []want{bare("sftp://a.example/pub/x.tar.gz")}, vary: true},
	{name: "s3", in: "s3://bucket-name/key/x", want: []want{bare("s3://bucket-name/key/x")}, vary: true},
	{name: "glued-compound", in: "see:git+https://a.example/x.git", want: []want{bare("git+https://a.example/x.git")}},
	{name: "unknown-compound", in: "foo+https://a.example/x", want: []want{bare("https://a.example/x")}},
	{name: "compound-bad-transport", in: "git+foo://a.example/x", want: nil},
}

var refangCases = []classCase{
	{name: "hxxp", in: "hxxp://a[.]example/x", opts: &Options{Refang: true}, want: []want{{"hxxp://a[.]example/x", FormBare, false, false, ProblemDefanged}}},
	{name: "hxxp-quoted", in: `"hxxp://a[.]example/x"`, opts: &Options{Refang: true}, want: []want{{"hxxp://a[.]example/x", FormQuoted, false, false, ProblemDefanged}}},
	{name: "hxxp-angle", in: "<hxxp://a[.]example/x>", opts: &Options{Refang: true}, want: []want{{"hxxp://a[.]example/x", FormAngle, false, false, ProblemDefanged}}},
	{name: "hxxps-glued", in: "see:hxxps://b.example/", opts: &Options{Refang: true}, want: []want{{"hxxps://b.example/", FormBare, false, false, ProblemDefanged}}, vary: true},
}

var emailCases = []classCase{
	{name: "colons", in: ":me@a.example:", opts: &Options{Emails: true}, want: []want{{"me@a.example", FormEmail, false, false, ""}}, vary: true},
	{name: "umlaut", in: "write to jörg@a.example today", opts: &Options{Emails: true}, want: []want{{"jörg@a.example", FormEmail, false, false, "non-ASCII"}}, vary: true},
	{name: "idn", in: "a@例子.测试", opts: &Options{Emails: true}, want: []want{{"a@例子.测试", FormEmail, false, false, ""}}, vary: true},
	{name: "quoted-local", in: `to "foo bar"@example.org.`, opts: &Options{Emails: true}, want: []want{{`"foo%20bar"@example.org`, FormEmail, false, false, ""}}, vary: true},
	{name: "quoted-local-plain", in: `("foo.bar"@example.org)`, opts: &Options{Emails: true}, want: []want{{`"foo.bar"@example.org`, FormEmail, false, false, ""}}, vary: true},
	{name: "not-url-user", in: "http://user@a.example/ and sip:me@a.example", opts: &Options{Emails: true}, want: []want{bare("http://user@a.example/"), bare("sip:me@a.example")}},
	{name: "no-tld", in: "root@localhost, x@y.z", opts: &Options{Emails: true}, want: nil, vary: true},
}

var spaceCases = []classCase{
	{name: "angle-space", in: "<http://a.example/some thing>", want: []want{{"http://a.example/something", FormAngle, false, false, ""}}, vary: true},
	{name: "angle-spaces-quoted", in: "> see <http://a.example/a b c>.", want: []want{{"http://a.example/abc", FormAngle, false, false, ""}}, vary: true},
	{name: "wrapper-nbsp", in: "<URL:\u00a0http://a.example/\u00a0x\u00a0>", want: []want{{"http://a.example/x", FormWrapper, false, false, ""}}, vary: true},
	{name: "angle-nbsp-padding", in: "<\u00a0http://a.example/x\u00a0>", want: []want{{"http://a.example/x", FormAngle, false, false, ""}}, vary: true},
	{name: "angle-space-padding", in: "see < http://a.example/x > now", want: []want{{"http://a.example/x", FormAngle, false, false, ""}}, vary: true},
	{name: "diff-not-padding", in: "< http://a.example/x >", want: []want{bare("http://a.example/x")}},
	{name: "padding-not-prose", in: "a < http://a.example/x and b > c", want: []want{bare("http://a.example/x")}, vary: true},
	{name: "quoted-url-wrapper", in: "\"URL:http://a.example/very/long/\n   path/x.html \"", want: []want{{"http://a.example/very/long/path/x.html", FormWrapper, true, false, ""}}},
	{name: "quoted-url-wrapper-one-line", in: `see "URL:http://a.example/x" now`, want: []want{{"http://a.example/x", FormWrapper, false, false, ""}}, vary: true},
	{name: "quoted-url-wrapper-padded", in: `see "URL: http://a.example/x " now`, want: []want{{"http://a.example/x", FormWrapper, false, false, ""}}, vary: true},
	{name: "quoted-url-wrapper-prose", in: `he wrote "URL:http://a.example/ is down" today`, want: []want{bare("http://a.example/")}, vary: true},
	{name: "wrapper-space-continuation", in: "<URL:http://a.example/a\n   b c>", want: []want{{"http://a.example/abc", FormWrapper, true, false, ""}}},
}

var domainOn = &Options{BareDomains: true}

func dom(u string) want { return want{u, FormDomain, false, false, ""} }

var domainCases = []classCase{
	{name: "path", in: "see example.com/path.", opts: domainOn, want: []want{dom("example.com/path")}, vary: true},
	{name: "host", in: "see news.example.org for it", opts: domainOn, want: []want{dom("news.example.org")}, vary: true},
	{name: "sentence-end", in: "It is at example.org.", opts: domainOn, want: []want{dom("example.org")}, vary: true},
	{name: "upper", in: "EXAMPLE.COM", opts: domainOn, want: []want{dom("EXAMPLE.COM")}, vary: true},
	{name: "port", in: "(a.example.co.uk:8080/x)", opts: domainOn, want: []want{dom("a.example.co.uk:8080/x")}, vary: true},
	{name: "ipv4", in: "host 192.0.2.1 is down", opts: domainOn, want: []want{dom("192.0.2.1")}, vary: true},
	{name: "ipv4-path", in: "192.0.2.1:8080/status", opts: domainOn, want: []want{dom("192.0.2.1:8080/status")}, vary: true},
	{name: "ipv6", in: "at [2001:db8::1]:8080/x now", opts: domainOn, want: []want{dom("[2001:db8::1]:8080/x")}, vary: true},
	{name: "www-is-abbrev", in: "www.example.org", opts: domainOn, want: []want{{"www.example.org", FormAbbrev, false, false, ""}}, vary: true},
	{name: "off", in: "see example.com/path.", want: nil, vary: true},
	{name: "file-pm", in: "edit Foo.pm and README.md, then setup.py and run.sh", opts: domainOn, want: nil, vary: true},
	{name: "perl", in: "use HTTP::Request; LWP::UserAgent->new", opts: domainOn, want: nil, vary: true},
	{name: "java", in: "import com.example.Foo; org.apache.http.client", opts: domainOn, want: nil, vary: true},
	{name: "version", in: "version 1.2.3 and v2.0b, 3.14", opts: domainOn, want: nil, vary: true},
	{name: "no-space", in: "the end.Next one.And more", opts: domainOn, want: nil, vary: true},
	{name: "abbrev-eg", in: "e.g. this, i.e. that", opts: domainOn, want: nil, vary: true},
	{name: "email-not-domain", in: "john.smith@example.com", opts: domainOn, want: nil, vary: true},
	{name: "path-not-domain", in: "/usr/lib/foo.so.1 and C:\\x\\y.com", opts: domainOn, want: nil, vary: true},
	{name: "method-call", in: "obj.method(x) and self.name = y", opts: domainOn, want: nil, vary: true},
	{name: "code", in: "self.name = x; this.info and me.so", opts: domainOn, want: nil, vary: true},
	{name: "word-tld", in: "I did it.so there, and this.is it.", opts: domainOn, want: nil, vary: true},
	{name: "short-cc", in: "see youtu.be/x and bit.ly", opts: domainOn, want: []want{dom("youtu.be/x"), dom("bit.ly")}},
	{name: "trace-fields", in: "Received: from a.example.org ([192.0.2.7])\n\tby mx.example.net (Postfix) with SMTP\nReporting-MTA: dns; mx.example.net\nList-Id: <dev.lists.example.org>", opts: domainOn, want: nil},
	{name: "hidden-address", in: "Keith Packard <keithp at keithp.com> wrote:", opts: domainOn, want: nil, vary: true},
	{name: "cidr", in: "mlx4_ib0: Link UP 172.31.0.250/24\n$ ip addr | grep 172.31.0.250/", opts: domainOn, want: nil},
	{name: "ipv4-slash-path", in: "see 192.0.2.1/index.html", opts: domainOn, want: []want{dom("192.0.2.1/index.html")}, vary: true},
	{name: "patch-code", in: "-\t\tfor (loop = 0; loop < pv.nr; loop++) {\n> +             dout(\"x\", (int) fbatch.nr,", opts: domainOn, want: nil},
	{name: "list-item", in: "- example.org for it\n+ example.net too", opts: domainOn, want: []want{dom("example.org"), dom("example.net")}},
	{name: "spaced-at", in: "dave @ treblig.org | web", opts: domainOn, want: nil, vary: true},
	{name: "hidden-address-attribution", in: "Twas brillig at 15:33:01 17.11.2009 UTC-05 when lars at seas.harvard.edu did gyre and gimble:", opts: domainOn, want: nil, vary: true},
	{name: "hidden-address-wrote", in: "lars at seas.harvard.edu (Lars) wrote:", opts: domainOn, want: nil, vary: true},
	{name: "hidden-address-parens", in: "Lars K. (lars at seas.harvard.edu) has it", opts: domainOn, want: nil, vary: true},
	{name: "hidden-address-field", in: "From: lars at seas.harvard.edu\nTo: dev at lists.example.org", opts: domainOn, want: nil},
	{name: "at-site-is-link", in: "more info at example.org; the code is at code.example.org (a mirror).", opts: domainOn, want: []want{dom("example.org"), dom("code.example.org")}},
	{name: "hidden-address-mailed", in: "Write to lars at seas.harvard.edu, mail jan at example.edu or send it to kim at example.net.", opts: domainOn, want: nil, vary: true},
	{name: "mailed-to-a-site", in: "write to us at example.org; it moved to servers at example.net; report bugs at bugs.example.com, write code at code.example.org", opts: domainOn,
		want: []want{dom("example.org"), dom("example.net"), dom("bugs.example.com"), dom("code.example.org")}},
	{name: "from-field-prose", in: "From: the docs at example.org", opts: domainOn, want: []want{dom("example.org")}},
	{name: "version-ipv4", in: "git 1.6.3.3 and 2.6.32.1, but 10.0.0.1 and 8.8.8.8:53", opts: domainOn, want: []want{dom("10.0.0.1"), dom("8.8.8.8:53")}},
	{name: "code-arrow", in: "mISDN_register_device(&card->ipac.isac.dch.dev, x); pvec.nr = nr_pages;", opts: domainOn, want: nil, vary: true},
	{name: "newsgroup", in: "Post these to comp.graphics instead.", opts: domainOn, want: nil, vary: true},
	{name: "citation", in: "Alberti, R., et.al. (1991)", opts: domainOn, want: nil, vary: true},
	{name: "quoted-line", in: "> the lib is available at freetype.org.", opts: domainOn, want: []want{dom("freetype.org")}, vary: true},
	{name: "unknown-tld", in: "foo.notatld and bar.baz", opts: domainOn, want: nil, vary: true},
	{name: "after-url", in: "http://a.example/x.html", opts: domainOn, want: []want{bare("http://a.example/x.html")}, vary: true},
	{name: "bad-ipv4", in: "999.1.1.1 and 1.2.3.4.5", opts: domainOn, want: nil, vary: true},
}

func runClass(t *testing.T, cs []classCase) {
	t.Helper()
	for _, c := range cs {
		check(t, c.name, c.in, c.opts, c.want)
		if c.vary {
			for _, v := range contexts {
				ws := slices.Clone(c.want)
				if len(ws) > 0 && strings.HasPrefix(c.in, ws[0].url) {
					if v.pre == "<" && ws[0].form == FormBare {
						ws[0].form = FormAngle
					}
					if v.pre == "\"" && ws[0].form == FormBare {
						ws[0].form = FormQuoted
					}
				}
				check(t, c.name+"/"+v.pre+"…"+v.post, v.pre+c.in+v.post, c.opts, ws)
			}
		}
	}
}

// contexts are the surroundings every vary case is tried in.
var contexts = []struct{ pre, post string }{
	{"(", ")"}, {"\"", "\""}, {"<", ">"}, {"> ", ""}, {"", "."}, {"\n", "\n"}, {"text ", " text"}, {"'", "'"},
}

func TestFalseJoins(t *testing.T) { runClass(t, falseJoinCases) }
func TestLinkEnds(t *testing.T)   { runClass(t, endCases) }
func TestLinkStarts(t *testing.T) { runClass(t, startCases) }
func TestRefang(t *testing.T) {
	runClass(t, refangCases)
	for _, c := range refangCases {
		ls := All([]byte(c.in), c.opts)
		if len(ls) != 1 || !strings.HasPrefix(ls[0].Canonical, "http") || strings.Contains(ls[0].Canonical, "xx") ||
			!errors.Is(ls[0].Errors[0], ErrDefanged) {
			t.Errorf("%s: %+v: want a refanged canonical form and ErrDefanged", c.name, ls)
		}
	}
}
func TestEmails(t *testing.T) {
	runClass(t, emailCases)
	// a Unicode domain is held to IDNA and written as A-labels
	ls := All([]byte("a@例子.测试"), &Options{Emails: true})
	if len(ls) != 1 || ls[0].Canonical != "mailto:a@xn--fsqu00a.xn--0zwm56d" || !ls[0].Valid || ls[0].Host != "xn--fsqu00a.xn--0zwm56d" {
		t.Errorf("IDN address: %+v", ls)
	}
}
func TestSpaceInDelimiters(t *testing.T) { runClass(t, spaceCases) }
func TestBareDomains(t *testing.T) {
	runClass(t, domainCases)
	ls := All([]byte("see example.com/path and [2001:db8::1]"), domainOn)
	if len(ls) != 2 || ls[0].Canonical != "http://example.com/path" || ls[0].Scheme != "http" || ls[1].Canonical != "http://[2001:db8::1]/" {
		t.Errorf("canonical forms of bare domains: %+v", ls)
	}
}

// TestTypedProblems: Errors and Problems say the same, and the kinds can
// be told apart with errors.Is and errors.As.
func TestTypedProblems(t *testing.T) {
	long := "http://a.example/" + strings.Repeat("x", 100)
	for _, tt := range []struct {
		in   string
		opts *Options
		kind error
	}{
		{"<http://a.example/x\n\ny>", nil, ErrUnterminated},
		{"<http://a.org/foo-\nbar>", nil, ErrHyphenWrap},
		{long, &Options{MaxLinkLength: 40}, ErrTooLong},
		{"hxxp://a.example/", &Options{Refang: true}, ErrDefanged},
		{"news:12345667123%asdghfh@info.cern.ch", nil, uri.ErrBadEscape},
	} {
		ls := All([]byte(tt.in), tt.opts)
		if len(ls) == 0 {
			t.Errorf("%q: no link", tt.in)
			continue
		}
		l := ls[0]
		if len(l.Errors) != len(l.Problems) {
			t.Errorf("%q: %d errors, %d problems", tt.in, len(l.Errors), len(l.Problems))
			continue
		}
		for i, e := range l.Errors {
			if e.Error() != l.Problems[i] {
				t.Errorf("%q: error %q printed differently from problem %q", tt.in, e, l.Problems[i])
			}
		}
		if !slices.ContainsFunc(l.Errors, func(e error) bool { return errors.Is(e, tt.kind) }) {
			t.Errorf("%q: errors %v hold no %v", tt.in, l.Errors, tt.kind)
		}
	}
	ls := All([]byte("news:12345667123%asdghfh@info.cern.ch"), nil)
	if up, ok := errors.AsType[*URLProblem](ls[0].Errors[0]); !ok || up.Err.Offset != 16 {
		t.Errorf("URL problem: %#v", ls[0].Errors)
	}
}

// TestCutInPieces: links in pieces cut at MaxLinkLength, at every
// length around the pieces' ends, keep the segment property.
func TestCutInPieces(t *testing.T) {
	for _, in := range []string{"<http://a.example/pppppppppppppppppp\n> qqqqqqqq>", "<URL:http://a.example/ppp qqq\n   rrr éé sss>",
		"<http://a.example/é/\n  y>", "http://a.example/ééééééééééééééééééééééééé x"} {
		for n := 10; n < 50; n++ {
			for _, l := range All([]byte(in), &Options{MaxLinkLength: n}) {
				if msg := segmentsProblem(in, l); msg != "" {
					t.Errorf("%q, MaxLinkLength %d: %s", in, n, msg)
				}
				if n := len(slices.DeleteFunc(slices.Clone(l.Errors), func(e error) bool { return e != ErrTooLong })); n > 1 {
					t.Errorf("%q: ErrTooLong %d times", in, n)
				}
				if len(l.URL) > n || !utf8.ValidString(l.URL) {
					t.Errorf("%q, MaxLinkLength %d: URL %q", in, n, l.URL)
				}
			}
		}
	}
}

// TestNoLimits: a negative limit means none (the rule of package mailbox).
func TestNoLimits(t *testing.T) {
	u := "http://a.example/" + strings.Repeat("p", 100<<10)
	in := "x " + u + " y"
	ls := All([]byte(in), &Options{MaxLineLength: -1, MaxLinkLength: -1})
	if len(ls) != 1 || ls[0].URL != u || len(ls[0].Problems) != 0 {
		t.Errorf("no limits: got %d links", len(ls))
	}
	ls = All([]byte(in), nil)
	if len(ls) != 1 || len(ls[0].URL) != 8<<10 || !errors.Is(ls[0].Errors[0], ErrTooLong) {
		t.Errorf("default limits: want the link cut at 8 KiB, got %d links", len(ls))
	}
}

// TestDataURIsNotBuilt: a data: URI that is not reported costs no
// allocation (it is neither copied nor parsed), as text without links.
func TestDataURIsNotBuilt(t *testing.T) {
	text := []byte("an image: data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk and <data:text/plain,x>\n")
	s := NewBytesScanner(text, nil)
	allocs := testing.AllocsPerRun(20, func() {
		s.ResetBytes(text, nil)
		for s.Scan() {
			t.Errorf("reported: %q", s.Link().URL)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations a scan, want 0", allocs)
	}
}
