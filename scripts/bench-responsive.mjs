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
//   node scripts/bench-responsive.mjs [--runs 1] [--next 1]
//
// Needs `make build`.
import { startServer, launchBrowser, scriptArg, WWW } from '../tests/e2e/helpers.mjs';

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

const srv = await startServer(WWW);
const browser = await launchBrowser();
try {
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
} finally {
  await browser.close();
  await srv.close();
}
