#!/usr/bin/env bash
# Instructions, and with CACHE=1 simulated cache misses, per event on a workload,
# exactly (valgrind counts them, so the figures do not move with the machine's
# load as wall time does): X(run --until T2) - X(run --until T1), over the
# events between T1 and T2.
#   scripts/ir-per-event.sh [BIN] [FILE] [T1] [T2]
#   CACHE=1 scripts/ir-per-event.sh ...   adds first-level and last-level data
#                                         misses per event (cachegrind's model)
#   LL=4194304,16,64 CACHE=1 ...          with a last-level cache of that size,
#                                         associativity and line (the default is
#                                         the host's: 32 MiB here, which hides
#                                         the misses a shared machine has)
# Defaults: target/release/failover-lab scenarios/bench/large.json 2000 4000.
# Needs valgrind. A measurement, never a test.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/release/failover-lab}"
file="${2:-scenarios/bench/large.json}"
t1="${3:-2000}"
t2="${4:-4000}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if [ "${CACHE:-0}" = 1 ]; then
  tool=(--tool=cachegrind --cache-sim=yes --cachegrind-out-file=/dev/null ${LL:+--LL=$LL})
else
  tool=(--tool=callgrind --callgrind-out-file=/dev/null)
fi
for t in "$t1" "$t2"; do
  valgrind "${tool[@]}" "$bin" run "$file" --until "$t" \
    2> "$tmp/err.$t" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events_processed"])' > "$tmp/ev.$t"
done
python3 - "$tmp" "$t1" "$t2" <<'PY'
import re, sys
d, a, b = sys.argv[1:]
def count(t, name):
    m = re.search(name + r"\s+([\d,]+)", open(f"{d}/err.{t}").read())
    return int(m.group(1).replace(",", "")) if m else None
ev = lambda t: int(open(f"{d}/ev.{t}").read())
n = ev(b) - ev(a)
per = lambda name: (count(b, name) - count(a, name)) / n
print(f"{per('refs:'):.0f} instructions per event over {n} events ({a}-{b} ms)")
if count(b, r"D1  misses:") is not None:
    print(f"{per(r'D1  misses:'):.1f} first-level and {per(r'LLd misses:'):.1f} last-level data misses per event")
PY
