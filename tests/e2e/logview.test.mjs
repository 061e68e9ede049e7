// The log view (issue 25, point 3): a record is committed when it is below
// the *leader's* high watermark, so no row hatches it as uncommitted because
// that follower's own high watermark lags (it learns the leader's at its next
// fetch); each row's HW marker still shows its own. Needs `make build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, frames } from './helpers.mjs';

let app;

before(async () => {
  app = await startApp({ viewport: { width: 1400, height: 900 } });
});

after(async () => {
  await app?.close();
});

test("tour 7 stop 1: the ten committed records are drawn committed on every replica, by the leader's HW", async () => {
  const { page } = app;
  await page.goto(`${app.baseUrl}/?scenario=tour-7-acks1-loses-data.json&paused=1`);
  await page.waitForFunction(() => document.body?.dataset.ready === 'true', null, { timeout: 20000 });
  // Just after the followers copied the records, before their next fetch
  // brings them the leader's HW.
  const lagging = await page.evaluate(() => {
    for (let t = 2000; t < 4000; t += 1) {
      window.failoverLab.seek(t);
      const p = window.failoverLab.view().partitions.find((x) => x.topic === 'orders' && x.partition === 0);
      const lead = p.replica_views.find((r) => r.broker === p.leader);
      const behind = p.replica_views.filter((r) => r.broker !== p.leader && r.log_end_offset >= 10 && r.high_watermark < lead.high_watermark);
      if (lead.high_watermark === 10 && behind.length) return { t, hw: lead.high_watermark, behind: behind.map((r) => [r.broker, r.high_watermark]) };
    }
    return null;
  });
  assert.ok(lagging, 'a moment when a follower has the records but not yet the leader\'s HW');
  await frames(page);
  const hatched = await page.$$eval('.pcard[data-partition="orders-0"] .rrow .cell.rec.uncommitted', (cells) => cells.map((c) => Number(c.dataset.off)));
  assert.deepEqual(hatched.filter((o) => o < lagging.hw), [], `nothing below the leader's HW ${lagging.hw} is hatched (at ${lagging.t} ms, followers ${JSON.stringify(lagging.behind)})`);
  // The lagging follower's own HW marker is where its own HW is, left of the leader's.
  const [b] = lagging.behind[0];
  const x = await page.$eval(`.pcard[data-partition="orders-0"] .rrow[data-broker="${b}"] .marker.hw`, (m) => parseFloat(m.style.left));
  const xl = await page.$eval('.pcard[data-partition="orders-0"] .rrow.leader .marker.hw', (m) => parseFloat(m.style.left));
  assert.ok(x < xl, `broker ${b}'s HW marker (${x}px) is left of the leader's (${xl}px)`);
  assert.deepEqual(app.errors, []);
});

// Issue 25, point 4: a seek never replays an old animation. Tour 4's old
// leader truncates at 50.018 s; a seek to 70 s (its last stop) shows no
// "✂ truncated" note and no red row, a seek to the moment itself does.
test('a seek to long after a truncation shows no truncation; a seek to it does', async () => {
  const { page } = app;
  await page.goto(`${app.baseUrl}/?scenario=tour-4-unclean-election.json&paused=1`);
  await page.waitForFunction(() => document.body?.dataset.ready === 'true', null, { timeout: 20000 });
  const at = await page.evaluate(() => {
    window.failoverLab.runFor(70000);
    return window.failoverLab.trace(0).find((e) => e.event === 'truncated' && e.topic === 'orders')?.at_ms;
  });
  assert.ok(at > 40000 && at < 60000, `the old leader's truncation at ${at} ms`);
  const shown = () => page.evaluate(() => ({
    notes: document.querySelectorAll('.pcard[data-partition="orders-0"] .trunc-note').length,
    red: document.querySelectorAll('.pcard[data-partition="orders-0"] .rrow.truncating').length,
  }));
  await page.evaluate(() => window.failoverLab.seek(70000));
  assert.deepEqual(await shown(), { notes: 0, red: 0 }, 'at 70 s the truncation is 20 s old');
  await page.evaluate((t) => window.failoverLab.seek(t + 5), at);
  assert.deepEqual(await shown(), { notes: 1, red: 1 }, 'just after it, it shows');
  // A run on past it (no checkpoint restored, the same generation: what a
  // seek forward does when no checkpoint lies ahead, which depends on how
  // long earlier replays took) clears it as well.
  await page.evaluate(() => window.failoverLab.runFor(15000));
  assert.deepEqual(await shown(), { notes: 0, red: 0 }, 'a run on 15 s past it clears it');
  await page.evaluate((t) => window.failoverLab.seek(t + 5), at);
  assert.deepEqual(await shown(), { notes: 1, red: 1 }, 'back to it, it shows again');
  await page.evaluate(() => window.failoverLab.seek(69000));
  assert.deepEqual(await shown(), { notes: 0, red: 0 }, 'and a seek away clears it');
  assert.deepEqual(app.errors, []);
});
