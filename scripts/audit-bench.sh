#!/usr/bin/env bash
# Speed of the audit engine: 10,000 distinct URLs on 50 loopback HTTP
# servers (distinct ports), at most 4 requests at once per host, 200 over
# all. Each server counts the requests it has in flight: the benchmark fails
# if one ever saw more than 4, and reports the highest count seen
# (max-in-flight/host) beside checks/s.
#
#   scripts/audit-bench.sh            # three runs
#   COUNT=1 scripts/audit-bench.sh
#
# The machine may be shared: the figures are elapsed time, so a loaded
# machine gives lower ones; compare runs made side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-3}
echo "== load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown), $(nproc 2>/dev/null || echo '?') CPUs"
go test -run '^$' -bench '^BenchmarkAudit$' -benchtime 1x -count "$COUNT" ./audit | grep -E '^(Benchmark|ok|FAIL|---)'
