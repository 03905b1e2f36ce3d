#!/usr/bin/env bash
# scripts/filter-bench.sh [RUNS]
#
# The per-message cost of `linkscan filter` as the mail system sees it:
# process start, reading the message, the rules and the rewrite, writing
# the result, for a typical 10 KB message, beside `cat` used as the same
# filter. Each run is one process, started with the message on standard
# input and its standard output read through a pipe, as procmail and
# maildrop do. Prints the median, p90, p99 and the largest of RUNS runs
# (default 500; the 100,000-rule file gets a tenth of them), and the
# filter's own time (--log: from its start to its last write). The
# configurations of each group run in turn (round robin), so that the
# machine's busy moments fall on all of them alike.
#
# The binary is built as the README builds it, CGO_ENABLED=0 (static:
# no dynamic loader at each start), and run with its rules cache (a
# directory of its own, filled by a first run not counted) and with
# --rules-cache off; the 1,000-rule case is also run with the default
# cgo build, for comparison.
#
# The figures go to docs/performance.md, section "filter".
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-500}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/linkscan" ./cmd/linkscan
CGO_ENABLED=1 go build -o "$tmp/linkscan-cgo" ./cmd/linkscan

python3 - "$tmp" "$runs" <<'EOF'
import os, random, statistics, subprocess, sys, time

tmp, runs = sys.argv[1], int(sys.argv[2])
random.seed(14)

def rules(n, name):
    with open(os.path.join(tmp, name), "w") as f:
        f.write('version = 1\n\n[[rule]]\nname = "unwrap"\naction = "unwrap"\n\n'
                '[[rule]]\nname = "strip tracking"\naction = "strip-params"\n\n')
        for i in range(n - 2):
            f.write('[[rule]]\naction = "map"\nfrom-host = "host%d.example"\nto-host = "www%d.example.net"\n\n' % (i, i))
    return os.path.join(tmp, name)

r1k = rules(1000, "rules-1k.toml")
r100k = rules(100000, "rules-100k.toml")

# a 10 KB message: 120 lines of text, 25 links (wrapped, tracked, mapped,
# left alone)
words = "the of archive list message link moved server mail reply thread".split()
lines = []
for i in range(120):
    l = " ".join(random.choice(words) for _ in range(11))
    if i % 5 == 0:
        k = random.randrange(4)
        if k == 0:
            l += " https://nam02.safelinks.protection.outlook.com/?url=http%%3A%%2F%%2Fhost%d.example%%2Fpage&data=x" % random.randrange(900)
        elif k == 1:
            l += " http://host%d.example/a/b?utm_source=list&id=%d" % (random.randrange(900), i)
        elif k == 2:
            l += " <URL:ftp://ftp.other%d.example/pub/file.txt>" % i
        else:
            l += " http://unrelated.example.org/x/%d.html" % i
    lines.append(l)
msg = ("From sender@example.org  Mon Jan  1 00:00:00 2001\n"
       "Return-Path: <sender@example.org>\nFrom: Sender <sender@example.org>\nTo: list@example.org\n"
       "Subject: a typical message\nDate: Mon, 1 Jan 2001 00:00:00 +0000\nMessage-ID: <bench@example.org>\n"
       "MIME-Version: 1.0\nContent-Type: text/plain; charset=us-ascii\n\n" + "\n".join(lines) + "\n")
mpath = os.path.join(tmp, "msg.eml")
with open(mpath, "w") as f:
    f.write(msg)

def bench(group, n):
    """Times each (label, argv) of group n times, round robin (one run
    of each in turn), so that a busy moment of the machine falls on all
    of them alike."""
    walls = {label: [] for label, _ in group}
    inner = {label: [] for label, _ in group}
    changed = {}
    for label, argv in group:  # a first run, not counted: fills the rules cache
        with open(mpath, "rb") as f:
            subprocess.run(argv, stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(n):
        for label, argv in group:
            with open(mpath, "rb") as f:
                t0 = time.perf_counter()
                p = subprocess.run(argv, stdin=f, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                walls[label].append((time.perf_counter() - t0) * 1000)
            if p.returncode != 0:
                sys.exit("%s: exit %d: %s" % (label, p.returncode, p.stderr.decode()))
            changed[label] = p.stdout != msg.encode()
            for w in p.stderr.decode().split():
                if w.startswith("time=") and w.endswith("ms"):
                    inner[label].append(float(w[5:-2]))
    for label, argv in group:
        ws = sorted(walls[label])
        q = lambda p: ws[min(len(ws) - 1, int(len(ws) * p))]
        s = "%-40s %5d runs  median %6.2f ms  p90 %6.2f  p99 %6.2f  max %6.2f" % (label, n, statistics.median(ws), q(0.90), q(0.99), ws[-1])
        if inner[label]:
            s += "  (inside: median %.2f ms)" % statistics.median(inner[label])
        if argv[0] != "cat":
            s += "  rewritten" if changed[label] else "  UNCHANGED"
        print(s, flush=True)

print("message %d bytes; load average %s" % (len(msg), " ".join(open("/proc/loadavg").read().split()[:3])))
ls = os.path.join(tmp, "linkscan")
# a cache directory per binary: a cache file is the program's own
cache = ["--rules-cache", os.path.join(tmp, "cache")]
cgocache = ["--rules-cache", os.path.join(tmp, "cache-cgo")]
off = ["--rules-cache", "off"]
bench([("cat", ["cat"]),
       ("filter, 1,000 rules, cache", [ls, "filter", "--log", "--rules", r1k] + cache),
       ("filter, 1,000 rules, no cache", [ls, "filter", "--log", "--rules", r1k] + off),
       ("filter, 1,000 rules, cache, cgo build", [ls + "-cgo", "filter", "--log", "--rules", r1k] + cgocache)], runs)
bench([("cat", ["cat"]),
       ("filter, 100,000 rules, cache", [ls, "filter", "--log", "--rules", r100k] + cache),
       ("filter, 100,000 rules, no cache", [ls, "filter", "--log", "--rules", r100k] + off)], max(runs // 10, 5))
print("load average %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
EOF
