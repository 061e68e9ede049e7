#!/usr/bin/env bash
# Evidence for (or against) an equivalent mutant (the book, "Mutation
# testing"): applies the cargo-mutants mutant whose name matches REGEX to a
# scratch git worktree of HEAD, builds the CLI there and in another of HEAD,
# and compares every scenario's report, with unclean leader election as the
# scenario sets it and on, and a sweep's per-run lines. Prints each run that
# differs; "differing: 0" is the evidence the exclusion's comment cites.
#
#   scripts/mutant-equivalence.sh FILE REGEX [SEEDS]
#   scripts/mutant-equivalence.sh src/sim/broker/requests.rs 'leader_hint' 20
#
# Needs cargo-mutants (scripts/setup.sh --mutants). Scratch trees and their
# target directories live under ${MUTANT_EQUIV_DIR:-/tmp/mutant-equivalence}.
set -euo pipefail
file=${1:?usage: scripts/mutant-equivalence.sh FILE REGEX [SEEDS]}
re=${2:?usage: scripts/mutant-equivalence.sh FILE REGEX [SEEDS]}
seeds=${3:-20}
root=$(git rev-parse --show-toplevel)
dir=${MUTANT_EQUIV_DIR:-/tmp/mutant-equivalence}
mkdir -p "$dir"
cd "$root"

# The mutant's diff, its "+++" line naming the file (cargo-mutants puts the
# mutation's description there).
# --no-config: the mutants .cargo/mutants.toml already lists as equivalent too.
cargo mutants --no-config --list --diff --json -f "$file" >"$dir/list.json"
python3 - "$dir/list.json" "$re" "$dir/mutant.diff" <<'EOF'
import json, re, sys
listing, pattern, out = sys.argv[1:]
hits = [m for m in json.load(open(listing)) if re.search(pattern, m["name"])]
if len(hits) != 1:
    names = "\n  ".join(m["name"] for m in hits) or "(none)"
    sys.exit(f"mutant-equivalence: REGEX must match exactly one mutant; it matches:\n  {names}")
m = hits[0]
lines = m["diff"].splitlines(keepends=True)
lines = [f"+++ {m['file']}\n" if l.startswith("+++ ") else l for l in lines]
open(out, "w").write("".join(lines))
print(f"mutant: {m['name']}")
EOF

tree() { # tree NAME: a fresh detached worktree of HEAD at $dir/NAME
  git worktree remove --force "$dir/$1" 2>/dev/null || rm -rf "${dir:?}/$1"
  git worktree add -q --detach "$dir/$1" HEAD
}
tree base
tree mutant
(cd "$dir/mutant" && patch -s -p0 <"$dir/mutant.diff")
for t in base mutant; do
  (cd "$dir/$t" && CARGO_TARGET_DIR="$dir/target-$t" cargo build -q --bin failover-lab)
done
B="$dir/target-base/debug/failover-lab"
M="$dir/target-mutant/debug/failover-lab"

n=0
d=0
for f in scenarios/*.json scenarios/quiz/*.json; do
  case $f in */index.json) continue ;; esac
  for extra in "" "--set unclean.leader.election.enable=true"; do
    n=$((n + 1))
    # shellcheck disable=SC2086 # $extra is two words or none
    if ! cmp -s <("$B" run "$f" $extra 2>/dev/null) <("$M" run "$f" $extra 2>/dev/null); then
      echo "differs: $f $extra"
      d=$((d + 1))
    fi
  done
done
if ! cmp -s <("$B" sweep --seeds "$seeds" --format jsonl --threads 1 2>/dev/null) \
  <("$M" sweep --seeds "$seeds" --format jsonl --threads 1 2>/dev/null); then
  echo "differs: sweep --seeds $seeds"
  d=$((d + 1))
fi
echo "compared: $n scenario runs and a $seeds-seed sweep; differing: $d"
git worktree remove --force "$dir/base"
git worktree remove --force "$dir/mutant"
