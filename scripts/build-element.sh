#!/usr/bin/env bash
# Assemble the <failover-lab> custom element as a self-contained, npm-shaped
# package in dist/element/ (and dist/failover-lab-element-VERSION.tgz with
# `npm pack`, which needs no registry): the element module, the modules it
# imports, the page styles it scopes into its shadow root, the wasm-bindgen JS
# and the .wasm side by side, the scenarios, package.json and a README.
# Run after scripts/build-wasm.sh and scripts/build-site.sh (make build does).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'build-element: %s\n' "$*"; }
die() { printf 'build-element: error: %s\n' "$*" >&2; exit 1; }

[[ -f www/pkg/failover_lab_bg.wasm ]] || die "www/pkg is missing: run scripts/build-wasm.sh first"
out=dist/element
rm -rf "$out"
mkdir -p "$out/render" "$out/pkg" "$out/scenarios"

# The element and, transitively, every module it imports (checked below).
cp www/failover-lab.js www/lab.js www/compare.js www/lane-workers.js www/lanes.js www/share.js www/pack.js www/tour.js www/tour-guide.js www/question.js www/theme.js www/events.js www/style.css www/failover-lab.d.ts "$out/"
for m in availability broker-menu brokers clients describe fate group-card metrics narration partitions util; do cp "www/render/$m.js" "$out/render/"; done
cp www/pkg/failover_lab.js www/pkg/failover_lab_bg.wasm www/pkg/failover_lab.d.ts www/pkg/failover_lab_bg.wasm.d.ts "$out/pkg/"
# The fast build (issue 63), fetched only by an element that runs a big
# scenario (lab.js initFastWasm; without it such an element runs on the
# wasm above, slower).
if [[ -f www/pkg-explorer/failover_lab_bg.wasm ]]; then
  mkdir -p "$out/pkg-explorer"
  # compare mode's Worker (lanes on other cores) runs on it too.
  cp www/fast-wasm.js www/lane-worker.js "$out/"
  cp www/pkg-explorer/failover_lab.js www/pkg-explorer/failover_lab_bg.wasm "$out/pkg-explorer/"
fi
cp scenarios/*.json "$out/scenarios/"

# The crate's version: the first `version = "…"` of Cargo.toml's [package].
version="$(python3 -c 'import re,sys; m=re.search(r"(?ms)^\[package\].*?^version\s*=\s*\"([^\"]+)\"", open("Cargo.toml").read()); print(m.group(1) if m else "0.0.0")')"

python3 - "$out" "$version" <<'PY'
import json, pathlib, re, sys
out = pathlib.Path(sys.argv[1])
version = sys.argv[2]

# Every relative import of every module must resolve inside the package.
missing = []
for js in out.rglob("*.js"):
    for spec in re.findall(r"""(?:import|export)[^'"]*?from\s*['"](\.[^'"]+)['"]|import\s*['"](\.[^'"]+)['"]""", js.read_text()):
        rel = spec[0] or spec[1]
        if not (js.parent / rel).resolve().is_file():
            missing.append(f"{js.relative_to(out)} imports {rel}")
if missing:
    sys.exit("build-element: error: not self-contained:\n  " + "\n  ".join(missing))

pkg = {
    "name": "failover-lab-element",
    "version": version,
    "description": "<failover-lab>: a deterministic Apache Kafka replication and leader-failover simulator (Rust compiled to WebAssembly) as a custom element for documentation pages",
    "license": "Apache-2.0",
    "type": "module",
    "main": "./failover-lab.js",
    "types": "./failover-lab.d.ts",
    "module": "./failover-lab.js",
    "browser": "./failover-lab.js",
    "exports": {
        ".": { "types": "./failover-lab.d.ts", "default": "./failover-lab.js" },
        "./failover-lab.js": "./failover-lab.js",
        "./style.css": "./style.css",
        "./failover_lab_bg.wasm": "./pkg/failover_lab_bg.wasm",
        "./pkg/*": "./pkg/*",
        "./scenarios/*": "./scenarios/*",
        "./package.json": "./package.json",
    },
    "sideEffects": ["./failover-lab.js"],
    "files": ["*.js", "failover-lab.d.ts", "style.css", "render/", "pkg/", "pkg-explorer/", "scenarios/", "README.md"],
    "keywords": ["kafka", "replication", "failover", "simulator", "webassembly", "custom-element", "web-component"],
}
(out / "package.json").write_text(json.dumps(pkg, indent=2) + "\n")
PY

cat > "$out/README.md" <<'EOF'
# failover-lab-element

`<failover-lab>`: a deterministic simulation of Apache Kafka partition
replication and leader failover (brokers, KRaft controller, producers,
consumers, network) running in WebAssembly, as one custom element.

```html
<script type="module" src="failover-lab-element/failover-lab.js"></script>
<failover-lab scenario="failover-lab-element/scenarios/leader-dies.json"
              compact autoplay speed="2"></failover-lab>
```

Or with a bundler: `import 'failover-lab-element';` (the wasm and `style.css`
are loaded from `new URL('./…', import.meta.url)`, which Vite and webpack 5
turn into assets; with other bundlers copy `pkg/failover_lab_bg.wasm` and
`style.css` next to the bundled module, or vendor this folder as it is).

Attributes: `scenario` (URL) or an inline `<script type="application/json">`
child, `seed`, `speed`, `autoplay`, `loop`, `compact`, `controls`, `panels`,
`partitions`, `range`, `theme` (`light`, `dark` or `auto`, the default, which
follows `prefers-color-scheme`). Methods: `crash(b)`, `powerLoss(b)`, `restart(b)`,
`shutdown(b)`, `isolate(b)`, `heal(b)`, `produce(topic, partition, count, acks?)`,
`apply(action)`, `runFor(ms)`, `seek(t)`, `play()`, `pause()`, `setSpeed(x)`,
`report()`, `describe()`, `view()`, `trace(cursor)`, `now()`, `actions()`,
`load(scenario)`, `tourNext()`, `tourBack()`; `await el.ready`, or wait for
`data-ready="true"`. A bad attribute shows a message inside the element and
sets `data-error`. `scenarios/` holds the project's scenarios and guided tours.

Events (bubbling `CustomEvent`s on the element): `ready`, `fault` (a broker
crashed, lost power, shut down or was isolated), `leaderchange` (the
controller elected a leader: topic, partition, leader, leader_epoch, …),
`recordslost` (acknowledged records were lost), `tourstop` (a guided tour
reached a stop), and `error`.

```js
lab.addEventListener('leaderchange', (e) => {
  if (e.detail.previous_leader !== null) showQuestion(e.detail.leader_epoch);
});
```

Types: `failover-lab.d.ts` (the `types` of this package) registers the element
in `HTMLElementTagNameMap`, so `document.querySelector('failover-lab')` is a
`FailoverLabElement` with typed methods, report/view objects and events.
EOF

files="$(find "$out" -type f | wc -l)"
say "${out}/: ${files} files, $(du -sk "$out" | cut -f1) KiB (package failover-lab-element@${version})"
if command -v npm >/dev/null; then
  tgz="$(npm pack --silent --pack-destination dist "./$out" 2>/dev/null | tail -n1)"
  [[ -n "$tgz" && -f "dist/$tgz" ]] && say "dist/${tgz}"
fi
