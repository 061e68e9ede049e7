#!/usr/bin/env bash
# Build the wasm package into www/pkg with the settings of wasm-pack.toml:
#   RUSTFLAGS=<build.rustflags> cargo build --lib --target wasm32-unknown-unknown --profile <profile>
#   wasm-bindgen --target <target> --out-dir <out-dir> --out-name <out-name> <wasm>
#   <wasm-opt binary> <flags>   (when [wasm-opt] enabled; npm's binaryen, see wasm-pack.toml)
# Downloads nothing. Run scripts/setup.sh (make setup) first.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

say() { printf 'build-wasm: %s\n' "$*"; }
die() { printf 'build-wasm: error: %s\n' "$*" >&2; exit 1; }
cfg() { python3 scripts/wasm_config.py "$1"; }

want="$(cfg wasm-bindgen-cli.version)"
target="$(cfg build.target)"
# WASM_OUT_DIR / WASM_FEATURES: measurement builds (scripts/bench-serde.sh) only.
out_dir="${WASM_OUT_DIR:-$(cfg build.out-dir)}"
out_name="$(cfg build.out-name)"
# WASM_PROFILE: the fast build (www/pkg-explorer, below) names its own.
profile="${WASM_PROFILE:-$(cfg build.profile)}"
opt_enabled="$(cfg wasm-opt.enabled)"
opt_bin="$(cfg wasm-opt.binary)"
mapfile -t opt_flags < <(cfg wasm-opt.flags)
# The build's own rustc flags; WASM_RUSTFLAGS (measurement builds) replaces them.
if [[ -n "${WASM_RUSTFLAGS+x}" ]]; then
  read -r -a build_flags <<< "$WASM_RUSTFLAGS"
else
  mapfile -t build_flags < <(cfg build.rustflags)
fi

have="$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)"
[[ "$have" == "$want" ]] || die "wasm-bindgen ${have:-missing}, wasm-pack.toml wants ${want}: run make setup"

crate="$(cargo metadata --no-deps --format-version 1 \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["packages"][0]["name"].replace("-","_"))')"
target_dir="$(cargo metadata --no-deps --format-version 1 \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
# cargo's output folder for a profile: dev -> debug, others by name.
profile_dir="$profile"; [[ "$profile" == dev ]] && profile_dir=debug
wasm="${target_dir}/wasm32-unknown-unknown/${profile_dir}/${crate}.wasm"

# Panic locations name each dependency's source file by its path under
# cargo's registry (/root/.cargo/registry/src/index.crates.io-…/serde_json-…):
# remapped to the crate's own folder, the wasm is the same on every machine
# whatever its CARGO_HOME, and 51 bytes smaller gzipped (measured 2026-12-02).
remap=()
for d in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/; do
  [[ -d "$d" ]] && remap+=("--remap-path-prefix=${d}=")
done
# The fast build (issue 63), also the trade-off explorer's own wasm
# (www/tradeoffs.html): the same crate with the sweep exports (cargo feature
# `explorer`) into www/pkg-explorer/, at opt-level 3 for speed (Cargo.toml's
# release-wasm-fast; no inliner cap). The page loads it on demand for a big
# scenario (www/lab.js initFastWasm, www/fast-wasm.js); no first load fetches
# it, so its size counts against no budget. Skipped by measurement builds (WASM_OUT_DIR set) and
# by WASM_EXPLORER=0. It is built at the same time as the page's, in its own
# target directory (cargo locks one per build): each ends in a long
# single-threaded link-time optimisation, so on 2 cores the two take about
# the time of one (issue 61).
explorer_pid=""
if [[ -z "${WASM_OUT_DIR:-}" && "${WASM_EXPLORER:-1}" != 0 ]]; then
  CARGO_TARGET_DIR="${target_dir}/explorer" WASM_OUT_DIR=www/pkg-explorer WASM_FEATURES=explorer WASM_EXPLORER=0 \
    WASM_PROFILE=release-wasm-fast WASM_RUSTFLAGS="" \
    bash scripts/build-wasm.sh > >(sed -u 's/^/[explorer] /') 2>&1 &
  explorer_pid=$!
  trap 'kill "$explorer_pid" 2>/dev/null || true' EXIT
fi

say "cargo build --lib --target wasm32-unknown-unknown --profile ${profile} (rustflags: ${build_flags[*]:-none})"
RUSTFLAGS="${RUSTFLAGS:-} ${build_flags[*]} ${remap[*]}" \
  cargo build --lib --target wasm32-unknown-unknown --profile "$profile" ${WASM_FEATURES:+--features "$WASM_FEATURES"}
[[ -f "$wasm" ]] || die "no ${wasm} after cargo build"

say "wasm-bindgen --target ${target} --out-dir ${out_dir} --out-name ${out_name}"
rm -rf "$out_dir"
mkdir -p "$out_dir"
wasm-bindgen --target "$target" --out-dir "$out_dir" --out-name "$out_name" "$wasm"

bg="${out_dir}/${out_name}_bg.wasm"
[[ -f "$bg" ]] || die "no ${bg} after wasm-bindgen"
if [[ "$opt_enabled" == true ]]; then
  [[ -x "$opt_bin" ]] || die "${opt_bin} missing (wasm-pack.toml [wasm-opt].binary): run make setup"
  say "wasm-opt ($("$opt_bin" --version | awk '{print $3}')) ${opt_flags[*]}"
  before="$(stat -c %s "$bg")"
  "$opt_bin" "${opt_flags[@]}" "$bg" -o "${bg}.opt"
  mv "${bg}.opt" "$bg"
  say "wasm-opt: ${before} -> $(stat -c %s "$bg") bytes"
fi
size="$(stat -c %s "$bg")"
gz="$(gzip -9 -c "$bg" | wc -c)"
say "${bg}: ${size} bytes ($((size / 1024)) KiB; gzip -9: $((gz / 1024)) KiB)"

if [[ -n "$explorer_pid" ]]; then
  wait "$explorer_pid" || die "the explorer's wasm (www/pkg-explorer) failed to build: see the [explorer] lines above"
fi
