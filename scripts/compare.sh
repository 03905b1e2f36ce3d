#!/usr/bin/env bash
# Compares `linkscan scan` at two revisions on the same generated mbox,
# running them in turn so that both see the same moments of a shared
# machine. Prints every elapsed and CPU (user+sys) time, sorted, and the
# median CPU time.
#
#   scripts/compare.sh OLD [NEW] [SIZE] [RUNS]   e.g. scripts/compare.sh HEAD~5 HEAD 1G 5
#
# NEW defaults to the working tree, SIZE to 1G, RUNS to 5.
# DENSE=1 scripts/compare.sh ...   compares on the stress mix (gencorpus -dense).
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1; new=${2:-}; size=${3:-1G}; runs=${4:-5}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/old" >/dev/null 2>&1 || true; git worktree remove --force "$tmp/new" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
build() { # rev dir out
  if [ -z "$1" ]; then go build -o "$3" ./cmd/linkscan; return; fi
  git worktree add --detach -q "$2" "$1"
  (cd "$2" && go build -o "$3" ./cmd/linkscan)
}
build "$old" "$tmp/old" "$tmp/linkscan-old"
build "$new" "$tmp/new" "$tmp/linkscan-new"
dense=""; [ "${DENSE:-}" = 1 ] && dense=-dense
go run ./internal/gencorpus -size "$size" -seed 1 $dense > "$tmp/corpus.mbox"
bytes=$(stat -c %s "$tmp/corpus.mbox")
echo "machine: $(nproc) cores; corpus: $bytes bytes${dense:+ (dense)}; old=$old new=${new:-working tree}"
for _ in $(seq "$runs"); do
  for b in old new; do
    /usr/bin/time -f "$b %e %U %S %M" -a -o "$tmp/times" "$tmp/linkscan-$b" scan --format jsonl -o /dev/null "$tmp/corpus.mbox"
  done
done
for b in old new; do
  grep "^$b " "$tmp/times" | awk -v b="$bytes" -v n="$b" '
    { e[NR] = $2; c[NR] = $3 + $4; if ($5 > r) r = $5 }
    END {
      for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) {
        if (e[j] < e[i]) { t = e[i]; e[i] = e[j]; e[j] = t }
        if (c[j] < c[i]) { t = c[i]; c[i] = c[j]; c[j] = t } }
      m = int((NR + 1) / 2); m2 = int(NR / 2) + 1 # the middle one, or the two
      printf "%s: elapsed", n; for (i = 1; i <= NR; i++) printf " %.2f", e[i]
      printf " s (best %.0f MB/s) | cpu", b / 1e6 / e[1]; for (i = 1; i <= NR; i++) printf " %.2f", c[i]
      printf " s (median %.3f) | peak RSS %.1f MB\n", (c[m] + c[m2]) / 2, r / 1024 }'
done
