#!/usr/bin/env bash
# The rewrite fidelity check over real mail: every message of every
# .mbox file of DIR (default: the shared lore-modern corpus beside the
# main checkout) rewritten with the shipped unwrappers (one rule,
# action = "unwrap") and --break-dkim, then checked by the oracle of
# package rewrite/rewritecheck: no word of a text part outside the links
# written changes; each link written is the whole gateway link the
# oracle finds by its grammar at that place; no target written is other
# than (or a truncation of) the one the whole link decodes to. Prints the
# figures (messages, gateway links found, unwrapped, skipped by reason,
# whole links not unwrapped) and every failure; exit 1 when a check
# failed. -v lists the whole gateway links not unwrapped.
#
#   scripts/rewrite-corpus.sh [-v] [DIR|FILE...]
set -euo pipefail
cd "$(dirname "$0")/.."
v=()
if [ "${1:-}" = -v ]; then v=(-v); shift; fi
if [ $# -eq 0 ]; then
  shared=$(cd "$(dirname "$(git rev-parse --path-format=absolute --git-common-dir)")/.." && pwd)/shared
  set -- "$shared/corpus/lore-modern"
fi
exec go run ./rewrite/rewritecheck/rewritecorpus "${v[@]}" "$@"
