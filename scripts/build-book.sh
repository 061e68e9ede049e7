#!/usr/bin/env bash
# Build the example mdBook (examples/book) with the <failover-lab> package
# vendored as the README says: copy dist/element to the book's
# src/failover-lab/, then `mdbook build`. Output: examples/book/book/.
# Run after scripts/build-element.sh (make build does); mdbook comes from
# scripts/setup.sh (cargo install, pinned in scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

say() { printf 'build-book: %s\n' "$*"; }
die() { printf 'build-book: error: %s\n' "$*" >&2; exit 1; }

[[ -f dist/element/failover-lab.js ]] || die "dist/element is missing: run scripts/build-element.sh first"
command -v mdbook >/dev/null || die "mdbook is missing: run scripts/setup.sh (make setup)"
book=examples/book
rm -rf "$book/src/failover-lab" "$book/book"
cp -r dist/element "$book/src/failover-lab"
mdbook build "$book" >/dev/null 2>&1 || mdbook build "$book"
[[ -f "$book/book/leader-dies.html" && -f "$book/book/failover-lab/failover-lab.js" ]] || die "mdbook build did not produce the chapter and the vendored element"
say "$book/book/: $(mdbook --version), $(find "$book/book" -type f | wc -l) files"
