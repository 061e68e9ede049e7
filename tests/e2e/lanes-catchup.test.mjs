// Compare and fork lanes never block the page (issue 63, item 2 for lanes):
// a lane the core needs long for (tour 18: 3,000 partitions) catches up with
// lane A a slice per frame. Meanwhile its panel says how far it got ("Lane B:
// computing … 8.1 s of 20.0 s", a progressbar), its figures are greyed out, the
// page answers a click, and `failoverLab.seeking.lanes` says it; a newer seek
// takes over from where the lane got (it never finishes the stale target
// first); the synchronous API (`lanes()`) lands the lanes first; and a lane
// caught up in slices is the run computed in one go and the CLI's
// `run FILE --set k=v` (trace hash). Needs `make build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, cli, WWW } from './helpers.mjs';

const BIG = 'tour-18-rack-loss.json';
let app;

before(async () => {
  assert.ok(fs.existsSync(path.join(WWW, 'dist', 'lanes.js')), 'run `make build` first');
  app = await startApp({ viewport: { width: 1400, height: 900 } });
  // The main thread's slices: with Workers (the fast build's worlds read
  // back), tour 18's lanes would go to another core (lanes-workers.test.mjs).
  await app.context.addInitScript(() => {
    window.failoverLabLaneWorkers = false;
  });
});

after(async () => {
  await app?.close();
});

async function open(page, query, hash = '') {
  await page.goto(`${app.baseUrl}/${query}${hash}`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
}

/** Fork lane A of tour 18 at 40 s (crash broker 21), the lead paused there; resolves once fork() has. */
async function forkAt(page) {
  await open(page, `?scenario=${BIG}&paused=1`);
  await page.waitForFunction(() => window.failoverLab.seeking === null, null, { timeout: 60000 });
  await page.evaluate(() => failoverLab.seek(40000));
  await page.evaluate(() => failoverLab.fork(40000, { crash: 21 }));
}

test('a fork lane on 3,000 partitions catches up in slices: progress shown, figures greyed out, the page answers; the same run as in one go', async () => {
  app.errors.length = 0;
  const page = app.page;
  await forkAt(page);
  // Right after fork(): lane B is on its way, said by the API and by its panel.
  const s = await page.evaluate(() => failoverLab.seeking);
  assert.ok(s && Array.isArray(s.lanes), `seeking names the lanes on their way: ${JSON.stringify(s)}`);
  assert.equal(s.lanes[0].lane, 'B');
  assert.equal(s.lanes[0].target, 40000);
  assert.equal(s.target, 40000, "lane A's time");
  assert.equal(s.progress, 1, 'lane A has landed');
  await page.waitForFunction(() => failoverLab.seeking?.lanes?.[0]?.at > 0, null, { timeout: 60000 });
  const ui = await page.evaluate(() => {
    const lane = document.querySelector('.lane[data-lane="B"]');
    const busy = lane.querySelector('.lane-busy');
    const bar = busy.querySelector('[role="progressbar"]');
    return {
      text: busy.textContent,
      hidden: busy.hidden,
      busy: lane.getAttribute('aria-busy'),
      behind: lane.classList.contains('behind'),
      now: bar.getAttribute('aria-valuenow'),
      valueText: bar.getAttribute('aria-valuetext'),
      wait: document.querySelector('.cmp-wait').textContent,
      stale: document.querySelector('.cmp-delta').classList.contains('stale'),
      filter: getComputedStyle(lane.querySelector('.lane-sum')).filter,
      seeking: failoverLab.seeking,
    };
  });
  assert.equal(ui.hidden, false);
  assert.match(ui.text, /^Lane B: computing … \d+\.\d s of 40\.0 s$/);
  assert.equal(ui.busy, 'true');
  assert.ok(ui.behind);
  assert.match(ui.valueText, /^\d+\.\d s of 40\.0 s$/);
  assert.ok(Number(ui.now) >= 0 && Number(ui.now) < 100, ui.now);
  assert.match(ui.wait, /Lane B computing/);
  assert.ok(ui.stale, 'the table is marked as from before');
  assert.equal(ui.filter, 'grayscale(1)', "lane B's figures are greyed out (grey keeps their contrast)");
  assert.ok(ui.seeking?.lanes?.length, 'still on its way');
  // The page answers a click meanwhile (the help opens): the click's
  // handler runs between two slices, the lane still on its way.
  const box = await page.evaluate(() => {
    window.__atClick = null;
    const b = document.getElementById('help-btn');
    b.addEventListener('click', () => (window.__atClick = failoverLab.seeking), { once: true });
    const r = b.getBoundingClientRect();
    return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
  });
  await page.mouse.click(box.x, box.y);
  await page.waitForFunction(() => window.__atClick !== null, null, { timeout: 60000 });
  const answered = await page.evaluate(() => ({ help: !document.getElementById('help').hidden, seeking: window.__atClick }));
  assert.ok(answered.help, 'the click was answered');
  assert.ok(answered.seeking?.lanes?.length, 'answered before the lane landed');
  await page.mouse.click(box.x, box.y);
  // It lands: the panel shows the lane as current.
  await page.waitForFunction(() => window.failoverLab.seeking === null, null, { timeout: 120000 });
  const landed = await page.evaluate(() => {
    const lane = document.querySelector('.lane[data-lane="B"]');
    return {
      hidden: lane.querySelector('.lane-busy').hidden,
      busy: lane.getAttribute('aria-busy'),
      behind: lane.classList.contains('behind'),
      wait: document.querySelector('.cmp-wait').hidden,
      stale: document.querySelector('.cmp-delta').classList.contains('stale'),
      hashes: failoverLab.lanes().map((l) => [l.report.trace_hash, l.report.end_ms]),
    };
  });
  assert.deepEqual([landed.hidden, landed.busy, landed.behind, landed.wait, landed.stale], [true, null, false, true, false]);
  assert.equal(landed.hashes[1][1], 40000);
  assert.notEqual(landed.hashes[0][0], landed.hashes[1][0], 'the fork parts from lane A');
  // In one go: the same fork, and lanes() asked before any frame (it lands the lane first).
  await open(page, `?scenario=${BIG}&paused=1`);
  await page.waitForFunction(() => window.failoverLab.seeking === null, null, { timeout: 60000 });
  const once = await page.evaluate(async () => {
    failoverLab.seek(40000);
    await failoverLab.fork(40000, { crash: 21 });
    const before = failoverLab.seeking?.lanes?.length ?? 0;
    const lanes = failoverLab.lanes().map((l) => [l.report.trace_hash, l.report.end_ms]);
    return { before, lanes, after: failoverLab.seeking };
  });
  assert.equal(once.before, 1, 'lane B was on its way');
  assert.equal(once.after, null, 'lanes() landed it');
  assert.deepEqual(once.lanes, landed.hashes, 'slices and one go: the same runs');
  assert.deepEqual(app.errors, []);
});

test('a newer seek takes over a lane on its way: it goes to the new time from where it got, never to the old one first', async () => {
  app.errors.length = 0;
  const page = app.page;
  await forkAt(page);
  await page.waitForFunction(() => failoverLab.seeking?.lanes?.[0]?.at > 0, null, { timeout: 60000 });
  const r = await page.evaluate(async () => {
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    const was = failoverLab.seeking.lanes[0];
    failoverLab.seek(4000);
    const now = failoverLab.seeking?.lanes?.[0] ?? null;
    // Every frame until it lands: the lane's time never passes the new target.
    let most = 0;
    let frames = 0;
    while (failoverLab.seeking) {
      most = Math.max(most, failoverLab.seeking.lanes?.[0]?.at ?? 0);
      await frame();
      frames++;
    }
    return { was, now, most, frames, lanes: failoverLab.lanes().map((l) => [l.report.trace_hash, l.report.end_ms]) };
  });
  assert.ok(r.was.at < 40000, `caught mid-way: ${JSON.stringify(r.was)}`);
  assert.equal(r.now?.target, 4000, `retargeted at once: ${JSON.stringify(r.now)}`);
  assert.ok(r.most <= 4000, `never past the new target: ${r.most}`);
  assert.deepEqual(r.lanes.map((l) => l[1]), [4000, 4000]);
  // Before the fork's time a fork lane is its parent's run.
  assert.equal(r.lanes[1][0], r.lanes[0][0]);
  // Forward again, past where it was going: the same run as asked at once.
  const fwd = await page.evaluate(async () => {
    failoverLab.seek(25000);
    const t = failoverLab.seeking?.lanes?.[0]?.target ?? null;
    while (failoverLab.seeking) await new Promise((res) => requestAnimationFrame(res));
    return { t, lanes: failoverLab.lanes().map((l) => [l.report.trace_hash, l.report.end_ms]) };
  });
  assert.equal(fwd.t, 25000);
  assert.deepEqual(fwd.lanes.map((l) => l[1]), [25000, 25000]);
  assert.deepEqual(app.errors, []);
});

test('a shared link with compare lanes on tour 18 at 30 s: the lanes catch up in slices, and each equals the CLI run with its --set', async () => {
  app.errors.length = 0;
  const page = app.page;
  const t = 30000;
  await open(page, `?scenario=${BIG}`, `#scenario=${BIG}&t=${t}&compare=${encodeURIComponent('acks=1|acks=all')}`);
  // Lane A lands first, then lane B is on its way (shown), then every lane lands.
  const mid = await (await page.waitForFunction(() => {
    const s = failoverLab.seeking;
    return s?.lanes?.[0]?.lane === 'B' && { s, text: document.querySelector('.lane[data-lane="B"] .lane-busy').textContent };
  }, null, { timeout: 120000 })).jsonValue();
  assert.equal(mid.s.lanes[0].target, t);
  assert.match(mid.text, /^Lane B: computing … \d+\.\d s of 30\.0 s$/);
  await page.waitForFunction(() => window.failoverLab.seeking === null, null, { timeout: 120000 });
  const lanes = await page.evaluate(() => failoverLab.lanes().map((l) => ({ settings: l.settings, hash: l.report.trace_hash, end: l.report.end_ms })));
  assert.deepEqual(lanes.map((l) => l.end), [t, t]);
  for (const l of lanes) {
    const native = JSON.parse(cli(['run', `scenarios/${BIG}`, '--set', l.settings, '--until', String(t), '--format', 'json']));
    assert.equal(l.hash, native.trace_hash, `lane ${l.settings}: the CLI's run`);
  }
  assert.deepEqual(app.errors, []);
});

test("a tour's stop waits for every compare lane: the card stays busy, its bar covering the lanes, and the stop shows once they have landed", async () => {
  app.errors.length = 0;
  const page = app.page;
  await open(page, `?scenario=${BIG}`, `#scenario=${BIG}&t=0&compare=${encodeURIComponent('acks=1|acks=all')}`);
  await page.waitForFunction(() => window.failoverLab.seeking === null && failoverLab.lanes().length === 2 && document.querySelector('#tour [data-tour="next"]'), null, { timeout: 60000 });
  const r = await page.evaluate(async () => {
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    const seen = { lanesWhileBusy: 0, bar: 0, atStop: undefined };
    document.addEventListener('failoverlab:tourstop', () => (seen.atStop = failoverLab.seeking), { once: true });
    document.querySelector('#tour [data-tour="next"]').click();
    const card = document.getElementById('tour');
    while (card.getAttribute('aria-busy') === 'true' || seen.atStop === undefined) {
      const s = failoverLab.seeking;
      if (s?.lanes?.length && card.getAttribute('aria-busy') === 'true') {
        seen.lanesWhileBusy++;
        seen.bar = Math.max(seen.bar, parseFloat(card.querySelector('.tour-busy .tl-bar > span')?.style.width) || 0);
      }
      await frame();
    }
    return { ...seen, index: failoverLab.tour().index, ends: failoverLab.lanes().map((l) => l.report.end_ms) };
  });
  assert.ok(r.lanesWhileBusy > 0, 'the card was busy while the lanes computed');
  assert.ok(r.bar >= 50, `the bar's second half is the lanes': ${r.bar}`);
  assert.equal(r.atStop, null, 'the stop showed once every lane had landed');
  assert.equal(r.index, 0);
  assert.deepEqual(r.ends, [9000, 9000]);
  assert.deepEqual(app.errors, []);
});

test('the element: a fork lane catches up in slices (el.seeking.lanes, the lane says how far), el.lanes() lands it, the same run as in one go', async () => {
  app.errors.length = 0;
  const page = app.page;
  await page.goto(`${app.baseUrl}/embed.html?scenario=${BIG}&autoplay=0`);
  await page.waitForSelector('failover-lab[data-ready="true"]', { timeout: 60000 });
  const r = await page.evaluate(async () => {
    const el = document.querySelector('failover-lab');
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    el.seek(40000);
    await el.fork(40000, { crash: 21 });
    const first = el.seeking;
    await frame();
    await frame();
    const text = el.shadowRoot.querySelector('.lane[data-lane="B"] .lane-busy')?.textContent ?? null;
    while (el.seeking) await frame();
    const sliced = el.lanes().map((l) => l.report.trace_hash);
    // Again, lanes() asked at once: one go.
    el.compare(null);
    el.seek(40000);
    await el.fork(40000, { crash: 21 });
    const before = el.seeking?.lanes?.length ?? 0;
    const once = el.lanes().map((l) => l.report.trace_hash);
    return { first, text, sliced, before, once, after: el.seeking };
  });
  assert.equal(r.first?.lanes?.[0]?.lane, 'B', JSON.stringify(r.first));
  assert.match(r.text ?? '', /^Lane B: computing … \d+\.\d s of 40\.0 s$/);
  assert.equal(r.before, 1);
  assert.equal(r.after, null);
  assert.deepEqual(r.once, r.sliced);
  assert.notEqual(r.sliced[0], r.sliced[1]);
  assert.deepEqual(app.errors, []);
});

test('entering compare mode at 30 s of tour 18: lane A rebuilt with its settings goes back to 30 s in slices, the lanes follow, each the CLI run with its --set', async () => {
  app.errors.length = 0;
  const page = app.page;
  await open(page, `?scenario=${BIG}&paused=1`);
  await page.waitForFunction(() => window.failoverLab.seeking === null, null, { timeout: 60000 });
  const r = await page.evaluate(async () => {
    failoverLab.seek(30000);
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    await failoverLab.compare('acks=1|acks=all');
    const seen = { lead: null, follow: null, frames: 0 };
    while (failoverLab.seeking) {
      const s = failoverLab.seeking;
      if (s.progress < 1) seen.lead ??= s;
      if (s.lanes?.length) seen.follow ??= s;
      await frame();
      seen.frames++;
    }
    return { ...seen, lanes: failoverLab.lanes().map((l) => ({ settings: l.settings, hash: l.report.trace_hash, end: l.report.end_ms })) };
  });
  assert.equal(r.lead?.target, 30000, `lane A went back to 30 s over the frames: ${JSON.stringify(r.lead)}`);
  assert.equal(r.follow?.lanes?.[0]?.target, 30000, `then lane B: ${JSON.stringify(r.follow)}`);
  assert.deepEqual(r.lanes.map((l) => l.end), [30000, 30000]);
  for (const l of r.lanes) {
    const native = JSON.parse(cli(['run', `scenarios/${BIG}`, '--set', l.settings, '--until', '30000', '--format', 'json']));
    assert.equal(l.hash, native.trace_hash, `lane ${l.settings}: the CLI's run`);
  }
  // Leaving compare mode: lane A rebuilt as the scenario is, back at 30 s.
  const left = await page.evaluate(async () => {
    await failoverLab.compare(null);
    while (failoverLab.seeking) await new Promise((res) => requestAnimationFrame(res));
    return { now: failoverLab.now(), hash: failoverLab.report().trace_hash };
  });
  assert.equal(left.now, 30000);
  const plain = JSON.parse(cli(['run', `scenarios/${BIG}`, '--until', '30000', '--format', 'json']));
  assert.equal(left.hash, plain.trace_hash);
  assert.deepEqual(app.errors, []);
});

test('an action and leaving compare mode take over a lane on its way', async () => {
  app.errors.length = 0;
  const page = app.page;
  await forkAt(page);
  await page.waitForFunction(() => failoverLab.seeking?.lanes?.[0]?.at > 0, null, { timeout: 60000 });
  const r = await page.evaluate(async () => {
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    // An action at lane A's time, the fork's time: the fork shares that past, so it is derived again.
    failoverLab.crash(30);
    const after = failoverLab.seeking?.lanes?.[0] ?? null;
    while (failoverLab.seeking) await frame();
    const sliced = failoverLab.lanes().map((l) => l.report.trace_hash);
    // Leaving compare mode while a lane is on its way (derived again after another action): nothing is left computing.
    failoverLab.crash(31);
    const mid = failoverLab.seeking?.lanes?.length ?? 0;
    await failoverLab.compare(null);
    return { after, sliced, mid, left: failoverLab.seeking, lanes: failoverLab.lanes().length };
  });
  assert.equal(r.after?.target, 40000, JSON.stringify(r.after));
  assert.ok(r.after.at < 40000, 'rebuilt: on its way again');
  assert.equal(r.mid, 1, 'lane B was on its way again');
  assert.equal(r.left, null);
  assert.equal(r.lanes, 0);
  // The same, with lanes() asked at once (one go): the same runs.
  await forkAt(page);
  const once = await page.evaluate(() => {
    failoverLab.crash(30);
    return failoverLab.lanes().map((l) => l.report.trace_hash);
  });
  assert.deepEqual(r.sliced, once);
  assert.deepEqual(app.errors, []);
});
