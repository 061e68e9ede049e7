// Consumer groups on the page (issue 24): the consumer's process buttons
// (crash, restart, commit now) drive the core through its public actions,
// each group's committed offset is marked on its partitions' logs, and the
// fate view shows the report's delivery counts and, for a picked record id,
// the core's story of that record. In both themes axe finds nothing with
// the fate view open. Needs `make build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, ROOT, openPage } from './helpers.mjs';

const AXE = path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js');
const WCAG = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
let app;

before(async () => {
  app = await startApp({ viewport: { width: 1400, height: 900 } });
});

after(async () => {
  await app?.close();
});

async function open(query, scheme = 'dark') {
  const { page } = app;
  await page.emulateMedia({ colorScheme: scheme });
  app.errors.length = 0;
  await openPage(page, `${app.baseUrl}/?${query}`, { timeout: 20000 });
  return page;
}

test('the consumer process buttons crash, restart and commit through the core, and keep keyboard focus', async () => {
  const page = await open('scenario=group-coordinator-dies.json&paused=1');
  await page.evaluate(() => window.failoverLab.runFor(6000));
  const c1 = () => page.evaluate(() => window.failoverLab.report().consumers.find((c) => c.id === 'c1'));
  const commitsBefore = (await c1()).group.commits;
  await page.locator('.cact[data-consumer="c1"] [data-action="commit"]').click();
  await page.evaluate(() => window.failoverLab.runFor(100));
  assert.equal((await c1()).group.commits, commitsBefore + 1, 'Commit now commits once');

  const crash = page.locator('.cact[data-consumer="c1"] [data-action="crash_client"]');
  await crash.focus();
  await page.keyboard.press('Enter');
  assert.equal((await c1()).running, false, 'Enter on Crash crashed the process');
  const restart = page.locator('.cact[data-consumer="c1"] [data-action="restart_client"]');
  assert.equal(await restart.count(), 1, 'the button now offers Restart');
  assert.equal(await page.locator('.cact[data-consumer="c1"] [data-action="commit"]').count(), 0, 'no commit while it is down');
  await restart.click();
  await page.evaluate(() => window.failoverLab.runFor(2000));
  const after = await c1();
  assert.equal(after.running, true);
  const actions = await page.evaluate(() => window.failoverLab.actions().map((a) => Object.keys(a.action)[0]));
  assert.deepEqual(actions, ['commit', 'crash_client', 'restart_client'], 'the actions are recorded like any other');
  // Frames rebuild the cards, not the buttons: focus stays put.
  await page.locator('.cact[data-consumer="c1"] [data-action="crash_client"]').focus();
  await page.evaluate(() => window.failoverLab.runFor(500));
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.action), 'crash_client');
  assert.deepEqual(app.errors, []);
});

test("each group's committed offset is marked on its partition's log, where the report puts it", async () => {
  const page = await open('scenario=group-coordinator-dies.json&paused=1');
  await page.evaluate(() => window.failoverLab.runFor(1000));
  assert.equal(await page.locator('.pcard[data-partition="orders-0"] .cmrow').isHidden(), true, 'no commit yet: no committed row');
  await page.evaluate(() => window.failoverLab.runFor(10000));
  const committed = await page.evaluate(() => window.failoverLab.report().consumers[0].group.committed);
  assert.equal(committed.length, 3);
  for (const [tp, offset] of committed) {
    const mark = page.locator(`.pcard[data-partition="${tp}"] .cm[data-group="order-processor"]`);
    assert.equal(await mark.count(), 1, `${tp} has its mark`);
    assert.equal((await mark.textContent()).replace('▾', '').trim(), `order-processor @ ${offset}`);
    // The label never runs past the log's right edge (it ends at its mark in the right half).
    const fits = await mark.evaluate((m) => m.getBoundingClientRect().right <= m.closest('.pcard').getBoundingClientRect().right + 1);
    assert.equal(fits, true, `${tp}: the mark's label stays inside its card`);
  }
});

test('390×844: a commit mark at the end of the log does not widen the page (tour 15, stop 3)', async () => {
  await app.page.setViewportSize({ width: 390, height: 844 });
  try {
    const page = await open('scenario=tour-15-unclean-committed-offsets.json&stop=3');
    await page.waitForSelector('.cm');
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), `page ${await page.evaluate(() => document.documentElement.scrollWidth)} px wide`);
  } finally {
    await app.page.setViewportSize({ width: 1280, height: 800 });
  }
});

test('the fate view shows the delivery counts and a record id opens its story', async () => {
  const page = await open('scenario=tour-14-coordinator-dies.json&paused=1');
  await page.evaluate(() => window.failoverLab.runFor(30000));
  await page.locator('details.fate summary').click();
  const d = await page.evaluate(() => window.failoverLab.delivery()[0]);
  assert.equal(d.consumed_twice.count, 40, 'tour 14: 40 records read twice');
  const causes = (o) => Object.keys(d[o]).map((c) => `${o}.${c}`);
  assert.deepEqual(causes('skip_causes'), ['skip_causes.reset', 'skip_causes.commit', 'skip_causes.unread']);
  for (const k of ['acked_kept', 'acked_lost', 'pending', 'consumed', 'consumed_twice', 'never_consumed', 'reread', ...causes('reread_causes'), ...causes('skip_causes')]) {
    const f = k.split('.').reduce((o, x) => o[x], d);
    assert.equal(await page.locator(`tr[data-fate="${k}"] td.n`).textContent(), String(f.count), k);
    const ids = await page.locator(`tr[data-fate="${k}"] button.rid`).allTextContents();
    assert.deepEqual(ids, f.examples.map((id) => `#${id}`), `${k}'s examples`);
  }
  assert.equal(d.skip_causes.reset.count + d.skip_causes.commit.count + d.skip_causes.unread.count, d.never_consumed.count);
  const id = d.consumed_twice.examples[0];
  await page.locator(`tr[data-fate="consumed_twice"] button.rid`).first().click();
  const story = await page.evaluate((i) => window.failoverLab.story(i), id);
  assert.equal(story.fate, 'acked_kept');
  assert.deepEqual(story.reads, [['c1', 2]]);
  assert.ok(story.events.some(([, t]) => t.includes('starts again')), 'the restart that made it read twice');
  const text = await page.locator('.story').innerText();
  assert.match(text, new RegExp(`Record #${id}`));
  assert.match(text, /by c1 ×2/);
  assert.match(text, /acknowledged, kept/);
  for (const c of story.copies) assert.ok(text.includes(`broker ${c.broker} @ ${c.offset}`), `copy on broker ${c.broker}`);
  assert.equal(await page.evaluate(() => window.failoverLab.story(123456789)), null);
  assert.deepEqual(app.errors, []);
});

for (const theme of ['light', 'dark']) {
  test(`axe: the consumer buttons and the open fate view with a story in the ${theme} theme have no violation`, async () => {
    assert.ok(fs.existsSync(AXE), 'node_modules/axe-core is missing');
    const page = await open(`scenario=tour-14-coordinator-dies.json&paused=1&theme=${theme}`, theme);
    await page.evaluate(() => window.failoverLab.runFor(30000));
    await page.locator('details.fate summary').click();
    await page.locator('tr[data-fate="consumed_twice"] button.rid').first().click();
    await page.addScriptTag({ path: AXE });
    const violations = await page.evaluate(async (tags) => {
      const res = await window.axe.run(document.querySelector('[data-panel="clients"]'), { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
      return res.violations.map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)).join('; ')}`);
    }, WCAG);
    assert.deepEqual(violations, []);
  });
}

// The narration's screen-reader-only lines are absolutely positioned: with
// #narration not positioned they escaped its scroll box and stretched the page
// (tour 14, stop 2: 11,618 px of page for 2,292 px of content).
test('the page is as tall as its content: the narration keeps its hidden lines inside its scroll box', async () => {
  const page = await open('scenario=tour-14-coordinator-dies.json&stop=2');
  await page.waitForFunction(() => document.querySelectorAll('#narration li').length > 20);
  const [page_, content] = await page.evaluate(() => [
    document.documentElement.scrollHeight,
    Math.max(...[...document.body.children].filter((e) => e.offsetParent !== null).map((e) => e.getBoundingClientRect().bottom + scrollY)),
  ]);
  assert.ok(page_ <= content + 2, `the page is ${page_} px tall for ${Math.round(content)} px of content`);
});
