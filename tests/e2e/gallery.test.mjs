// The welcome's scenario gallery (issue 65, item 3): "Scenario gallery" opens
// a card for every scenario of scenarios/ that is not a tour, each with its
// level and a thumbnail of its map; Open loads the scenario in the lab, and
// "What if…" loads it paused with fork mode on, so the next action makes a
// lane B. Everything here is done with the keyboard alone; axe finds nothing
// in the light and dark themes. Needs `make build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, ROOT, WWW } from './helpers.mjs';

const AXE = path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];

// Every scenario file that is not a tour, with its level ('' when it has none).
const SCENARIOS = fs.readdirSync(path.join(ROOT, 'scenarios'))
  .filter((f) => f.endsWith('.json'))
  .map((file) => ({ file, ...JSON.parse(fs.readFileSync(path.join(ROOT, 'scenarios', file), 'utf8')) }))
  .filter((s) => !s.tour)
  .map((s) => ({ file: s.file, name: s.name, level: s.level || '' }))
  .sort((a, b) => a.file.localeCompare(b.file));

let app;

before(async () => {
  assert.ok(fs.existsSync(path.join(WWW, 'dist', 'gallery.js')), 'run `make build` first');
  app = await startApp({ viewport: { width: 1400, height: 900 } });
});

after(async () => {
  await app?.close();
});

async function axe(page) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ path: AXE });
  return page.evaluate(
    async ({ tags }) => {
      const res = await window.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
      return res.violations.map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)).join('; ')}`);
    },
    { tags: TAGS },
  );
}

/** Press Tab until `pred` (evaluated on document.activeElement) holds; fails after `max` presses. */
async function tabTo(page, pred, arg, max = 120) {
  for (let i = 0; i < max; i++) {
    if (await page.evaluate(pred, arg)) return;
    await page.keyboard.press('Tab');
  }
  assert.fail(`Tab never reached ${pred}`);
}

const onGallery = () => document.activeElement?.dataset.welcome === 'gallery';
const onCard = ({ file, what }) => document.activeElement?.dataset.gallery === what && document.activeElement.closest('li')?.dataset.file === file;

/** The welcome, with the gallery opened from the keyboard. */
async function openGallery(page, theme = 'dark') {
  await page.goto(`${app.baseUrl}/?welcome=1&theme=${theme}`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
  await page.waitForSelector('#welcome:not([hidden]) [data-welcome="gallery"]');
  await tabTo(page, onGallery);
  assert.equal(await page.getAttribute('[data-welcome="gallery"]', 'aria-expanded'), 'false');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#wgallery .gcard');
  assert.equal(await page.getAttribute('[data-welcome="gallery"]', 'aria-expanded'), 'true');
}

test('the gallery lists every scenario that is not a tour, with its level and a thumbnail of its map', async () => {
  app.errors.length = 0;
  const page = app.page;
  await openGallery(page);
  const cards = await page.$$eval('#wgallery .gcard', (li) => li.map((c) => ({
    file: c.dataset.file,
    name: c.querySelector('h3').textContent,
    level: c.querySelector('.glevel').textContent,
    brokers: c.querySelectorAll('svg rect.b').length,
    partitions: c.querySelectorAll('svg rect.p').length,
  })));
  assert.deepEqual(cards.map(({ file, name, level }) => ({ file, name, level })).sort((a, b) => a.file.localeCompare(b.file)),
    SCENARIOS.map((s) => ({ ...s, level: s.level || 'any level' })));
  const rack = cards.find((c) => c.file === 'rack-failure.json');
  assert.equal(rack.brokers, 6, 'rack-failure: six brokers drawn');
  assert.equal(rack.partitions, 6 * 3, 'rack-failure: 6 partitions × RF 3 drawn');
  // Closed again with the keyboard; the cards stay, hidden.
  await page.keyboard.press('Enter');
  await page.waitForSelector('#wgallery', { state: 'hidden' });
  assert.equal(await page.getAttribute('[data-welcome="gallery"]', 'aria-expanded'), 'false');
  assert.deepEqual(app.errors, []);
});

test('Open loads the scenario in the lab (keyboard only)', async () => {
  app.errors.length = 0;
  const page = app.page;
  await openGallery(page);
  await tabTo(page, onCard, { file: 'rack-failure.json', what: 'open' });
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('welcome').hidden && document.getElementById('scenario').value === 'rack-failure.json');
  await page.waitForFunction(() => document.querySelectorAll('#map [data-broker]').length >= 6);
  assert.match(await page.textContent('#scn-name'), /A whole rack fails/);
  assert.equal(await page.evaluate(() => document.body.classList.contains('forking')), false, 'Open does not fork');
  assert.deepEqual(app.errors, []);
});

test('What if… opens it paused with fork mode on: the next action makes lane B (keyboard only)', async () => {
  app.errors.length = 0;
  const page = app.page;
  await openGallery(page);
  await tabTo(page, onCard, { file: 'leader-dies.json', what: 'fork' });
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('welcome').hidden && document.body.classList.contains('forking'));
  assert.equal(await page.evaluate(() => document.activeElement?.closest('#map') !== null && 'broker' in document.activeElement.dataset), true, 'a broker has the focus');
  assert.equal(await page.evaluate(() => failoverLab.forks().length), 0);
  // At t = 0 too, the timeline's "Acting here" choice shows that fork mode is on.
  await page.waitForFunction(() => { const g = document.querySelector('.act-mode'); return g && !g.hidden; });
  // A digit crashes (or restarts) that broker: in fork mode, as a new lane.
  await page.keyboard.press('2');
  await page.waitForFunction(() => failoverLab.forks().length === 1, null, { timeout: 20000 });
  assert.deepEqual(await page.evaluate(() => failoverLab.forks()), [{ lane: 'B', from: 'A', at_ms: 0, action: { crash: 2 } }]);
  assert.deepEqual(app.errors, []);
});

for (const theme of ['light', 'dark']) {
  test(`axe: the welcome with its gallery open (${theme}) has no violation`, async () => {
    app.errors.length = 0;
    const page = app.page;
    await page.emulateMedia({ colorScheme: theme });
    await openGallery(page, theme);
    assert.deepEqual(await axe(page), []);
    assert.deepEqual(app.errors, []);
  });
}
