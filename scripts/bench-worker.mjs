#!/usr/bin/env node
// Slices or a Worker (issue 63)? The same replay, tour 19 from 0 to its stop
// 8 (32 s of 20,000 partitions), three ways in headless Chromium, each in a
// fresh page: (1) on the page's main thread in one go (what a deep link did
// before), (2) on the main thread in slices of 40 ms of work, one per
// animation frame (Lab.seekSlice, as the page does now), and (3) in a
// dedicated Worker (the core alone, nothing drawn). Each reports its wall
// time and the main thread's long tasks (over 50 ms) meanwhile. All three
// use the fast build. Reported, never asserted.
//
//   node scripts/bench-worker.mjs [--rounds 2] [--until 32000]
//
// Needs `make build`.
import { startServer, launchBrowser, scriptArg, WWW } from '../tests/e2e/helpers.mjs';

const rounds = Number(scriptArg('rounds', '2'));
const until = Number(scriptArg('until', '32000'));
const srv = await startServer(WWW);
const browser = await launchBrowser();
const WORKER = `
  import init, { WasmLab } from './pkg-explorer/failover_lab.js';
  onmessage = async (e) => {
    await init();
    const t0 = performance.now();
    const lab = new WasmLab(e.data.text);
    lab.runUntil(e.data.until);
    postMessage({ ms: performance.now() - t0, now: lab.nowMs(), hash: lab.traceHash() });
  };`;
try {
  for (let r = 0; r < rounds; r++) {
    for (const mode of ['main', 'slices', 'worker']) {
      const page = await browser.newPage();
      // A page that runs nothing of its own (same origin, for the modules).
      await page.goto(`${srv.baseUrl}/scenarios/index.json`);
      const out = await page.evaluate(async ({ mode, until, WORKER }) => {
        const long = [];
        new PerformanceObserver((l) => {
          for (const e of l.getEntries()) long.push(e.duration);
        }).observe({ type: 'longtask' });
        const text = await (await fetch('/scenarios/tour-19-rack-loss-20000.json')).text();
        const frame = () => new Promise((res) => requestAnimationFrame(res));
        let res;
        if (mode === 'worker') {
          const url = URL.createObjectURL(new Blob([WORKER.replaceAll('./pkg-explorer/', new URL('/pkg-explorer/', location.origin).href)], { type: 'text/javascript' }));
          const w = new Worker(url, { type: 'module' });
          let frames = 0;
          let done = false;
          const t0 = performance.now();
          const p = new Promise((ok) => (w.onmessage = (e) => ok(e.data))).then((d) => ((done = true), d));
          w.postMessage({ text, until });
          while (!done) {
            await frame();
            frames++;
          }
          const d = await p;
          res = { ms: performance.now() - t0, coreMs: d.ms, now: d.now, hash: d.hash, frames };
        } else {
          const { Lab, initFastWasm } = await import(new URL('/lab.js', location.origin).href);
          const lab = new Lab();
          lab.nextW = await initFastWasm();
          const t0 = performance.now();
          lab.load(text);
          let frames = 0;
          if (mode === 'main') lab.seek(until);
          else {
            lab.seekBegin(until);
            while (!lab.seekSlice()) {
              await frame();
              frames++;
            }
          }
          res = { ms: performance.now() - t0, now: lab.now(), hash: lab.traceHash(), frames };
        }
        // Long tasks are reported after they end: give the observer a moment.
        await new Promise((ok) => setTimeout(ok, 200));
        await frame();
        return { ...res, long: long.length, longest: Math.round(Math.max(0, ...long)), over100: long.filter((d) => d > 100).length };
      }, { mode, until, WORKER });
      console.log(JSON.stringify({ round: r + 1, mode, wallS: +(out.ms / 1000).toFixed(2), coreS: out.coreMs ? +(out.coreMs / 1000).toFixed(2) : undefined, frames: out.frames, longTasks: out.long, over100: out.over100, longestMs: out.longest, now: out.now, hash: out.hash }));
      await page.close();
    }
  }
} finally {
  await browser.close();
  await srv.close();
}
