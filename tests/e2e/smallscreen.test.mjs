// Issue 25, point 6: on a phone (390×844) and a small laptop (800×600) the
// tour card stays in reach (sticky, at most 45% of the height) and the
// evidence a stop rings is scrolled into view below it, not under it.
// Needs `make build`.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, tourClick } from './helpers.mjs';

const apps = [];
after(async () => {
  for (const a of apps) await a.close();
});

for (const [width, height] of [[390, 844], [800, 600]]) {
  test(`${width}×${height}: at every stop of tour 1, Next is on screen and the ringed evidence is not under the card`, async () => {
    const app = await startApp({ viewport: { width, height } });
    apps.push(app);
    const { page } = app;
    await page.goto(`${app.baseUrl}/?scenario=tour-1-leader-dies.json`);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
    const n = await page.evaluate(() => failoverLab.tour().stops.length);
    for (let i = 1; i <= n; i++) {
      await tourClick(page.locator('#tour [data-tour="next"]'));
      await page.waitForFunction((k) => document.querySelector('#tour')?.dataset.stop === String(k), i);
      const r = await page.evaluate(() => {
        const card = document.getElementById('tour').getBoundingClientRect();
        const next = document.querySelector('#tour [data-tour="next"]').getBoundingClientRect();
        // How much of the best-placed ringed element shows below the card.
        const rings = [...document.querySelectorAll('.tour-hl')].map((e) => e.getBoundingClientRect()).filter((b) => b.height > 0 && b.width > 0);
        const seen = rings.length ? Math.max(...rings.map((b) => Math.min(b.bottom, innerHeight) - Math.max(b.top, card.bottom))) : null;
        return { card: card.height, next: [next.top, next.bottom], seen, vh: innerHeight };
      });
      assert.ok(r.card <= 0.45 * r.vh + 1, `stop ${i}: the card is ${r.card}px of ${r.vh}`);
      assert.ok(r.next[0] >= 0 && r.next[1] <= r.vh, `stop ${i}: Next at ${r.next}`);
      if (r.seen !== null) assert.ok(r.seen > 0, `stop ${i}: the ringed evidence is hidden under the card (${JSON.stringify(r)})`);
    }
    assert.deepEqual(app.errors, []);
  });
}

// Issue 25, point 7: a narrow broker card said "leads 1", which reads like
// "leads broker 1"; it counts the partitions it leads.
test('390×844: a narrow broker card counts what it leads ("leader ×1"), not "leads 1"', async () => {
  const app = await startApp({ viewport: { width: 390, height: 844 } });
  apps.push(app);
  const { page } = app;
  await page.goto(`${app.baseUrl}/?scenario=tour-8-min-insync-replicas.json&stop=3`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
  const text = await page.evaluate(() => [...document.querySelectorAll('[data-broker="1"]')].map((e) => e.textContent).join(' | '));
  assert.match(text, /leader ×1/, text);
  assert.doesNotMatch(text, /leads 1/, text);
  assert.deepEqual(app.errors, []);
});
