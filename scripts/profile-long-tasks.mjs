#!/usr/bin/env node
// What the main thread's long tasks are made of (issue 63): opens an address
// in headless Chromium with V8's sampling profiler on, waits until the lab
// has landed where the address asked, and cuts the samples into tasks (runs
// of samples with no idle between them). For every task over --over ms
// (default 50) it prints its length and the functions it spent its time in,
// time including callees (a function on the stack twice counts once), the
// page's own functions and the wasm façade's only. Best with an unminified
// bundle (`PROFILE=1 node scripts/build-bundle.mjs`). With --next N, it then
// clicks the tour's Next N times and profiles those too; with --redraw N,
// draws the landed world N times (a seek to where it is) and profiles that.
//
//   node scripts/profile-long-tasks.mjs [--url '/?scenario=tour-19-rack-loss-20000.json&stop=8'] [--over 50] [--top 14] [--next 0]
//
// Needs `make build`. Reported, never asserted.
import { startServer, launchBrowser, scriptArg, WWW } from '../tests/e2e/helpers.mjs';

const url = scriptArg('url', '/?scenario=tour-19-rack-loss-20000.json&stop=8');
const over = Number(scriptArg('over', '50'));
const top = Number(scriptArg('top', '14'));
const nexts = Number(scriptArg('next', '0'));
const redraws = Number(scriptArg('redraw', '0'));

const srv = await startServer(WWW);
const browser = await launchBrowser();
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 250 });
  await page.goto('about:blank');
  await cdp.send('Profiler.start');
  await page.goto(srv.baseUrl + url);
  await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 120000 });
  await page.waitForFunction(() => window.failoverLab.seeking === null && document.getElementById('tour')?.getAttribute('aria-busy') !== 'true', null, { timeout: 120000, polling: 500 });
  await page.waitForTimeout(500);
  report('open ' + url, (await cdp.send('Profiler.stop')).profile);
  if (redraws > 0) {
    // A seek to where the world is: the landed draw alone, each in a task of its own.
    await cdp.send('Profiler.start');
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
    report(`${redraws} redraws (${ms.join(', ')} ms)`, (await cdp.send('Profiler.stop')).profile);
  }
  for (let i = 0; i < nexts; i++) {
    await cdp.send('Profiler.start');
    await page.evaluate(async () => {
      const frame = () => new Promise((res) => requestAnimationFrame(res));
      document.querySelector('#tour [data-tour="next"]').click();
      while (document.getElementById('tour').getAttribute('aria-busy') === 'true' || window.failoverLab.seeking) await frame();
      await frame();
    });
    await page.waitForTimeout(300);
    report(`Next ${i + 1}`, (await cdp.send('Profiler.stop')).profile);
  }
} finally {
  await browser.close();
  await srv.close();
}

function frameKey(cf) {
  return `${cf.functionName || '(anon)'} ${cf.url.split('/').pop()}:${cf.lineNumber + 1}`;
}

function report(title, profile) {
  const byId = new Map(profile.nodes.map((nd) => [nd.id, nd]));
  const parent = new Map();
  for (const nd of profile.nodes) for (const c of nd.children || []) parent.set(c, nd.id);
  const idle = (id) => ['(idle)', '(program)'].includes(byId.get(id).callFrame.functionName);
  // Tasks: maximal runs of non-idle samples (a gap of idle over 1 ms ends one).
  const tasks = [];
  let cur = null;
  let t = profile.startTime;
  let idleRun = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] || 0;
    t += dt;
    const id = profile.samples[i];
    if (idle(id)) {
      idleRun += dt;
      if (cur && idleRun > 1000) {
        tasks.push(cur);
        cur = null;
      }
      continue;
    }
    idleRun = 0;
    if (!cur) cur = { start: t, end: t, samples: [] };
    cur.end = t;
    cur.samples.push([id, dt]);
  }
  if (cur) tasks.push(cur);
  const long = tasks.filter((k) => (k.end - k.start) / 1000 > over);
  console.log(`\n== ${title}: ${tasks.length} tasks, ${long.length} over ${over} ms`);
  for (const k of long) {
    const incl = new Map();
    for (const [id, us] of k.samples) {
      const seen = new Set();
      for (let n = id; n != null; n = parent.get(n)) {
        const cf = byId.get(n).callFrame;
        if (cf.functionName === '(root)') continue;
        const key = frameKey(cf);
        if (seen.has(key)) continue;
        seen.add(key);
        incl.set(key, (incl.get(key) || 0) + us);
      }
    }
    const ms = (k.end - k.start) / 1000;
    console.log(`-- task at ${((k.start - profile.startTime) / 1e6).toFixed(2)} s: ${ms.toFixed(0)} ms`);
    for (const [key, us] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${(us / 1000).toFixed(1).padStart(8)} ms  ${key}`);
  }
}
