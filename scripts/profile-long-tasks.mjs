#!/usr/bin/env node
// What the main thread's long tasks are made of (issue 63): opens an address
// in headless Chromium with V8's sampling profiler on and a
// PerformanceObserver for "longtask", waits until the lab has landed where
// the address asked, and for every long task over --over ms (default 100)
// prints its length and the functions it spent its time in, time including
// callees (a function on the stack twice counts once). The profile's clock
// is matched to the page's by a marker function the page runs at a known
// time (__calibrate). Best with an unminified bundle (`PROFILE=1 node
// scripts/build-bundle.mjs`) and, for the core's own functions, a fast
// build whose wasm keeps its names (wasm-bindgen's output before wasm-opt).
// With --next N, it then clicks the tour's Next N times and profiles those
// too; with --redraw N, draws the landed world N times (a seek to where it
// is) and profiles that. With --no-lane-workers, compare lanes stay on the
// main thread (window.failoverLabLaneWorkers = false, as bench-lanes' "main").
// With --then 'JS', once the address has landed, the page runs that
// (awaited: e.g. "failoverLab.compare('acks=1|acks=all')") and what it
// sets off is profiled until it has landed too.
//
//   node scripts/profile-long-tasks.mjs [--url '/?scenario=tour-19-rack-loss-20000.json&stop=8'] [--over 100] [--top 14] [--next 0] [--redraw 0] [--no-lane-workers]
//
// Needs `make build`. Reported, never asserted; the profiler slows the page.
import { startServer, launchBrowser, scriptArg, WWW } from '../tests/e2e/helpers.mjs';

const url = scriptArg('url', '/?scenario=tour-19-rack-loss-20000.json&stop=8');
const over = Number(scriptArg('over', '100'));
const top = Number(scriptArg('top', '14'));
const nexts = Number(scriptArg('next', '0'));
const redraws = Number(scriptArg('redraw', '0'));

const srv = await startServer(scriptArg('www', WWW));
const browser = await launchBrowser();
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  if (process.argv.includes('--no-lane-workers')) {
    await page.addInitScript(() => {
      window.failoverLabLaneWorkers = false;
    });
  }
  await page.addInitScript(() => {
    window.__long = [];
    new PerformanceObserver((l) => {
      for (const e of l.getEntries()) window.__long.push([e.startTime, e.duration]);
    }).observe({ type: 'longtask', buffered: true });
  });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 250 });
  await page.goto('about:blank');
  await cdp.send('Profiler.start');
  await page.goto(srv.baseUrl + url);
  await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 120000 });
  await page.waitForFunction(() => window.failoverLab.seeking === null && document.getElementById('tour')?.getAttribute('aria-busy') !== 'true', null, { timeout: 120000, polling: 500 });
  await page.waitForTimeout(Number(scriptArg('settle', '500')));
  // The profile's clock against the page's: a marker function run at a known time.
  async function stop() {
    const at = await page.evaluate(() => {
      const t = performance.now();
      (function __calibrate() {
        while (performance.now() - t < 20);
      })();
      return t;
    });
    const long = await page.evaluate(() => window.__long);
    return [(await cdp.send('Profiler.stop')).profile, at, long];
  }
  async function restart() {
    await page.evaluate(() => (window.__long.length = 0));
    await cdp.send('Profiler.start');
  }
  report('open ' + url, ...(await stop()));
  const then = scriptArg('then', '');
  if (then) {
    await restart();
    await page.evaluate(async (js) => {
      await (0, eval)(`(async () => { await ${js}; })()`);
    }, then);
    await page.waitForFunction(() => window.failoverLab.seeking === null, null, { timeout: 120000, polling: 500 });
    await page.waitForTimeout(Number(scriptArg('settle', '500')));
    report('then ' + then, ...(await stop()));
  }
  if (redraws > 0) {
    // A seek to where the world is: the landed draw alone, each in a task of its own.
    await restart();
    const ms = await page.evaluate(async (n) => {
      const out = [];
      for (let i = 0; i < n; i++) {
        await new Promise((res) => setTimeout(res, 50));
        const t0 = performance.now();
        window.failoverLab.seek(window.failoverLab.now());
        out.push(Math.round(performance.now() - t0));
      }
      return out;
    }, redraws);
    report(`${redraws} redraws (${ms.join(', ')} ms)`, ...(await stop()));
  }
  for (let i = 0; i < nexts; i++) {
    await restart();
    await page.evaluate(async () => {
      const frame = () => new Promise((res) => requestAnimationFrame(res));
      document.querySelector('#tour [data-tour="next"]').click();
      while (document.getElementById('tour').getAttribute('aria-busy') === 'true' || window.failoverLab.seeking) await frame();
      await frame();
    });
    await page.waitForTimeout(300);
    report(`Next ${i + 1}`, ...(await stop()));
  }
} finally {
  await browser.close();
  await srv.close();
}

function frameKey(cf) {
  return `${cf.functionName || '(anon)'} ${cf.url.split('/').pop()}:${cf.lineNumber + 1}`;
}

function report(title, profile, at, long) {
  const byId = new Map(profile.nodes.map((nd) => [nd.id, nd]));
  const parent = new Map();
  for (const nd of profile.nodes) for (const c of nd.children || []) parent.set(c, nd.id);
  const times = [];
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] || 0;
    times.push(t);
  }
  const onStack = (id, name) => {
    for (let n = id; n != null; n = parent.get(n)) if (byId.get(n).callFrame.functionName === name) return true;
    return false;
  };
  const mark = profile.samples.findIndex((id) => onStack(id, '__calibrate'));
  if (mark < 0) {
    console.log(`\n== ${title}: no marker in the profile`);
    return;
  }
  // Page ms = profile µs / 1000 + shift.
  const shift = at - times[mark] / 1000;
  const tasks = long.filter(([, d]) => d > over);
  console.log(`\n== ${title}: ${long.length} long tasks, ${tasks.length} over ${over} ms (longest ${Math.round(Math.max(0, ...long.map((x) => x[1])))} ms)`);
  for (const [start, dur] of tasks) {
    const incl = new Map();
    for (let i = 0; i < profile.samples.length; i++) {
      const ms = times[i] / 1000 + shift;
      if (ms < start || ms > start + dur) continue;
      const us = profile.timeDeltas[i + 1] || 0;
      const seen = new Set();
      for (let n = profile.samples[i]; n != null; n = parent.get(n)) {
        const cf = byId.get(n).callFrame;
        if (cf.functionName === '(root)') continue;
        const key = frameKey(cf);
        if (seen.has(key)) continue;
        seen.add(key);
        incl.set(key, (incl.get(key) || 0) + us);
      }
    }
    console.log(`-- task at ${(start / 1000).toFixed(2)} s: ${Math.round(dur)} ms`);
    for (const [key, us] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${(us / 1000).toFixed(1).padStart(8)} ms  ${key}`);
  }
}
