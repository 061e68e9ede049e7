#!/usr/bin/env node
// How fast the app page really plays a scenario, drawing included: opens
// index.html?scenario=FILE&speed=S in headless Chromium (playwright-core +
// /usr/bin/chromium), lets it play for SECONDS of wall time, and reports the
// simulated time it covered per wall second (the speed it achieved: the page
// asks for S, and gets less when the core and the drawing cannot keep up),
// the frames it drew per second and their intervals. The first second after
// loading is not counted (the cluster's start and the first draws). Reported,
// never asserted: this is a benchmark.
//
//   node scripts/bench-play.mjs [--scenario bench/large.json] [--speed 100]
//        [--seconds 10] [--size 1400x900] [--theme dark]
//
// Needs `make build`.
import fs from 'node:fs';
import path from 'node:path';
import { startServer, launchBrowser, scriptArg, WWW } from '../tests/e2e/helpers.mjs';

const arg = scriptArg;
const scenario = arg('scenario', 'bench/large.json');
const speed = Number(arg('speed', '100'));
const seconds = Number(arg('seconds', '10'));
const [width, height] = arg('size', '1400x900').split('x').map(Number);
const theme = arg('theme', 'dark');
if (!(speed > 0) || !(seconds > 0) || !(width > 0) || !(height > 0)) {
  console.error('bench-play: --speed, --seconds and --size WxH must be positive numbers');
  process.exit(2);
}

let endMs = Infinity;
try {
  endMs = JSON.parse(fs.readFileSync(path.join(WWW, 'scenarios', scenario), 'utf8')).run_until_ms ?? Infinity;
} catch (e) {
  console.error(`bench-play: ${scenario}: ${e.message}`);
  process.exit(2);
}

const srv = await startServer(WWW);
const browser = await launchBrowser();
try {
  const context = await browser.newContext({ viewport: { width, height }, colorScheme: theme });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${srv.baseUrl}/?scenario=${encodeURIComponent(scenario)}&speed=${speed}`);
  await page.waitForFunction(() => window.failoverLab && window.failoverLab.now() > 0, null, { timeout: 120000 });
  const result = await page.evaluate(
    async ({ seconds }) => {
      const lab = window.failoverLab;
      // Settle: the first second after the start is not counted.
      await new Promise((r) => setTimeout(r, 1000));
      const frames = [];
      let last = performance.now();
      let counting = true;
      const tick = (t) => {
        frames.push(t - last);
        last = t;
        if (counting) requestAnimationFrame(tick);
      };
      requestAnimationFrame((t) => {
        last = t;
        requestAnimationFrame(tick);
      });
      const sim0 = lab.now();
      const wall0 = performance.now();
      await new Promise((r) => setTimeout(r, seconds * 1000));
      const sim1 = lab.now();
      const wall1 = performance.now();
      counting = false;
      const sorted = [...frames].sort((a, b) => a - b);
      const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
      return {
        simulated_ms: sim1 - sim0,
        wall_ms: wall1 - wall0,
        frames: frames.length,
        frame_p50_ms: q(0.5),
        frame_p95_ms: q(0.95),
        frame_max_ms: sorted[sorted.length - 1] ?? 0,
        end_ms: sim1,
      };
    },
    { seconds },
  );
  const achieved = result.simulated_ms / result.wall_ms;
  console.log(
    `bench-play: ${scenario} at speed ${speed}× (${width}×${height}, ${theme}): ` +
      `${(result.simulated_ms / 1000).toFixed(2)} s simulated in ${(result.wall_ms / 1000).toFixed(2)} s of wall time = ` +
      `${achieved.toFixed(2)}× real time, drawing included; ${(result.frames / (result.wall_ms / 1000)).toFixed(1)} frames/s ` +
      `(interval p50 ${result.frame_p50_ms.toFixed(1)} ms, p95 ${result.frame_p95_ms.toFixed(1)} ms, max ${result.frame_max_ms.toFixed(0)} ms); ` +
      `the page was at ${(result.end_ms / 1000).toFixed(2)} s`,
  );
  if (result.end_ms >= endMs) {
    console.log(
      `bench-play: the run reached its end (${endMs / 1000} s) inside the window, so the figure is low: ask for fewer --seconds or a lower --speed`,
    );
  }
  if (errors.length) console.log(`bench-play: page errors: ${errors.join('; ')}`);
} finally {
  await browser.close();
  await srv.close();
}
