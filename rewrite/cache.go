package rewrite

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// The rules cache keeps a rules file in a compiled form, so that a
// command run once per message (linkscan filter) does not parse the
// same TOML file each time: the cache is read and checked in a fraction
// of the time the parse takes (a fifth for 100,000 rules; docs/filter.md).
//
// It never gives stale rules. A cache file holds the SHA-256 and the
// length of the rules file it was made from, and the identity of the
// program that made it (its path, size, modification time, inode, Go
// version and revision): it is
// used only when the rules file read now has that same content and the
// program is that same program, so an edit of the rules file, or a new
// linkscan, parses again. Its body is checked by a CRC-32C: a torn or
// damaged file is parsed again and replaced. It is written to a
// temporary file in the same directory and renamed over the old one, so
// that many filters starting at once each read either the old file or
// the new one, whole. It is used only when it belongs to the user
// running the program and nobody else may write it. Any failure of the
// cache (a directory that cannot be created or written, a file that
// cannot be read or decoded) falls back to parsing: it is reported in
// CacheInfo, never an error of LoadCached.

// CacheInfo tells what the cache did for LoadCached.
type CacheInfo struct {
	// Hit: the rules came from the cache file, not from parsing.
	Hit bool
	// File is the cache file for the rules file ("" when there is none:
	// the program's identity could not be known).
	File string
	// ReadErr is why a cache file present was not used (stale: another
	// rules content or program; damaged; not the user's own); nil when
	// it was used or there was none.
	ReadErr error
	// WriteErr is why the cache file could not be written after the
	// rules were parsed; nil when it was written or when it was used.
	WriteErr error
}

// errCacheStale is a cache file made from another rules content or by
// another program: not a failure, the cache is written again.
var errCacheStale = errors.New("stale: made from another rules file content or by another linkscan")

// DefaultCacheDir is the directory of the rules cache when none is given:
// linkscan in the user's cache directory (os.UserCacheDir:
// $XDG_CACHE_HOME, else ~/.cache).
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "linkscan"), nil
}

// cacheMagic begins every cache file; cacheVersion is the format of
// what follows (raised when the encoding changes).
const (
	cacheMagic   = "linkscan rules cache\n"
	cacheVersion = 1
)

// maxCacheFile bounds the cache file read: a cache file is smaller than
// its rules file (numbers for keys), plus its header.
const maxCacheFile = 2*MaxRulesFileSize + 1<<20

// LoadCached is Load through the rules cache in dir: the rules come from
// the cache file of path in dir when that file was made from the same
// content of path by the same program; else path is parsed, and the
// cache file written (dir created, mode 0700, when missing; dir "" is
// DefaultCacheDir). The rules,
// and the error when path cannot be read or parsed, are the same as
// Load's. What the cache did is in CacheInfo; a failure of the cache is
// never an error here.
func LoadCached(path, dir string) (*Rules, CacheInfo, error) {
	var info CacheInfo
	f, err := os.Open(path)
	if err != nil {
		return nil, info, fmt.Errorf("rewrite: %w", err)
	}
	defer f.Close()
	prog, exeErr := programID()
	if exeErr == nil && dir == "" {
		if dir, err = DefaultCacheDir(); err != nil {
			exeErr = fmt.Errorf("no cache directory: %w", err)
		}
	}
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		// a pipe (--rules <(...)) or a device: read once, parsed, no
		// cache
		rs, err := Parse(f, path)
		if err == nil {
			info.WriteErr = errors.New("no cache: the rules file is not a regular file")
		}
		return rs, info, err
	}
	if exeErr == nil {
		// The rules file is only hashed, as it is read: its bytes are
		// not kept (no 9 MB buffer for 100,000 rules). It is hashed
		// while the cache file is read and decoded, and the rules
		// decoded are used only when they were made from that hash.
		type hashed struct {
			key cacheKey
			err error
		}
		hc := make(chan hashed, 1)
		go func() {
			var h hashed
			defer func() {
				if p := recover(); p != nil { // never the process's end
					h.err = fmt.Errorf("hashing the rules file: %v", p)
				}
				hc <- h
			}()
			h.key, h.err = hashRules(f)
		}()
		info.File = filepath.Join(dir, cacheFileName(path))
		rs, made, err := readCache(info.File, prog, path)
		h := <-hc
		if h.err != nil {
			return nil, info, fmt.Errorf("rewrite: reading %s: %w", path, h.err)
		}
		if err == nil && (made.size != h.key.size || made.sum != h.key.sum) {
			err = errCacheStale
		}
		if err == nil {
			info.Hit = true
			return rs, info, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			info.ReadErr = err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, info, fmt.Errorf("rewrite: reading %s: %w", path, err)
		}
	}
	// The bytes parsed are the bytes hashed for the cache file written:
	// the file may have changed since it was hashed above.
	data, err := readAll(f)
	if err != nil {
		return nil, info, fmt.Errorf("rewrite: reading %s: %w", path, err)
	}
	rs, err := Parse(bytes.NewReader(data), path)
	if err != nil {
		return nil, info, err
	}
	if exeErr != nil {
		info.WriteErr = fmt.Errorf("no cache: %w", exeErr)
		return rs, info, nil
	}
	key := cacheKey{prog: prog, size: uint64(len(data)), sum: sha256.Sum256(data)}
	info.WriteErr = writeCache(dir, info.File, encodeCache(key, rs))
	return rs, info, nil
}

// hashRules reads r to its end (at most MaxRulesFileSize+1 bytes) and
// returns its size and SHA-256.
func hashRules(r io.Reader) (cacheKey, error) {
	h := sha256.New()
	n, err := io.CopyBuffer(h, io.LimitReader(r, MaxRulesFileSize+1), make([]byte, 64<<10))
	var key cacheKey
	key.size = uint64(n)
	h.Sum(key.sum[:0])
	return key, err
}

// cacheKey is what a cache file must have been made from.
type cacheKey struct {
	prog string   // programID
	size uint64   // of the rules file
	sum  [32]byte // SHA-256 of the rules file
}

// programID identifies the running program: its path, size,
// modification time and inode, its Go version and version control
// revision. A rebuilt or upgraded linkscan has another, so
// that a cache file is never read by code other than the code that wrote
// it.
func programID() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("this program's identity: %w", err)
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return "", fmt.Errorf("this program's identity: %w", err)
	}
	id := exe + "\x00" + strconv.FormatInt(fi.Size(), 10) + "\x00" + strconv.FormatInt(fi.ModTime().UnixNano(), 10)
	if dev, ino, ok := fileIdentity(fi); ok {
		id += "\x00" + strconv.FormatUint(dev, 10) + ":" + strconv.FormatUint(ino, 10)
	}
	// and what the build says of itself, for a binary copied over
	// another keeping its size and time
	id += "\x00" + runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		id += "\x00" + bi.Main.Version
		for _, s := range bi.Settings {
			if strings.HasPrefix(s.Key, "vcs.") {
				id += "\x00" + s.Key + "=" + s.Value
			}
		}
	}
	return id, nil
}

// cacheFileName is the name of the cache file of the rules file at path:
// one file per rules file (by its absolute path), replaced when the
// rules change.
func cacheFileName(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	h := sha256.Sum256([]byte(path))
	return "rules-" + hex.EncodeToString(h[:12]) + ".cache"
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// The file: cacheMagic, a uvarint cacheVersion, the key (uvarint length
// and the program's identity, uvarint size, 32 bytes of SHA-256), the
// uvarint length of the body, its CRC-32C (4 bytes, little-endian), and
// the body (encodeRules).

func encodeCache(key cacheKey, rs *Rules) []byte {
	body := encodeRules(rs)
	var e cacheEncoder
	e.b = append(e.b, cacheMagic...)
	e.uint(cacheVersion)
	e.str(key.prog)
	e.uint(key.size)
	e.b = append(e.b, key.sum[:]...)
	e.uint(uint64(len(body)))
	e.b = binary.LittleEndian.AppendUint32(e.b, crc32.Checksum(body, castagnoli))
	return append(e.b, body...)
}

// decodeCache returns the rules of a cache file b made by the program
// prog, named name in their errors, and the key they were made from
// (the caller compares its size and sum with the rules file's);
// errCacheStale when another program or format made it.
func decodeCache(b []byte, prog string, name string) (*Rules, cacheKey, error) {
	var made cacheKey
	d := cacheDecoder{b: b}
	if !bytes.HasPrefix(b, []byte(cacheMagic)) {
		return nil, made, errors.New("not a rules cache file")
	}
	d.b = d.b[len(cacheMagic):]
	if v := d.uint(); d.err == nil && v != cacheVersion {
		return nil, made, errCacheStale
	}
	made.prog = d.str()
	made.size = d.uint()
	copy(made.sum[:], d.bytes(32))
	n := d.uint()
	crc := d.bytes(4)
	if d.err != nil {
		return nil, made, d.err
	}
	if made.prog != prog {
		return nil, made, errCacheStale
	}
	if n != uint64(len(d.b)) {
		return nil, made, fmt.Errorf("damaged: a body of %d bytes, %d said", len(d.b), n)
	}
	if crc32.Checksum(d.b, castagnoli) != binary.LittleEndian.Uint32(crc) {
		return nil, made, errors.New("damaged: CRC-32C of the body")
	}
	rs, err := decodeRules(d.b, name)
	return rs, made, err
}

// readCache reads the cache file at file, made by the program prog.
func readCache(file, prog, name string) (*Rules, cacheKey, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, cacheKey{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, cacheKey{}, err
	}
	if err := trusted(fi); err != nil {
		return nil, cacheKey{}, err
	}
	if fi.Size() > maxCacheFile {
		return nil, cacheKey{}, fmt.Errorf("%d bytes: too large", fi.Size())
	}
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, cacheKey{}, err
	}
	return decodeCache(b, prog, name)
}

// trusted refuses a cache file that is not a regular file of the user
// running the program, or that others may write: rules from it would
// rewrite the user's mail.
func trusted(fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("mode %v: others may write it", fi.Mode().Perm())
	}
	if uid, ok := fileOwner(fi); ok && uid != os.Geteuid() {
		return fmt.Errorf("owned by uid %d, not by this user", uid)
	}
	return nil
}

// writeCache writes b as the cache file at file: into a temporary file
// of dir, renamed over file, so that no reader ever sees part of it.
// No fsync: a file damaged by a crash fails its CRC and is replaced.
func writeCache(dir, file string, b []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".rules-*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	removeStaleTemps(dir, time.Now().Add(-staleTempAge))
	return nil
}

// staleTempAge is the age past which a temporary file of the cache is
// taken for one left by a process killed while writing it (another
// writing now has a fresh one).
const staleTempAge = 10 * time.Minute

// removeStaleTemps removes the cache's temporary files in dir last
// written before t: they are never read, only left by killed writers.
func removeStaleTemps(dir string, t time.Time) {
	names, _ := filepath.Glob(filepath.Join(dir, ".rules-*.tmp"))
	for _, n := range names {
		if fi, err := os.Lstat(n); err == nil && fi.Mode().IsRegular() && fi.ModTime().Before(t) {
			os.Remove(n)
		}
	}
}

// The body: the number of rules; whether they have a text and the text;
// then each rule: line (varint), action (byte), flags (byte: 1 byHost,
// 2 matchSpec, 4 actionParams), off, nName, nFrom, nTo (uvarints); its
// matchSpec: schemes, hosts, prefixes, regexp (flag byte, source),
// forms, locations; its actionParams: pattern (flag byte, source),
// with, maxDepth, params (flag byte, set), paramNames, exceptParams,
// noDefaults (byte), exceptHosts, template, statuses. A list is a
// uvarint count and its strings; a string a uvarint length and its
// bytes; a ParamSet its exact names (sorted), its prefixes and its keep
// set (flag byte, set).
//
// Every field of rule, matchSpec and actionParams is written:
// TestCacheLayout fails when one is added and not here.

const (
	flagByHost = 1 << iota
	flagMatch
	flagParams
)

func encodeRules(rs *Rules) []byte {
	var e cacheEncoder
	e.uint(uint64(len(rs.rules)))
	var text *string
	for _, r := range rs.rules {
		if r.text != nil {
			text = r.text
			break
		}
	}
	if text != nil {
		e.byte(1)
		e.str(*text)
	} else {
		e.byte(0)
	}
	for _, r := range rs.rules {
		e.int(int64(r.line))
		e.byte(byte(r.act))
		var fl byte
		if r.byHost {
			fl |= flagByHost
		}
		if r.matchSpec != nil {
			fl |= flagMatch
		}
		if r.actionParams != nil {
			fl |= flagParams
		}
		e.byte(fl)
		e.uint(uint64(r.off))
		e.uint(uint64(r.nName))
		e.uint(uint64(r.nFrom))
		e.uint(uint64(r.nTo))
		if m := r.matchSpec; m != nil {
			e.strs(m.schemes)
			e.strs(m.hosts)
			e.strs(m.prefixes)
			e.re(m.re)
			e.strs(m.forms)
			e.strs(m.locations)
		}
		if a := r.actionParams; a != nil {
			e.re(a.pattern)
			e.str(a.with)
			e.int(int64(a.maxDepth))
			e.paramSet(a.params)
			e.strs(a.paramNames)
			e.strs(a.exceptParams)
			e.bool(a.noDefaults)
			e.strs(a.exceptHosts)
			e.str(a.template)
			e.strs(a.statuses)
		}
	}
	return e.b
}

// decodeRules decodes a body written by encodeRules; the strings of the
// rules are slices of b, which must not be changed afterwards. It trusts nothing
// of b: counts are bounded by the bytes left, offsets by the text, and
// every rule must hold what its action needs, so that damaged bytes give
// an error, never a panic or a huge allocation, here or when the rules
// are used.
func decodeRules(b []byte, name string) (*Rules, error) {
	d := cacheDecoder{b: b}
	n := d.count(7) // a rule takes 7 bytes at least: line, action, flags and four empty counts
	var text *string
	if d.bool() {
		s := d.str()
		text = &s
	}
	if d.err != nil {
		return nil, d.err
	}
	slab := make([]rule, n)
	rules := make([]*rule, n)
	for i := range slab {
		r := &slab[i]
		rules[i] = r
		line := d.int()
		if line < 0 || line > 1<<31-1 {
			d.fail("line %d", line)
		}
		r.line = int32(line)
		r.act = action(d.byte())
		if int(r.act) >= len(actionNames) || r.act == actNone {
			d.fail("action %d", r.act)
		}
		fl := d.byte()
		r.byHost = fl&flagByHost != 0
		r.off, r.nName, r.nFrom, r.nTo = d.u32(), d.u32(), d.u32(), d.u32()
		if end := uint64(r.off) + uint64(r.nName) + uint64(r.nFrom) + uint64(r.nTo); end > 0 {
			if text == nil || end > uint64(len(*text)) {
				d.fail("rule %d: strings past the text", i)
			}
			r.text = text
		} else if text != nil {
			r.text = text
		}
		if fl&flagMatch != 0 {
			r.matchSpec = &matchSpec{
				schemes:  d.strs(),
				hosts:    d.strs(),
				prefixes: d.strs(),
				re:       d.re(),
			}
			r.forms = d.strs()
			r.locations = d.strs()
		}
		if fl&flagParams != 0 {
			a := &actionParams{pattern: d.re(), with: d.str()}
			md := d.int()
			if md < 0 || md > 64 {
				d.fail("max-depth %d", md)
			}
			a.maxDepth = int(md)
			a.params = d.paramSet(true)
			a.paramNames = d.strs()
			a.exceptParams = d.strs()
			a.noDefaults = d.bool()
			a.exceptHosts = d.strs()
			a.template = d.str()
			a.statuses = d.strs()
			r.actionParams = a
		}
		if d.err != nil {
			return nil, d.err
		}
		if err := checkDecoded(r); err != nil {
			return nil, fmt.Errorf("rule %d: %v", i, err)
		}
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("damaged: %d bytes after the rules", len(d.b))
	}
	if n == 0 {
		rules = nil // as Parse leaves it
	}
	return newRules(name, rules), nil
}

// checkDecoded checks that a decoded rule holds what applying its action
// takes (Parse guarantees it for parsed rules).
func checkDecoded(r *rule) error {
	switch r.act {
	case actMap:
		if r.nFrom == 0 {
			return errors.New("map without from")
		}
	case actReplace, actUnwrap, actStrip, actMidToWeb:
		if r.actionParams == nil {
			return fmt.Errorf("%s without its parameters", r.act)
		}
	}
	switch {
	case r.act == actReplace && r.pattern == nil:
		return errors.New("replace without a pattern")
	case r.act == actStrip && r.params == nil:
		return errors.New("strip-params without a parameter set")
	}
	return nil
}

type cacheEncoder struct{ b []byte }

func (e *cacheEncoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *cacheEncoder) int(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *cacheEncoder) byte(c byte)   { e.b = append(e.b, c) }

func (e *cacheEncoder) bool(v bool) {
	if v {
		e.byte(1)
	} else {
		e.byte(0)
	}
}

func (e *cacheEncoder) str(s string) {
	e.uint(uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *cacheEncoder) strs(l []string) {
	e.uint(uint64(len(l)))
	for _, s := range l {
		e.str(s)
	}
}

func (e *cacheEncoder) re(re *regexp.Regexp) {
	e.bool(re != nil)
	if re != nil {
		e.str(re.String())
	}
}

func (e *cacheEncoder) paramSet(p *ParamSet) {
	e.bool(p != nil)
	if p == nil {
		return
	}
	names := make([]string, 0, len(p.exact))
	for n, v := range p.exact {
		if v {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	e.strs(names)
	e.strs(p.prefixes)
	e.paramSet(p.keep)
}

// cacheDecoder reads what cacheEncoder wrote; the first error stops it
// (every read after it gives zero values).
type cacheDecoder struct {
	b   []byte
	err error
}

func (d *cacheDecoder) fail(format string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("damaged: "+format, a...)
	}
	d.b = nil
}

func (d *cacheDecoder) uint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("a number cut short or too large")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *cacheDecoder) int() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("a number cut short or too large")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *cacheDecoder) u32() uint32 {
	v := d.uint()
	if v > 1<<32-1 {
		d.fail("offset %d", v)
		return 0
	}
	return uint32(v)
}

// count reads a count of things taking at least min bytes each: no more
// than the bytes left allow.
func (d *cacheDecoder) count(min int) int {
	v := d.uint()
	if v > uint64(len(d.b)/min) {
		d.fail("count %d for %d bytes", v, len(d.b))
		return 0
	}
	return int(v)
}

func (d *cacheDecoder) byte() byte {
	if len(d.b) == 0 {
		d.fail("cut short")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *cacheDecoder) bool() bool {
	switch c := d.byte(); c {
	case 0:
		return false
	case 1:
		return true
	default:
		d.fail("flag %d", c)
		return false
	}
}

func (d *cacheDecoder) bytes(n int) []byte {
	if len(d.b) < n {
		d.fail("cut short")
		return nil
	}
	b := d.b[:n]
	d.b = d.b[n:]
	return b
}

// str reads a string: a slice of the bytes decoded, never written
// afterwards (decodeRules), not a copy.
func (d *cacheDecoder) str() string {
	n := d.count(1)
	b := d.bytes(n)
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// strs reads a list; an empty one is nil, as Parse leaves it.
func (d *cacheDecoder) strs() []string {
	n := d.count(1) // a string takes a byte at least (its length)
	if n == 0 {
		return nil
	}
	l := make([]string, n)
	for i := range l {
		l[i] = d.str()
	}
	return l
}

func (d *cacheDecoder) re() *regexp.Regexp {
	if !d.bool() {
		return nil
	}
	src := d.str()
	if d.err != nil {
		return nil
	}
	re, err := regexp.Compile(src)
	if err != nil {
		d.fail("regexp: %v", err)
		return nil
	}
	return re
}

// paramSet reads a set; withKeep: it may have a keep set (a keep set has
// none).
func (d *cacheDecoder) paramSet(withKeep bool) *ParamSet {
	if !d.bool() {
		return nil
	}
	names := d.strs()
	p := &ParamSet{exact: make(map[string]bool, len(names)), prefixes: d.strs()}
	for _, n := range names {
		p.exact[n] = true
	}
	if withKeep {
		p.keep = d.paramSet(false)
	} else if d.bool() {
		d.fail("a keep set inside a keep set")
	}
	return p
}
