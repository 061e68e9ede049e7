// The group card's assignment history (issue 64 item 4): one lane per member
// over the run, the partitions nobody read, a line at now, and the list of
// changes, all drawn from the view's `groups` (the report's `groups`, kept
// by the core's consumption.rs). The rows are checked against the run's own
// report, with tour 20's story spelled out (c1 dies at 12 s and owns
// orders-0 and orders-1 until its session ends; c2 takes them at 57.022 s in
// generation 2); a change activated from the keyboard seeks the lab there;
// axe finds nothing on the card with its history in either theme. Needs
// `make build` (the full build, www/pkg-explorer).
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

let opens = 0;
async function open(scenario, t, scheme = 'dark') {
  const { page } = app;
  await page.emulateMedia({ colorScheme: scheme });
  app.errors.length = 0;
  // A query of its own: a URL that differs from the last one only in its hash
  // would be a same-document navigation, racing the page's hash handling.
  await page.goto(`${app.baseUrl}/?theme=${scheme}&open=${++opens}#scenario=${scenario}&t=${t}`);
  await page.waitForFunction(() => document.body?.dataset.ready === 'true', null, { timeout: 20000 });
  await page.waitForFunction((ms) => window.failoverLab.now() === ms && !window.failoverLab.seeking, t, { timeout: 30000 });
  await page.waitForSelector(`${CARD} .ghist .grows button`, { timeout: 20000 });
  return page;
}

/** The history rows as drawn: [ms, consumer, member id, state, generation, text]. */
const rows = (page) => page.locator(`${CARD} .grows button`).evaluateAll((bs) => bs.map((b) => [
  Number(b.dataset.seek), b.dataset.consumer, b.dataset.member, b.dataset.state, Number(b.dataset.generation), b.innerText.replace(/\s+/g, ' ').trim(),
]));

test('tour 20: the history rows are the report\'s changes, c1 down from 12 s, c2 takes orders-0 and orders-1 at 57.022 s in generation 2', async () => {
  const page = await open('tour-20-member-dies.json', 60000);
  const report = await page.evaluate(() => window.failoverLab.report());
  const g = report.groups.find((x) => x.group === 'order-processor');
  assert.equal(g.protocol, 'classic');
  const drawn = await rows(page);
  assert.deepEqual(drawn.map((r) => r.slice(0, 5)).reverse(), g.changes.map((c) => [c.at_ms, ...g.members[c.member], c.state, c.generation]), 'one row per change of the report');

  // The story, in the run's own numbers.
  const c2 = drawn.find((r) => r[1] === 'c2' && r[0] === 57022);
  assert.ok(c2, 'c2 changes at 57.022 s');
  assert.equal(c2[4], 2, 'in generation 2');
  assert.match(c2[5], /^57\.022 s c2 gen 2 \(member c2-2\) takes orders 0, 1, 2$/);
  const change = g.changes.find((c) => c.at_ms === 57022 && g.members[c.member][0] === 'c2');
  assert.deepEqual(change.partitions, ['orders-0', 'orders-1', 'orders-2']);
  const down = drawn.find((r) => r[1] === 'c1' && r[3] === 'process_down');
  assert.equal(down[0], 12000, 'c1 is down from its crash');
  assert.match(down[5], /process down: still owns orders 0, 1, nobody reads them/);
  const left = g.changes.find((c) => g.members[c.member][0] === 'c1' && c.state === 'left');
  const expired = report.consumers.find((k) => k.id === 'c2'); // (its coordinator's view no longer has c1)
  assert.ok(!expired.group.coordinator_view.members.some((m) => m[2] === 'c1'));
  assert.deepEqual(left.gave_up, ['orders-0', 'orders-1'], 'its session ended: its partitions are free');
  assert.equal(left.at_ms, 54010, 'at the coordinator\'s expiry (session.timeout.ms after its last heartbeat)');

  // Lanes: c1's down segment spans its crash to its expiry, as wide as 42 of the 60 s.
  const seg = page.locator(`${CARD} .gtrack[data-member="c1-1"] .gseg[data-state="process_down"]`);
  assert.equal(await seg.count(), 1);
  assert.equal(await seg.getAttribute('data-seek'), '12000');
  assert.equal(await seg.getAttribute('data-partitions'), 'orders-0,orders-1');
  const track = await page.locator(`${CARD} .gtrack[data-member="c1-1"]`).boundingBox();
  const box = await seg.boundingBox();
  assert.ok(Math.abs(box.x - track.x - (12000 / 60000) * track.width) < 2, 'starts at 12 s');
  assert.ok(Math.abs(box.width - ((54010 - 12000) / 60000) * track.width) < 3, 'ends at 54.010 s');
  // The partitions nobody read: the report's windows, one mark each.
  assert.equal(await page.locator(`${CARD} .gunread i`).count(), g.unread.length);
  const o0 = g.unread.filter((u) => u.partition === 'orders-0').map((u) => [u.from_ms, u.to_ms]);
  assert.deepEqual(o0, [[0, 6011], [12000, 57022]], 'orders-0 had no reader before generation 1 and from the crash to c2\'s assignment');
  // Now is marked: the last change is the current one.
  assert.equal(await page.locator(`${CARD} .grows button[aria-current]`).getAttribute('data-seek'), String(g.changes.at(-1).at_ms));
  assert.deepEqual(app.errors, []);
});

test('a history row activated from the keyboard seeks the lab to its moment', async () => {
  const page = await open('tour-20-member-dies.json', 60000);
  const row = page.locator(`${CARD} .grows button[data-state="process_down"]`);
  await row.focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => window.failoverLab.now() === 12000 && !window.failoverLab.seeking, null, { timeout: 20000 });
  // Back at 12 s, the history is the run's up to then: c1's crash is the latest change.
  await page.waitForFunction((sel) => document.querySelector(`${sel} .grows button[aria-current]`)?.dataset.seek === '12000', CARD, { timeout: 20000 });
  const report = await page.evaluate(() => window.failoverLab.report());
  assert.deepEqual((await rows(page)).map((r) => r[0]).reverse(), report.groups[0].changes.map((c) => c.at_ms));
  // A click on a lane segment seeks too: c2's generation 1 reading.
  await page.locator(`${CARD} .gtrack[data-member="c2-2"] .gseg[data-state="reading"]`).click();
  await page.waitForFunction(() => window.failoverLab.now() === 6010, null, { timeout: 20000 });
  assert.deepEqual(app.errors, []);
});

test('the consumer protocol: rows say member epoch, c3 takes orders-3 at epoch 4 once c1\'s session ends', async () => {
  const page = await open('group-member-dies-consumer-protocol.json', 60000);
  const report = await page.evaluate(() => window.failoverLab.report());
  const g = report.groups[0];
  assert.equal(g.protocol, 'consumer');
  const drawn = await rows(page);
  assert.deepEqual(drawn.map((r) => [r[0], r[1], r[4]]).reverse(), g.changes.map((c) => [c.at_ms, g.members[c.member][0], c.generation]));
  const c3 = drawn.find((r) => r[1] === 'c3' && r[4] === 4);
  assert.match(c3[5], /c3 epoch 4 \(member c3-1\) takes orders 3 · reads orders 2, 3, 5/);
  const left = g.changes.find((c) => c.state === 'left');
  assert.ok(c3[0] > left.at_ms, 'after the coordinator freed c1\'s partitions');
  assert.match(await page.locator(`${CARD} .grows button[data-state="left"]`).textContent(), /c1 epoch 3 \(member c1-1\)leaves the group: orders 3, 4 free/);
  assert.deepEqual(app.errors, []);
});

for (const theme of ['light', 'dark']) {
  test(`axe: the group card with its history in the ${theme} theme has no violation`, async () => {
    assert.ok(fs.existsSync(AXE), 'node_modules/axe-core is missing');
    const page = await open('tour-21-group-protocols-failover.json', 80000, theme);
    await page.addScriptTag({ path: AXE });
    const v = await page.evaluate(async ({ tags, sel }) => {
      const res = await window.axe.run(document.querySelector(sel), { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
      return res.violations.map((x) => `${x.id}: ${x.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)).join('; ')}`);
    }, { tags: WCAG, sel: CARD });
    assert.deepEqual(v, []);
  });
}
