#!/usr/bin/env bash
# Instructions per event on a workload, exactly (callgrind counts instructions,
# so the figure does not move with the machine's load as wall time does):
# Ir(run --until T2) - Ir(run --until T1), over the events between T1 and T2.
#   scripts/ir-per-event.sh [BIN] [FILE] [T1] [T2]
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
for t in "$t1" "$t2"; do
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$t" "$bin" run "$file" --until "$t" \
    2> "$tmp/err.$t" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events_processed"])' > "$tmp/ev.$t"
done
python3 - "$tmp" "$t1" "$t2" <<'PY'
import re, sys
d, a, b = sys.argv[1:]
ir = lambda t: int(re.search(r"refs:\s+([\d,]+)", open(f"{d}/err.{t}").read()).group(1).replace(",", ""))
ev = lambda t: int(open(f"{d}/ev.{t}").read())
n = ev(b) - ev(a)
print(f"{(ir(b) - ir(a)) / n:.0f} instructions per event over {n} events ({a}-{b} ms)")
PY
