#!/usr/bin/env node
// Times the wasm core built two or more ways (e.g. opt-level "s" and "z") in
// headless Chromium: scenarios/bench/small and medium.json (by default) built
// into a lab, run to 20 s (runUntil), then view(8) / report(); each
// measurement in a fresh page, builds alternating, medians with their spread.
// Reported, never asserted.
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
  // One fresh page per build, workload and round: a wasm memory grown by an
  // earlier lab (it never shrinks) or another build's garbage would otherwise
  // tilt the later measurements of a round.
  async function measure(dir, text) {
    const page = await browser.newPage();
    try {
      await page.goto(`${srv.baseUrl}/${dir}/`).catch(() => {});
      return await page.evaluate(
        async ({ dir, text, until }) => {
          const m = await import(`/${dir}/failover_lab.js`);
          await m.default();
          let t0 = performance.now();
          const lab = new m.WasmLab(text);
          const create = performance.now() - t0;
          t0 = performance.now();
          lab.runUntil(until);
          const run = performance.now() - t0;
          t0 = performance.now();
          for (let i = 0; i < 20; i++) lab.view(8);
          const view = (performance.now() - t0) / 20;
          t0 = performance.now();
          for (let i = 0; i < 3; i++) lab.report();
          const report = (performance.now() - t0) / 3;
          lab.free();
          return { create, run, view, report };
        },
        { dir, text, until },
      );
    } finally {
      await page.close();
    }
  }
  const kinds = ['create', 'run', 'view', 'report'];
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`ms, medians of ${rounds} alternating rounds (min-max), run to ${until} ms; ratios of medians against A`);
  for (const text of scenarios) {
    const name = JSON.parse(text).name;
    const got = dirs.map(() => Object.fromEntries(kinds.map((k) => [k, []])));
    for (let r = 0; r < rounds; r++) {
      // Alternate the order too, so no build always runs first.
      const order = dirs.map((_, i) => i);
      if (r % 2) order.reverse();
      for (const i of order) {
        const m = await measure(dirs[i], text);
        for (const k of kinds) got[i][k].push(m[k]);
      }
    }
    for (const k of kinds) {
      const meds = got.map((g) => median(g[k]));
      const cells = got.map((g, i) => {
        const lo = Math.min(...g[k]);
        const hi = Math.max(...g[k]);
        return `${String.fromCharCode(65 + i)} ${meds[i].toFixed(1).padStart(8)} (${lo.toFixed(0)}-${hi.toFixed(0)})` + (i ? ` ${(meds[i] / meds[0]).toFixed(2)}x` : '');
      });
      console.log(`${name.slice(0, 24).padEnd(24)} ${k.padEnd(7)} ${cells.join('  ')}`);
    }
  }
} finally {
  await browser.close();
  await srv.close();
}
