#!/usr/bin/env bash
# Indexes a generated archive of about a million messages into an SQLite
# index and reports time, peak memory and what the index holds; then runs
# again to show that an unchanged file is skipped, opens the index once
# more after changing its time (as an unclean close would: the opening
# then runs PRAGMA quick_check) and resolves against it.
#
#   scripts/index-million.sh [SIZE]      (default 3300M: ~1,000,000 messages)
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-3300M}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/linkscan" ./cmd/linkscan
go run ./internal/gencorpus -size "$size" -seed 1 > "$tmp/big.mbox"
echo "archive: $(stat -c %s "$tmp/big.mbox") bytes"
for run in first second; do
  /usr/bin/time -f '%e %M' -o "$tmp/time" "$tmp/linkscan" index --index "$tmp/index.db" --format json "$tmp/big.mbox" > "$tmp/stats.json"
  read -r secs rss < "$tmp/time"
  msgs=$(grep '"messages"' "$tmp/stats.json" | tr -dc 0-9)
  added=$(grep '"added"' "$tmp/stats.json" | tr -dc 0-9)
  printf '%s run: %s messages in the index, %s added, %.1f s, peak RSS %.1f MB, index %s bytes\n' \
    "$run" "$msgs" "$added" "$secs" "$(echo "$rss/1024" | bc -l)" "$(stat -c %s "$tmp/index.db")"
done
# resolve a dangling and a present reference against the stored index
printf 'From x@y Sat Jan  1 00:00:00 2000\nMessage-ID: <probe@x>\n\nmid:1.1@nowhere and mid:probe@x\n' > "$tmp/probe.mbox"
touch "$tmp/index.db"   # as if not closed cleanly: the next opening checks the file
/usr/bin/time -f 'index of a small file after an unclean close (quick_check): %e s, peak RSS %M KB' \
  "$tmp/linkscan" index --index "$tmp/index.db" "$tmp/probe.mbox" > /dev/null
/usr/bin/time -f 'resolve against it: %e s, peak RSS %M KB' "$tmp/linkscan" resolve --index "$tmp/index.db" --format text "$tmp/probe.mbox"
