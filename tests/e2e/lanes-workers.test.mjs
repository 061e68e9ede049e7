// Compare lanes on other cores (issue 63, item 3): on the fast build (tour
// 18's 3,000 partitions), a lane with a long way is replayed by a Worker
// (www/lane-worker.js) and its world sent back as bytes, which the page
// reads back (WasmLab.fromSnapshot) and makes the lane's. Meanwhile the
// lane says so ("computing on another core … 12.3 s of 30.0 s") and
// `failoverLab.seeking.lanes` says how far the Worker got, even while lane A
// still replays its own way on the main thread; a newer seek takes over;
// `lanes()` lands a lane on the main thread at once, the Worker's answer
// then dropped. Every way gives the same runs: the CLI's `run --set`, and
// the lanes as the main thread alone makes them. Needs `make build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, cli, WWW } from './helpers.mjs';

const BIG = 'tour-18-rack-loss.json';
let app;

before(async () => {
  assert.ok(fs.existsSync(path.join(WWW, 'dist', 'lane-worker.js')), 'run `make build` first');
  app = await startApp({ viewport: { width: 1400, height: 900 } });
});

after(async () => {
  await app?.close();
});

async function open(page, query = `?scenario=${BIG}&paused=1`) {
  await page.goto(`${app.baseUrl}/${query}`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
  await page.waitForFunction(() => window.failoverLab.seeking === null, null, { timeout: 60000 });
}

/**
 * Installed in the page: `window.holdLeadUntilAway(seeking)` holds lane A
 * where it is once the lanes are sent away (the page's frames, which make
 * its way, wait: `requestAnimationFrame` is wrapped), until a Worker says
 * how far a lane got (`seeking().lanes[…].at > 0`). Whether that comes
 * before lane A lands is then no race with the Worker's start (CI once saw
 * lane A land first); a Worker that did nothing while lane A replayed
 * never says so, the hold ends after 60 s and the test fails. Returns {
 * raf (the browser's own), end() (the page's frames as before; how long
 * lane A was held, ms, or null) }.
 */
function installHold() {
  window.holdLeadUntilAway = (seeking) => {
    const raf = window.requestAnimationFrame.bind(window);
    let held = null; // when the hold began; false once it ended
    let heldMs = null;
    const holding = () => {
      if (held === false) return false;
      const s = seeking();
      if (!s?.lanes?.length || s.progress >= 1) return false;
      held ??= performance.now();
      if (s.lanes.some((l) => l.at > 0) || performance.now() - held > 60000) {
        heldMs = Math.round(performance.now() - held);
        held = false;
      }
      return held !== false;
    };
    window.requestAnimationFrame = (cb) =>
      raf(function later(t) {
        if (holding()) raf(later);
        else cb(t);
      });
    return {
      raf,
      end() {
        window.requestAnimationFrame = raf;
        return heldMs;
      },
    };
  };
}

/** Lanes as `failoverLab.lanes()` gives them: [settings, trace hash, end]. */
const lanesOf = () => failoverLab.lanes().map((l) => [l.settings, l.report.trace_hash, l.report.end_ms]);

test('entering compare mode at 30 s of tour 18: lanes B and C go to another core while lane A goes back, say so, and land on the CLI runs and the main thread\u2019s', async () => {
  app.errors.length = 0;
  const page = app.page;
  await open(page);
  await page.evaluate(() => failoverLab.seek(30000));
  await page.evaluate(installHold);
  const r = await page.evaluate(async () => {
    const hold = holdLeadUntilAway(() => failoverLab.seeking);
    const frame = () => new Promise((res) => hold.raf(res));
    await failoverLab.compare('acks=1|acks=all|min.insync.replicas=2');
    const seen = { whileA: null, texts: new Set(), frames: 0, most: 0 };
    while (failoverLab.seeking) {
      const s = failoverLab.seeking;
      // Lane A still replaying here, and the lanes said on their way with it.
      if (s.progress < 1 && s.lanes?.some((l) => l.at > 0)) seen.whileA ??= s;
      for (const l of s.lanes || []) seen.most = Math.max(seen.most, l.at);
      for (const b of document.querySelectorAll('.lane .lane-busy')) if (!b.hidden) seen.texts.add(b.textContent);
      await frame();
      seen.frames++;
    }
    // Landed by themselves (lanes() below would land them at once, and
    // draw): each lane drawn with its figures, none still said computing.
    for (let i = 0; i < 3; i++) await frame();
    const drawn = [...document.querySelectorAll('section.lane')].map((l) => {
      const busy = l.querySelector('.lane-busy');
      return { lane: l.dataset.lane, busy: busy && !busy.hidden ? busy.textContent : null, figures: !!l.querySelector('dl.lane-sum [data-k="acked"] dd')?.textContent };
    });
    const lanes = failoverLab.lanes().map((l) => [l.settings, l.report.trace_hash, l.report.end_ms]);
    return { ...seen, texts: [...seen.texts], drawn, lanes, heldMs: hold.end() };
  });
  assert.deepEqual(r.drawn, ['A', 'B', 'C'].map((lane) => ({ lane, busy: null, figures: true })), 'the lanes a Worker made are drawn once they land');
  assert.ok(r.whileA, `a Worker made a lane\u2019s way while lane A replayed its own (held ${r.heldMs} ms)`);
  assert.equal(r.whileA.target, 30000);
  assert.ok(r.whileA.lanes.every((l) => l.target === 30000), JSON.stringify(r.whileA));
  assert.ok(r.most <= 30000, `never past the target: ${r.most}`);
  // Drawn only once lane A has landed (nothing is drawn half-way through
  // its seek): said by a lane still away then, if any (one Worker on a
  // 2-core machine makes B, then C).
  for (const t of r.texts) assert.match(t, /^Lane [BC]: computing on another core … \d+\.\d s of 30\.0 s$/);
  assert.deepEqual(r.lanes.map((l) => l[2]), [30000, 30000, 30000]);
  for (const [settings, hash] of r.lanes) {
    const native = JSON.parse(cli(['run', `scenarios/${BIG}`, '--set', settings, '--until', '30000', '--format', 'json']));
    assert.equal(hash, native.trace_hash, `lane ${settings}: the CLI's run`);
  }
  // The main thread alone (Workers off): the same runs, and no lane said "on another core".
  await open(page);
  const here = await page.evaluate(async () => {
    (await import(new URL('/dist/lanes.js', location.href).href)).setLaneWorkers(false);
    failoverLab.seek(30000);
    await failoverLab.compare('acks=1|acks=all|min.insync.replicas=2');
    let away = false;
    while (failoverLab.seeking) {
      away ||= [...document.querySelectorAll('.lane .lane-busy')].some((b) => !b.hidden && b.textContent.includes('another core'));
      await new Promise((res) => requestAnimationFrame(res));
    }
    return { away, lanes: failoverLab.lanes().map((l) => [l.settings, l.report.trace_hash, l.report.end_ms]) };
  });
  assert.equal(here.away, false);
  assert.deepEqual(here.lanes, r.lanes, 'a Worker or the main thread: the same runs');
  assert.deepEqual(app.errors, []);
});

test('a fork lane on its way in a Worker: a newer seek takes over (never past its target), lanes() lands it here at once, the same runs', async () => {
  app.errors.length = 0;
  const page = app.page;
  await open(page);
  const r = await page.evaluate(async () => {
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    failoverLab.seek(40000);
    await failoverLab.fork(40000, { crash: 21 });
    // Caught on its way in the Worker.
    while (!(failoverLab.seeking?.lanes?.[0]?.at > 0)) await frame();
    const text = document.querySelector('.lane[data-lane="B"] .lane-busy').textContent;
    const was = failoverLab.seeking.lanes[0];
    failoverLab.seek(25000);
    const now = failoverLab.seeking?.lanes?.[0] ?? null;
    let most = 0;
    while (failoverLab.seeking) {
      most = Math.max(most, failoverLab.seeking.lanes?.[0]?.at ?? 0);
      await frame();
    }
    const landed = failoverLab.lanes().map((l) => [l.report.trace_hash, l.report.end_ms]);
    // Forward again, and lanes() asked at once while the Worker has it: landed here.
    failoverLab.seek(40000);
    const before = failoverLab.seeking?.lanes?.length ?? 0;
    const once = failoverLab.lanes().map((l) => [l.report.trace_hash, l.report.end_ms]);
    const after = failoverLab.seeking;
    // A few frames for the Worker's answer to come back: dropped, nothing changes.
    for (let i = 0; i < 30; i++) await frame();
    const later = failoverLab.lanes().map((l) => [l.report.trace_hash, l.report.end_ms]);
    return { text, was, now, most, landed, before, once, after, later };
  });
  assert.match(r.text, /^Lane B: computing on another core … \d+\.\d s of 40\.0 s$/);
  assert.ok(r.was.at < 40000, JSON.stringify(r.was));
  assert.equal(r.now?.target, 25000, `retargeted at once: ${JSON.stringify(r.now)}`);
  assert.ok(r.most <= 25000, `never past the new target: ${r.most}`);
  assert.deepEqual(r.landed.map((l) => l[1]), [25000, 25000]);
  // Before the fork's time a fork lane is its parent's run.
  assert.equal(r.landed[1][0], r.landed[0][0]);
  assert.equal(r.before, 1, 'lane B was on its way again');
  assert.equal(r.after, null, 'lanes() landed it');
  assert.deepEqual(r.once.map((l) => l[1]), [40000, 40000]);
  assert.notEqual(r.once[0][0], r.once[1][0], 'the fork parts from lane A');
  assert.deepEqual(r.later, r.once);
  // The same fork made on the main thread alone.
  await open(page);
  const here = await page.evaluate(async () => {
    (await import(new URL('/dist/lanes.js', location.href).href)).setLaneWorkers(false);
    failoverLab.seek(40000);
    await failoverLab.fork(40000, { crash: 21 });
    while (failoverLab.seeking) await new Promise((res) => requestAnimationFrame(res));
    return failoverLab.lanes().map((l) => [l.report.trace_hash, l.report.end_ms]);
  });
  assert.deepEqual(here, r.once);
  assert.deepEqual(app.errors, []);
});

test('the element: its lanes go to another core too, while lane A goes back, and land on the same runs', async () => {
  app.errors.length = 0;
  const page = app.page;
  await page.goto(`${app.baseUrl}/embed.html?scenario=${BIG}&autoplay=0`);
  await page.waitForSelector('failover-lab[data-ready="true"]', { timeout: 60000 });
  await page.evaluate(installHold);
  const r = await page.evaluate(async () => {
    const el = document.querySelector('failover-lab');
    const hold = holdLeadUntilAway(() => el.seeking);
    const frame = () => new Promise((res) => hold.raf(res));
    el.seek(30000);
    await el.compare('acks=1|acks=all');
    let whileA = null;
    while (el.seeking) {
      const s = el.seeking;
      if (s.progress < 1 && s.lanes?.[0]?.at > 0) whileA ??= s;
      await frame();
    }
    const lanes = el.lanes().map((l) => [l.settings, l.report.trace_hash, l.report.end_ms]);
    return { whileA, lanes, heldMs: hold.end() };
  });
  assert.equal(r.whileA?.lanes?.[0]?.lane, 'B', `lane B on its way while lane A replayed (held ${r.heldMs} ms): ${JSON.stringify(r.whileA)}`);
  for (const [settings, hash, end] of r.lanes) {
    assert.equal(end, 30000);
    const native = JSON.parse(cli(['run', `scenarios/${BIG}`, '--set', settings, '--until', '30000', '--format', 'json']));
    assert.equal(hash, native.trace_hash, `lane ${settings}: the CLI's run`);
  }
  assert.deepEqual(app.errors, []);
});

test('a Worker that cannot start leaves the lanes to the main thread: they land on the same runs, no error shown', async () => {
  app.errors.length = 0;
  const page = app.page;
  // The Worker's script refused (a server without it, a policy against it).
  await page.route('**/lane-worker.js', (route) => route.fulfill({ status: 404, body: 'gone' }));
  try {
    await open(page);
    const r = await page.evaluate(async () => {
      failoverLab.seek(30000);
      await failoverLab.compare('acks=1|acks=all');
      let away = false;
      while (failoverLab.seeking) {
        away ||= [...document.querySelectorAll('.lane .lane-busy')].some((b) => !b.hidden && b.textContent.includes('another core'));
        await new Promise((res) => requestAnimationFrame(res));
      }
      return { lanes: failoverLab.lanes().map((l) => [l.settings, l.report.trace_hash, l.report.end_ms]), shown: document.getElementById('banner').hidden ? null : document.getElementById('banner-text').textContent };
    });
    assert.equal(r.shown, null, 'no error on the page');
    assert.deepEqual(r.lanes.map((l) => l[2]), [30000, 30000]);
    for (const [settings, hash] of r.lanes) {
      const native = JSON.parse(cli(['run', `scenarios/${BIG}`, '--set', settings, '--until', '30000', '--format', 'json']));
      assert.equal(hash, native.trace_hash, `lane ${settings}: the CLI's run`);
    }
  } finally {
    await page.unroute('**/lane-worker.js');
  }
  // The refused script's 404 is the browser's console line, not the page's error.
  assert.deepEqual(app.errors.filter((e) => !/404|Failed to load resource/.test(e)), []);
});
