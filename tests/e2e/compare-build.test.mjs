// Entering compare mode never builds every lane's world in one task (issue
// 63): lane A's world is rebuilt with its settings first (a big world's over
// several tasks before compare mode begins: Compare.prebuild), the other lanes'
// worlds one per frame after it (compare.js step; a big world's built in
// parts between the frames first, Compare.buildInParts), each lane meanwhile on
// its way from 0 (`failoverLab.seeking.lanes`, its panel's "computing" bar);
// whatever reads a lane (`lanes()`) builds and lands every lane first; and a
// lane built in a frame of its own is the run built in one go (trace hash).
// Needs `make build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, cli, WWW } from './helpers.mjs';

const SMALL = 'tour-1-leader-dies.json';
const BIG = 'tour-18-rack-loss.json';
const FOUR = 'acks=1|acks=all|min.insync.replicas=2|unclean.leader.election.enable=true';
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

async function open(page, query) {
  await page.goto(`${app.baseUrl}/${query}`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
  await page.waitForFunction(() => window.failoverLab.seeking === null, null, { timeout: 60000 });
}

test('four lanes at 0: lanes B, C and D are built one per frame, each shown computing until its frame, the same runs as built at once', async () => {
  app.errors.length = 0;
  const page = app.page;
  await open(page, `?scenario=${SMALL}`);
  const r = await page.evaluate(async (text) => {
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    await failoverLab.compare(text);
    // Before any frame: only lane A's world is built; the others are on their way from 0.
    const first = failoverLab.seeking;
    const busy = [...document.querySelectorAll('.lane .lane-busy')].map((b) => (b.hidden ? null : b.textContent));
    // Then every frame: how many lanes are still on their way.
    const counts = [];
    while (failoverLab.seeking) {
      await frame();
      counts.push(failoverLab.seeking?.lanes?.length ?? 0);
    }
    return { first, busy, counts, lanes: failoverLab.lanes().map((l) => [l.settings, l.report.trace_hash, l.report.end_ms]) };
  }, FOUR);
  assert.deepEqual(r.first, {
    target: 0,
    progress: 1,
    lanes: ['B', 'C', 'D'].map((lane) => ({ lane, target: 0, at: 0, progress: 1 })),
  });
  assert.deepEqual(r.busy, [null, 'Lane B: computing … 0.0 s of 0.0 s', 'Lane C: computing … 0.0 s of 0.0 s', 'Lane D: computing … 0.0 s of 0.0 s']);
  // A lane at 0 lands as soon as it is built: one fewer per frame, never two.
  assert.deepEqual(r.counts, [2, 1, 0]);
  assert.deepEqual(r.lanes.map((l) => l[2]), [0, 0, 0, 0]);
  // At once: lanes() asked before any frame builds and lands every lane.
  await open(page, `?scenario=${SMALL}`);
  const once = await page.evaluate(async (text) => {
    await failoverLab.compare(text);
    const before = failoverLab.seeking?.lanes?.length ?? 0;
    const lanes = failoverLab.lanes().map((l) => [l.settings, l.report.trace_hash, l.report.end_ms]);
    // Landed by lanes() as they were built (at 0): drawn so in the page's next frames.
    for (let i = 0; i < 2; i++) await new Promise((res) => requestAnimationFrame(res));
    const busy = [...document.querySelectorAll('.lane .lane-busy')].filter((b) => !b.hidden).map((b) => b.textContent);
    return { before, lanes, after: failoverLab.seeking, busy };
  }, FOUR);
  assert.equal(once.before, 3);
  assert.equal(once.after, null);
  assert.deepEqual(once.busy, [], 'no lane still drawn as computing');
  assert.deepEqual(once.lanes, r.lanes, 'built a frame each or at once: the same runs');
  assert.deepEqual(app.errors, []);
});

test('three lanes at 30 s of tour 18: lane A goes back first, then the other lanes are built a frame apart and catch up, the page answering meanwhile; each is the CLI run with its --set', async () => {
  app.errors.length = 0;
  const page = app.page;
  await open(page, `?scenario=${BIG}&paused=1`);
  await page.evaluate(() => failoverLab.seek(30000));
  const r = await page.evaluate(async () => {
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    // The fast build's constructors, watched: every lane's world must be
    // built in parts (lane A's before compare mode begins, Compare.prebuild;
    // lanes B and C between the frames, Compare.buildInParts), none at once. A task is counted at a part whose task had
    // none before (a timeout queued at a task's first part runs before the
    // next task the parts wait for).
    const W = (await import(new URL('dist/fast-wasm.js', location.href).href)).WasmLab;
    const own = { withSettings: W.withSettings, unstarted: W.unstarted, startParts: W.prototype.startParts };
    const made = { withSettings: 0, unstarted: 0, partTasks: 0 };
    let inTask = false;
    let lastPartsTask = false; // the task of the part that finished the start, until it ends
    W.withSettings = (...a) => (made.withSettings++, own.withSettings.apply(W, a));
    W.unstarted = (...a) => (made.unstarted++, own.unstarted.apply(W, a));
    W.prototype.startParts = function (...a) {
      if (!inTask) {
        made.partTasks++;
        inTask = true;
        setTimeout(() => (inTask = false), 0);
      }
      const started = own.startParts.apply(this, a);
      if (started) {
        lastPartsTask = true;
        setTimeout(() => (lastPartsTask = false), 0);
      }
      return started;
    };
    // Worlds freed (the lab's checkpoints and its world): how many before
    // compare mode began, and how many in its task. (A checkpoint's class,
    // which the module does not export, from a small world's.)
    const small = new W(await (await fetch('scenarios/tour-1-leader-dies.json')).text());
    const probe = small.checkpoint();
    const CP = Object.getPrototypeOf(probe);
    probe.free();
    small.free();
    const ownFree = { lab: W.prototype.free, cp: CP.free };
    let freeTask = null; // the frees of the task under way, until it ends
    made.freedBefore = 0;
    const counted = (own) => function () {
      if (!freeTask) {
        freeTask = { n: 0 };
        setTimeout(() => (freeTask = null), 0);
      }
      freeTask.n++;
      made.freedBefore++;
      return own.call(this);
    };
    W.prototype.free = counted(ownFree.lab);
    CP.free = counted(ownFree.cp);
    await failoverLab.compare('acks=1|acks=all|min.insync.replicas=2');
    // compare() resolves in the task compare mode began in (Compare.set).
    made.setInPartsTask = lastPartsTask;
    made.freedInSet = freeTask?.n ?? 0;
    made.freedBefore -= made.freedInSet;
    W.prototype.free = ownFree.lab;
    CP.free = ownFree.cp;
    const first = failoverLab.seeking;
    // Every frame: lane A's progress and each lane's place, until all have
    // landed; and lane C's panel once the lanes are drawn (lane A landed).
    const seen = [];
    let text = null;
    while (failoverLab.seeking) {
      await frame();
      const s = failoverLab.seeking;
      if (s) seen.push({ a: s.progress, lanes: (s.lanes || []).map((l) => l.at) });
      const busy = document.querySelector('.lane[data-lane="C"] .lane-busy');
      if (busy && !busy.hidden) text ??= busy.textContent;
    }
    Object.assign(W, { withSettings: own.withSettings, unstarted: own.unstarted });
    W.prototype.startParts = own.startParts;
    return { first, text, seen, made };
  });
  // Every lane (3,000 partitions) built in parts: lane A's in tasks before
  // compare mode's own (its 30 ms a task holds them all here; tour 19's
  // take a dozen), lanes B and C in tasks of their own; none at once.
  assert.equal(r.made.unstarted, 3, JSON.stringify(r.made));
  assert.ok(r.made.partTasks >= 3, JSON.stringify(r.made));
  assert.equal(r.made.setInPartsTask, false, `compare mode began in a task of its own: ${JSON.stringify(r.made)}`);
  assert.equal(r.made.withSettings, 0, JSON.stringify(r.made));
  // The lab's checkpoints but its first were freed in tasks before compare
  // mode's; its task frees the old world, that checkpoint and no more.
  assert.ok(r.made.freedBefore >= 3, JSON.stringify(r.made));
  assert.ok(r.made.freedInSet <= 2, JSON.stringify(r.made));
  // Lane A goes back to 30 s first; the lanes, not built yet, wait for it (not said on their way).
  assert.equal(r.first.target, 30000);
  assert.ok(r.first.progress < 1);
  assert.equal(r.first.lanes, undefined);
  const leading = r.seen.filter((s) => s.a < 1);
  assert.ok(leading.length > 0, 'lane A went back to 30 s over several frames');
  assert.ok(leading.every((s) => s.lanes.length === 0), JSON.stringify(leading.at(-1)));
  // Then both lanes, from 0, built a frame apart (lane C still at 0 while lane B makes its way).
  const following = r.seen.slice(leading.length).filter((s) => s.lanes.length);
  assert.deepEqual(following[0]?.lanes, [0, 0], JSON.stringify(following[0]));
  assert.ok(following.length > 2, `the lanes over frames of their own: ${following.length} frames`);
  assert.match(r.text, /^Lane C: computing … 0\.0 s of 30\.0 s$/);
  const lanes = await page.evaluate(() => failoverLab.lanes().map((l) => ({ settings: l.settings, hash: l.report.trace_hash, end: l.report.end_ms })));
  assert.deepEqual(lanes.map((l) => l.end), [30000, 30000, 30000]);
  for (const l of lanes) {
    const native = JSON.parse(cli(['run', `scenarios/${BIG}`, '--set', l.settings, '--until', '30000', '--format', 'json']));
    assert.equal(l.hash, native.trace_hash, `lane ${l.settings}: the CLI's run`);
  }
  assert.deepEqual(app.errors, []);
});

test('the page answers a click while the lanes are being built and catch up', async () => {
  app.errors.length = 0;
  const page = app.page;
  await open(page, `?scenario=${BIG}&paused=1`);
  await page.evaluate(() => failoverLab.seek(30000));
  await page.evaluate(() => failoverLab.compare('acks=1|acks=all|min.insync.replicas=2'));
  await page.waitForFunction(() => failoverLab.seeking?.lanes?.length === 2, null, { timeout: 60000 });
  await page.evaluate(() => {
    window.__atClick = null;
    document.getElementById('help-btn').addEventListener('click', () => (window.__atClick = failoverLab.seeking), { once: true });
  });
  const box = await page.evaluate(() => {
    const r = document.getElementById('help-btn').getBoundingClientRect();
    return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
  });
  await page.mouse.click(box.x, box.y);
  await page.waitForFunction(() => window.__atClick !== null, null, { timeout: 60000 });
  const at = await page.evaluate(() => window.__atClick);
  assert.ok(at?.lanes?.length, `answered before the lanes landed: ${JSON.stringify(at)}`);
  await page.waitForFunction(() => window.failoverLab.seeking === null, null, { timeout: 120000 });
  assert.deepEqual(app.errors, []);
});
