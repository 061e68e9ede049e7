#!/usr/bin/env bash
# Build the example mdBook (examples/book) with the <failover-lab> package
# vendored as the book's Embedding chapter says: copy dist/element to the book's
# src/failover-lab/, then `mdbook build`. Output: examples/book/book/.
# Run after scripts/build-element.sh (make build does); mdbook comes from
# scripts/setup.sh (cargo install, pinned in scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

say() { printf 'build-book: %s\n' "$*"; }
die() { printf 'build-book: error: %s\n' "$*" >&2; exit 1; }

[[ -f dist/element/failover-lab.js ]] || die "dist/element is missing: run scripts/build-element.sh first"
# MDBOOK overrides the binary (default: mdbook on PATH, from scripts/setup.sh).
MDBOOK="${MDBOOK:-mdbook}"
command -v "$MDBOOK" >/dev/null || die "mdbook is missing: run scripts/setup.sh (make setup)"
book=examples/book
rm -rf "$book/src/failover-lab" "$book/book"
cp -r dist/element "$book/src/failover-lab"
"$MDBOOK" build "$book" >/dev/null 2>&1 || "$MDBOOK" build "$book"
[[ -f "$book/book/leader-dies.html" && -f "$book/book/failover-lab/failover-lab.js" ]] || die "mdbook build did not produce the chapter and the vendored element"
say "$book/book/: $("$MDBOOK" --version), $(find "$book/book" -type f | wc -l) files"

# The project's own book (docs/book) into www/book/, served by `make run` at
# /book/ (the page's help and header link to it). Three inputs are made here
# and not committed: the element package (src/failover-lab/), the tours'
# prose from scenarios/tour-*.json (src/generated/, scripts/book-tours.mjs)
# and the figures of docs/ (src/img/). The reference pages generated from the
# code (config keys, CLI help) are committed; `cargo test --test book_reference`
# fails when they differ from what the code prints.
own=docs/book
rm -rf "$own/src/failover-lab" "$own/src/img" www/book
cp -r dist/element "$own/src/failover-lab"
mkdir -p "$own/src/img"
cp docs/*.png docs/*.svg "$own/src/img/"
node scripts/book-tours.mjs >/dev/null
start=$(date +%s%N)
"$MDBOOK" build "$own" >/dev/null 2>&1 || "$MDBOOK" build "$own"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[[ -f www/book/index.html && -f www/book/kafka-4.4.html && -f www/book/failover-lab/failover-lab.js ]] || die "mdbook build of $own did not produce www/book/"
grep -q 'Against a real Kafka 4.4.0 cluster' www/book/kafka-4.4.html || die "www/book/kafka-4.4.html lacks its real-cluster section"
index=$(ls www/book/searchindex*.js 2>/dev/null | head -1)
[[ -n "$index" ]] || die "www/book has no search index: this mdbook was built without its search feature (run scripts/setup.sh)"
say "www/book/: $(find www/book -type f | wc -l) files, built in ${ms} ms; search index $(basename "$index") $(wc -c < "$index") B ($(gzip -9 -c "$index" | wc -c) B gzipped)"
