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

# The project's own book (docs/book) into www/book/, served by `make run` at
# /book/ (the page's help links to its "Checked against Kafka 4.4.0").
own=docs/book
rm -rf "$own/src/failover-lab" www/book
cp -r dist/element "$own/src/failover-lab"
mdbook build "$own" >/dev/null 2>&1 || mdbook build "$own"
[[ -f www/book/index.html && -f www/book/kafka-4.4.html && -f www/book/failover-lab/failover-lab.js ]] || die "mdbook build of $own did not produce www/book/"
grep -q 'Against a real Kafka 4.4.0 cluster' www/book/kafka-4.4.html || die "www/book/kafka-4.4.html lacks the README section it includes"
say "www/book/: $(find www/book -type f | wc -l) files"
