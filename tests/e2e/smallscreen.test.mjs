// Issue 25, point 6: on a phone (390×844) and a small laptop (800×600) the
// tour card stays in reach (sticky, at most 45% of the height) and the
// evidence a stop rings is scrolled into view beside it, not under it.
// Needs `make build`.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, tourClick, openPage } from './helpers.mjs';

const frames = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => requestAnimationFrame(r)))));
const apps = [];
after(async () => {
  for (const a of apps) await a.close();
});

// Issue 62, item 6: not only tour 1. Tours 10 and 11 ring the availability
// panel and the recovery badge, which sit above the card in the page: scrolled
// into view the usual way they pushed the card (and Next) below the window,
// and at 390 px a long stop's text pushed Next out of the card's own scroll
// (7 stops failed before the fix). Tour 15 is a compare tour, 18 a 60-broker map.
const TOURS = ['tour-1-leader-dies.json', 'tour-10-how-long-unavailable.json', 'tour-11-mass-failover.json', 'tour-15-unclean-committed-offsets.json', 'tour-18-rack-loss.json'];
for (const [width, height] of [[390, 844], [800, 600]]) {
  test(`${width}×${height}: at every stop of tours 1, 10, 11, 15 and 18, Next is on screen and some ringed evidence shows, not under the card`, async () => {
    const app = await startApp({ viewport: { width, height } });
    apps.push(app);
    const { page } = app;
    for (const file of TOURS) {
      await openPage(page, `${app.baseUrl}/?scenario=${file}`, { timeout: 30000 });
      const n = await page.evaluate(() => failoverLab.tour().stops.length);
      for (let i = 1; i <= n; i++) {
        await tourClick(page.locator('#tour [data-tour="next"]'));
        await page.waitForFunction((k) => document.querySelector('#tour')?.dataset.stop === String(k), i, { timeout: 60000 });
        // The card places its evidence in the frame after the stop's arrival.
        await frames(page);
        const r = await page.evaluate(() => {
          const cardEl = document.getElementById('tour');
          const card = cardEl.getBoundingClientRect();
          const next = document.querySelector('#tour [data-tour="next"]').getBoundingClientRect();
          // How much of a box shows: inside the window and not under the card.
          const shown = (b) => {
            const top = Math.max(b.top, 0);
            const bottom = Math.min(b.bottom, innerHeight);
            if (bottom <= top) return 0;
            return bottom - top - Math.max(0, Math.min(bottom, card.bottom) - Math.max(top, card.top));
          };
          const rings = [...document.querySelectorAll('.tour-hl')]
            .filter((e) => !cardEl.contains(e))
            .map((e) => e.getBoundingClientRect())
            .filter((b) => b.height > 0 && b.width > 0)
            .map((b) => ({ height: Math.round(b.height), shown: Math.round(shown(b)) }));
          return { card: card.height, next: [next.top, next.bottom], rings, vh: innerHeight };
        });
        const at = `${file} stop ${i}`;
        assert.ok(r.card <= 0.45 * r.vh + 1, `${at}: the card is ${r.card}px of ${r.vh}`);
        assert.ok(r.next[0] >= 0 && r.next[1] <= r.vh, `${at}: Next at ${r.next}`);
        // Whole, or its first 40 px when it is taller (a panel).
        if (r.rings.length) assert.ok(r.rings.some((g) => g.shown >= Math.min(g.height, 40) - 1), `${at}: no ringed evidence shows (${JSON.stringify(r.rings)})`);
      }
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
  await openPage(page, `${app.baseUrl}/?scenario=tour-8-min-insync-replicas.json&stop=3`, { timeout: 20000 });
  const text = await page.evaluate(() => [...document.querySelectorAll('[data-broker="1"]')].map((e) => e.textContent).join(' | '));
  assert.match(text, /leader ×1/, text);
  assert.doesNotMatch(text, /leads 1/, text);
  assert.deepEqual(app.errors, []);
});
