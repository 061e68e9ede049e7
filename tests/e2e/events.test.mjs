// DOM events for docs pages (issue 13; www/events.js, failover-lab.d.ts):
// the element dispatches ready, fault, leaderchange, recordslost and tourstop
// on itself; the page dispatches failoverlab:* on document. Details carry the
// simulation's own numbers (checked against report()); time travel does not
// replay old events. Needs `make build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, tourClick } from './helpers.mjs';

let app;

before(async () => {
  app = await startApp();
});

after(async () => {
  await app?.close();
});

const NAMES = ['ready', 'fault', 'leaderchange', 'recordslost', 'tourstop'];

test('the element: ready, then a crash (fault), the new leader (leaderchange, epoch + 1) and the acks=1 record lost (recordslost) as time runs; seeking back replays none of them', async () => {
  const page = app.page;
  app.errors.length = 0;
  // Listen from the very start (before the element's module runs).
  await page.addInitScript((names) => {
    window.seen = [];
    for (const n of names) {
      document.addEventListener(n, (e) => {
        if (e.target.localName === 'failover-lab') window.seen.push({ type: e.type, detail: e.detail });
      });
    }
  }, NAMES);
  await page.goto(`${app.baseUrl}/embed.html?scenario=acks1-loses-data.json`);
  await page.waitForFunction(() => document.querySelector('failover-lab')?.dataset.ready === 'true', null, { timeout: 20000 });
  const first = await page.evaluate(() => window.seen.filter((e) => e.type === 'ready'));
  assert.equal(first.length, 1);
  assert.equal(typeof first[0].detail.now_ms, 'number');

  const got = await page.evaluate(() => {
    const lab = document.querySelector('failover-lab');
    window.seen.length = 0;
    lab.runFor(3000); // start-up (the first leaders, if elected now, had none before)
    const startup = window.seen.filter((e) => e.type === 'leaderchange').map((e) => e.detail);
    window.seen.length = 0;
    lab.runFor(30000); // the crash at 4.1 s, the election, the loss
    return { startup, after: window.seen.slice(), report: lab.report() };
  });
  assert.ok(got.startup.every((d) => d.previous_leader === null), `start-up elections have no previous leader: ${JSON.stringify(got.startup)}`);
  const faults = got.after.filter((e) => e.type === 'fault').map((e) => e.detail);
  assert.deepEqual(faults.map((f) => [f.fault, f.broker, f.at_ms]), [['crash', 1, 4100]]);
  const changes = got.after.filter((e) => e.type === 'leaderchange').map((e) => e.detail);
  const p0 = got.report.partitions[0];
  const last = changes.at(-1);
  assert.equal(last.topic, 'orders');
  assert.equal(last.previous_leader, 1);
  assert.equal(last.leader, p0.leader);
  assert.equal(last.leader_epoch, p0.leader_epoch);
  assert.match(last.text, /leader/i);
  const lost = got.after.filter((e) => e.type === 'recordslost').map((e) => e.detail);
  assert.ok(lost.length >= 1, 'acks=1 lost a record');
  assert.equal(lost.reduce((a, d) => a + d.count, 0), got.report.acked_records_lost);
  assert.equal(lost.at(-1).total, got.report.acked_records_lost);

  // Back to 1 s and forward again: the rebuild replays silently, then the same
  // history fires again as it is run through.
  const again = await page.evaluate(() => {
    const lab = document.querySelector('failover-lab');
    window.seen.length = 0;
    lab.seek(1000);
    const onSeek = window.seen.length;
    lab.runFor(15000); // past the crash (4.1 s) and the election (13 s)
    return { onSeek, types: window.seen.map((e) => e.type) };
  });
  assert.equal(again.onSeek, 0, 'seeking back dispatches nothing');
  assert.ok(again.types.includes('fault') && again.types.includes('leaderchange'), again.types.join());
  assert.deepEqual(app.errors, []);
});

test('the element: a guided tour dispatches tourstop with the stop, from its Next button and from tourNext()', async () => {
  const page = await app.context.newPage();
  await page.goto(`${app.baseUrl}/embed.html?scenario=tour-1-leader-dies.json`);
  await page.waitForFunction(() => document.querySelector('failover-lab')?.dataset.ready === 'true', null, { timeout: 20000 });
  await page.evaluate(() => {
    window.stops = [];
    document.querySelector('failover-lab').addEventListener('tourstop', (e) => window.stops.push(e.detail));
  });
  await tourClick(page.locator('failover-lab [data-tour="next"]'));
  await page.evaluate(() => document.querySelector('failover-lab').tourNext());
  const stops = await page.evaluate(() => window.stops);
  const tour = await page.evaluate(() => document.querySelector('failover-lab').scenario().tour);
  assert.deepEqual(stops.map((s) => [s.index, s.count, s.at_ms, s.title]), [
    [0, tour.length, tour[0].at_ms, tour[0].title],
    [1, tour.length, tour[1].at_ms, tour[1].title],
  ]);
  await page.close();
});

test('the page: failoverlab:ready, :fault, :leaderchange, :recordslost on document, :tourstop when a tour stops while playing', async () => {
  const page = await app.context.newPage();
  await page.addInitScript(() => {
    window.seen = [];
    for (const n of ['ready', 'fault', 'leaderchange', 'recordslost', 'tourstop']) {
      document.addEventListener(`failoverlab:${n}`, (e) => window.seen.push({ type: e.type, detail: e.detail }));
    }
  });
  await page.goto(`${app.baseUrl}/?scenario=acks1-loses-data.json&paused=1`);
  await page.waitForFunction(() => document.body?.dataset.ready === 'true', null, { timeout: 20000 });
  await page.waitForFunction(() => window.seen.some((e) => e.type === 'failoverlab:ready'));
  const r = await page.evaluate(() => {
    window.failoverLab.runFor(30000);
    return { types: window.seen.map((e) => e.type), lost: window.failoverLab.report().acked_records_lost };
  });
  for (const t of ['failoverlab:fault', 'failoverlab:leaderchange', 'failoverlab:recordslost']) assert.ok(r.types.includes(t), `${t} in ${r.types}`);
  assert.ok(r.lost > 0);
  // A tour stop reached by the clock while playing.
  await page.goto(`${app.baseUrl}/?scenario=tour-1-leader-dies.json`);
  await page.waitForFunction(() => document.body?.dataset.ready === 'true', null, { timeout: 20000 });
  await page.evaluate(() => {
    window.failoverLab.setSpeed(100);
    window.failoverLab.play();
  });
  await page.waitForFunction(() => window.seen.some((e) => e.type === 'failoverlab:tourstop'), null, { timeout: 20000 });
  const stop = await page.evaluate(() => window.seen.find((e) => e.type === 'failoverlab:tourstop').detail);
  const tour = await page.evaluate(() => window.failoverLab.tour().stops);
  assert.equal(stop.index, 0);
  assert.equal(stop.at_ms, tour[0].at_ms);
  assert.equal(await page.evaluate(() => window.failoverLab.playing), false, 'the tour paused at its stop');
  await page.close();
});
