#!/usr/bin/env node
// Does the page answer while the core works (issue 63)? Opens each address in
// headless Chromium (playwright-core + /usr/bin/chromium) and reports, for the
// wait until the lab has landed where the address asked (no seek under way):
// when the first useful paint came (the first frame with the page ready), how
// long until it landed, and the main thread's long tasks (PerformanceObserver
// "longtask": count, the longest, their sum, how many over 100 ms), with the
// page's own seek progress sampled on the way (it shows how far it got).
// Then, on tour 19, each Next from stop 1 to the last: wall ms and the
// longest task. Reported, never asserted: this is a benchmark.
//
// With --all-tours, every scenarios/tour-*.json instead (or those whose
// file name starts with one of --only, comma-separated): each of its stops opened by deep link
// (/?scenario=FILE&stop=N, until the stop shows, compare lanes included),
// then a walk from stop 1 to the last by Next; one line per tour with the
// long tasks of its openings and of its Nexts (count, longest, over 100 ms)
// and where the longest came.
//
//   node scripts/bench-responsive.mjs [--runs 1] [--next 1]
//   node scripts/bench-responsive.mjs --all-tours [--only tour-12,tour-16] [--www DIR]
//
// A stop that does not show within --timeout ms (default 300000) is
// reported as stuck (with what the page says of its seek) and the tour goes
// on. --www serves another copy of the site (a build from before a change).
// Needs `make build`.
import fs from 'node:fs';
import path from 'node:path';
import { startServer, launchBrowser, scriptArg, ROOT, WWW } from '../tests/e2e/helpers.mjs';

const runs = Number(scriptArg('runs', '1'));
const doNext = scriptArg('next', '1') !== '0';
const ADDRESSES = [
  ['tour 19, deep link to stop 8', '/?scenario=tour-19-rack-loss-20000.json&stop=8'],
  ['tour 19, shared link at t = 25 s', '/#scenario=tour-19-rack-loss-20000.json&t=25000'],
  ['tour 11, deep link to stop 6', '/?scenario=tour-11-mass-failover.json&stop=6'],
  ['default scenario', '/'],
];

const observe = () => {
  window.__long = [];
  window.__stops = [];
  document.addEventListener('failoverlab:tourstop', (e) => window.__stops.push(e.detail.index));
  new PerformanceObserver((l) => {
    for (const e of l.getEntries()) window.__long.push([e.startTime, e.duration]);
  }).observe({ type: 'longtask', buffered: true });
};
const summary = (long) => ({
  tasks: long.length,
  longestMs: Math.round(Math.max(0, ...long.map((x) => x[1]))),
  sumMs: Math.round(long.reduce((a, x) => a + x[1], 0)),
  over100: long.filter((x) => x[1] > 100).length,
});

const srv = await startServer(scriptArg('www', WWW));
const TIMEOUT = Number(scriptArg('timeout', '300000'));
const browser = await launchBrowser();
try {
  if (process.argv.includes('--all-tours')) await allTours(scriptArg('only', ''));
  else await addresses();
} finally {
  await browser.close();
  await srv.close();
}

/** The tour's stop shows (its tourstop event came): the page ready, no seek (lane A's or the lanes') under way, the card not busy, at stop `index`. */
function atStop(index) {
  return (
    document.body.dataset.ready === 'true' &&
    window.__stops.includes(index) &&
    window.failoverLab.seeking === null &&
    document.getElementById('tour')?.getAttribute('aria-busy') !== 'true' &&
    window.failoverLab.tour().index === index
  );
}

/** Every tour: each stop by deep link, then Next through it (--all-tours). */
async function allTours(only) {
  const dir = path.join(ROOT, 'scenarios');
  const files = fs.readdirSync(dir)
    .filter((f) => /^tour-\d+-.*\.json$/.test(f) && only.split(',').some((o) => !o || f.startsWith(`${o}-`)))
    .sort((a, b) => parseInt(a.slice(5), 10) - parseInt(b.slice(5), 10));
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.addInitScript(observe);
  const settle = () => page.evaluate(async () => {
    // A split draw's second half and a deferred draw come in the tasks just after.
    for (let i = 0; i < 3; i++) await new Promise((res) => requestAnimationFrame(res));
    await new Promise((res) => setTimeout(res, 300));
    return window.__long.splice(0);
  });
  for (const file of files) {
    const stops = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')).tour.length;
    const opens = [];
    const stuck = [];
    let worst = null;
    const note = (where, long) => {
      for (const [, d] of long) if (!worst || d > worst.ms) worst = { ms: Math.round(d), where };
    };
    /** Wait for the stop; false (and noted) when it never shows. */
    const reach = async (index, where) => {
      try {
        await page.waitForFunction(atStop, index, { timeout: TIMEOUT, polling: 200 });
        return true;
      } catch (e) {
        if (e.name !== 'TimeoutError') throw e;
        stuck.push({ where, state: await page.evaluate(() => ({ index: window.failoverLab?.tour().index, stops: window.__stops, seeking: window.failoverLab?.seeking, busy: document.getElementById('tour')?.getAttribute('aria-busy'), now: window.failoverLab?.now() })) });
        return false;
      }
    };
    for (let n = 1; n <= stops; n++) {
      await page.goto(`${srv.baseUrl}/?scenario=${file}&stop=${n}`);
      await reach(n - 1, `stop=${n}`);
      const long = await settle();
      opens.push(...long);
      note(`stop=${n}`, long);
    }
    const nexts = [];
    await page.goto(`${srv.baseUrl}/?scenario=${file}&stop=1`);
    const walk = await reach(0, 'walk from stop=1');
    await settle();
    for (let i = 1; walk && i < stops; i++) {
      await page.evaluate(() => {
        window.__stops.length = 0;
        document.querySelector('#tour [data-tour="next"]').click();
      });
      const there = await reach(i, `Next to ${i + 1}`);
      const long = await settle();
      nexts.push(...long);
      note(`Next to ${i + 1}`, long);
      if (!there) break;
    }
    const all = [...opens, ...nexts];
    console.log(JSON.stringify({ tour: file.replace(/\.json$/, ''), stops, opens: summary(opens), nexts: summary(nexts), over100: all.filter((x) => x[1] > 100).length, longestMs: worst?.ms ?? 0, longestAt: worst?.where ?? null, ...(stuck.length ? { stuck } : {}) }));
  }
  await page.close();
}

/** The few addresses, and tour 19's Nexts (the default). */
async function addresses() {
  for (const [name, url] of ADDRESSES) {
    for (let r = 0; r < runs; r++) {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.addInitScript(observe);
      await page.goto(srv.baseUrl + url);
      await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 120000 });
      const firstPaint = await page.evaluate(() => performance.getEntriesByName('failover-lab:first-frame')[0]?.startTime ?? null);
      const progress = [];
      for (;;) {
        const s = await page.evaluate(() => [performance.now(), window.failoverLab.seeking]);
        if (!s[1]) break;
        progress.push(`${(s[0] / 1000).toFixed(1)} s: ${Math.round(100 * s[1].progress)} %`);
        await page.waitForTimeout(1000);
      }
      const landed = await page.evaluate(() => performance.now());
      const long = await page.evaluate(() => window.__long);
      console.log(JSON.stringify({ name, url, firstUsefulPaintMs: Math.round(firstPaint), landedMs: Math.round(landed), ...summary(long), progress }));
      await page.close();
    }
  }
  if (doNext) {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.addInitScript(observe);
    await page.goto(srv.baseUrl + '/?scenario=tour-19-rack-loss-20000.json&stop=1');
    await page.waitForFunction(() => document.body.dataset.ready === 'true' && window.failoverLab.seeking === null && window.failoverLab.tour().index === 0, null, { timeout: 120000 });
    const stops = await page.evaluate(() => window.failoverLab.tour().stops.length);
    for (let i = 1; i < stops; i++) {
      const r = await page.evaluate(async () => {
        window.__long.length = 0;
        const t0 = performance.now();
        const frame = () => new Promise((res) => requestAnimationFrame(res));
        document.querySelector('#tour [data-tour="next"]').click();
        let frames = 0;
        while (document.getElementById('tour').getAttribute('aria-busy') === 'true' || window.failoverLab.seeking) {
          await frame();
          frames++;
        }
        await frame();
        return { wallMs: Math.round(performance.now() - t0), frames, long: window.__long };
      });
      console.log(JSON.stringify({ name: `tour 19, Next to stop ${i + 1}`, wallMs: r.wallMs, frames: r.frames, ...summary(r.long) }));
    }
    await page.close();
  }
}
