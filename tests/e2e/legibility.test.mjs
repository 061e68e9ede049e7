// Issue 25's visual minor points: what a learner reads off the map and the
// log view must be legible and must not say something the run contradicts.
// Each test states the rule; needs `make build` (www/dist, www/scenarios).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, openPage } from './helpers.mjs';

let app;

before(async () => {
  app = await startApp({ viewport: { width: 1440, height: 900 } });
});

after(async () => {
  await app?.close();
});

async function open(query) {
  app.errors.length = 0;
  await openPage(app.page, `${app.baseUrl}/${query}`, { timeout: 20000 });
}

const overlap = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

test("tour 11's narrow broker cards: each leader's ★ is clear of its 'Broker N' title", async () => {
  await open('?scenario=tour-11-mass-failover.json&stop=2');
  const boxes = await app.page.$$eval('#map svg .broker', (gs) => gs.map((g) => ({
    id: g.dataset.broker,
    crown: g.querySelector('text.crown')?.textContent ?? '',
    c: g.querySelector('text.crown')?.getBBox(),
    t: g.querySelector('text.title')?.getBBox(),
  })));
  const crowned = boxes.filter((b) => b.crown === '★');
  assert.ok(crowned.length >= 5, `${crowned.length} leaders crowned`);
  for (const b of crowned) assert.equal(overlap(b.c, b.t), false, `broker ${b.id}: ★ ${JSON.stringify(b.c)} on title ${JSON.stringify(b.t)}`);
  assert.deepEqual(app.errors, []);
});

test('leader-epoch cache labels on the log rows are at least 10 px', async () => {
  await open('?scenario=tour-3-leader-epoch.json&stop=10');
  const sizes = await app.page.$$eval('.pcard .eb', (els) => els.map((e) => parseFloat(getComputedStyle(e).fontSize)));
  assert.ok(sizes.length >= 3, `${sizes.length} epoch labels`);
  assert.ok(sizes.every((s) => s >= 10), sizes.join(','));
});

test("the whole-log bar sits under the replica rows, not over the window's offset axis (it has another scale)", async () => {
  await open('?scenario=tour-3-leader-epoch.json&stop=10');
  const r = await app.page.$eval('.pcard', (card) => {
    const box = (el) => el.getBoundingClientRect();
    const rows = [...card.querySelectorAll('.rrow')];
    return { ruler: box(card.querySelector('.ruler')).bottom, firstRow: box(rows[0]).top, lastRow: box(rows.at(-1)).bottom, mm: box(card.querySelector('.minimap')).top };
  });
  assert.ok(r.ruler <= r.firstRow + 1, 'the offset axis is right above the rows');
  assert.ok(r.mm >= r.lastRow, `whole log at ${r.mm}, rows end at ${r.lastRow}`);
});

test('a consumer line to a crashed or cut-off follower says so: "(follower, crashed)", not just "(follower)"', async () => {
  await open('?scenario=follower-fetching.json&paused=1');
  const from = () => app.page.evaluate(async () => {
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    return document.querySelector('.client[data-consumer="c-b"] .from')?.textContent;
  });
  // Broker 2 crashes at 20 s; c-b still reads from it until its next fetch fails.
  await app.page.evaluate(() => failoverLab.seek(20000));
  assert.equal(await from(), ' ← broker 2 (follower, crashed)');
  await app.page.evaluate(() => failoverLab.seek(15000));
  assert.equal(await from(), ' ← broker 2 (follower)', 'while broker 2 runs, a plain follower');
  // Cut off instead: the fetch waits for its timeout, and the line says why.
  await app.page.evaluate(() => {
    failoverLab.isolate(2);
    failoverLab.runFor(100);
  });
  assert.equal(await from(), ' ← broker 2 (follower, isolated)');
  // A controlled shutdown: the broker is fenced at once (it asked to leave),
  // and the line says so until the consumer's next fetch goes elsewhere.
  await open('?scenario=follower-fetching.json&paused=1');
  await app.page.evaluate(() => {
    failoverLab.seek(15000);
    failoverLab.shutdown(2);
    failoverLab.runFor(2);
  });
  assert.equal(await from(), ' ← broker 2 (follower, fenced)');
  assert.deepEqual(app.errors, []);
});
