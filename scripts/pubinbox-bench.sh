#!/usr/bin/env bash
# Throughput of reading a public-inbox archive (package mailbox/pubinbox):
# one v2 epoch of N generated messages (internal/corpus's mix), packed as
# git gc packs it, read
#   - by git cat-file --batch --batch-all-objects alone (the floor: git
#     inflating every object and writing it to a pipe),
#   - by the reader (BenchmarkReadEpoch: messages and their headers),
#   - by linkscan index (headers, the index in memory) and linkscan scan
#     (every link, JSON lines to /dev/null).
# Figures are MB of messages (the blobs' bytes) per second of elapsed time
# and per second of CPU (user + system, git's processes included).
#
#   scripts/pubinbox-bench.sh                 # 5,000 messages, three runs
#   N=50000 COUNT=1 scripts/pubinbox-bench.sh
#   GOGIT=1 scripts/pubinbox-bench.sh         # also go-git, side by side
#
# GOGIT=1 builds a small program against github.com/go-git/go-git/v5 in a
# throwaway module (it is no dependency of linkscan) and times it beside
# the same walk done with git rev-list and git cat-file --batch: both read
# every "m" blob of the epoch, oldest commit first, and drop the bytes.
#
# The machine may be shared: compare runs made side by side; the CPU
# figures suffer less from a load than the elapsed ones.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-5000}
COUNT=${COUNT:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "== load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown), $(nproc 2>/dev/null || echo '?') CPUs; git $(git --version | cut -d' ' -f3)"

LINKSCAN_PUBINBOX_DIR=$work LINKSCAN_PUBINBOX_N=$N go test -run '^$' -bench 'ReadEpoch|CatFileAllObjects' \
  -benchtime 3x -count "$COUNT" ./mailbox/pubinbox | grep -E '^(Benchmark|ok|FAIL|---)'
repo=$work/$N.git
bytes=$(git --git-dir="$repo" log --format= --raw --no-abbrev HEAD -- m | awk '{print $4}' |
  git --git-dir="$repo" cat-file --batch-check='%(objectsize)' | awk '{s += $1} END {print s}')
echo "== $N messages, $bytes bytes of messages; the pack $(du -k "$repo/objects/pack" | cut -f1) KiB"

go build -o "$work/linkscan" ./cmd/linkscan
timeit() {
  local label=$1 t
  shift
  t=$( { TIMEFORMAT='%R %U %S'; time "$@" >/dev/null 2>&1; } 2>&1 )
  awk -v b="$bytes" -v l="$label" -v t="$t" 'BEGIN { split(t, a, " "); c = a[2] + a[3];
    printf "%-36s %6.2f s  %7.1f MB/s elapsed;  CPU %5.2f s  %7.1f MB/s\n", l, a[1], b / 1e6 / a[1], c, b / 1e6 / c }'
}

if [ -n "${GOGIT:-}" ]; then
  mkdir "$work/gogit"
  cat > "$work/gogit/main.go" <<'GO'
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// gogit: the commits from HEAD, then oldest first each tree's "m".
func gogit(dir string) (n int, total int64) {
	r, err := git.PlainOpen(dir)
	check(err)
	head, err := r.Head()
	check(err)
	it, err := r.Log(&git.LogOptions{From: head.Hash(), Order: git.LogOrderCommitterTime})
	check(err)
	var commits []*object.Commit
	check(it.ForEach(func(c *object.Commit) error { commits = append(commits, c); return nil }))
	for i := len(commits) - 1; i >= 0; i-- {
		t, err := commits[i].Tree()
		check(err)
		f, err := t.File("m")
		if err != nil {
			continue
		}
		rd, err := f.Reader()
		check(err)
		k, err := io.Copy(io.Discard, rd)
		check(err)
		rd.Close()
		n, total = n+1, total+k
	}
	return n, total
}

// catfile: git rev-list lists the commits, git cat-file --batch gives
// each one's "m" (COMMIT:m), as the reader does.
func catfile(dir string) (n int, total int64) {
	log := exec.Command("git", "--git-dir="+dir, "rev-list", "--reverse", "--date-order", "HEAD")
	lo, err := log.StdoutPipe()
	check(err)
	check(log.Start())
	cat := exec.Command("git", "--git-dir="+dir, "cat-file", "--batch")
	ci, _ := cat.StdinPipe()
	co, _ := cat.StdoutPipe()
	check(cat.Start())
	go func() {
		bw := bufio.NewWriter(ci)
		sc := bufio.NewScanner(lo)
		for sc.Scan() {
			bw.WriteString(sc.Text() + ":m\n")
		}
		bw.Flush()
		ci.Close()
	}()
	br := bufio.NewReaderSize(co, 64<<10)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			break
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			continue // COMMIT:m missing: a deletion
		}
		size, _ := strconv.ParseInt(f[2], 10, 64)
		br.Discard(int(size) + 1)
		n, total = n+1, total+size
	}
	check(cat.Wait())
	check(log.Wait())
	return n, total
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func main() {
	f := gogit
	if os.Args[1] == "catfile" {
		f = catfile
	}
	n, total := f(os.Args[2])
	fmt.Println(n, total)
}
GO
  ( cd "$work/gogit" && go mod init gogitbench >/dev/null 2>&1 && go get github.com/go-git/go-git/v5@latest >/dev/null 2>&1 &&
    go build -o ../gogit-bench . ) || { echo "GOGIT=1: cannot build against go-git"; exit 1; }
  echo "== go-git $(cd "$work/gogit" && go list -m -f '{{.Version}}' github.com/go-git/go-git/v5) against git rev-list + cat-file --batch (peak RSS by /usr/bin/time where there is one)"
fi

for _ in $(seq "$COUNT"); do
  timeit "git cat-file --batch-all-objects" git --git-dir="$repo" cat-file --batch --batch-all-objects
  timeit "linkscan index" "$work/linkscan" index "$repo"
  timeit "linkscan scan --format jsonl" "$work/linkscan" scan --format jsonl "$repo"
  if [ -n "${GOGIT:-}" ]; then
    timeit "walk: git rev-list + cat-file" "$work/gogit-bench" catfile "$repo"
    timeit "walk: go-git" "$work/gogit-bench" gogit "$repo"
    if [ -x /usr/bin/time ]; then
      for m in catfile gogit; do /usr/bin/time -f "  $m: peak RSS %M KiB" "$work/gogit-bench" $m "$repo" >/dev/null; done
    fi
  fi
done
