#!/usr/bin/env node
// What a reader's long seek costs the app page, frame by frame: opens
// index.html?scenario=FILE paused in headless Chromium (playwright-core +
// /usr/bin/chromium), runs it to --run-for ms, then drags the timeline to
// each target in turn (an input and a change event, as a hand lets go) and
// counts the frames until the seek has landed: the wall time, the frames
// drawn meanwhile and their intervals. The same targets are then made with
// failoverLab.seek in a second page, in one go, for comparison (--mode once,
// slices or both). Reported, never asserted: this is a benchmark.
//
//   node scripts/bench-drag.mjs [--scenario bench/large.json] [--run-for 60000]
//        [--targets 42900,14500,51300,27700,36100,8300,57900,22400] [--mode both]
//
// Needs `make build`.
import { startServer, launchBrowser, scriptArg, WWW } from '../tests/e2e/helpers.mjs';

const arg = scriptArg;
const scenario = arg('scenario', 'bench/large.json');
const runFor = Number(arg('run-for', '60000'));
const targets = arg('targets', '42900,14500,51300,27700,36100,8300,57900,22400').split(',').map(Number);
const mode = arg('mode', 'both');
if (!(runFor >= 0) || !targets.every((t) => t >= 0) || !['both', 'slices', 'once'].includes(mode)) {
  console.error('bench-drag: --run-for and --targets take ms ≥ 0; --mode is both, slices or once');
  process.exit(2);
}

const srv = await startServer(WWW);
const browser = await launchBrowser();
const fmt = (x) => Math.round(x);
try {
  for (const how of mode === 'both' ? ['slices', 'once'] : [mode]) {
    const page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${srv.baseUrl}/?scenario=${encodeURIComponent(scenario)}&paused=1`);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 120000 });
    const rows = await page.evaluate(
      async ({ targets, how, runFor }) => {
        const frame = () => new Promise((res) => requestAnimationFrame(res));
        window.failoverLab.runFor(runFor);
        await frame();
        const range = document.getElementById('timeline');
        const out = [];
        for (const t of targets) {
          await frame();
          const t0 = performance.now();
          if (how === 'once') {
            window.failoverLab.seek(t);
            const ms = performance.now() - t0;
            out.push({ t, ms, frames: 0, gap_p50: ms, gap_max: ms });
            continue;
          }
          range.value = String(t);
          range.dispatchEvent(new Event('input', { bubbles: true }));
          range.dispatchEvent(new Event('change', { bubbles: true }));
          const gaps = [];
          let last = t0;
          do {
            await frame();
            const now = performance.now();
            gaps.push(now - last);
            last = now;
          } while (window.failoverLab.seeking && gaps.length < 100000);
          gaps.sort((a, b) => a - b);
          out.push({ t, ms: performance.now() - t0, frames: gaps.length, gap_p50: gaps[Math.floor(gaps.length / 2)], gap_max: gaps[gaps.length - 1] });
        }
        return out;
      },
      { targets, how, runFor },
    );
    for (const r of rows) {
      const frames = how === 'once' ? 'in one go, no frame drawn meanwhile' : `${r.frames} frame(s) until it landed (interval p50 ${fmt(r.gap_p50)} ms, max ${fmt(r.gap_max)} ms)`;
      console.log(`bench-drag: ${scenario} ${how}: seek to ${r.t} ms in ${fmt(r.ms)} ms, ${frames}`);
    }
    const total = rows.reduce((s, r) => s + r.ms, 0);
    const worst = Math.max(...rows.map((r) => r.gap_max));
    console.log(`bench-drag: ${scenario} ${how}: ${rows.length} seeks in ${fmt(total)} ms; the page's longest frame ${fmt(worst)} ms`);
    if (errors.length) console.log(`bench-drag: page errors: ${errors.join('; ')}`);
    await page.context().close();
  }
} finally {
  await browser.close();
  await srv.close();
}
