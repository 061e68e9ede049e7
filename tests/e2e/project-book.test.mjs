// The project's own book (docs/book, built by scripts/build-book.sh into
// www/book/ and served with the page): the page's help links to its chapter
// "Checked against Kafka 4.4.0", which is the README's section included by
// anchor, so it shows the same recordings grid (one row per committed
// recording) and the vector table; the first page runs the default scenario
// in a live <failover-lab>, which fails over when its leader is crashed; axe
// finds nothing in either chapter's <main>. Needs `make build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, ROOT } from './helpers.mjs';

const AXE = path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js');
const RECORDINGS = fs
  .readdirSync(path.join(ROOT, 'tests', 'kafka-recorded'))
  .filter((f) => f.endsWith('.json') && f !== 'differences.json')
  .map((f) => f.replace(/\.json$/, ''))
  .sort();

let app;

before(async () => {
  assert.ok(fs.existsSync(path.join(ROOT, 'www', 'book', 'kafka-4.4.html')), 'www/book is missing: run `make build` (scripts/build-book.sh)');
  app = await startApp();
});

after(async () => {
  await app?.close();
});

async function axeMain(page) {
  await page.addScriptTag({ path: AXE });
  return page.evaluate(async () => {
    const res = await window.axe.run('main', { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] });
    return res.violations.map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)).join('; ')}`);
  });
}

test("the page's help links to the book's \"Checked against Kafka 4.4.0\", which shows a row for every real-cluster recording", async () => {
  const page = app.page;
  await page.goto(`${app.baseUrl}/`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
  await page.keyboard.press('?');
  const link = page.locator('#help a[data-help="kafka-checked"]');
  await link.waitFor(); // the help's words come with glossary.js, fetched when it opens
  assert.equal(await link.isVisible(), true, 'the help shows the link');
  // Keyboard alone: the link is reachable and followed with Enter.
  await link.focus();
  await Promise.all([page.waitForURL(/\/book\/kafka-4\.4\.html$/), page.keyboard.press('Enter')]);
  assert.match(await page.locator('main h1').first().textContent(), /Checked against Kafka 4\.4\.0/);
  // The recordings grid: its header and one row per committed recording.
  const grid = await page.evaluate(() => {
    const t = [...document.querySelectorAll('main table')].find((x) => x.querySelector('th')?.textContent.trim() === 'scenario');
    return t ? [...t.querySelectorAll('tbody tr')].map((r) => r.cells[0].textContent.trim()) : null;
  });
  assert.ok(grid, 'the grid of scenarios × fields is in the chapter');
  assert.deepEqual([...grid].sort(), RECORDINGS);
  const text = await page.textContent('main');
  for (const cls of ['PartitionChangeBuilder', 'LeaderEpochFileCache', 'ReplicationControlManager']) {
    assert.ok(text.includes(cls), `the vector table names ${cls}`);
  }
  assert.deepEqual(await axeMain(page), []);
  assert.deepEqual(app.errors, []);
});

test("the book's first page runs the default scenario live: crash the leader, a new leader with the epoch one higher", async () => {
  const page = app.page;
  await page.emulateMedia({ colorScheme: 'light' });
  await page.goto(`${app.baseUrl}/book/`);
  await page.waitForFunction(() => document.getElementById('lab')?.dataset.ready === 'true', null, { timeout: 20000 });
  const r = await page.evaluate(() => {
    const lab = document.getElementById('lab');
    lab.pause();
    lab.runFor(3000);
    const before = lab.report().partitions[0];
    lab.crash(before.leader);
    lab.runFor(12000);
    const after = lab.report().partitions[0];
    return { before: [before.leader, before.leader_epoch], after: [after.leader, after.leader_epoch], theme: lab.getAttribute('theme') };
  });
  assert.equal(r.before[0], 1);
  assert.notEqual(r.after[0], null);
  assert.notEqual(r.after[0], 1);
  assert.equal(r.after[1], r.before[1] + 1);
  assert.equal(r.theme, 'light');
  assert.deepEqual(await axeMain(page), []);
  assert.deepEqual(app.errors, []);
});
