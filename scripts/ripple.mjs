#!/usr/bin/env node
// The crash ripple of issue 6, captured in headless Chromium: the page opens the
// large bench workload (60 brokers, 20,000 partitions), runs it to just before
// the controller fences the crashed broker, then steps through the fencing and
// photographs the overview before, during and after. Prints, per step, how many
// cells are leader-down / under min ISR / under-replicated (read from the core's
// overview words, the same data the canvas draws) and the simulation and draw
// times; writes docs/ripple-*.png. Reported, never asserted (`make bench` runs it).
//
//   node scripts/ripple.mjs [--scenario bench/large.json] [--out docs]
//
// Needs `make build` (www/pkg, www/dist, www/scenarios/bench).

import fs from 'node:fs';
import path from 'node:path';
import { startApp, scriptArg, ROOT } from '../tests/e2e/helpers.mjs';

const arg = scriptArg;
const SCENARIO = arg('scenario', 'bench/large.json');
const OUT = path.resolve(ROOT, arg('out', 'docs'));
// broker 1 crashes at 20 s; broker.session.timeout.ms = 9 s: fenced at 29.001 s.
// [name, time, photograph it] — the book's Performance chapter shows the two photographed.
const SHOTS = [
  ['before', 19_900, false],
  ['crashed', 28_900, true],
  ['fenced', 29_100, true],
  ['settled', 31_000, false],
];

async function main() {
  const app = await startApp({ viewport: { width: 1400, height: 1000 } });
  const { page } = app;
  try {
    const t0 = Date.now();
    await page.goto(`${app.baseUrl}/?scenario=${encodeURIComponent(SCENARIO)}&paused=1`);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 120_000 });
    console.log(`ripple: ${SCENARIO} loaded in ${Date.now() - t0} ms`);
    fs.mkdirSync(OUT, { recursive: true });
    for (const [name, at, photo] of SHOTS) {
      const res = await page.evaluate((at) => {
        const t = performance.now();
        window.failoverLab.runFor(Math.max(0, at - window.failoverLab.now()));
        const wall = performance.now() - t;
        const m = window.failoverLab.view(0).metrics;
        return { now: window.failoverLab.now(), wall, metrics: m };
      }, at);
      // Let the canvas draw the flashes of this step (the page redraws on rAF).
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const panel = page.locator('section.overview-panel');
      const file = path.join(OUT, `ripple-${name}.png`);
      if (photo) await panel.screenshot({ path: file });
      const sum = await page.locator('.ov-sum').textContent();
      const m = res.metrics;
      console.log(
        `ripple: t=${(res.now / 1000).toFixed(3)} s (${res.wall.toFixed(0)} ms to simulate): ` +
          `${m.OfflinePartitionsCount} offline, ${m.UnderMinIsrPartitionCount} under min ISR, ` +
          `${m.UnderReplicatedPartitions} under-replicated; overview: "${sum.trim()}"${photo ? ` -> ${path.relative(ROOT, file)}` : ''}`,
      );
    }
    if (app.errors.length) throw new Error(`page errors: ${app.errors.join('; ')}`);
  } finally {
    await app.close();
  }
}

main().catch((e) => {
  console.error(`ripple: ${e.message}`);
  process.exit(1);
});
