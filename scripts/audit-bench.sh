#!/usr/bin/env bash
# Speed of the audit engine: 10,000 distinct URLs on 50 loopback HTTP
# servers (distinct ports), at most 4 requests at once per host, 200 over
# all. Each server counts the requests it has in flight: the benchmark fails
# if one ever saw more than 4, and reports the highest count seen
# (max-in-flight/host) beside checks/s.
#
#   scripts/audit-bench.sh            # three runs
#   COUNT=1 scripts/audit-bench.sh
#   SKIP_GO=1 KEEP=1 scripts/audit-bench.sh   # LinkChecker only; keep its files
#   SKIP_GO=1 MEM=1000000 scripts/audit-bench.sh   # peak RSS over a history of a million URLs
#   SKIP_GO=1 MEM=300000 MEM_DISK=1 scripts/audit-bench.sh   # the links made distinct on disk first
#
# The machine may be shared: the figures are elapsed time, so a loaded
# machine gives lower ones; compare runs made side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-3}
echo "== load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown), $(nproc 2>/dev/null || echo '?') CPUs"
if [ -z "${SKIP_GO:-}" ]; then
  go test -run '^$' -bench '^BenchmarkAudit$' -benchtime 1x -count "$COUNT" ./audit | grep -E '^(Benchmark|ok|FAIL|---)'
fi

# MEM=N: peak RSS of an offline audit of N distinct URLs answered from a
# history of N URLs, into the summary and HTML reports (TestMemoryManyLinks;
# recording the N URLs first is part of the same process and timing).
if [ -n "${MEM:-}" ]; then
  bin=$(mktemp)
  go test -c -o "$bin" ./audit
  echo "== $MEM URLs in the history, audited offline${MEM_DISK:+, made distinct on disk first (each added twice)}"
  ( cd "$(dirname "$bin")" && AUDIT_MEM_LINKS=$MEM AUDIT_MEM_DISK=${MEM_DISK:-} /usr/bin/time -f "elapsed %e s, peak RSS %M KB" "$bin" -test.run '^TestMemoryManyLinks$' 2>&1 | tail -2 )
  rm -f "$bin"
fi

# LinkChecker (Debian's linkchecker) on the same 10,000 URLs, on the same
# 50 servers (served by TestServeBench), with as many threads as the audit
# has workers (200). LinkChecker has no per-host limit of requests in
# flight; its per-host rate limit is lifted (the servers send the
# "LinkChecker" header it asks for, and maxrequestspersecond is 1000), so
# the highest count in flight is reported, not held to 4.
if ! command -v linkchecker >/dev/null 2>&1; then
  echo "== LinkChecker: not installed (apt-get install linkchecker); skipped"
  exit 0
fi
dir=$(mktemp -d)
chmod 755 "$dir" # LinkChecker run as root drops to nobody, who must read links.html
trap 'touch "$dir/stop"; wait 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT
AUDIT_BENCH_SERVE=$dir go test -run '^TestServeBench$' -count=1 -timeout 20m ./audit >"$dir/serve.log" 2>&1 &
for _ in $(seq 1 1200); do
  [ -e "$dir/ready" ] && break
  sleep 0.1
done
[ -e "$dir/ready" ] || { echo "the servers did not start"; cat "$dir/serve.log"; exit 1; }
cat >"$dir/linkcheckerrc" <<RC
[checking]
threads=200
maxrequestspersecond=1000
[filtering]
checkextern=1
RC
[ -n "${KEEP:-}" ] && echo "files in $dir"
echo "== LinkChecker $(linkchecker --version 2>/dev/null | head -1 | awk '{print $2}'), 200 threads, on the same URLs"
start=$(date +%s.%N)
linkchecker -f "$dir/linkcheckerrc" --no-status --no-warnings -v -o csv -r 1 "$dir/links.html" >"$dir/lc.csv" 2>"$dir/lc.err" || true
end=$(date +%s.%N)
touch "$dir/stop"
wait
checked=$(grep -c '^http://127\.0\.0\.1.*;True;' "$dir/lc.csv" || true)
failed=$(grep -c '^http://127\.0\.0\.1.*;False;' "$dir/lc.csv" || true)
awk -v n="$checked" -v f="$failed" -v s="$start" -v e="$end" 'BEGIN { printf "LinkChecker: %d URLs valid, %d not, in %.1f s: %.0f checks/s\n", n, f, e - s, (n + f) / (e - s) }'
cat "$dir/result.txt"
