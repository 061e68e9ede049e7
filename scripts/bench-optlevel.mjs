#!/usr/bin/env node
// Times the wasm core built two ways (e.g. opt-level "s" and "z") in headless
// Chromium: scenarios/bench/small and medium.json run to 20 s (runUntil), and
// view(8) / report() at the end; medians of alternating rounds. Reported,
// never asserted.
//   node scripts/bench-optlevel.mjs DIR_A DIR_B     (wasm-bindgen output folders)
import path from 'node:path';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startServer, launchBrowser } from '../tests/e2e/helpers.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dirs = process.argv.slice(2, 4).map((d) => path.relative(ROOT, path.resolve(d)));
const scenarios = ['small', 'medium'].map((n) => fs.readFileSync(path.join(ROOT, 'scenarios', 'bench', `${n}.json`), 'utf8'));

const srv = await startServer(ROOT);
const browser = await launchBrowser();
try {
  const page = await browser.newPage();
  await page.goto(`${srv.baseUrl}/${dirs[0]}/`).catch(() => {});
  const res = await page.evaluate(
    async ({ dirs, scenarios }) => {
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
        const runs = [[], []];
        const views = [[], []];
        const reports = [[], []];
        for (let r = 0; r < 5; r++) {
          mods.forEach((m, k) => {
            const lab = new m.WasmLab(text);
            let t0 = performance.now();
            lab.runUntil(20000);
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
    { dirs, scenarios },
  );
  console.log(`A = ${dirs[0]}, B = ${dirs[1]}; ms, medians of 5 alternating rounds`);
  for (const r of res) {
    for (const k of ['run', 'view', 'report']) {
      console.log(`${r.name.slice(0, 40).padEnd(40)} ${k.padEnd(7)} A ${r[k][0].toFixed(2).padStart(9)}  B ${r[k][1].toFixed(2).padStart(9)}  B/A ${(r[k][1] / r[k][0]).toFixed(2)}`);
    }
  }
} finally {
  await browser.close();
  await srv.close();
}
