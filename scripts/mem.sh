#!/usr/bin/env bash
# Measures peak memory (RSS) of linkscan on the cases of issue #10:
#
#   scripts/mem.sh [SIZE]        e.g. scripts/mem.sh 256M   (the default)
#
#   1. scan and index of a Maildir of FILES small messages (default 100000)
#   2. scan --unique of a generated mbox of about SIZE bytes in which
#      nearly every link is distinct (half the links are new, half repeat
#      an earlier one): about one distinct link per 110 bytes; with
#      --memory 16MiB as well when the command has that flag (it spills)
#   3. scan of six messages of MSGSIZE bytes each (default 60M): from the
#      file, through a pipe (standard input) and gzip-compressed
#   4. scan of one message whose text part is ENCSIZE bytes (default 47M)
#      of ISO-8859-1 text with a non-ASCII letter a line: quoted-printable
#      (an =E9 a line), 8-bit, and UTF-8 in base64; each is compared with
#      its target, 64 MB plus the message
#   5. the same for parts whose last step carries from line to line or
#      whose charset is multibyte: HTML (a <p> a line, a link every 50th
#      line in an <a href>) as written in UTF-8, quoted-printable
#      ISO-8859-1 and base64 UTF-8; format=flowed (a flowed line, then a
#      fixed one); GBK text in base64
#
# Environment: CASES (a subset of "maildir unique large encoded staged",
# the default), ENCSIZE, FILES, MSGSIZE, TMPDIR (where the inputs are generated:
# SIZE + 6*MSGSIZE + about 4 KiB a Maildir file), LINKSCAN_TIMEOUT
# (seconds per command, default 600), MAXRSS (a command is stopped past
# it, default 4G). SIZE 1100M gives about ten million distinct links. Inputs are generated with awk and
# bash (no network), deterministically; everything is removed at the end,
# also on Ctrl-C. Prints one line per run: peak RSS (GNU time's maximum
# resident set size), elapsed and CPU time (user + system; on a shared
# machine the CPU time is the figure to compare) and exit status.
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-256M}
files=${FILES:-100000}
msgsize=${MSGSIZE:-60M}
limit=${LINKSCAN_TIMEOUT:-600}
last_rss=0
cases=" ${CASES:-maildir unique large encoded staged} "
encsize=${ENCSIZE:-47M}

bytes() { # 256M -> bytes
  local s=$1 m=1
  case $s in
    *K) m=1024; s=${s%K} ;; *M) m=$((1<<20)); s=${s%M} ;; *G) m=$((1<<30)); s=${s%G} ;;
  esac
  echo $((s * m))
}
size_b=$(bytes "$size")
msg_b=$(bytes "$msgsize")
enc_b=$(bytes "$encsize")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/linkscan-mem.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
go build -o "$tmp/linkscan" ./cmd/linkscan
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
echo "linkscan: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"

maxrss_kb=$(( $(bytes "${MAXRSS:-4G}") / 1024 ))

# run LABEL CMD...: runs CMD under GNU time, prints a line. A watchdog
# stops CMD past LINKSCAN_TIMEOUT seconds or past MAXRSS of memory
# (default 4G, so that a case that grows without bound cannot take the
# machine down; the line then says so).
run() {
  local label=$1; shift
  local rc=0 killed="" start=$SECONDS cpid="" rss
  /usr/bin/time -f '%e %M %U %S' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/stderr" &
  local tpid=$!
  while kill -0 "$tpid" 2>/dev/null; do
    [ -n "$cpid" ] || cpid=$(ps -o pid= --ppid "$tpid" 2>/dev/null | head -1 | tr -d ' ' || true)
    if [ -n "$cpid" ] && [ -z "$killed" ]; then
      rss=$(awk '/^VmRSS/ {print $2}' "/proc/$cpid/status" 2>/dev/null || true)
      if [ "${rss:-0}" -gt "$maxrss_kb" ]; then
        killed="stopped at ${MAXRSS:-4G} of RSS"; kill "$cpid" 2>/dev/null || true
      elif (( SECONDS - start > limit )); then
        killed="stopped after ${limit} s"; kill "$cpid" 2>/dev/null || true
      fi
    fi
    sleep 0.1
  done
  wait "$tpid" || rc=$?
  local secs user sys
  read -r secs last_rss user sys < <(tail -1 "$tmp/time")
  printf '%-52s peak RSS %7.1f MB  %6.1f s (CPU %6.1f s)  exit %d%s\n' "$label" "$(echo "$last_rss" | awk '{print $1/1024}')" \
    "$secs" "$(echo "$user $sys" | awk '{print $1 + $2}')" "$rc" "${killed:+  ($killed)}"
}

# 1. Maildir of small files.
if [[ $cases == *" maildir "* ]]; then
echo
echo "== Maildir of $files small messages =="
md=$tmp/maildir
mkdir -p "$md/cur" "$md/new" "$md/tmp"
for ((i = 0; i < files; i++)); do
  printf 'From: user%d@example.org\nTo: list@example.org\nSubject: message %d\nDate: Mon, 7 Mar 1994 10:%02d:00 +0000\nMessage-ID: <%d@gen.example>\n\nSee http://www.example.org/archive/%d.html and\n<URL:ftp://ftp.example.net/pub/%d/>\n' \
    "$i" "$i" $((i % 60)) "$i" "$i" $((i % 1000)) > "$md/cur/$i.gen:2,S"
done
run "scan --format jsonl (Maildir, $files files)" "$tmp/linkscan" scan --format jsonl -o /dev/null "$md"
run "index, in memory (Maildir, $files files)" "$tmp/linkscan" index "$md"
rm -rf "$md"
fi

# 2. --unique on many distinct links.
if [[ $cases == *" unique "* ]]; then
echo
echo "== scan --unique on about $size of mbox, nearly every link distinct =="
awk -v size="$size_b" 'BEGIN {
  srand(1); total = 0; links = 0; m = 0
  while (total < size) {
    m++
    s = sprintf("From gen@example.org Mon Mar  7 10:00:00 1994\nMessage-ID: <%d@gen.example>\nFrom: gen@example.org\nSubject: links %d\n\n", m, m)
    for (j = 0; j < 40; j++) {
      if (j % 2 == 0 || links == 0) { k = links++ } else { k = int(rand() * links) }
      s = s sprintf("see http://host%d.example.org/archive/%d/msg.html\n", k % 97, k)
    }
    s = s "\n"
    printf "%s", s
    total += length(s)
  }
  print links > "/dev/stderr"
}' > "$tmp/links.mbox" 2> "$tmp/distinct"
distinct=$(cat "$tmp/distinct")
echo "corpus: $(stat -c %s "$tmp/links.mbox") bytes, $distinct distinct links"
run "scan --format jsonl (no --unique, the baseline)" "$tmp/linkscan" scan --format jsonl -o /dev/null "$tmp/links.mbox"
base=$last_rss
run "scan --unique --format jsonl" "$tmp/linkscan" scan --unique --format jsonl -o /dev/null "$tmp/links.mbox"
awk -v a="$last_rss" -v b="$base" -v n="$distinct" 'BEGIN { printf "  --unique above the baseline: %.0f bytes per distinct link\n", (a - b) * 1024 / n }'
if "$tmp/linkscan" help scan 2>&1 | grep -q -- '--memory'; then
  run "scan --unique --memory 16MiB (spills past ~290k)" "$tmp/linkscan" scan --unique --memory 16MiB --format jsonl -o /dev/null "$tmp/links.mbox"
else
  echo "(this linkscan has no --memory flag: the spill is measured by go test -bench . ./internal/spill ./report)"
fi
if "$tmp/linkscan" help scan 2>&1 | grep -q -- '--unique=first'; then
  # Time to the first record through a pipe that closes after it.
  start=$(date +%s.%N)
  "$tmp/linkscan" scan --unique=first --format jsonl "$tmp/links.mbox" 2>/dev/null | head -1 > /dev/null || true
  awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%-52s %.2f s to end\n", "scan --unique=first | head -1", b - a }'
fi
rm -f "$tmp/links.mbox"
fi

# 3. Six large messages.
if [[ $cases == *" large "* ]]; then
echo
echo "== six messages of $msgsize each =="
awk -v size="$msg_b" 'BEGIN {
  total = 0; n = 0
  while (total < size) {
    n++
    if (n % 50 == 0) s = sprintf("line %d of a long message, see http://www.example.org/big/%d.html\n", n, n)
    else s = sprintf("line %d of a long message with nothing but words in it, again and again\n", n)
    printf "%s", s
    total += length(s)
  }
}' > "$tmp/body"
for i in 1 2 3 4 5 6; do
  printf 'From gen@example.org Mon Mar  7 10:00:00 1994\nMessage-ID: <big%d@gen.example>\nFrom: gen@example.org\nSubject: big %d\n\n' "$i" "$i"
  cat "$tmp/body"
  printf '\n'
done > "$tmp/large.mbox"
rm -f "$tmp/body"
echo "corpus: $(stat -c %s "$tmp/large.mbox") bytes"
run "scan --format jsonl (six large messages)" "$tmp/linkscan" scan --format jsonl -o /dev/null "$tmp/large.mbox"
# the same through a pipe and compressed: streams, whose long messages are
# held in a temporary file (in TMPDIR) until their end is found
run "  the same from a pipe (cat | scan -)" bash -c 'cat "$1" | "$2" scan --format jsonl -o /dev/null -' _ "$tmp/large.mbox" "$tmp/linkscan"
gzip -1 "$tmp/large.mbox"
run "  the same gzip-compressed (.gz)" "$tmp/linkscan" scan --format jsonl -o /dev/null "$tmp/large.mbox.gz"
fi

# 4. One message with a large encoded text part.
if [[ $cases == *" encoded "* ]]; then
echo
echo "== one message, a text part of $encsize encoded =="
# body LINE-FORMAT: ENCSIZE bytes of lines, a link every 50th; %s is the
# non-ASCII letter as the encoding writes it
body() {
  awk -v size="$enc_b" -v e="$1" 'BEGIN {
    total = 0; n = 0
    while (total < size) {
      n++
      if (n % 50 == 0) s = sprintf("line %d caf%s see http://www.example.org/big/%d.html\n", n, e, n)
      else s = sprintf("line %d caf%s with nothing but words in it, again and again and\n", n, e)
      printf "%s", s
      total += length(s)
    }
  }'
}
hdr() { # hdr CHARSET ENCODING
  printf 'From gen@example.org Mon Mar  7 10:00:00 1994\nMessage-ID: <enc@gen.example>\nFrom: gen@example.org\nSubject: encoded\nMIME-Version: 1.0\nContent-Type: text/plain; charset=%s\nContent-Transfer-Encoding: %s\n\n' "$1" "$2"
}
{ hdr iso-8859-1 quoted-printable; body '=E9'; } > "$tmp/qp.mbox"
{ hdr iso-8859-1 8bit; body "$(printf '\351')"; } > "$tmp/8bit.mbox"
{ hdr utf-8 base64; body 'é' | base64 -w 76; } > "$tmp/b64.mbox"
for f in qp 8bit b64; do
  n=$(stat -c %s "$tmp/$f.mbox")
  run "scan --format jsonl ($f, $((n >> 20)) MiB message)" "$tmp/linkscan" scan --format jsonl -o /dev/null "$tmp/$f.mbox"
  awk -v r="$last_rss" -v n="$n" 'BEGIN { printf "  target 64 MB + the message: %.1f MB (MB as above: 2^20 bytes); %s\n", 64 + n / 1048576, (r / 1024 <= 64 + n / 1048576) ? "met" : "NOT met" }'
  rm -f "$tmp/$f.mbox"
done
fi

# 5. One message with a large HTML, format=flowed or base64 GBK part.
if [[ $cases == *" staged "* ]]; then
echo
echo "== one message, a part of $encsize: HTML, format=flowed, GBK =="
# lines FORMAT-OF-LINE FORMAT-OF-LINK-LINE: ENCSIZE bytes, a link line
# every 50th; %d is the line number, %s the letter as written
lines() {
  awk -v size="$enc_b" -v e="$1" -v kind="$2" 'BEGIN {
    total = 0; n = 0
    while (total < size) {
      n++
      if (kind == "html") {
        if (n % 50 == 0) s = sprintf("<p>line %d caf%s see <a href=\"http://www.example.org/big/%d.html\">here</a></p>\n", n, e, n)
        else s = sprintf("<p>line %d caf%s with nothing but words in it, again and again</p>\n", n, e)
      } else if (kind == "flowed") {
        if (n % 50 == 0) s = sprintf("line %d caf%s with words, again \nsee http://www.example.org/big/%d.html\n", n, e, n)
        else s = sprintf("line %d caf%s with nothing but words in it, again \nand again\n", n, e)
      } else {
        if (n % 50 == 0) s = sprintf("line %d %s see http://www.example.org/big/%d.html\n", n, e, n)
        else s = sprintf("line %d %s with nothing but words in it, again and again\n", n, e)
      }
      printf "%s", s
      total += length(s)
    }
  }'
}
hdr() { # hdr CONTENT-TYPE ENCODING
  printf 'From gen@example.org Mon Mar  7 10:00:00 1994\nMessage-ID: <staged@gen.example>\nFrom: gen@example.org\nSubject: staged\nMIME-Version: 1.0\nContent-Type: %s\nContent-Transfer-Encoding: %s\n\n' "$1" "$2"
}
{ hdr 'text/html; charset=utf-8' 8bit; lines 'é' html; } > "$tmp/html.mbox"
{ hdr 'text/html; charset=iso-8859-1' quoted-printable; lines '=E9' html; } > "$tmp/html-qp.mbox"
{ hdr 'text/html; charset=utf-8' base64; lines 'é' html | base64 -w 76; } > "$tmp/html-b64.mbox"
{ hdr 'text/plain; charset=utf-8; format=flowed' 8bit; lines 'é' flowed; } > "$tmp/flowed.mbox"
if command -v iconv >/dev/null; then
  { hdr 'text/plain; charset=gbk' base64; lines '中文' plain | iconv -f utf-8 -t gbk | base64 -w 76; } > "$tmp/gbk-b64.mbox"
fi
for f in html html-qp html-b64 flowed gbk-b64; do
  [[ -f $tmp/$f.mbox ]] || continue
  n=$(stat -c %s "$tmp/$f.mbox")
  run "scan --format jsonl ($f, $((n >> 20)) MiB message)" "$tmp/linkscan" scan --format jsonl -o /dev/null "$tmp/$f.mbox"
  # a message past --max-message-size (64 MiB) is held up to it
  m=$(( n < 67108864 ? n : 67108864 ))
  awk -v r="$last_rss" -v n="$m" 'BEGIN { printf "  target 64 MB + the message: %.1f MB (MB as above: 2^20 bytes); %s\n", 64 + n / 1048576, (r / 1024 <= 64 + n / 1048576) ? "met" : "NOT met" }'
  rm -f "$tmp/$f.mbox"
done
fi
