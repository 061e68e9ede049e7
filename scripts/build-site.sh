#!/usr/bin/env bash
# Copy the scenarios into the static site: www/scenarios/*.json and
# www/scenarios/index.json ([{file, name, level?, tour?}], in natural order:
# by file name with numbers compared as numbers, so tour 2 comes before tour 10)
# for the page's scenario picker and its welcome (which groups the tours by
# `level`: junior, mid, senior, principal; a tour without one is listed after). Run after scripts/build-wasm.sh (make build does).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf www/scenarios
mkdir -p www/scenarios
cp scenarios/*.json www/scenarios/
# The benchmark workloads (www/bench.html, ?scenario=bench/large.json); not in the picker.
mkdir -p www/scenarios/bench && cp scenarios/bench/*.json www/scenarios/bench/
# Check yourself's questions (www/check.js); not scenarios, not in the picker.
mkdir -p www/scenarios/quiz && cp scenarios/quiz/*.json www/scenarios/quiz/
python3 - <<'PY'
import json, pathlib, re
out = []
natural = lambda p: [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", p.name)]
for f in sorted(pathlib.Path("scenarios").glob("*.json"), key=natural):
    entry = {"file": f.name, "name": f.stem}
    try:
        d = json.loads(f.read_text())
        entry["name"] = d.get("name") or f.stem
        if d.get("level"):
            entry["level"] = d["level"]
        if d.get("tour"):
            entry["tour"] = True
    except (ValueError, AttributeError):
        pass
    out.append(entry)
pathlib.Path("www/scenarios/index.json").write_text(json.dumps(out, separators=(",", ":"), ensure_ascii=False) + "\n", encoding="utf-8")
# The welcome's scenario gallery (www/gallery.js, fetched when it opens): each
# non-tour scenario's question (its name), level and declared topology at
# t = 0 (brokers, racks, topics), enough to draw its thumbnail.
gallery = []
for e in out:
    if e.get("tour"):
        continue
    try:
        d = json.loads(pathlib.Path("scenarios", e["file"]).read_text())
        topics = [{"name": t.get("name", "?"), "partitions": t.get("partitions") or len(t.get("assignment") or []) or 1,
                   "rf": t.get("replication_factor") or len((t.get("assignment") or [[0]])[0])} for t in d.get("topics", [])]
        gallery.append({**e, "brokers": d.get("brokers", 0), "racks": d.get("racks") or {}, "topics": topics})
    except (ValueError, AttributeError, TypeError, IndexError):
        pass
pathlib.Path("www/scenarios/gallery.json").write_text(json.dumps(gallery, separators=(",", ":")) + "\n")
print(f"build-site: {len(out)} scenario(s) in www/scenarios/")
PY
