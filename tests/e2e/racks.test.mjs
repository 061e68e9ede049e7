// Racks and follower fetching (KIP-392) in the page: the brokers are drawn in
// their racks; a consumer in rack b reads orders-0 from the rack-b follower;
// when that follower's broker crashes, the consumer goes back to the leader
// with its position intact. Needs `make build` (www/pkg and www/scenarios).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, ROOT, WWW, cli } from './helpers.mjs';

let app;

before(async () => {
  for (const f of ['pkg/failover_lab.js', 'scenarios/follower-fetching.json', 'index.html']) {
    assert.ok(fs.existsSync(path.join(WWW, f)), `www/${f} is missing: run \`make build\` first`);
  }
  app = await startApp();
});

after(async () => {
  await app?.close();
});

async function open(query) {
  app.errors.length = 0;
  await app.page.goto(`${app.baseUrl}/${query}`);
  await app.page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
}

/** c-b's view of orders-0 in the report: position, reading_from, lag … */
async function consumerPartition(id) {
  return app.page.evaluate((id) => {
    const r = failoverLab.report();
    const c = r.consumers.find((x) => x.id === id);
    return { ...c.partitions.find((p) => p.partition === 'orders-0'), consumed: c.consumed, client_rack: c.client_rack };
  }, id);
}

test('a consumer in rack b reads from the rack-b follower, then from the leader once that follower crashes', async () => {
  await open('?scenario=follower-fetching.json&paused=1');
  const page = app.page;

  // The brokers carry their racks and the map groups them.
  const racks = await page.evaluate(() => failoverLab.view().brokers.map((b) => [b.id, b.rack]));
  assert.deepEqual(racks, [[1, 'a'], [2, 'b'], [3, 'c']]);
  assert.equal(await page.locator('svg g.rack').count(), 3);
  assert.equal(await page.locator('svg [data-broker="2"]').getAttribute('data-rack'), 'b');

  await page.evaluate(() => failoverLab.runFor(10000));
  const leader = await page.evaluate(() => failoverLab.report().partitions[0].leader);
  assert.equal(leader, 1);
  const onFollower = await consumerPartition('c-b');
  assert.equal(onFollower.client_rack, 'b');
  assert.equal(onFollower.reading_from, 2, 'c-b reads from broker 2, the follower in rack b');
  assert.equal(onFollower.reading_from_leader, false);
  assert.equal(onFollower.preferred_read_replica, 2);
  assert.ok(onFollower.position > 100, `c-b consumed: position ${onFollower.position}`);
  assert.equal(onFollower.position, onFollower.consumed, 'one partition, read from offset 0: nothing skipped or repeated');
  const rackless = await consumerPartition('c-any');
  assert.equal(rackless.reading_from, 1, 'a consumer without client.rack reads from the leader');

  // The clients panel says where c-b reads from.
  const pos = page.locator('.client[data-consumer="c-b"] .pos[data-partition="orders-0"]');
  assert.equal(await pos.getAttribute('data-reading-from'), '2');
  assert.match(await pos.textContent(), /broker 2 \(follower\)/);
  assert.match(await pos.textContent(), /lag \d+/);

  // Crash the follower's broker: c-b's fetch fails, it goes back to the leader.
  await page.evaluate(() => failoverLab.crash(2));
  await page.evaluate(() => failoverLab.runFor(15000));
  const back = await consumerPartition('c-b');
  assert.equal(back.reading_from, leader, 'c-b reads from the leader again');
  assert.equal(back.reading_from_leader, true);
  assert.equal(back.preferred_read_replica, null);
  assert.ok(back.position > onFollower.position, 'it kept consuming from its position');
  assert.equal(back.position, back.consumed, 'position intact: nothing skipped or read twice');
  assert.ok(back.lag < 20, `caught up with the leader (lag ${back.lag})`);
  const view = await page.evaluate(() => failoverLab.view().consumers.find((c) => c.id === 'c-b').partitions[0]);
  assert.equal(view.reading_from, leader);
  assert.equal(await pos.getAttribute('data-reading-from'), String(leader));
  assert.match(await page.locator('#narration').textContent(), /stops reading orders-0 from broker 2/);

  const report = await page.evaluate(() => failoverLab.report());
  assert.equal(report.acked_records_lost, 0);
  assert.deepEqual(report.invariant_violations, []);
  assert.deepEqual(app.errors, []);
});

test('follower fetching runs the same in the browser as natively (trace hash, consumer metrics)', async () => {
  const file = path.join(ROOT, 'scenarios', 'follower-fetching.json');
  const out = cli(['run', file, '--format', 'json']);
  const native = JSON.parse(out);
  await open('?scenario=follower-fetching.json&paused=1');
  const wasm = await app.page.evaluate((end) => {
    failoverLab.runFor(end);
    return failoverLab.report();
  }, native.end_ms);
  assert.equal(wasm.end_ms, native.end_ms);
  assert.equal(wasm.trace_hash, native.trace_hash, 'trace_hash differs between native and wasm');
  assert.deepEqual(wasm.consumers, native.consumers);
  assert.deepEqual(wasm.brokers, native.brokers);
  assert.deepEqual(app.errors, []);
});

// Issue 62: tour 18's 60-broker map drew its tiles with no racks, while tour
// 17's cards sit in rack frames. On tiles each rack is now a labelled band.
test("tour 18's tiles stand in three labelled rack bands of twenty, each tile inside its own rack's band", async () => {
  await open('?scenario=tour-18-rack-loss.json');
  const page = app.page;
  const bands = await page.evaluate(() =>
    [...document.querySelectorAll('svg.map.tiles g.rack')].map((g) => {
      const r = g.querySelector('rect').getBoundingClientRect();
      const inside = [...document.querySelectorAll('svg.map.tiles g.broker')].filter((t) => {
        const b = t.getBoundingClientRect();
        return b.left >= r.left && b.right <= r.right && b.top >= r.top && b.bottom <= r.bottom;
      });
      return { rack: g.dataset.rack, label: g.querySelector('text').textContent, tiles: inside.map((t) => t.dataset.rack) };
    }),
  );
  assert.deepEqual(bands.map((b) => [b.rack, b.label, b.tiles.length]), [['a', 'rack a', 20], ['b', 'rack b', 20], ['c', 'rack c', 20]]);
  for (const b of bands) assert.ok(b.tiles.every((r) => r === b.rack), `rack ${b.rack}: ${b.tiles}`);
  assert.deepEqual(app.errors, []);
});
