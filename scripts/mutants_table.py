#!/usr/bin/env python3
"""Summarise cargo-mutants runs as the book's "Mutation testing" table (docs/book/src/fidelity/mutation-testing.md).

    python3 scripts/mutants_table.py mutants.out [more mutants.out dirs...]

Reads each directory's outcomes.json (cargo-mutants writes it as it goes, so a
run still in progress can be summarised too) and prints one row per mutated
file: mutants tested, caught, missed, unviable, timeouts, the share caught of
the viable ones (caught + missed + timeouts), the summed build + test time and
the mean time per mutant. Later directories win for a mutant seen twice (a
re-run after new tests). The missed mutants are listed after the table.
"""

import json
import os
import sys
from collections import OrderedDict

KINDS = {
    "CaughtMutant": "caught",
    "MissedMutant": "missed",
    "Unviable": "unviable",
    "Timeout": "timeout",
}


def load(path):
    name = os.path.join(path, "outcomes.json")
    if not os.path.exists(name):
        name = os.path.join(path, "mutants.out", "outcomes.json")
    with open(name) as f:
        return json.load(f)["outcomes"]


def main(dirs):
    seen = OrderedDict()
    for d in dirs:
        for o in load(d):
            s = o["scenario"]
            if not isinstance(s, dict) or "Mutant" not in s:
                continue
            m = s["Mutant"]
            secs = sum(p["duration"] for p in o["phase_results"])
            seen[m["name"]] = (m["file"], KINDS.get(o["summary"], o["summary"]), secs)
    rows = OrderedDict()
    for name, (file, kind, secs) in seen.items():
        r = rows.setdefault(
            file, {"n": 0, "caught": 0, "missed": 0, "unviable": 0, "timeout": 0, "secs": 0.0}
        )
        r["n"] += 1
        r[kind] = r.get(kind, 0) + 1
        r["secs"] += secs
    print("| module | mutants | caught | missed | unviable | timeouts | % caught of viable | time | per mutant |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for file, r in sorted(rows.items(), key=lambda kv: kv[1]["n"]):
        viable = r["caught"] + r["missed"] + r["timeout"]
        pct = 100.0 * r["caught"] / viable if viable else 100.0
        print(
            f"| `{file}` | {r['n']} | {r['caught']} | {r['missed']} | {r['unviable']} "
            f"| {r['timeout']} | {pct:.1f} % | {r['secs'] / 60:.1f} min | {r['secs'] / r['n']:.1f} s |"
        )
    missed = [n for n, (_, k, _) in seen.items() if k in ("missed", "timeout")]
    if missed:
        print("\nMissed or timed out:")
        for n in missed:
            print(f"- {n}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
