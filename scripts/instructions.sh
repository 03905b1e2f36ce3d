#!/usr/bin/env bash
# Counts the instructions `linkscan scan` executes per input byte, with
# valgrind's callgrind: unlike times on a shared machine, the count is the
# same from run to run, so it shows what a change to the code costs or saves.
#
#   scripts/instructions.sh [SIZE] [FORMAT]    (default 16M jsonl)
#
# Needs valgrind (apt-get install valgrind). The garbage collector is off
# (GOGC=off) and asynchronous preemption too, so that neither adds noise
# nor trips callgrind; the top functions by their own instructions follow.
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-16M}
format=${2:-jsonl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/linkscan" ./cmd/linkscan
go run ./internal/gencorpus -size "$size" -seed 1 > "$tmp/corpus.mbox"
bytes=$(stat -c %s "$tmp/corpus.mbox")
GOGC=off GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" \
  "$tmp/linkscan" scan --jobs 1 --format "$format" -o /dev/null "$tmp/corpus.mbox" 2> "$tmp/vg.log"
ir=$(grep -o 'Collected : [0-9]*' "$tmp/vg.log" | tr -dc 0-9)
awk -v ir="$ir" -v b="$bytes" 'BEGIN { printf "%d instructions for %d bytes: %.1f per byte\n", ir, b, ir/b }'
callgrind_annotate "$tmp/cg" 2>/dev/null | grep -E '^ *[0-9,]+ \(' | sed -n 2,16p | sed -E 's/ \[.*\]$//' | cut -c1-120
