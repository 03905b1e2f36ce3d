#!/usr/bin/env bash
# Measures `linkscan rewrite` throughput and peak memory on a generated mbox.
#
#   scripts/rewrite-perf.sh [SIZE]      e.g. scripts/rewrite-perf.sh 1G
#
# SIZE is passed to internal/gencorpus (default 256M; deterministic, seed
# 1). Three rules files: one map rule that changes about one link in ten
# (one host of the nine the generator uses), the same rule after 100,000
# map rules on other hosts, and no rules (the copy path). Each is run
# with --jobs 1 and with all cores, -o to a file on the same disk. Prints
# MB/s on the wall clock and per CPU second (user+system: the figure that
# holds up on a loaded machine), and peak RSS from GNU time -v.
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-256M}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/linkscan" ./cmd/linkscan
go run ./internal/gencorpus -size "$size" -seed 1 > "$tmp/corpus.mbox"
bytes=$(stat -c %s "$tmp/corpus.mbox")
one='[[rule]]
action = "map"
from-host = "ftp.uu.net"
to-host = "ftp.example.org"'
printf 'version = 1\n%s\n' "$one" > "$tmp/1in10.toml"
{
  echo 'version = 1'
  awk 'BEGIN { for (i = 0; i < 100000; i++) printf "[[rule]]\naction = \"map\"\nfrom-host = \"h%d.moved.example\"\nto-host = \"h%d.example.org\"\n", i, i }'
  echo "$one"
} > "$tmp/map100k.toml"
echo 'version = 1' > "$tmp/none.toml"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "corpus:  $bytes bytes"
for rules in 1in10 map100k none; do
  for jobs in 1 0; do
    /usr/bin/time -v -o "$tmp/time" "$tmp/linkscan" rewrite --rules "$tmp/$rules.toml" --progress never \
      --jobs "$jobs" -o "$tmp/out.mbox" "$tmp/corpus.mbox" 2> "$tmp/err" || { cat "$tmp/err"; }
    secs=$(awk -F': ' '/Elapsed/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s }' "$tmp/time")
    cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { print s }' "$tmp/time")
    rss=$(awk -F': ' '/Maximum resident/ { print $2 }' "$tmp/time")
    label=$jobs; [ "$jobs" = 0 ] && label="all"
    awk -v b="$bytes" -v s="$secs" -v c="$cpu" -v r="$rss" -v j="$label" -v f="$rules" -v e="$(tail -1 "$tmp/err")" \
      'BEGIN { printf "rules %-8s --jobs %-4s %7.1f MB/s  %6.2f s  %7.1f MB/CPU-s  peak RSS %5.1f MB  (%s)\n", f, j, b/1e6/s, s, b/1e6/c, r/1024, e }'
  done
done
