#!/usr/bin/env node
// Where a seek's time goes in the app page (issue 28): opens
// index.html?scenario=NAME in headless Chromium, runs it to 60 s, then seeks
// to N spread times, one per animation frame, each followed by a forced
// style + layout (as bench-browser.mjs --app times it), and prints either a
// CPU profile's self time per function (default) or, with TRACE=1, a Chrome
// trace's totals per event, the elements restyled and layout objects
// dirtied, the commonest style and layout invalidations and the layout roots
// (depth 1 is the document: nothing stopped the relayout). Needs `make build`.
// css-to-inject is added before the run in either mode (to try containment).
//
//   node scripts/profile-seek.mjs [scenario] [seeks] [css-to-inject]
//   TRACE=1 node scripts/profile-seek.mjs tour-11-mass-failover 20
//   INCL=1 SCROLL=.parts-panel node scripts/profile-seek.mjs tour-1-leader-dies 60
import { startApp } from '../tests/e2e/helpers.mjs';

const [scenario = 'tour-11-mass-failover', n = '40', css = ''] = process.argv.slice(2);

if (process.env.TRACE) {


const app = await startApp({ viewport: { width: 1280, height: 900 } });
try {
  const { page } = app;
  await page.goto(`${app.baseUrl}/index.html?scenario=${scenario}.json&paused=1&welcome=0`);
  await page.waitForSelector('body[data-ready="true"]');
  if (css) await page.addStyleTag({ content: css });
  await page.evaluate(() => { failoverLab.pause(); failoverLab.runFor(60000 - failoverLab.now()); });
  if (process.env.SCROLL) await page.evaluate((sel) => document.querySelector(sel).scrollIntoView({ block: 'start' }), process.env.SCROLL);
  await page.waitForTimeout(300);
  const cdp = await page.context().newCDPSession(page);
  const events = [];
  cdp.on('Tracing.dataCollected', (d) => events.push(...d.value));
  const done = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
  await cdp.send('Tracing.start', { categories: 'devtools.timeline,disabled-by-default-devtools.timeline,disabled-by-default-devtools.timeline.invalidationTracking', transferMode: 'ReportEvents' });
  await page.evaluate(async (n) => {
    const end = failoverLab.now(); let x = 12345;
    for (let i = 0; i < n; i++) {
      await new Promise((r) => requestAnimationFrame(r));
      x = (x * 1103515245 + 12345) % 2147483648;
      failoverLab.seek(Math.round((x / 2147483648) * end));
      void document.body.getBoundingClientRect().height;
    }
  }, Number(n));
  await cdp.send('Tracing.end');
  await done;
  const sum = new Map();
  let elems = 0, dirty = 0, total = 0;
  const reasons = new Map();
  const layoutWhy = new Map();
  const roots = new Map(); // layout roots by their depth in the tree (1: the document)
  for (const e of events) {
    if (e.name === 'LayoutInvalidationTracking') {
      const d = e.args?.data || {};
      const k = `${d.reason || ''} ${d.nodeName || ''}`.slice(0, 120);
      layoutWhy.set(k, (layoutWhy.get(k) || 0) + 1);
    }
    if (e.ph === 'X' && e.dur) sum.set(e.name, (sum.get(e.name) || 0) + e.dur);
    if (e.name === 'UpdateLayoutTree' && e.args?.elementCount) elems += e.args.elementCount;
    if (e.name === 'Layout' && e.args?.beginData) { dirty += e.args.beginData.dirtyObjects || 0; total += e.args.beginData.totalObjects || 0; }
    if (e.name === 'Layout' && e.args?.endData?.layoutRoots) for (const r of e.args.endData.layoutRoots) roots.set(r.depth, (roots.get(r.depth) || 0) + 1);
    if (e.name === 'StyleRecalcInvalidationTracking' || e.name === 'StyleInvalidatorInvalidationTracking') {
      const d = e.args?.data || {};
      const k = `${e.name.slice(0, 10)} ${d.reason || ''} ${d.nodeName || ''} ${d.invalidatedSelectorId || d.changedClass || d.changedAttribute || d.changedPseudo || ''}`.slice(0, 120);
      reasons.set(k, (reasons.get(k) || 0) + 1);
    }
  }
  console.log(`elements restyled ${elems}, layout dirty ${dirty} of ${total}`);
  for (const [k, us] of [...sum].sort((a, b) => b[1] - a[1]).slice(0, 14)) console.log(`${(us / 1000).toFixed(1).padStart(8)} ms  ${k}`);
  for (const [k, c] of [...reasons].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${String(c).padStart(6)}  ${k}`);
  console.log(`layout roots by depth: ${[...roots].sort((a, b) => a[0] - b[0]).map(([d, c]) => `${d}:${c}`).join(' ')}`);
  console.log('layout invalidations (reason, node):');
  for (const [k, c] of [...layoutWhy].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${String(c).padStart(6)}  ${k}`);
} finally { await app.close(); }

} else {


const app = await startApp({ viewport: { width: 1280, height: 900 } });
try {
  const { page } = app;
  await page.goto(`${app.baseUrl}/index.html?scenario=${scenario}.json&paused=1&welcome=0`);
  await page.waitForSelector('body[data-ready="true"]');
  if (css) await page.addStyleTag({ content: css });
  await page.evaluate(() => { failoverLab.pause(); failoverLab.runFor(60000 - failoverLab.now()); });
  // SCROLL=SELECTOR: seek while that panel is at the top of the window.
  if (process.env.SCROLL) {
    await page.evaluate((sel) => document.querySelector(sel).scrollIntoView({ block: 'start' }), process.env.SCROLL);
    await page.waitForTimeout(300);
  }
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
  await cdp.send('Profiler.start');
  const ms = await page.evaluate(async (n) => {
    const end = failoverLab.now(); const out = [];
    let x = 12345;
    for (let i = 0; i < n; i++) {
      await new Promise((r) => requestAnimationFrame(r));
      x = (x * 1103515245 + 12345) % 2147483648;
      const t = Math.round((x / 2147483648) * end);
      const t0 = performance.now();
      failoverLab.seek(t);
      void document.body.getBoundingClientRect().height;
      out.push(performance.now() - t0);
    }
    return out;
  }, Number(n));
  const { profile } = await cdp.send('Profiler.stop');
  ms.sort((a, b) => a - b);
  console.log(`seeks: p50 ${ms[Math.floor(ms.length * 0.5)].toFixed(1)} p95 ${ms[Math.floor(ms.length * 0.95)].toFixed(1)} total ${ms.reduce((a, b) => a + b, 0).toFixed(0)} ms`);
  const dt = new Map(); const byId = new Map(profile.nodes.map((nd) => [nd.id, nd]));
  for (let i = 0; i < profile.samples.length; i++) dt.set(profile.samples[i], (dt.get(profile.samples[i]) || 0) + (profile.timeDeltas[i] || 0));
  const self = new Map();
  for (const [id, us] of dt) {
    const cf = byId.get(id).callFrame;
    const k = frameKey(cf);
    self.set(k, (self.get(k) || 0) + us);
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  // INCL=1: time including callees, per function (a function on the stack
  // twice counts once), to see which panel's update a seek spends on; best
  // with a bundle built by `PROFILE=1 node scripts/build-bundle.mjs`.
  const shown = process.env.INCL ? inclusive(profile, dt) : self;
  for (const [k, us] of [...shown].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP || 30))) console.log(`${(us / 1000).toFixed(1).padStart(8)} ms ${(100 * us / total).toFixed(1).padStart(5)}%  ${k}`);
} finally { await app.close(); }

}

function frameKey(cf) {
  return `${cf.functionName || '(anon)'} ${cf.url.split('/').pop()}:${cf.lineNumber + 1}:${cf.columnNumber}`;
}

/** Per function, the sampled time of every stack it is on. */
function inclusive(profile, dt) {
  const parent = new Map();
  for (const nd of profile.nodes) for (const c of nd.children || []) parent.set(c, nd.id);
  const byId = new Map(profile.nodes.map((nd) => [nd.id, nd]));
  const out = new Map();
  for (const [id, us] of dt) {
    const seen = new Set();
    for (let n = id; n != null; n = parent.get(n)) {
      const k = frameKey(byId.get(n).callFrame);
      if (seen.has(k)) continue;
      seen.add(k);
      out.set(k, (out.get(k) || 0) + us);
    }
  }
  return out;
}
