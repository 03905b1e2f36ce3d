#!/usr/bin/env bash
# The shape benchmark: `linkscan scan --format jsonl -o FILE` at two
# revisions on each shape of mail (internal/shapes: a message repeated to
# SIZE), whole-process, the two run in turn RUNS times on each shape so
# that both see the same moments of a shared machine. Prints, a shape a
# line, the median elapsed and CPU (user+sys) times of each, MB/s of the
# median CPU time, the ratio NEW/OLD of speeds by CPU time, peak RSS, and
# whether the outputs agree on the fields both revisions write.
#
#   scripts/shapes.sh OLD [NEW] [RUNS] [SIZE] [SHAPE...]
#   e.g. scripts/shapes.sh 7cf211e HEAD 5 20M      (NEW "" or "." = the working tree)
#
# SEEDS (the seed documents, 001_*.txt...), LORE and MBOX (the mboxes of
# the lore and mboxsrc shapes) default to the shared corpus beside the main
# checkout, if there is one; a built-in text stands for a seed missing, and
# the shapes of a missing mbox are left out. GREP=1 times
# `grep -oE URL-PATTERN > FILE` on each shape too (the grep column: scan's
# speed over grep's, by elapsed time). Figures on a shared machine are
# noisy: compare ratios taken in the same run, not figures of two runs.
#
# INSTR=1 counts instructions instead (valgrind's callgrind, `--jobs 1`,
# the collector off), which do not move from run to run: one run a shape
# and revision, ratio old/new; use a smaller SIZE (2M). Valgrind stops Go
# programs at random on an instruction it does not know (rdtscp): such a
# run is tried again, up to five times.
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1; new=${2:-}; runs=${3:-5}; size=${4:-20M}
shift $(( $# < 4 ? $# : 4 ))
[ "$new" = . ] && new=""
shared=$(cd "$(dirname "$(git rev-parse --path-format=absolute --git-common-dir)")/.." && pwd)/shared
SEEDS=${SEEDS:-$shared/seeds}
LORE=${LORE:-$shared/corpus/lore-modern/linux-cifs-random.mbox}
MBOX=${MBOX:-$shared/corpus/perl-Mail-Box-folders/mbox.src}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/old" >/dev/null 2>&1 || true; git worktree remove --force "$tmp/new" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
build() { # rev dir out
  if [ -z "$1" ]; then go build -o "$3" ./cmd/linkscan; return; fi
  git worktree add --detach -q "$2" "$1"
  (cd "$2" && go build -o "$3" ./cmd/linkscan)
}
build "$old" "$tmp/old" "$tmp/linkscan-old"
build "$new" "$tmp/new" "$tmp/linkscan-new"
mkdir "$tmp/in"
go run ./internal/genshapes -size "$size" -seeds "$SEEDS" -lore "$LORE" -mbox "$MBOX" "$tmp/in" "$@"
names=$(go run ./internal/genshapes -seeds "$SEEDS" -lore "$LORE" -mbox "$MBOX" -list)
pattern='(https?|ftp|gopher|wais|news|mailto|file|prospero|telnet|nntp|mid|cid):[^[:space:]<>"]+'
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); old=$old new=${new:-working tree}; $runs runs a shape, in turn"
instr() { # binary input -> instructions, or "-"
  for _ in 1 2 3 4 5; do
    GOGC=off GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" \
      "$1" scan --jobs 1 --format jsonl -o /dev/null "$2" > /dev/null 2> "$tmp/vg.log" || true
    if ! grep -q 'Unrecognised instruction' "$tmp/vg.log"; then # (exit 1: damaged messages)
      grep -o 'Collected : [0-9]*' "$tmp/vg.log" | tr -dc 0-9; return
    fi
  done
  echo -
}
if [ -n "${INSTR:-}" ]; then
  printf '%-10s %9s | %14s | %14s | %7s | %s\n' shape MB "old instr/B" "new instr/B" "new/old" "(speed ratio: old/new instructions)"
else
  printf '%-10s %9s | %-22s | %-22s | %6s | %-11s | %s\n' shape MB "old: elapsed cpu MB/s" "new: elapsed cpu MB/s" "new/old" "RSS old/new" "output${GREP:+ | scan/grep}"
fi
for s in $names; do
  in=$tmp/in/$s.mbox
  [ "$s" = maildir ] && in=$tmp/in/maildir
  [ -e "$in" ] || continue
  bytes=$(du -sb --apparent-size "$in" | cut -f1)
  if [ -n "${INSTR:-}" ]; then
    io=$(instr "$tmp/linkscan-old" "$in"); in_=$(instr "$tmp/linkscan-new" "$in")
    awk -v s="$s" -v b="$bytes" -v o="$io" -v n="$in_" 'BEGIN {
      if (o == "-" || n == "-") { printf "%-10s %9.1f | valgrind failed\n", s, b / 1e6; exit }
      printf "%-10s %9.1f | %14.1f | %14.1f | %6.2fx |\n", s, b / 1e6, o / b, n / b, o / n }'
    continue
  fi
  : > "$tmp/times"
  for _ in $(seq "$runs"); do
    for b in old new; do
      /usr/bin/time -f "$b %e %U %S %M" -a -o "$tmp/times" "$tmp/linkscan-$b" scan --format jsonl -o "$tmp/$b.jsonl" "$in" 2> "$tmp/stderr"
    done
    if [ -n "${GREP:-}" ]; then
      /usr/bin/time -f "grep %e %U %S %M" -a -o "$tmp/times" sh -c "grep -rhoE '$pattern' '$in' > '$tmp/grep.out' || true"
    fi
  done
  # the fields the old revision writes, from both outputs
  keys=$(head -1 "$tmp/old.jsonl" | jq -c 'keys_unsorted' 2>/dev/null || echo '[]')
  same=same
  if ! cmp -s <(jq -c --argjson k "$keys" '[.[$k[]]]' "$tmp/old.jsonl") <(jq -c --argjson k "$keys" '[.[$k[]]]' "$tmp/new.jsonl"); then
    same="differs ($(wc -l < "$tmp/old.jsonl") / $(wc -l < "$tmp/new.jsonl") records)"
  fi
  awk -v s="$s" -v bytes="$bytes" -v same="$same" '
    function med(a, n,   i, j, t) {
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return (a[int((n + 1) / 2)] + a[int(n / 2) + 1]) / 2 }
    { n[$1]++; e[$1, n[$1]] = $2; c[$1, n[$1]] = $3 + $4; if ($5 > r[$1]) r[$1] = $5 }
    END {
      for (b in n) { for (i = 1; i <= n[b]; i++) { ee[i] = e[b, i]; cc[i] = c[b, i] }; me[b] = med(ee, n[b]); mc[b] = med(cc, n[b]) }
      mb = bytes / 1e6
      printf "%-10s %9.1f | %6.2f %6.2f %7.0f | %6.2f %6.2f %7.0f | %5.2fx | %5.0f/%-5.0f | %s", s, mb,
        me["old"], mc["old"], mb / mc["old"], me["new"], mc["new"], mb / mc["new"], mc["old"] / mc["new"], r["old"] / 1024, r["new"] / 1024, same
      if (n["grep"]) printf " | %.2fx", me["grep"] / me["new"]
      printf "\n" }' "$tmp/times"
done
