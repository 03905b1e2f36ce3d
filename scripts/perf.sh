#!/usr/bin/env bash
# Measures `linkscan scan` throughput and peak memory on a generated mbox.
#
#   scripts/perf.sh [SIZE] [FORMAT]     e.g. scripts/perf.sh 1G jsonl
#   DENSE=1 scripts/perf.sh 256M         the stress mix (gencorpus -dense)
#
# SIZE is passed to internal/gencorpus (default 256M); the corpus is
# deterministic (seed 1). Prints MB/s and peak RSS from GNU time.
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-256M}
format=${2:-jsonl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/linkscan" ./cmd/linkscan
dense=""; [ "${DENSE:-}" = 1 ] && dense=-dense
go run ./internal/gencorpus -size "$size" -seed 1 $dense > "$tmp/corpus.mbox"
bytes=$(stat -c %s "$tmp/corpus.mbox")
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "corpus:  $bytes bytes"
for jobs in 1 0; do
  /usr/bin/time -f '%e %M' -o "$tmp/time" "$tmp/linkscan" scan --format "$format" --jobs "$jobs" -o /dev/null "$tmp/corpus.mbox" || true
  read -r secs rss < "$tmp/time"
  label=$jobs; [ "$jobs" = 0 ] && label="all cores"
  awk -v b="$bytes" -v s="$secs" -v r="$rss" -v j="$label" -v f="$format" \
    'BEGIN { printf "scan --format %s --jobs %-9s %7.1f MB/s  %6.1f s  peak RSS %5.1f MB\n", f, j, b/1e6/s, s, r/1024 }'
done
