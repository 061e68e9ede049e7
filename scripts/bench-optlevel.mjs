#!/usr/bin/env node
// Times the wasm core built two or more ways (e.g. opt-level "s" and "z") in
// headless Chromium: scenarios/bench/small and medium.json run to 20 s
// (runUntil), and view(8) / report() at the end; medians of alternating
// rounds. Reported, never asserted.
//   node scripts/bench-optlevel.mjs DIR_A DIR_B [DIR_C ...]   (wasm-bindgen output folders)
//   BENCH_WORKLOADS=medium,large BENCH_UNTIL=5000 BENCH_ROUNDS=3 node scripts/bench-optlevel.mjs ...
// Each build's gzipped wasm size is printed beside its times.
import path from 'node:path';
import fs from 'node:fs';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { startServer, launchBrowser } from '../tests/e2e/helpers.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dirs = process.argv.slice(2).map((d) => path.relative(ROOT, path.resolve(d)));
if (dirs.length < 2) {
  console.error('usage: node scripts/bench-optlevel.mjs DIR_A DIR_B [DIR_C ...]');
  process.exit(2);
}
const workloads = (process.env.BENCH_WORKLOADS || 'small,medium').split(',').filter(Boolean);
const until = Number(process.env.BENCH_UNTIL || 20000);
const rounds = Number(process.env.BENCH_ROUNDS || 5);
const scenarios = workloads.map((n) => fs.readFileSync(path.join(ROOT, 'scenarios', 'bench', `${n}.json`), 'utf8'));
for (const [k, d] of dirs.entries()) {
  const wasm = fs.readdirSync(path.join(ROOT, d)).find((f) => f.endsWith('.wasm'));
  const gz = zlib.gzipSync(fs.readFileSync(path.join(ROOT, d, wasm)), { level: 9 }).length;
  console.log(`${String.fromCharCode(65 + k)} = ${d}: ${wasm} ${(gz / 1000).toFixed(1)} kB gzipped`);
}

const srv = await startServer(ROOT);
const browser = await launchBrowser();
try {
  const page = await browser.newPage();
  await page.goto(`${srv.baseUrl}/${dirs[0]}/`).catch(() => {});
  const res = await page.evaluate(
    async ({ dirs, scenarios, until, rounds }) => {
      const mods = [];
      for (const d of dirs) {
        const m = await import(`/${d}/failover_lab.js`);
        await m.default();
        mods.push(m);
      }
      const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      const out = [];
      for (const text of scenarios) {
        const name = JSON.parse(text).name;
        const runs = dirs.map(() => []);
        const views = dirs.map(() => []);
        const reports = dirs.map(() => []);
        for (let r = 0; r < rounds; r++) {
          mods.forEach((m, k) => {
            const lab = new m.WasmLab(text);
            let t0 = performance.now();
            lab.runUntil(until);
            runs[k].push(performance.now() - t0);
            t0 = performance.now();
            for (let i = 0; i < 20; i++) lab.view(8);
            views[k].push((performance.now() - t0) / 20);
            t0 = performance.now();
            for (let i = 0; i < 3; i++) lab.report();
            reports[k].push((performance.now() - t0) / 3);
            lab.free();
          });
        }
        out.push({ name, run: runs.map(median), view: views.map(median), report: reports.map(median) });
      }
      return out;
    },
    { dirs, scenarios, until, rounds },
  );
  console.log(`ms, medians of ${rounds} alternating rounds, run to ${until} ms; ratios against A`);
  for (const r of res) {
    for (const k of ['run', 'view', 'report']) {
      const cells = r[k].map((v, i) => `${String.fromCharCode(65 + i)} ${v.toFixed(2).padStart(9)}` + (i ? ` (${(v / r[k][0]).toFixed(2)})` : ''));
      console.log(`${r.name.slice(0, 40).padEnd(40)} ${k.padEnd(7)} ${cells.join('  ')}`);
    }
  }
} finally {
  await browser.close();
  await srv.close();
}
