#!/usr/bin/env bash
# `make bench` (issue 6): every benchmark, figures printed and kept in target/bench/.
#   1. criterion over scenarios/bench/*.json (benches/workloads.rs)
#   2. the CLI as a whole process: hyperfine (Debian's) or a timed loop, and
#      /usr/bin/time -v for peak memory
#   3. failover cost vs partitions led by the dead broker -> docs/failover-scaling.svg
#   4. the same workloads in headless Chromium (www/bench.html), the wasm/native
#      ratio and the overview's frame time (scripts/bench-browser.mjs)
#   5. the crash ripple through the large workload's overview, photographed in
#      headless Chromium (scripts/ripple.mjs -> docs/ripple-*.png)
# Knobs (environment): BENCH_WORKLOADS=small,medium,large  BENCH_UNTIL_MS=N (cap
# the simulated horizon; default the files' 60 s)  BENCH_SCALING=1,5000  (0 to
# skip, else the partition counts; default 1000,5000,10000,20000)
# BENCH_SEEK=leader-dies,tour-10-how-long-unavailable,bench/large (the scenarios whose
# time travel the browser step times: seek p50/p95 after runFor, a jump, a switch
# change, a loaded link and along a scrub; "" to skip)
# BENCH_STEPS="criterion cli scaling browser ripple" (which parts). Speed is reported,
# never asserted. Needs `make build` first (the Makefile's bench target does it).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

workloads="${BENCH_WORKLOADS:-small,medium,large}"
until_ms="${BENCH_UNTIL_MS:-}"
scaling="${BENCH_SCALING:-1000,5000,10000,20000}"
seek="${BENCH_SEEK-leader-dies,tour-1-leader-dies,tour-4-unclean-election,tour-10-how-long-unavailable,bench/large}"
steps="${BENCH_STEPS:-criterion cli scaling browser ripple}"
out=target/bench
mkdir -p "$out"
has() { [[ " $steps " == *" $1 "* ]]; }
say() { printf '\n== bench: %s\n' "$*"; }

say "cargo build --release (failover-lab, failover-bench)"
cargo build --release --bins

if has criterion; then
  say "criterion (workloads ${workloads}${until_ms:+, until ${until_ms} ms})"
  BENCH_WORKLOADS="$workloads" BENCH_UNTIL_MS="$until_ms" cargo bench --profile bench-unwind --bench workloads
fi

if has cli; then
  for w in ${workloads//,/ }; do
    f="scenarios/bench/${w}.json"
    cmd="target/release/failover-lab run ${f} --format describe${until_ms:+ --until ${until_ms}}"
    say "CLI whole process: ${cmd}"
    runs=3; [[ "$w" == small ]] && runs=20
    if command -v hyperfine >/dev/null; then
      hyperfine --style basic --warmup 1 --runs "$runs" --export-json "${out}/cli-${w}.json" "${cmd} >/dev/null"
    else
      for i in $(seq "$runs"); do /usr/bin/time -f "run ${i}: %e s wall" bash -c "${cmd} >/dev/null"; done
    fi
    /usr/bin/time -v bash -c "${cmd} >/dev/null" 2> "${out}/cli-${w}.time"
    grep -E "Elapsed|Maximum resident" "${out}/cli-${w}.time" | sed 's/^\s*/  /'
    target/release/failover-bench run "$f" ${until_ms:+--until "$until_ms"} | tee "${out}/native-${w}.json"
  done
fi

if has scaling && [[ "$scaling" != 0 ]]; then
  say "failover scaling (${scaling} partitions, 60 brokers) -> docs/failover-scaling.svg"
  mkdir -p docs
  target/release/failover-bench scaling --partitions "$scaling" \
    --svg docs/failover-scaling.svg --json "${out}/scaling.json" > /dev/null
fi

if has browser; then
  say "headless Chromium (www/bench.html)"
  # The speed table, then the seek table (time travel) beside it.
  node scripts/bench-browser.mjs --workloads "$workloads" ${until_ms:+--until "$until_ms"} \
    ${seek:+--seek "$seek"} ${until_ms:+--seek-until "$until_ms"} --json "${out}/browser.json"
fi

if has ripple; then
  say "the crash ripple on the large workload's overview -> docs/ripple-*.png"
  node scripts/ripple.mjs --out docs
fi
say "done; figures in ${out}/"
