#!/usr/bin/env node
// Do compare and fork lanes leave the page answering (issue 63)? In headless
// Chromium (playwright-core + /usr/bin/chromium), for each case: the wall ms
// until every lane has landed (`failoverLab.seeking` null, lanes included)
// and the main thread's long tasks meanwhile (PerformanceObserver
// "longtask": count, the longest, their sum). Cases:
//   fork      tour 18 (3,000 partitions) paused at 40 s, fork(40000, crash 21)
//   link      tour 18, a shared link at t = 30 s with compare=acks=1|acks=all
//   link19    tour 19 (20,000 partitions), the same at t = 12 s
//   tour13    tour 13 (compare lanes, small): each Next, stop 1 to the last
//   enter     tour 18 at 30 s, then compare mode with three lanes
//             (acks=1|acks=all|min.insync.replicas=2)
// Each case is measured both ways of --ways (default workers,main): lanes
// on other cores (compare.js sendAway, the fast build's Workers) and on the
// main thread alone (window.failoverLabLaneWorkers = false). Several sites (--roots a,b: www folders, e.g. main's build and this one's)
// are measured interleaved, run by run, on the same machine. Reported,
// never asserted: this is a benchmark.
//
//   node scripts/bench-lanes.mjs [--runs 3] [--roots www,../base/www] [--cases fork,link,tour13,enter] [--ways workers,main]
//
// Needs `make build` in each root.
import path from 'node:path';
import { startServer, launchBrowser, scriptArg, WWW } from '../tests/e2e/helpers.mjs';

const runs = Number(scriptArg('runs', '3'));
const roots = scriptArg('roots', WWW).split(',').map((r) => path.resolve(r));
const cases = scriptArg('cases', 'fork,link,tour13,enter').split(',');
const ways = scriptArg('ways', 'workers,main').split(',');

const observe = () => {
  window.__long = [];
  new PerformanceObserver((l) => {
    for (const e of l.getEntries()) window.__long.push([e.startTime, e.duration]);
  }).observe({ type: 'longtask', buffered: true });
};
// Long tasks that end after `from` and begin before `to` (when every lane
// had landed: what the bench then reads of the lanes, each lane's whole
// report, is not the page's own work and is left out).
const summary = (long, from = 0, to = Infinity) => {
  const l = long.filter((x) => x[0] + x[1] >= from && x[0] < to);
  return { tasks: l.length, longestMs: Math.round(Math.max(0, ...l.map((x) => x[1]))), sumMs: Math.round(l.reduce((a, x) => a + x[1], 0)) };
};
const idle = (page) => page.waitForFunction(() => document.body.dataset.ready === 'true' && window.failoverLab.seeking === null, null, { timeout: 300000 });

async function fork(page, base) {
  await page.goto(`${base}/?scenario=tour-18-rack-loss.json&paused=1`);
  await idle(page);
  // The fork code and the fast build loaded first (not what is measured).
  await page.evaluate(async () => {
    failoverLab.seek(40000);
    await failoverLab.fork(0, { crash: 21 });
    failoverLab.compare(null);
    while (failoverLab.seeking) await new Promise((r) => requestAnimationFrame(r));
    await new Promise((r) => setTimeout(r, 500));
  });
  return page.evaluate(async () => {
    // From a task of its own, as a reader's click (a long task is seen then).
    let t0 = 0;
    await new Promise((res) => setTimeout(() => {
      t0 = performance.now();
      failoverLab.fork(40000, { crash: 21 }).then(res);
    }, 0));
    const resolved = performance.now() - t0;
    while (failoverLab.seeking) await new Promise((r) => requestAnimationFrame(r));
    return { t0, resolvedMs: Math.round(resolved), landedMs: Math.round(performance.now() - t0) };
  });
}

async function link(page, base, file, t) {
  await page.goto(`${base}/?scenario=${file}#scenario=${file}&t=${t}&compare=${encodeURIComponent('acks=1|acks=all')}`);
  await idle(page);
  return page.evaluate(async () => {
    const t1 = performance.now();
    await new Promise((r) => setTimeout(r, 0));
    return { t0: 0, t1, landedMs: Math.round(t1), lanes: failoverLab.lanes().map((l) => l.report.end_ms) };
  });
}

async function enter(page, base) {
  await page.goto(`${base}/?scenario=tour-18-rack-loss.json&paused=1`);
  await idle(page);
  await page.evaluate(async () => {
    failoverLab.seek(30000);
    // The lanes' code loaded first (not what is measured).
    await failoverLab.compare('acks=1|acks=all');
    await failoverLab.compare(null);
    while (failoverLab.seeking) await new Promise((r) => requestAnimationFrame(r));
    await new Promise((r) => setTimeout(r, 500));
  });
  return page.evaluate(async () => {
    let t0 = 0;
    await new Promise((res) => setTimeout(() => {
      t0 = performance.now();
      failoverLab.compare('acks=1|acks=all|min.insync.replicas=2').then(res);
    }, 0));
    while (failoverLab.seeking) await new Promise((r) => requestAnimationFrame(r));
    const t1 = performance.now();
    await new Promise((r) => setTimeout(r, 0));
    return { t0, t1, landedMs: Math.round(t1 - t0), hashes: failoverLab.lanes().map((l) => l.report.trace_hash.slice(0, 8)).join(',') };
  });
}

async function tour13(page, base) {
  await page.goto(`${base}/?scenario=tour-13-acks1-vs-acks-all.json`);
  await idle(page);
  await page.waitForFunction(() => window.failoverLab.lanes().length === 2 && document.querySelector('#tour [data-tour="next"]'), null, { timeout: 60000 });
  const stops = await page.evaluate(() => failoverLab.tour().stops.length);
  const per = [];
  for (let i = 0; i < stops; i++) {
    per.push(await page.evaluate(async () => {
      const frame = () => new Promise((res) => requestAnimationFrame(res));
      // From a task of its own, as a reader's click (a long task is seen then).
      const t0 = await new Promise((res) => setTimeout(() => {
        const t = performance.now();
        document.querySelector('#tour [data-tour="next"]').click();
        res(t);
      }, 0));
      while (document.getElementById('tour').getAttribute('aria-busy') === 'true' || window.failoverLab.seeking) await frame();
      await frame();
      return { t0, wallMs: Math.round(performance.now() - t0) };
    }));
  }
  return { t0: per[0].t0, perStopMs: per.map((p) => p.wallMs), landedMs: per.reduce((a, p) => a + p.wallMs, 0) };
}

const srvs = await Promise.all(roots.map((r) => startServer(r)));
const browser = await launchBrowser();
try {
  for (let r = 0; r < runs; r++) {
    for (const name of cases) {
      for (const [k, srv] of srvs.entries()) for (const way of ways) {
        const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
        await page.addInitScript(observe);
        if (way === 'main') await page.addInitScript(() => (window.failoverLabLaneWorkers = false));
        let out;
        if (name === 'fork') out = await fork(page, srv.baseUrl);
        else if (name === 'link') out = await link(page, srv.baseUrl, 'tour-18-rack-loss.json', 30000);
        else if (name === 'link19') out = await link(page, srv.baseUrl, 'tour-19-rack-loss-20000.json', 12000);
        else if (name === 'tour13') out = await tour13(page, srv.baseUrl);
        else if (name === 'enter') out = await enter(page, srv.baseUrl);
        else throw new Error(`unknown case ${name}`);
        // Long tasks are reported after they end, from a task of their own.
        const long = await page.evaluate(async () => {
          await new Promise((r) => setTimeout(r, 300));
          await new Promise((r) => requestAnimationFrame(r));
          return window.__long;
        });
        const { t0, t1, ...rest } = out;
        console.log(JSON.stringify({ run: r, case: name, way, root: path.relative(process.cwd(), roots[k]) || '.', ...rest, ...summary(long, t0, t1) }));
        await page.close();
      }
    }
  }
} finally {
  await browser.close();
  for (const s of srvs) await s.close?.();
}
