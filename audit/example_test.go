package audit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/linkscan/linkscan/audit"
)

// An audit of three links, without history, reported as a summary.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/old":
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
		case "/new":
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	var cfg audit.Config
	cfg.AllowPrivate = true // the server is on loopback
	cfg.Concurrency = 2
	cfg.Timeout = 10 * time.Second
	a := audit.New(cfg, nil) // nil: no history, so nothing is ever dead

	links := make(chan audit.Link, 3)
	for _, p := range []string{"/old", "/gone"} {
		links <- audit.Link{URL: srv.URL + p, Scheme: "http", Host: "127.0.0.1", Count: 1}
	}
	links <- audit.Link{URL: "telnet://bbs.example.org/", Scheme: "telnet", Host: "bbs.example.org", Count: 1}
	close(links)

	w, _ := audit.NewWriter(os.Stdout, "summary", audit.ReportOptions{Title: "example"})
	results := map[string]audit.Result{}
	if err := a.Run(context.Background(), links, func(r audit.Result) { results[r.Link.URL] = r }); err != nil {
		fmt.Println(err)
	}
	// results come in no particular order: write them in a fixed one
	for _, u := range []string{srv.URL + "/old", srv.URL + "/gone", "telnet://bbs.example.org/"} {
		w.Write(results[u])
	}
	w.Close()
	// Output:
	// example: 3 links
	//   ok          0
	//   redirected  1
	//   failing     1
	//   dead        0
	//   blocked     0
	//   unchecked   1
	//   offline-ok  0
	// by class:
	//   http            1
	//   scheme          1
	// archived copies found: 0
	// hosts with most dead (and failing) links:
	//   127.0.0.1                                0 dead, 1 failing
}
