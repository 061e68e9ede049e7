#!/usr/bin/env bash
# Byte-identity check for pure speed changes: runs every scenarios/*.json, the
# small and medium bench workloads, large.json to 5 s, a few sweep seeds (and a
# short single-threaded sweep) with BASE_BIN and with CANDIDATE_BIN, and compares
# the whole JSON report (trace_hash, events_processed, final state, availability).
#   scripts/check-trace-identity.sh BASE_BIN [CANDIDATE_BIN]
# CANDIDATE_BIN defaults to target/release/failover-lab. Exits 1 on any difference.
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:?usage: $0 BASE_BIN [CANDIDATE_BIN]}"
cand="${2:-target/release/failover-lab}"
fail=0
n=0
check() { # label, args...
  local label="$1"
  shift
  local a b
  # stdout only: the sweep's stderr progress line carries wall time.
  a="$("$base" "$@" 2>/dev/null)" || { echo "FAILED (base): $label"; fail=1; return; }
  b="$("$cand" "$@" 2>/dev/null)" || { echo "FAILED (candidate): $label"; fail=1; return; }
  n=$((n + 1))
  if [ -z "$a" ] || [ "$a" != "$b" ]; then
    echo "DIFFERENT: $label ($*)"
    fail=1
  fi
}
for f in scenarios/*.json scenarios/bench/small.json scenarios/bench/medium.json; do
  check "$f" run "$f"
done
check "large --until 5000" run scenarios/bench/large.json --until 5000
for s in 1 2 3 7 42 1000; do
  check "sweep seed $s" run --sweep-seed "$s"
done
check "sweep seed 5 acks=1" run --sweep-seed 5 --sweep-config "acks=1,rf=3,min.isr=1,unclean=true"
check "sweep 8 seeds" sweep --seeds 8 --threads 1 --format jsonl
if [ "$fail" = 0 ]; then
  echo "identical: $n runs ($cand vs $base)"
else
  exit 1
fi
