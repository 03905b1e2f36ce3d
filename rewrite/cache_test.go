package rewrite

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cacheRuleFiles are rules files using every field the cache writes.
func cacheRuleFiles(t testing.TB) map[string]string {
	files := map[string]string{
		"actions": `
rule = [
  { name = "unwrap2", action = "unwrap", max-depth = 1, match.form = "angle" },
  { name = "strip", action = "strip-params", defaults = false, params = ["sid", "x_*"], keep-params = ["x_id", "k*"], except-hosts = ["*.a.example", "b.example"], match.scheme = ["https", "http"] },
  { name = "replace", action = "replace", pattern = "^https://r\\.example/(.*)$", with = "$1", match.regexp = "r\\.example" },
  { name = "drop", action = "drop-wrapper", match.form = ["url-wrapper", "angle"] },
  { name = "mid", action = "mid-to-web", template = "https://l.example/r?id={msgid}", match = { location = ["body", "header:list-archive"] } },
  { action = "canonicalize", match.host = ["*.c.example", "d.example"], match.prefix = ["HTTP://E.example/x"] },
  { action = "wrap", match.host = "d.example" },
  { action = "keep", match.prefix = "https://keep.example/" },
  { action = "map", from = "http://m.example/a/", to = "https://m.example/b/" },
  { action = "map", from-host = "*.old.example", to-host = "*.new.example" },
  { action = "strip-params" },
  { action = "unwrap" },
]
`,
		"none": "version = 1\n",
		// the smallest rules: no name, no match, no parameters (7 bytes
		// each in the cache, which once took 8 for a lower bound)
		"small": "[[rule]]\naction = \"canonicalize\"\n[[rule]]\naction = \"canonicalize\"\n[[rule]]\naction = \"keep\"\n",
		"map":   mapRules(300),
		"bench": filterBenchRules(50),
		"archive": `
[[rule]]
action = "archive"
[[rule]]
name = "archived"
action = "archive"
statuses = ["dead", "failing"]
match.host = "gone.example"
`,
	}
	for _, name := range []string{"rules", "cycle", "charset"} {
		b, err := os.ReadFile("../testdata/rewrite/" + name + ".toml")
		if err != nil {
			t.Fatal(err)
		}
		files["testdata-"+name] = string(b)
	}
	return files
}

func mustParse(t testing.TB, src, name string) *Rules {
	t.Helper()
	rs, err := Parse(strings.NewReader(src), name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rs
}

// Decoding what was encoded gives the very rules Parse gave: every
// field, the shared text, the compiled regexps and parameter sets, the
// index.
func TestCacheRoundTrip(t *testing.T) {
	for name, src := range cacheRuleFiles(t) {
		rs := mustParse(t, src, name+".toml")
		got, err := decodeRules(encodeRules(rs), name+".toml")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, rs) {
			t.Errorf("%s: decoded rules differ from the parsed ones", name)
			for i := range min(len(got.rules), len(rs.rules)) {
				if !reflect.DeepEqual(got.rules[i], rs.rules[i]) {
					t.Errorf("rule %d:\n got %+v\nwant %+v", i, got.rules[i], rs.rules[i])
					break
				}
			}
		}
	}
}

// cacheLayout is the fields of the structures the cache writes, as
// encodeRules and decodeRules know them. When this test fails, a field
// was added, removed or changed: write it in encodeRules and read it in
// decodeRules (rewrite/cache.go), raise cacheVersion, then update this
// list.
var cacheLayout = []string{
	"Rules.file string",
	"Rules.rules []*rewrite.rule",
	"Rules.idx rewrite.index",
	"Rules.hasArchive bool",
	"rule.line int32",
	"rule.act rewrite.action",
	"rule.byHost bool",
	"rule.off uint32",
	"rule.nName uint32",
	"rule.nFrom uint32",
	"rule.nTo uint32",
	"rule.text *string",
	"rule.matchSpec *rewrite.matchSpec",
	"rule.actionParams *rewrite.actionParams",
	"matchSpec.schemes []string",
	"matchSpec.hosts []string",
	"matchSpec.prefixes []string",
	"matchSpec.re *regexp.Regexp",
	"matchSpec.forms []string",
	"matchSpec.locations []string",
	"actionParams.pattern *regexp.Regexp",
	"actionParams.with string",
	"actionParams.maxDepth int",
	"actionParams.params *rewrite.ParamSet",
	"actionParams.paramNames []string",
	"actionParams.exceptParams []string",
	"actionParams.noDefaults bool",
	"actionParams.exceptHosts []string",
	"actionParams.template string",
	"actionParams.statuses []string",
	"ParamSet.exact map[string]bool",
	"ParamSet.prefixes []string",
	"ParamSet.keep *rewrite.ParamSet",
}

func TestCacheLayout(t *testing.T) {
	var got []string
	for _, v := range []any{Rules{}, rule{}, matchSpec{}, actionParams{}, ParamSet{}} {
		ty := reflect.TypeOf(v)
		for i := range ty.NumField() {
			f := ty.Field(i)
			got = append(got, fmt.Sprintf("%s.%s %s", ty.Name(), f.Name, f.Type))
		}
	}
	if !reflect.DeepEqual(got, cacheLayout) {
		t.Errorf("the rules structures changed: write the new fields in encodeRules, read them in decodeRules (rewrite/cache.go), raise cacheVersion and update cacheLayout:\n%s",
			strings.Join(got, "\n"))
	}
}

// writeRules writes src as a rules file in a new directory and returns
// its path and a cache directory beside it.
func writeRules(t *testing.T, src string) (path, dir string) {
	d := t.TempDir()
	path = filepath.Join(d, "rules.toml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, filepath.Join(d, "cache")
}

func loadCached(t *testing.T, path, dir string) (*Rules, CacheInfo) {
	t.Helper()
	rs, info, err := LoadCached(path, dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rs, want) {
		t.Fatalf("LoadCached gave rules other than Load's (cache %+v)", info)
	}
	return rs, info
}

func TestLoadCached(t *testing.T) {
	path, dir := writeRules(t, cacheRuleFiles(t)["actions"])
	_, info := loadCached(t, path, dir)
	if info.Hit || info.ReadErr != nil || info.WriteErr != nil || info.File == "" {
		t.Fatalf("first load: %+v", info)
	}
	fi, err := os.Stat(info.File)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("cache file: %v %v", fi, err)
	}
	if di, err := os.Stat(dir); err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("cache dir: %v %v", di, err)
	}
	_, info = loadCached(t, path, dir)
	if !info.Hit || info.ReadErr != nil || info.WriteErr != nil {
		t.Fatalf("second load: %+v", info)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("%d files in the cache directory, want 1", len(ents))
	}
	// errors are Load's
	if _, _, err := LoadCached(filepath.Join(dir, "missing.toml"), dir); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing rules file: %v", err)
	}
	bad, _ := writeRules(t, "[[rule]]\naction = \"nothing\"\n")
	_, _, err1 := LoadCached(bad, dir)
	_, err2 := Load(bad)
	if err1 == nil || err2 == nil || err1.Error() != err2.Error() {
		t.Errorf("bad rules file: LoadCached %v, Load %v", err1, err2)
	}
}

// dir "" is DefaultCacheDir; without one, the rules are parsed.
func TestCacheDefaultDir(t *testing.T) {
	path, _ := writeRules(t, cacheRuleFiles(t)["bench"])
	xdg := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", xdg)
	_, info := loadCached(t, path, "")
	if info.WriteErr != nil || filepath.Dir(info.File) != filepath.Join(xdg, "linkscan") {
		t.Fatalf("%+v", info)
	}
	if _, info = loadCached(t, path, ""); !info.Hit {
		t.Errorf("%+v", info)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	if _, info = loadCached(t, path, ""); info.Hit || info.WriteErr == nil || !strings.Contains(info.WriteErr.Error(), "no cache directory") {
		t.Errorf("no cache directory: %+v", info)
	}
}

// An edit of the rules file that keeps its size and modification time
// is still seen: the cache is keyed by content.
func TestCacheStale(t *testing.T) {
	src := "[[rule]]\naction = \"map\"\nfrom-host = \"aaa.example\"\nto-host = \"bbb.example\"\n"
	path, dir := writeRules(t, src)
	loadCached(t, path, dir)
	fi, _ := os.Stat(path)
	if err := os.WriteFile(path, []byte(strings.Replace(src, "bbb", "ccc", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(path, fi.ModTime(), fi.ModTime())
	rs, info := loadCached(t, path, dir)
	if info.Hit || !errors.Is(info.ReadErr, errCacheStale) || info.WriteErr != nil {
		t.Fatalf("after the edit: %+v", info)
	}
	if r, _ := rs.Rewrite(Link{URL: "http://aaa.example/"}); r.URL != "http://ccc.example/" {
		t.Errorf("after the edit: %s", r.URL)
	}
	if _, info = loadCached(t, path, dir); !info.Hit {
		t.Errorf("the cache was not written again: %+v", info)
	}
	// a cache file made by another program is stale too
	rs = mustParse(t, src, path)
	key := cacheKey{prog: "another linkscan", size: uint64(len(src))}
	b := encodeCache(key, rs)
	if err := os.WriteFile(filepath.Join(dir, cacheFileName(path)), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, info = loadCached(t, path, dir); info.Hit || !errors.Is(info.ReadErr, errCacheStale) {
		t.Errorf("another program's cache: %+v", info)
	}
}

// Any damage to the cache file (each byte changed, or the file cut at
// any length) is seen: the rules are parsed, equal to Load's, and the
// file written again.
func TestCacheDamaged(t *testing.T) {
	path, dir := writeRules(t, cacheRuleFiles(t)["actions"])
	_, info := loadCached(t, path, dir)
	good, err := os.ReadFile(info.File)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2*len(good); i++ {
		var b []byte
		if i < len(good) {
			b = bytes.Clone(good)
			b[i] ^= 1 << (i % 8)
		} else {
			b = good[:i-len(good)]
		}
		if err := os.WriteFile(info.File, b, 0o600); err != nil {
			t.Fatal(err)
		}
		rs, got, err := LoadCached(path, dir)
		if err != nil || !reflect.DeepEqual(rs, want) {
			t.Fatalf("damage %d: other rules, or %v", i, err)
		}
		if got.Hit || got.ReadErr == nil || got.WriteErr != nil {
			t.Fatalf("damage %d: %+v", i, got)
		}
		if now, _ := os.ReadFile(info.File); !bytes.Equal(now, good) {
			t.Fatalf("damage %d: the cache file was not written again", i)
		}
	}
}

// A cache file others may write, or not a regular file, is not used.
func TestCacheUntrusted(t *testing.T) {
	path, dir := writeRules(t, cacheRuleFiles(t)["map"])
	_, info := loadCached(t, path, dir)
	if err := os.Chmod(info.File, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, got := loadCached(t, path, dir); got.Hit || got.ReadErr == nil || !strings.Contains(got.ReadErr.Error(), "others may write") {
		t.Errorf("mode 0666: %+v", got)
	}
	if _, got := loadCached(t, path, dir); !got.Hit {
		t.Errorf("the cache file was not written again: %+v", got)
	}
	os.Remove(info.File)
	if err := os.Mkdir(info.File, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, got := loadCached(t, path, dir); got.Hit || got.ReadErr == nil || got.WriteErr == nil {
		t.Errorf("a directory in its place: %+v", got)
	}
}

// A cache file of another user is not used (as root, the file is given
// to nobody).
func TestCacheOtherOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file to another user")
	}
	path, dir := writeRules(t, cacheRuleFiles(t)["map"])
	_, info := loadCached(t, path, dir)
	if err := os.Chown(info.File, 65534, 65534); err != nil {
		t.Skip(err)
	}
	_, got := loadCached(t, path, dir)
	if got.Hit || got.ReadErr == nil || !strings.Contains(got.ReadErr.Error(), "owned by uid 65534") || got.WriteErr != nil {
		t.Errorf("another user's cache file: %+v", got)
	}
	if _, got = loadCached(t, path, dir); !got.Hit {
		t.Errorf("the cache file was not written again: %+v", got)
	}
}

// A cache directory that cannot be made or written: the rules are
// parsed, the failure reported in CacheInfo, nothing left behind.
func TestCacheUnwritable(t *testing.T) {
	path, _ := writeRules(t, cacheRuleFiles(t)["actions"])
	// under a regular file: no directory can be made there, root or not
	if _, info := loadCached(t, path, filepath.Join(path, "cache")); info.Hit || info.WriteErr == nil {
		t.Errorf("cache under a file: %+v", info)
	}
	if os.Geteuid() != 0 {
		ro := filepath.Join(t.TempDir(), "ro")
		os.Mkdir(ro, 0o500)
		defer os.Chmod(ro, 0o700)
		if _, info := loadCached(t, path, ro); info.Hit || info.WriteErr == nil {
			t.Errorf("read-only cache directory: %+v", info)
		}
		if ents, _ := os.ReadDir(ro); len(ents) != 0 {
			t.Errorf("read-only cache directory: %d files left", len(ents))
		}
	}
}

// A rules file that is a pipe is read once and parsed, without a cache.
func TestCacheFIFO(t *testing.T) {
	src := cacheRuleFiles(t)["actions"]
	want := mustParse(t, src, "x")
	d := t.TempDir()
	fifo := filepath.Join(d, "rules.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	go func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.WriteString(src)
			w.Close()
		}
	}()
	rs, info, err := LoadCached(fifo, filepath.Join(d, "cache"))
	if err != nil || info.Hit || info.WriteErr == nil {
		t.Fatalf("%v %+v", err, info)
	}
	rs.file = want.file
	if !reflect.DeepEqual(rs, want) {
		t.Errorf("other rules")
	}
	if _, err := os.Stat(filepath.Join(d, "cache")); err == nil {
		t.Errorf("a cache directory was made")
	}
}

// Many loads at once of a rules file with no cache yet: each gets the
// rules, one cache file is left (no temporary file), and it is whole.
func TestCacheConcurrent(t *testing.T) {
	path, dir := writeRules(t, mapRules(3000))
	want, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 16 {
		wg.Go(func() {
			for range 4 {
				rs, info, err := LoadCached(path, dir)
				switch {
				case err != nil:
					errs <- err
				case info.WriteErr != nil:
					errs <- info.WriteErr
				case info.ReadErr != nil:
					errs <- fmt.Errorf("a reader saw a damaged file: %v", info.ReadErr)
				case !reflect.DeepEqual(rs, want):
					errs <- errors.New("other rules")
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("%d files in the cache directory, want 1", len(ents))
	}
	if _, info := loadCached(t, path, dir); !info.Hit {
		t.Errorf("%+v", info)
	}
}

// Temporary files left by writers killed while writing are removed when
// the cache is next written, once they are old; a fresh one (a writer at
// work) is left alone.
func TestCacheStaleTemps(t *testing.T) {
	path, dir := writeRules(t, cacheRuleFiles(t)["bench"])
	os.MkdirAll(dir, 0o700)
	old, fresh := filepath.Join(dir, ".rules-1.tmp"), filepath.Join(dir, ".rules-2.tmp")
	os.WriteFile(old, []byte("half a cache"), 0o600)
	os.WriteFile(fresh, []byte("half a cache"), 0o600)
	long := time.Now().Add(-time.Hour)
	os.Chtimes(old, long, long)
	if _, info := loadCached(t, path, dir); info.Hit || info.WriteErr != nil {
		t.Fatalf("%+v", info)
	}
	if _, err := os.Stat(old); err == nil {
		t.Errorf("an old temporary file was left")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a fresh temporary file was removed: %v", err)
	}
}

// FuzzCacheDecode: whatever the bytes, decoding gives an error or rules
// that can be used (no panic), and that encode and decode again to the
// same rules.
func FuzzCacheDecode(f *testing.F) {
	key := cacheKey{prog: "fuzz", size: 1}
	for name, src := range cacheRuleFiles(f) {
		rs := mustParse(f, src, name)
		if len(src) < 8<<10 {
			f.Add(encodeRules(rs))
			f.Add(encodeCache(key, rs))
		}
	}
	links := []Link{
		{URL: "https://nam02.safelinks.protection.outlook.com/?url=http%3A%2F%2Fm.example%2Fa%2F&data=x&reserved=0", Form: "bare", Where: "body"},
		{URL: "http://x.old.example/?sid=1&utm_source=x", Form: "angle", Where: "body"},
		{URL: "mid:a@b.example", Form: "url-wrapper", Where: "header:list-archive"},
		{URL: "https://r.example/d.example/", Form: "bare", Where: "html:href", ContentType: "text/html"},
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeCache(b, key.prog, "fuzz.toml")
		rs, err := decodeRules(b, "fuzz.toml")
		if err != nil {
			return
		}
		for _, l := range links {
			rs.Rewrite(l)
		}
		again, err := decodeRules(encodeRules(rs), "fuzz.toml")
		if err != nil {
			t.Fatalf("decoded rules do not decode again: %v", err)
		}
		if !reflect.DeepEqual(again, rs) {
			t.Fatalf("decoded rules change through encoding")
		}
	})
}
