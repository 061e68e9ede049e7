#!/usr/bin/env bash
# serde-wasm-bindgen and web-sys, measured both ways (issue 13; figures in the
# the book's Performance chapter, "serde-wasm-bindgen and web-sys"). Builds the wasm package three
# more times into target/bench-serde/ with the measurement features of
# Cargo.toml, prints each .wasm's size (after wasm-opt, and gzipped), then
# times view()/report()/traceSince() against their serde-wasm-bindgen twins
# in headless Chromium at 3 and 1,000 partitions (scripts/bench-serde.mjs).
# Reported, never asserted. Takes ~10 minutes (three release wasm builds).
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/bench-serde
mkdir -p "$out"
size() { printf '%-34s %8d B   gzip -9 %7d B\n' "$1" "$(stat -c %s "$2")" "$(gzip -9 -c "$2" | wc -c)"; }
build() { WASM_FEATURES="$1" WASM_OUT_DIR="$out/$2" scripts/build-wasm.sh >/dev/null; }
build "" json
build swb-only swb-only
build web-sys-marks web-sys
build swb-compare compare
echo "== wasm size (release-wasm + wasm-opt)"
size "views as JSON text (default)" "$out/json/failover_lab_bg.wasm"
size "views through serde-wasm-bindgen" "$out/swb-only/failover_lab_bg.wasm"
size "default + web-sys marks/console" "$out/web-sys/failover_lab_bg.wasm"
size "both (timing build)" "$out/compare/failover_lab_bg.wasm"
echo "== time per call (headless Chromium)"
node scripts/bench-serde.mjs "$out/compare"
