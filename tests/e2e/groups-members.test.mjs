// A consumer group with several members on the page (issue 64, "On the
// page"): scenarios/group-member-dies.json runs on the full build (the
// classic protocol is not in the first-load wasm), the Clients panel's group
// card draws the group as its coordinator holds it (state, generation, each
// member's consumer, member id, partitions, the leader), marks a member
// whose process is down but whose session has not ended yet, and the
// partition logs mark each member's position; the availability strip has
// a band of partitions not consumed. axe finds nothing on the card in
// either theme. Needs `make build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, ROOT } from './helpers.mjs';

const AXE = path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js');
const WCAG = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
const CARD = '.gcard[data-group="order-processor"]';
let app;

before(async () => {
  app = await startApp({ viewport: { width: 1400, height: 900 } });
});

after(async () => {
  await app?.close();
});

async function open(scheme = 'dark', scenario = 'group-member-dies.json') {
  const { page } = app;
  await page.emulateMedia({ colorScheme: scheme });
  app.errors.length = 0;
  const wasm = [];
  page.on('request', (r) => r.url().endsWith('.wasm') && wasm.push(new URL(r.url()).pathname));
  await page.goto(`${app.baseUrl}/?scenario=${scenario}&paused=1&theme=${scheme}`);
  await page.waitForFunction(() => document.body?.dataset.ready === 'true', null, { timeout: 20000 });
  return { page, wasm };
}

/** The card's members as drawn: [consumer, member id, its partitions (comma-separated), leader?, down?]. */
const drawn = (page) => page.locator(`${CARD} tbody tr[data-consumer]`).evaluateAll((trs) => trs.map((tr) => [
  tr.querySelector('th').textContent,
  tr.children[1].textContent,
  tr.children[2].dataset.partitions,
  !!tr.querySelector('.glead'),
  tr.classList.contains('gdown'),
]));

async function seek(page, t, generation) {
  await page.evaluate((ms) => window.failoverLab.seek(ms), t);
  await page.waitForSelector(`${CARD}[data-generation="${generation}"]`, { timeout: 20000 });
}

test('a member that dies: the group card marks it down with its partitions until its session ends, then shows the next generation', async () => {
  const { page, wasm } = await open();
  assert.equal(await page.evaluate(() => window.failoverLab.fast), true, 'a subscribing scenario runs on the full build');
  assert.ok(wasm.includes('/pkg-explorer/failover_lab_bg.wasm'), `the full build was fetched (${wasm})`);

  await seek(page, 30000, 1);
  const report = await page.evaluate(() => window.failoverLab.report());
  const cv = report.consumers.find((k) => k.id === 'c2').group.coordinator_view;
  assert.equal(cv.state, 'Stable');
  assert.equal(await page.locator(`${CARD}`).getAttribute('data-state'), 'Stable');
  assert.match(await page.locator(`${CARD} .gstate`).innerText(), /Stable · generation 1/);
  // Drawn as the coordinator holds it, member for member.
  assert.deepEqual(await drawn(page), cv.members.map(([id, tps, consumer]) => [consumer, id, tps.join(','), cv.leader === id, consumer === 'c1']));
  // Shown one topic name per row: "orders 2, 3".
  const c2 = cv.members.find((m) => m[2] === 'c2');
  assert.equal(await page.locator(`${CARD} tr[data-consumer="c2"] td`).nth(1).textContent(), `orders ${c2[1].map((tp) => tp.split('-').pop()).join(', ')}`);
  const c1 = cv.members.find((m) => m[2] === 'c1');
  assert.deepEqual(c1[1], ['orders-0', 'orders-1'], 'c1 still owns its partitions');
  const note = await page.locator(`${CARD} tr.gdown-note`).innerText();
  assert.match(note, /c1: process down, still owns orders-0, orders-1 until its session ends at \d+\.\d{3} s/);
  assert.ok(note.includes(`${(c1[3] / 1000).toFixed(3)} s`), 'the time is the coordinator\'s');
  assert.equal(await page.locator(`${CARD} tr.gdown-note`).count(), 1, 'only c1 is down');
  // Each live member's position is marked on the partitions it owns; c1's are not read.
  for (const k of report.consumers.filter((x) => x.running)) {
    for (const p of k.partitions) {
      const mark = page.locator(`.pcard[data-partition="${p.partition}"] .posrow .pm[data-consumer="${k.id}"]`);
      assert.equal(await mark.count(), 1, `${k.id} on ${p.partition}`);
      assert.match(await mark.textContent(), new RegExp(`${k.id} @ ${p.position}`));
    }
  }
  assert.equal(await page.locator('.pcard[data-partition="orders-0"] .posrow').isHidden(), true, 'nobody reads orders-0');
  assert.equal(await page.locator('.pcard[data-partition="orders-0"] .cmrow').isHidden(), false, 'its committed offset is still marked');

  // The availability strip's band: nobody read before the first rebalance
  // (all six), and c1's two since its crash, still open (the report's windows).
  const nc = report.availability.not_consumed;
  assert.deepEqual(nc.map((w) => [w.group, w.max_partitions, w.to_ms === null]), [['order-processor', 6, false], ['order-processor', 2, true]]);
  assert.equal(nc[1].from_ms, 12000);
  assert.equal(await page.locator('.avail-legend [data-cause="not_consumed"]').isVisible(), true, 'the band has its key');
  assert.equal(await page.locator('canvas.avail-strip').getAttribute('data-not-consumed'), '6');
  assert.match(await page.locator('canvas.avail-strip').getAttribute('aria-label'), /partitions of a consumer group that no member reads/);

  await seek(page, 60000, 2);
  const rows = await drawn(page);
  assert.deepEqual(rows.map((r) => r[0]), ['c2', 'c3']);
  const owned = rows.flatMap((r) => r[2].split(',')).sort();
  assert.deepEqual(owned, ['orders-0', 'orders-1', 'orders-2', 'orders-3', 'orders-4', 'orders-5'], 'c2 and c3 own all six partitions');
  assert.equal(rows.filter((r) => r[3]).length, 1, 'one leader');
  assert.equal(await page.locator(`${CARD} tr.gdown-note`).count(), 0, 'c1 is no longer a member');
  assert.match(await page.locator(`${CARD} .gstate`).innerText(), /generation 2/);
  assert.match(await page.locator('.client[data-consumer="c2"] .gmember').innerText(), /member c2-\d+ · generation 2 · stable/);
  assert.deepEqual(app.errors, []);
});

test('the consumer protocol (KIP-848): the card says group epoch and its session setting, and only c1\'s partitions go unconsumed', async () => {
  const { page } = await open('light', 'group-member-dies-consumer-protocol.json');
  assert.equal(await page.evaluate(() => window.failoverLab.fast), true);
  await page.evaluate(() => window.failoverLab.seek(30000));
  await page.waitForSelector(`${CARD}[data-protocol="consumer"] tr.gdown-note`, { timeout: 20000 });
  const report = await page.evaluate(() => window.failoverLab.report());
  const cv = report.consumers.find((k) => k.id === 'c2').group.coordinator_view;
  assert.match(await page.locator(`${CARD} .gstate`).innerText(), new RegExp(`group epoch ${cv.generation}`));
  assert.match(await page.locator(`${CARD} .chead`).innerText(), /consumer protocol \(KIP-848\)/);
  assert.deepEqual(await drawn(page), cv.members.map(([id, tps, consumer]) => [consumer, id, tps.join(','), false, consumer === 'c1']));
  assert.match(await page.locator(`${CARD} tr.gdown-note`).innerText(), /c1: process down, still owns .* \(group\.consumer\.session\.timeout\.ms\)/);
  assert.match(await page.locator('.client[data-consumer="c2"] .gmember').innerText(), /member epoch \d+/);
  const nc = report.availability.not_consumed.filter((w) => w.from_ms >= 12000);
  assert.deepEqual(nc.map((w) => [w.from_ms, w.max_partitions]), [[12000, 2]], 'no group-wide stop');
  assert.deepEqual(app.errors, []);
});

for (const theme of ['light', 'dark']) {
  test(`axe: the group card with a member down in the ${theme} theme has no violation`, async () => {
    assert.ok(fs.existsSync(AXE), 'node_modules/axe-core is missing');
    const { page } = await open(theme);
    await seek(page, 30000, 1);
    await page.waitForSelector(`${CARD} tr.gdown-note`);
    await page.addScriptTag({ path: AXE });
    const violations = await page.evaluate(async ({ tags, sel }) => {
      const res = await window.axe.run(document.querySelector('[data-panel="clients"]'), { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
      return { v: res.violations.map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)).join('; ')}`), card: !!document.querySelector(sel) };
    }, { tags: WCAG, sel: CARD });
    assert.equal(violations.card, true);
    assert.deepEqual(violations.v, []);
  });
}
