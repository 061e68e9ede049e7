#!/usr/bin/env bash
# Copy the scenarios into the static site: www/scenarios/*.json and
# www/scenarios/index.json ([{file, name}], sorted by file name) for the
# page's scenario picker. Run after scripts/build-wasm.sh (make build does).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf www/scenarios
mkdir -p www/scenarios
cp scenarios/*.json www/scenarios/
# The benchmark workloads (www/bench.html, ?scenario=bench/large.json); not in the picker.
mkdir -p www/scenarios/bench && cp scenarios/bench/*.json www/scenarios/bench/
python3 - <<'PY'
import json, pathlib
out = []
for f in sorted(pathlib.Path("scenarios").glob("*.json")):
    try:
        name = json.loads(f.read_text()).get("name") or f.stem
    except (ValueError, AttributeError):
        name = f.stem
    out.append({"file": f.name, "name": name})
pathlib.Path("www/scenarios/index.json").write_text(json.dumps(out, indent=1) + "\n")
print(f"build-site: {len(out)} scenario(s) in www/scenarios/")
PY
