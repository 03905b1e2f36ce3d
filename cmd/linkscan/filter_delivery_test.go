package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/linkscan/linkscan/internal/corpus"
	"github.com/linkscan/linkscan/mailbox"
)

// needProgram returns the path of a delivery program (a Debian package
// .ci/run installs). Missing, the test fails in CI (CI=true) and is
// skipped elsewhere.
func needProgram(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (CI=true: .ci/run installs the Debian package %s)", name, name)
		}
		t.Skipf("%s is not installed (Debian package %s; apt-get install -y %s)", name, name, name)
	}
	return p
}

// filterScript writes an executable script that runs this test binary
// as "linkscan filter ARGS..." (TestMain), with env set: the command the
// delivery programs call.
func filterScript(t *testing.T, dir, name string, env ...string) string {
	t.Helper()
	return filterScriptBin(t, dir, name, os.Args[0], env...)
}

// filterScriptBin is filterScript running the test binary bin.
func filterScriptBin(t *testing.T, dir, name, bin string, env ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	// the rules cache of this test run (filter_test.go's init), whatever
	// environment the delivery program passes on
	env = append([]string{"XDG_CACHE_HOME=" + os.Getenv("XDG_CACHE_HOME")}, env...)
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		fmt.Fprintf(&b, "%s='%s'; export %s\n", k, v, k)
	}
	b.WriteString("IFS=$(printf '\\037')\n")
	fmt.Fprintf(&b, "LINKSCAN_TEST_MAIN=\"filter${IFS}$*\" exec '%s' -test.run='^$'\n", bin)
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// mda is one delivery program set up in a directory: procmail delivering
// into an mbox, or maildrop into a Maildir, each through the filter.
type mda struct {
	kind string // procmail or maildrop
	prog string
	dir  string
	rc   string // procmailrc or mailfilter
	box  string // the mbox file or the Maildir
}

// newProcmail writes a procmailrc: a ":0 fw" recipe piping the message
// through filter, then delivery into DIR/inbox.mbox under a lock.
func newProcmail(t *testing.T, prog, dir, filter string) *mda {
	m := &mda{kind: "procmail", prog: prog, dir: dir, rc: filepath.Join(dir, "procmailrc"), box: filepath.Join(dir, "inbox.mbox")}
	rc := fmt.Sprintf("SHELL=/bin/sh\nMAILDIR=%s\nLOGFILE=%s/procmail.log\n\n:0 fw\n| %s\n\n:0:\n%s\n", dir, dir, filter, m.box)
	if err := os.WriteFile(m.rc, []byte(rc), 0o600); err != nil {
		t.Fatal(err)
	}
	return m
}

// newMaildrop writes a mailfilter: xfilter through filter, then delivery
// into the Maildir DIR/Maildir.
func newMaildrop(t *testing.T, prog, dir, filter string) *mda {
	m := &mda{kind: "maildrop", prog: prog, dir: dir, rc: filepath.Join(dir, "mailfilter"), box: filepath.Join(dir, "Maildir")}
	for _, d := range []string{"cur", "new", "tmp"} {
		if err := os.MkdirAll(filepath.Join(m.box, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	rc := fmt.Sprintf("xfilter \"%s\"\nto \"%s/\"\n", filter, m.box)
	if err := os.WriteFile(m.rc, []byte(rc), 0o600); err != nil {
		t.Fatal(err)
	}
	return m
}

// deliver hands msg to the delivery program as an MTA does and returns
// its exit status (75: try again later).
func (m *mda) deliver(msg []byte) (int, string, error) {
	var cmd *exec.Cmd
	if m.kind == "procmail" {
		cmd = exec.Command(m.prog, "-f", "sender@example.org", m.rc)
	} else {
		cmd = exec.Command(m.prog, m.rc)
	}
	cmd.Env = []string{"HOME=" + m.dir, "PATH=/usr/local/bin:/usr/bin:/bin", "LOGNAME=" + os.Getenv("LOGNAME"), "USER=" + os.Getenv("USER")}
	cmd.Dir = m.dir
	cmd.Stdin = bytes.NewReader(msg)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &errb, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), errb.String(), nil
	}
	if err != nil {
		return -1, errb.String(), err
	}
	return 0, errb.String(), nil
}

// delivered returns the messages in the mailbox: the mbox split at its
// "From " lines (each without it), or the Maildir's files.
func (m *mda) delivered(t *testing.T) [][]byte {
	t.Helper()
	var msgs [][]byte
	if m.kind == "procmail" {
		data, err := os.ReadFile(m.box)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 0 && !bytes.HasPrefix(data, []byte("From ")) {
			t.Fatalf("%s does not begin with a From line: %q", m.box, data[:min(len(data), 80)])
		}
		for len(data) > 0 {
			end := bytes.Index(data, []byte("\nFrom "))
			if end < 0 {
				end = len(data)
			} else {
				end++
			}
			msg := data[:end]
			data = data[end:]
			i := bytes.IndexByte(msg, '\n')
			msgs = append(msgs, msg[i+1:])
		}
		return msgs
	}
	for _, d := range []string{"new", "cur"} {
		ents, err := os.ReadDir(filepath.Join(m.box, d))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(m.box, d, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, b)
		}
	}
	return msgs
}

// through delivers msg into m's empty mailbox and returns what it holds
// then, emptying it again; nil gives nil.
func (m *mda) through(t *testing.T, msg []byte) []byte {
	t.Helper()
	if msg == nil {
		return nil
	}
	if code, out, err := m.deliver(msg); code != 0 || err != nil {
		t.Fatalf("%s without filter: exit %d, %v: %s", m.kind, code, err, out)
	}
	got := m.delivered(t)
	if len(got) != 1 {
		t.Fatalf("%s without filter: %d messages", m.kind, len(got))
	}
	if m.kind == "procmail" {
		os.Remove(m.box)
	} else {
		ents, _ := os.ReadDir(filepath.Join(m.box, "new"))
		for _, e := range ents {
			os.Remove(filepath.Join(m.box, "new", e.Name()))
		}
	}
	return got[0]
}

// contentLength matches a Content-Length header field, which procmail
// writes anew (with its own spacing and a bare LF) in an mbox.
var contentLength = regexp.MustCompile(`(?mi)^Content-Length:[ \t0-9]*\r?\n`)

// mboxForm is a message as procmail writes it into an mbox, for
// comparison: lines beginning "From " quoted with '>', trailing line ends
// dropped (procmail ends each message with an empty line), Content-Length
// fields emptied.
func mboxForm(b []byte) []byte {
	b = contentLength.ReplaceAll(b, []byte("Content-Length:\n"))
	b = bytes.ReplaceAll(b, []byte("\nFrom "), []byte("\n>From "))
	if bytes.HasPrefix(b, []byte("From ")) {
		b = append([]byte(">"), b...)
	}
	return bytes.TrimRight(b, "\r\n")
}

// maildropForm is a message as maildrop writes it into a Maildir, for
// comparison: maildrop ends a message that does not end with a line end
// with one.
func maildropForm(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] != '\n' {
		return append(b[:len(b):len(b)], '\n')
	}
	return b
}

// TestFilterProcmailMaildrop delivers the example message through the
// real procmail (":0 fw", then an mbox) and maildrop (xfilter, then a
// Maildir): rewritten per the rules, every other byte kept; then with a
// filter that fails (a rules file that is not there): the message
// delivered unchanged, or with --tempfail not at all (maildrop exits 75).
func TestFilterProcmailMaildrop(t *testing.T) {
	pm := needProgram(t, "procmail")
	md := needProgram(t, "maildrop")
	rules, _ := filepath.Abs(filterRules)
	dir := t.TempDir()
	script := filterScript(t, dir, "linkscan")
	msg := []byte(filterMsg + "From the start\n")
	want := []byte(filterWant + "From the start\n")
	for _, c := range []struct {
		name, args string
		want       []byte
		code       int // of maildrop
	}{
		{"rewrite", "--rules " + rules, want, 0},
		{"fallback", "--rules " + dir + "/none.toml", msg, 0},
		{"tempfail", "--tempfail --rules " + dir + "/none.toml", nil, exitTempFail},
	} {
		sub := filepath.Join(dir, c.name)
		os.MkdirAll(sub, 0o700)
		p := newProcmail(t, pm, sub, script+" "+c.args)
		m := newMaildrop(t, md, sub, script+" "+c.args)
		if code, out, err := p.deliver(msg); code != 0 || err != nil {
			t.Fatalf("%s: procmail: exit %d, %v: %s", c.name, code, err, out)
		}
		got := p.delivered(t)
		pwant := c.want
		if pwant == nil {
			pwant = msg // procmail keeps the message when the filter fails
		}
		if len(got) != 1 || !bytes.Equal(mboxForm(got[0]), mboxForm(pwant)) {
			t.Errorf("%s: procmail delivered %q, want %q", c.name, got, pwant)
		}
		code, out, err := m.deliver(msg)
		if code != c.code || err != nil {
			t.Fatalf("%s: maildrop: exit %d (want %d), %v: %s", c.name, code, c.code, err, out)
		}
		got = m.delivered(t)
		if c.want == nil && len(got) != 0 || c.want != nil && (len(got) != 1 || !bytes.Equal(got[0], c.want)) {
			t.Errorf("%s: maildrop delivered %q, want %q", c.name, got, c.want)
		}
	}
}

// deliveryInput is one message of the big delivery test.
type deliveryInput struct {
	msg  []byte
	kind string // corpus, shared, oversize, junk, truncated
}

var testSeqRE = regexp.MustCompile(`(?m)^X-Filter-Test: ([0-9]+)\r?$`)

// deliveryInputs makes n messages: messages of ../shared/corpus, then
// generated ones (internal/corpus, dense in links), with one in 50
// oversize, one in 50 binary junk after a header, one in 50 a multipart
// cut short; each carries a header X-Filter-Test: N.
func deliveryInputs(t *testing.T, n int) []deliveryInput {
	t.Helper()
	var raws []deliveryInput
	if r, err := mailbox.Open("../../../shared/corpus", nil); err == nil {
		for {
			m, err := r.Next()
			if m != nil && m.Format != mailbox.FormatText && len(m.Holes) == 0 && len(m.Raw) > 0 && len(m.Raw) < 200<<10 {
				raws = append(raws, deliveryInput{bytes.Clone(m.Raw), "shared"})
			}
			if m != nil {
				m.Release()
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				var ie *mailbox.InputError
				if errors.As(err, &ie) {
					break
				}
			}
		}
		r.Close()
	} else {
		t.Logf("../shared/corpus not read (%v): generated messages only", err)
	}
	if len(raws) > n/2 {
		raws = raws[:n/2]
	}
	var r *mailbox.Reader
	seed := uint64(14)
	rng := rand.New(rand.NewPCG(14, 2026))
	for len(raws) < n {
		if r == nil {
			var gen bytes.Buffer
			corpus.WriteDense(&gen, int64(n-len(raws))*6000+1<<20, seed)
			seed++
			var err error
			if r, err = mailbox.NewReader(&gen, "gen", &mailbox.Options{Format: mailbox.FormatMbox}); err != nil {
				t.Fatal(err)
			}
		}
		m, err := r.Next()
		if err == io.EOF {
			r = nil
			continue
		}
		if err != nil {
			t.Fatalf("generated corpus: %v", err)
		}
		raw := bytes.Clone(m.Raw)
		m.Release()
		kind := "corpus"
		switch len(raws) % 49 { // odd: each kind comes to each of the 4 set-ups
		case 7: // oversize: past --max-size (256K)
			kind = "oversize"
			var b bytes.Buffer
			b.Write(raw)
			for b.Len() < 300<<10 {
				fmt.Fprintf(&b, "https://nam02.safelinks.protection.outlook.com/?url=http%%3A%%2F%%2Fexample.org%%2F%d&data=x&reserved=0\n", b.Len())
			}
			raw = b.Bytes()
		case 19: // binary junk after a header
			kind = "junk"
			junk := make([]byte, 1000+rng.IntN(20000))
			for i := range junk {
				junk[i] = byte(rng.Uint32())
			}
			raw = append([]byte("Subject: junk\n\n"), junk...)
		case 31: // truncated MIME: a multipart cut in the middle
			kind = "truncated"
			raw = []byte("From: a@example.org\nSubject: cut\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"zz\"\n\n--zz\nContent-Type: text/plain\n\nsee https://nam02.safelinks.protection.outlook.com/?url=http%3A%2F%2Fexample.org%2Fcut&data=x&reserved=0 and http://www.example.com/x\n--zz\nContent-Type: text/html\nContent-Transfer-Encoding: base64\n\nPGEgaHJlZj0iaHR0cDovL3d3dy5leGFtcGxlLmNvbS8iPmE8L2E+Cg")
			raw = append(raw, []byte(strings.Repeat("x", rng.IntN(40)))...)
		}
		raws = append(raws, deliveryInput{raw, kind})
	}
	for i := range raws {
		eol := "\n"
		if j := bytes.IndexByte(raws[i].msg, '\n'); j > 0 && raws[i].msg[j-1] == '\r' {
			eol = "\r\n"
		} else if j < 0 && bytes.IndexByte(raws[i].msg, '\r') >= 0 {
			eol = "\r"
		}
		raws[i].msg = append([]byte(fmt.Sprintf("X-Filter-Test: %d%s", i, eol)), raws[i].msg...)
	}
	return raws
}

// everythingRules rewrites every http(s) link (another host), and wraps
// every bare link.
const everythingRules = `version = 1
[[rule]]
name = "unwrap"
action = "unwrap"
[[rule]]
name = "everything"
action = "replace"
pattern = "^(https?)://"
with = "${1}://rewritten.example/"
[[rule]]
name = "wrap"
action = "wrap"
match.form = "bare"
`

// TestFilterDeliveryFaults delivers 10,000 messages (with CI=true; else
// 1,000, and 300 with -short; LINKSCAN_DELIVERY_N sets the count)
// through the real procmail and maildrop, four set-ups in turn (procmail
// with the example rules, procmail with rules that rewrite everything
// and --annotate, maildrop with the example rules, maildrop with rules
// that rewrite everything and --tempfail), with faults injected at random
// by the test hook (the filter killed before, while reading or halfway
// through writing; sleeping past --timeout; panicking in the rewrite,
// halfway through writing or after it; failing), oversize
// messages, binary junk and truncated MIME. An exit 75 is delivered again
// later, as an MTA does. Afterwards each mailbox holds exactly the
// messages delivered, each once, each either as the filter rewrites it
// without faults or byte for byte as it was sent.
func TestFilterDeliveryFaults(t *testing.T) {
	pm := needProgram(t, "procmail")
	md := needProgram(t, "maildrop")
	// the full count in CI; on a workstation (which may have few
	// cores) a tenth unless asked for
	n := 10000
	switch {
	case testing.Short():
		n = 300
	case os.Getenv("CI") != "true":
		n = 1000
	}
	if s := os.Getenv("LINKSCAN_DELIVERY_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	start := time.Now()
	dir := t.TempDir()
	rulesA, _ := filepath.Abs(filterRules)
	rulesB := writeTestFile(t, filepath.Join(dir, "everything.toml"), everythingRules)
	faults := filterFaultEnv + "=crash=0.04,panic=0.02,error=0.02,sleep=0.003,panic-write=0.02,panic-late=0.01"
	script := filterScript(t, dir, "linkscan", faults)
	common := []string{"--max-size", "256K", "--timeout", "1s"}
	setups := []struct {
		kind string
		args []string
	}{
		{"procmail", append([]string{"--rules", rulesA}, common...)},
		{"procmail", append([]string{"--rules", rulesB, "--annotate"}, common...)},
		{"maildrop", append([]string{"--rules", rulesA, "--rules-cache", filepath.Join(dir, "rules-cache")}, common...)},
		{"maildrop", append([]string{"--rules", rulesB, "--tempfail", "--rules-cache", "off"}, common...)},
	}
	var mdas []*mda
	for i, s := range setups {
		sub := filepath.Join(dir, fmt.Sprint(i))
		os.MkdirAll(sub, 0o700)
		cmd := script + " " + strings.Join(s.args, " ")
		if s.kind == "procmail" {
			mdas = append(mdas, newProcmail(t, pm, sub, cmd))
		} else {
			mdas = append(mdas, newMaildrop(t, md, sub, cmd))
		}
	}
	var ctrl []*mda // the same programs without the filter
	for i, s := range setups {
		sub := filepath.Join(dir, fmt.Sprint("ctrl", i))
		os.MkdirAll(sub, 0o700)
		if s.kind == "procmail" {
			ctrl = append(ctrl, newProcmail(t, pm, sub, "cat"))
		} else {
			ctrl = append(ctrl, newMaildrop(t, md, sub, "cat"))
		}
	}
	inputs := deliveryInputs(t, n)
	built := time.Since(start)

	// what each message becomes without faults (in this process, no
	// test hook, no time limit)
	want := make([][]byte, n)
	for i, in := range inputs {
		s := setups[i%len(setups)]
		args := append(append([]string{}, s.args...), "--timeout", "1h")
		code, out, errs := runFilterCmd(t, in.msg, nil, args...)
		if code == exitTempFail {
			// without faults nothing is refused, even under
			// --tempfail: oversize and not mail are passed on, as
			// every later try would refuse them again
			t.Errorf("message %d (%s): exit 75 without a fault: it would be deferred until it bounces: %s", i, inputs[i].kind, errs)
			continue
		}
		if code != 0 {
			t.Fatalf("message %d: exit %d: %s", i, code, errs)
		}
		want[i] = out
	}
	expected := time.Since(start) - built

	type outcome struct {
		code, tries int
		sent        bool
	}
	results := make([]outcome, n)
	// a bound on the work, not on its speed: on a workstation too
	// loaded to deliver them all in the budget, the messages not sent
	// are left out (and logged), so that go test's own timeout never
	// kills the run. In CI every message must be sent (a test error
	// otherwise): the budget is what go test's timeout leaves, less two
	// minutes for the checks (.ci/run gives go test -timeout 30m).
	ci := os.Getenv("CI") == "true"
	budget := 6 * time.Minute
	if ci {
		budget = 30 * time.Minute
	}
	if d, ok := t.Deadline(); ok && time.Until(d)-2*time.Minute < budget {
		budget = time.Until(d) - 2*time.Minute
	}
	if s := os.Getenv("LINKSCAN_DELIVERY_BUDGET"); s != "" { // for TestFilterDeliveryBudgetCI
		budget, _ = time.ParseDuration(s)
	}
	stopAt := time.Now().Add(budget)
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n || time.Now().After(stopAt) {
					return
				}
				results[i].sent = true
				m := mdas[i%len(mdas)]
				for try := 1; ; try++ {
					code, out, err := m.deliver(inputs[i].msg)
					if err != nil {
						t.Errorf("message %d: %s: %v: %s", i, m.kind, err, out)
						return
					}
					results[i] = outcome{code, try, true}
					if code != exitTempFail || try == 12 {
						if code != 0 && code != exitTempFail {
							t.Errorf("message %d: %s exit %d: %s", i, m.kind, code, out)
						}
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	delivered := time.Since(start) - built - expected

	seen := make([]int, n)
	counts := map[string]int{}
	for mi, m := range mdas {
		got := m.delivered(t)
		sent := 0
		for i := mi; i < n; i += len(mdas) {
			if results[i].code == 0 && results[i].sent {
				sent++
			}
		}
		if len(got) != sent {
			t.Errorf("%s %d: %d messages in the mailbox, %d delivered", m.kind, mi, len(got), sent)
		}
		for _, g := range got {
			sm := testSeqRE.FindSubmatch(g[:min(len(g), 200)])
			if sm == nil {
				t.Errorf("%s %d: a message without its X-Filter-Test header: %q", m.kind, mi, g[:min(len(g), 200)])
				continue
			}
			i, _ := strconv.Atoi(string(sm[1]))
			if i >= n || i%len(mdas) != mi {
				t.Errorf("%s %d: message %d delivered to the wrong box", m.kind, mi, i)
				continue
			}
			seen[i]++
			in, w := inputs[i].msg, want[i]
			same := func(a, b []byte) bool { return b != nil && bytes.Equal(maildropForm(a), maildropForm(b)) }
			if m.kind == "procmail" {
				same = func(a, b []byte) bool { return b != nil && bytes.Equal(mboxForm(a), mboxForm(b)) }
			}
			if inputs[i].kind == "junk" && !same(g, in) && !same(g, w) {
				// maildrop changes some NUL bytes itself: compare with
				// what it makes of the message without the filter
				in, w = ctrl[mi].through(t, in), ctrl[mi].through(t, w)
				same = bytes.Equal
			}
			switch {
			case same(g, w) && !bytes.Equal(w, in):
				counts["rewritten"]++
			case same(g, in):
				counts["as sent"]++
				if w != nil && !bytes.Equal(w, in) {
					counts["as sent (fault)"]++
				}
			default:
				t.Errorf("%s %d: message %d (%s) is neither the input nor its rewrite: %d bytes, input %d, rewrite %d; differs from the input %s",
					m.kind, mi, i, inputs[i].kind, len(g), len(in), len(w), firstDiff(g, in))
			}
		}
	}
	deferred, retried, sentN := 0, 0, 0
	for i, r := range results {
		if r.sent {
			sentN++
		}
		switch {
		case r.code == 0 && r.sent && seen[i] != 1:
			t.Errorf("message %d (%s) delivered, found %d times", i, inputs[i].kind, seen[i])
		case (r.code != 0 || !r.sent) && seen[i] != 0:
			t.Errorf("message %d (%s) not delivered (exit %d), found %d times", i, inputs[i].kind, r.code, seen[i])
		}
		if r.code != 0 && r.sent {
			deferred++
			if want[i] != nil {
				t.Errorf("message %d (%s) deferred %d times", i, inputs[i].kind, r.tries)
			}
		}
		if r.tries > 1 {
			retried++
		}
	}
	kinds := map[string]int{}
	for _, in := range inputs {
		kinds[in.kind]++
	}
	var ks []string
	for k, v := range kinds {
		ks = append(ks, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(ks)
	switch {
	case sentN < n && ci:
		t.Errorf("only %d of the %d messages were sent within the budget of %v (what go test -timeout left, less 2 min); CI=true asks for all: give go test a larger -timeout",
			sentN, n, budget.Round(time.Second))
	case sentN < n:
		t.Logf("only %d of the %d messages were sent within the budget of %v (a loaded machine)", sentN, n, budget.Round(time.Second))
	}
	t.Logf("%d messages (%s): %d rewritten, %d as sent (%d of them by a fault), %d deferred for good under --tempfail, %d delivered again after exit 75",
		n, strings.Join(ks, ", "), counts["rewritten"], counts["as sent"], counts["as sent (fault)"], deferred, retried)
	t.Logf("times: inputs %v, expected results %v, deliveries %v (%.1f ms a delivery, 4 at once)",
		built.Round(time.Millisecond), expected.Round(time.Millisecond), delivered.Round(time.Millisecond), float64(delivered.Milliseconds())/float64(max(sentN, 1)))
}

// TestFilterDeliveryBudgetCI: under CI=true, TestFilterDeliveryFaults
// fails, saying how many were sent, when its budget stops it before
// every message is sent (logging it is not enough); without CI it
// logs it and passes. It runs that test in a child with a budget of
// 1ns and 8 messages.
func TestFilterDeliveryBudgetCI(t *testing.T) {
	needProgram(t, "procmail")
	needProgram(t, "maildrop")
	for _, ci := range []string{"true", ""} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFilterDeliveryFaults$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "CI="+ci, "LINKSCAN_DELIVERY_N=8", "LINKSCAN_DELIVERY_BUDGET=1ns")
		out, err := cmd.CombinedOutput()
		said := strings.Contains(string(out), "only 0 of the 8 messages were sent")
		if ci == "true" && (err == nil || !said || !strings.Contains(string(out), "CI=true asks for all")) {
			t.Errorf("CI=true, budget cut: %v, want a failure saying how many were sent; output:\n%s", err, out)
		}
		if ci == "" && (err != nil || !said) {
			t.Errorf("no CI, budget cut: %v, want a pass that logs it; output:\n%s", err, out)
		}
	}
}

// firstDiff describes where a and b first differ.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return fmt.Sprintf("at byte %d: %q against %q", i, a[max(i-20, 0):min(i+20, len(a))], b[max(i-20, 0):min(i+20, len(b))])
}

// TestFilterSieve runs the filter from a Sieve script through Dovecot
// Pigeonhole's extprograms "filter" with the real sieve-test (Debian
// packages dovecot-sieve, dovecot-core), the message handed over with
// CRLF line endings (Pigeonhole's default) and stored in an mbox: the
// message is rewritten; a filter killed by SIGKILL, or exiting 75 under
// --tempfail, leaves the original message, which Pigeonhole stores
// (implicit keep). Dovecot refuses to run as root: as root the test runs
// sieve-test as nobody, from a copy of the test binary.
func TestFilterSieve(t *testing.T) {
	st := needProgram(t, "sieve-test")
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		os.Chmod(d, 0o755)
	}
	bin := filepath.Join(dir, "linkscan.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	rules := filepath.Join(dir, "rules.toml")
	if data, err = os.ReadFile(filterRules); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(rules, data, 0o644)
	progs := filepath.Join(dir, "bin")
	os.MkdirAll(progs, 0o755)
	filterScriptBin(t, progs, "linkscan", bin)
	filterScriptBin(t, progs, "crash", bin, filterFaultEnv+"=crash=1")
	// the programs take no arguments here: the Sieve script passes them
	conf := filepath.Join(dir, "dovecot.conf")
	writeTestFile(t, conf, fmt.Sprintf("plugin {\n  sieve_plugins = sieve_extprograms\n  sieve_extensions = +vnd.dovecot.filter\n  sieve_filter_bin_dir = %s\n}\n", progs))
	msg := writeTestFile(t, filepath.Join(dir, "m.eml"), filterMsg)
	for _, c := range []struct{ name, prog, args, want string }{
		{"rewrite", "linkscan", `["--rules", "` + rules + `"]`, filterWant},
		{"crash", "crash", `["--rules", "` + rules + `"]`, filterMsg},
		{"tempfail", "linkscan", `["--tempfail", "--rules", "` + dir + `/none.toml"]`, filterMsg},
	} {
		script := writeTestFile(t, filepath.Join(dir, c.name+".sieve"), fmt.Sprintf("require [\"vnd.dovecot.filter\"];\nfilter \"%s\" %s;\n", c.prog, c.args))
		mail := filepath.Join(dir, "mail-"+c.name)
		os.MkdirAll(mail, 0o755)
		cmd := exec.Command(st, "-c", conf, "-e", "-l", "mbox:"+mail+":INBOX="+mail+"/inbox", script, msg)
		cmd.Env = []string{"HOME=" + dir, "PATH=/usr/local/bin:/usr/bin:/bin"}
		if os.Geteuid() == 0 {
			filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
				if err == nil {
					os.Lchown(p, 65534, 65534)
				}
				return nil
			})
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		out, err := cmd.CombinedOutput()
		// the killed filter fails the script (sieve-test exits 1), which
		// Pigeonhole resolves by keeping the message
		if err != nil && !(c.name == "crash" && bytes.Contains(out, []byte("resolved with successful implicit keep"))) {
			t.Fatalf("%s: sieve-test: %v\n%s", c.name, err, out)
		}
		box, err := os.ReadFile(filepath.Join(mail, "inbox"))
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, out)
		}
		box = bytes.ReplaceAll(box, []byte("\r\n"), []byte("\n"))
		_, body, _ := strings.Cut(c.want, "\n\n")
		if bytes.Count(box, []byte("\nFrom ")) != 0 || !bytes.HasPrefix(box, []byte("From ")) || !bytes.HasSuffix(bytes.TrimRight(box, "\n"), []byte("\n\n"+strings.TrimRight(body, "\n"))) {
			t.Errorf("%s: the mailbox holds\n%s\nwant one message with the body %q\nsieve-test said:\n%s", c.name, box, body, out)
		}
	}
}
