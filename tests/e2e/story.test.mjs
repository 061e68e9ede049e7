// Issue 16 ("tell a story people can follow and trust"): what the page shows
// at a tour stop agrees with the tour, and the page helps a learner find the
// evidence. Needs `make build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp } from './helpers.mjs';

let app;
before(async () => {
  app = await startApp({ viewport: { width: 1440, height: 900 } });
});
after(async () => {
  await app?.close();
});

const open = async (query) => {
  await app.page.goto(`${app.baseUrl}/${query}`);
  await app.page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
};
const nextStop = async (n) => {
  for (let i = 0; i < n; i++) await app.page.locator('#tour [data-tour="next"]').click();
};

test('point 4: the metrics panel shows the values of the stop\'s exact time, not of the last 500 ms sample', async () => {
  app.errors.length = 0;
  const page = app.page;
  await open('?scenario=tour-8-min-insync-replicas.json');
  await nextStop(3); // 13.001 s: the ISR shrinks to {1}, under min ISR
  assert.equal(await page.evaluate(() => failoverLab.now()), 13001);
  const gauges = ['UnderMinIsrPartitionCount', 'UnderReplicatedPartitions', 'AtMinIsrPartitionCount', 'OfflinePartitionsCount'];
  const shown = async () => Object.fromEntries(await Promise.all(gauges.map(async (g) => [g, await page.locator(`.metric[data-metric="${g}"] .mval`).textContent()])));
  const live = () => page.evaluate((gs) => Object.fromEntries(gs.map((g) => [g, String(failoverLab.view().metrics[g])])), gauges);
  assert.equal((await shown()).UnderMinIsrPartitionCount, '1', 'under min ISR at the stop, as the partition badge says');
  assert.deepEqual(await shown(), await live());
  // Any seek, to a time between two samples, too.
  await page.evaluate(() => failoverLab.seek(5003));
  await page.waitForFunction(() => failoverLab.now() === 5003);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  assert.deepEqual(await shown(), await live());
  assert.deepEqual(app.errors, []);
});
