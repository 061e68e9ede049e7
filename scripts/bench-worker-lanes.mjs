#!/usr/bin/env node
// Could compare lanes use more than one core (issue 63, item 3)? The
// follower lanes of a compare (lane A being the page's own lab) taken from 0
// to --until, three ways in headless Chromium, each in a fresh page that
// runs nothing else, on the fast build: (1) `slices`, on the main thread as
// the page does now (compare.js: every lane's Lab.seekSlice sharing 40 ms of
// work per animation frame); (2) `worker`, the lanes one after the other in
// one dedicated Worker; (3) `workers`, one Worker per lane, in parallel.
// Each reports its wall time, the main thread's long tasks meanwhile, the
// frames drawn, and each lane's trace hash (the same three ways). The
// Workers run the core alone (no checkpoints): what a Worker would cost
// beyond that (sending a lane's world back: the core has no way to today)
// is not measured. Reported, never asserted.
//
//   node scripts/bench-worker-lanes.mjs [--rounds 2] [--until 30000]
//     [--scenario tour-18-rack-loss.json] [--lanes 'acks=1|min.insync.replicas=1']
//
// Needs `make build`.
import { startServer, launchBrowser, scriptArg, WWW } from '../tests/e2e/helpers.mjs';

const rounds = Number(scriptArg('rounds', '2'));
const until = Number(scriptArg('until', '30000'));
const file = scriptArg('scenario', 'tour-18-rack-loss.json');
const lanes = scriptArg('lanes', 'acks=1|min.insync.replicas=1').split('|');
const srv = await startServer(WWW);
const browser = await launchBrowser();
const WORKER = `
  import init, { WasmLab } from './pkg-explorer/failover_lab.js';
  onmessage = async (e) => {
    await init();
    const out = [];
    for (const settings of e.data.lanes) {
      const t0 = performance.now();
      const lab = WasmLab.withSettings(e.data.text, settings);
      lab.runUntil(e.data.until);
      out.push({ ms: performance.now() - t0, now: lab.nowMs(), hash: lab.traceHash() });
      lab.free();
    }
    postMessage(out);
  };`;
try {
  for (let r = 0; r < rounds; r++) {
    for (const mode of ['slices', 'worker', 'workers']) {
      const page = await browser.newPage();
      await page.goto(`${srv.baseUrl}/scenarios/index.json`);
      const out = await page.evaluate(async ({ mode, until, WORKER, file, lanes }) => {
        const long = [];
        new PerformanceObserver((l) => {
          for (const e of l.getEntries()) long.push(e.duration);
        }).observe({ type: 'longtask' });
        const text = await (await fetch(`/scenarios/${file}`)).text();
        const frame = () => new Promise((res) => requestAnimationFrame(res));
        let res;
        if (mode === 'slices') {
          const { Lab, initFastWasm } = await import(new URL('/lab.js', location.origin).href);
          const W = await initFastWasm();
          const t0 = performance.now();
          const labs = lanes.map((l) => {
            const lab = new Lab();
            lab.W = W;
            lab.laneSettings = l;
            lab.base = JSON.parse(text);
            lab.restore({ overrides: {}, actions: [], t: 0 });
            lab.seekBegin(until);
            return lab;
          });
          let frames = 0;
          for (;;) {
            const late = labs.filter((l) => l.seekJob);
            if (!late.length) break;
            for (const l of late) l.seekSlice(40 / late.length);
            await frame();
            frames++;
          }
          res = { ms: performance.now() - t0, lanes: labs.map((l) => ({ now: l.now(), hash: l.traceHash() })), frames };
        } else {
          const url = URL.createObjectURL(new Blob([WORKER.replaceAll('./pkg-explorer/', new URL('/pkg-explorer/', location.origin).href)], { type: 'text/javascript' }));
          const groups = mode === 'worker' ? [lanes] : lanes.map((l) => [l]);
          const t0 = performance.now();
          let frames = 0;
          let done = false;
          const p = Promise.all(groups.map((g) => {
            const w = new Worker(url, { type: 'module' });
            const got = new Promise((ok) => (w.onmessage = (e) => ok(e.data)));
            w.postMessage({ text, until, lanes: g });
            return got.then((d) => (w.terminate(), d));
          })).then((d) => ((done = true), d.flat()));
          while (!done) {
            await frame();
            frames++;
          }
          const d = await p;
          res = { ms: performance.now() - t0, coreMs: d.map((x) => Math.round(x.ms)), lanes: d.map((x) => ({ now: x.now, hash: x.hash })), frames };
        }
        await new Promise((ok) => setTimeout(ok, 200));
        await frame();
        return { ...res, long: long.length, longest: Math.round(Math.max(0, ...long)) };
      }, { mode, until, WORKER, file, lanes });
      console.log(JSON.stringify({ round: r + 1, mode, wallS: +(out.ms / 1000).toFixed(2), coreMs: out.coreMs, frames: out.frames, longTasks: out.long, longestMs: out.longest, lanes: out.lanes.map((l) => `${l.now}:${l.hash.slice(0, 12)}`) }));
      await page.close();
    }
  }
} finally {
  await browser.close();
  await srv.close();
}
