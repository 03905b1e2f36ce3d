package refs

import (
	"strings"
	"testing"

	"github.com/linkscan/linkscan/mailbox"
	"github.com/linkscan/linkscan/record"
	"github.com/linkscan/linkscan/references"
)

const list = "../../testdata/refs/list.mbox"

// messages reads the messages of list.mbox with their parts.
func messages(t *testing.T) ([]*mailbox.Message, [][]*mailbox.Part) {
	t.Helper()
	r, err := mailbox.Open(list, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var ms []*mailbox.Message
	var ps [][]*mailbox.Part
	for {
		m, err := r.Next()
		if err != nil {
			break
		}
		ms = append(ms, m)
		ps = append(ps, m.Parts())
	}
	if len(ms) < 2 {
		t.Fatalf("%d messages in %s", len(ms), list)
	}
	return ms, ps
}

func rec(u string) record.Record {
	var r record.Record
	r.URL = u
	record.Normalize(&r, u)
	return r
}

func TestOnly(t *testing.T) {
	recs := []record.Record{rec("http://a/"), rec("mid:x@y"), rec("news:comp.lang.go"), rec("ftp://b/"), rec("cid:p@q")}
	var got []string
	for _, r := range (Only{}).Records(nil, nil, recs) {
		got = append(got, r.Scheme)
	}
	if strings.Join(got, " ") != "mid news cid" {
		t.Errorf("Only kept %q", got)
	}
}

// TestImplicitAndResolve: the implicit In-Reply-To of the second message
// becomes a record, and resolution finds the thread's root in the index;
// a pruned reference dangles; Statuses filters.
func TestImplicitAndResolve(t *testing.T) {
	store := references.NewMemory()
	ix := &references.Indexer{Store: store}
	if _, err := ix.Add(list); err != nil {
		t.Fatal(err)
	}
	ms, ps := messages(t)
	implicit := (Implicit{}).Records(ms[1], ps[1], nil)
	found := false
	for _, r := range implicit {
		if r.Form != "implicit" || r.Path != list || !r.Valid {
			t.Errorf("implicit record %+v", r)
		}
		found = found || r.Canonical == "mid:root@example.org"
	}
	if !found {
		t.Fatalf("In-Reply-To <root@example.org> not among %+v", implicit)
	}
	res := Resolve{Resolver: &references.Resolver{Store: store}}
	recs := res.Records(ms[1], ps[1], append(implicit, rec("mid:pruned@example.org"), rec("http://a/")))
	status := map[string]string{}
	for _, r := range recs {
		status[r.Canonical] = r.Status
	}
	if status["mid:root@example.org"] != "resolved" || status["mid:pruned@example.org"] != "dangling" || status["http://a/"] != "" {
		t.Errorf("statuses %v", status)
	}
	res.Statuses = map[string]bool{"dangling": true}
	recs = res.Records(ms[1], ps[1], []record.Record{rec("mid:root@example.org"), rec("mid:pruned@example.org")})
	if len(recs) != 1 || recs[0].Canonical != "mid:pruned@example.org" {
		t.Errorf("Statuses dangling kept %+v", recs)
	}
}
