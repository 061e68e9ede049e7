// The glossary (issue 25, point 4): the `?` help lists Kafka's terms, loaded
// from www/glossary.json by www/glossary.js only when the help opens or a tour
// stop is shown (not part of the page's first load); in tour text the first
// occurrence of each term per stop is a button that opens its entry; axe finds
// nothing in either theme; the <failover-lab> element, which has no glossary,
// still shows its tour. After the last stop a link offers the next tour in the
// welcome's order. Needs `make build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, ROOT, WWW, tourClick } from './helpers.mjs';

const AXE = path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js');
const GLOSSARY = JSON.parse(fs.readFileSync(path.join(WWW, 'glossary.json'), 'utf8')).terms;
const tour = (f) => JSON.parse(fs.readFileSync(path.join(ROOT, 'scenarios', f), 'utf8'));

let app;

before(async () => {
  assert.ok(fs.existsSync(path.join(WWW, 'dist', 'glossary.js')), 'www/dist is missing: run `make build` first');
  app = await startApp();
});

after(async () => {
  await app?.close();
});

async function open(query, scheme = 'dark') {
  const page = app.page;
  await page.emulateMedia({ colorScheme: scheme });
  app.errors.length = 0;
  await page.goto(`${app.baseUrl}/?${query}`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
  return page;
}

async function axe(page) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ path: AXE });
  return page.evaluate(async () => {
    const res = await window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] });
    return res.violations.map((v) => `${v.id}: ${v.nodes.slice(0, 4).map((n) => JSON.stringify(n.target)).join('; ')}`);
  });
}

test('the glossary file: every entry has an id, a term, one or two sentences and a pattern that finds its own term somewhere in the tours', () => {
  const ids = GLOSSARY.map((t) => t.id);
  assert.equal(new Set(ids).size, ids.length, 'ids are unique');
  for (const want of ['isr', 'hw', 'leo', 'leader', 'follower', 'leader-epoch', 'controller', 'acks', 'min-isr', 'unclean', 'truncation', 'not-leader', 'metadata', 'consumer-group', 'committed-offset']) {
    assert.ok(ids.includes(want), `the glossary explains ${want}`);
  }
  const all = fs.readdirSync(path.join(ROOT, 'scenarios')).filter((f) => /^tour-.*\.json$/.test(f)).flatMap((f) => tour(f).tour.map((s) => s.text)).join('\n');
  for (const t of GLOSSARY) {
    const sentences = t.text.split(/(?<=[.!?])\s+(?=[A-Z])/).length;
    assert.ok(sentences >= 1 && sentences <= 3 && t.text.length <= 330, `${t.id}: short (${sentences} sentences, ${t.text.length} chars)`);
    if (t.link !== false) assert.match(all, new RegExp(t.match), `${t.id}'s pattern finds it in some tour`);
  }
});

test("the glossary's words are not part of the page's first load (size budget): not in index.html, the bundle or its stylesheet", () => {
  const firstLoad = ['index.html', 'dist/app.js', 'dist/style.css'].map((f) => fs.readFileSync(path.join(WWW, f), 'utf8')).join('\n');
  for (const t of GLOSSARY) assert.ok(!firstLoad.includes(t.text.slice(0, 60)), `${t.id}'s text is loaded only with the glossary`);
  assert.ok(!firstLoad.includes('.gl-term'), "the glossary's style comes with it");
});

test('the help shows the glossary: every term with its explanation, loaded when the help opens', async () => {
  const page = await open('paused=1');
  assert.equal(await page.locator('#help .gloss').count(), 0, 'not loaded before the help opens');
  await page.locator('#help-btn').click();
  await page.waitForSelector('#help .gloss dt');
  assert.equal(await page.locator('#help h3#gl-title').textContent(), 'Glossary');
  const rows = await page.locator('#help .gloss dt').evaluateAll((dts) => dts.map((dt) => [dt.id, dt.textContent, dt.nextElementSibling.textContent]));
  assert.deepEqual(rows, GLOSSARY.map((t) => [`gl-${t.id}`, t.term, t.text]));
  assert.equal(await page.locator('#gl-isr').isVisible(), true);
  assert.match(await page.locator('#gl-isr + dd').textContent(), /caught up with the leader/);
  // The ? key opens the same help, glossary included; Esc closes it.
  await page.keyboard.press('Escape');
  assert.equal(await page.locator('#help').isVisible(), false);
  await page.keyboard.press('?');
  assert.equal(await page.locator('#help .gloss').count(), 1, 'one glossary, however often the help opens');
  assert.deepEqual(app.errors, []);
});

test('tour 1: each stop links the first occurrence of each term to its entry; clicking a term opens it, Esc returns to the term', async () => {
  const page = await open('scenario=tour-1-leader-dies.json');
  const stops = tour('tour-1-leader-dies.json').tour;
  for (const [i, st] of stops.entries()) {
    await tourClick(page.locator('#tour [data-tour="next"]'));
    await page.waitForFunction((t) => document.querySelector('#tour .tour-text').dataset.glossed === t, st.text);
    const terms = await page.locator('#tour .tour-text .gl-term').evaluateAll((bs) => bs.map((b) => [b.dataset.term, b.textContent]));
    assert.equal(await page.locator('#tour .tour-text').textContent(), st.text, `stop ${i + 1}: the words are unchanged`);
    assert.ok(terms.length > 0, `stop ${i + 1} links some terms`);
    const ids = terms.map(([id]) => id);
    assert.equal(new Set(ids).size, ids.length, `stop ${i + 1}: each term linked once (${ids})`);
    for (const [id, word] of terms) {
      const t = GLOSSARY.find((g) => g.id === id);
      assert.equal(st.text.search(new RegExp(t.match)), st.text.indexOf(word), `stop ${i + 1}: "${word}" is the first hit of ${id}`);
    }
    if (i === 0) assert.deepEqual(terms.filter(([id]) => ['isr', 'hw'].includes(id)), [['isr', 'ISR'], ['hw', 'HW']]);
  }
  // Back at stop 1: click ISR.
  await tourClick(page.locator('#tour [data-tour="restart"]'));
  await tourClick(page.locator('#tour [data-tour="next"]'));
  const isr = page.locator('#tour .tour-text .gl-term[data-term="isr"]');
  assert.equal(await isr.getAttribute('type'), 'button', 'a button, so keyboard reachable');
  await isr.click();
  assert.equal(await page.locator('#help').isVisible(), true);
  assert.equal(await page.evaluate(() => document.activeElement.id), 'gl-isr', 'the entry has the focus');
  assert.equal(await page.locator('#gl-isr').getAttribute('class'), 'on');
  assert.equal(await page.locator('#gl-isr').isVisible(), true);
  await page.keyboard.press('Escape');
  assert.equal(await page.locator('#help').isVisible(), false);
  assert.equal(await page.evaluate(() => document.activeElement.dataset.term), 'isr', 'focus back on the term');
  // From the keyboard: Enter on the focused HW term opens its entry (and no shortcut fires).
  await page.locator('#tour .gl-term[data-term="hw"]').focus();
  const t = await page.evaluate(() => failoverLab.now());
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'gl-hw');
  assert.equal(await page.evaluate(() => failoverLab.now()), t);
  await page.keyboard.press('Escape');
  assert.deepEqual(app.errors, []);
});

for (const theme of ['light', 'dark']) {
  test(`axe: the glossary in the help, the linked tour text and the next-tour link in the ${theme} theme have no violation`, async () => {
    const page = await open(`scenario=tour-1-leader-dies.json&theme=${theme}`, theme);
    await tourClick(page.locator('#tour [data-tour="next"]'));
    await page.waitForSelector('#tour .tour-text .gl-term');
    assert.deepEqual(await axe(page), [], 'a stop with linked terms');
    await page.locator('#tour .gl-term[data-term="hw"]').click();
    await page.waitForSelector('#gl-hw.on');
    assert.deepEqual(await axe(page), [], 'the help open at an entry');
    await page.keyboard.press('Escape');
    await page.evaluate(() => failoverLab.tour().stops.slice(1).forEach(() => failoverLab.tourNext()));
    assert.equal(await page.locator('#tour [data-tour="next-tour"]').isVisible(), true);
    assert.deepEqual(await axe(page), [], 'the last stop, with its link to the next tour');
    assert.deepEqual(app.errors, []);
  });
}

test('the element shows its tour text unlinked (it has no glossary) and stays error-free', async () => {
  const page = app.page;
  app.errors.length = 0;
  await page.goto(`${app.baseUrl}/embed.html?scenario=tour-1-leader-dies.json`);
  await page.waitForFunction(() => document.querySelector('failover-lab')?.dataset.ready === 'true', null, { timeout: 20000 });
  await page.evaluate(() => document.querySelector('failover-lab').tourNext());
  const text = await page.evaluate(() => document.querySelector('failover-lab').shadowRoot.querySelector('.tour-text').textContent);
  assert.equal(text, tour('tour-1-leader-dies.json').tour[0].text);
  assert.equal(await page.evaluate(() => document.querySelector('failover-lab').shadowRoot.querySelectorAll('.gl-term, [data-tour="next-tour"]:not([hidden])').length), 0);
  assert.deepEqual(app.errors, []);
});

test('after "End of tour" a link opens the next tour in the welcome\'s order (junior, mid, senior, principal; by number within a level)', async () => {
  const expect = { 'tour-1-leader-dies.json': 'tour-2-producer-finds-leader.json', 'tour-7-acks1-loses-data.json': 'tour-3-leader-epoch.json', 'tour-11-mass-failover.json': 'tour-18-rack-loss.json', 'tour-18-rack-loss.json': 'tour-19-rack-loss-20000.json', 'tour-19-rack-loss-20000.json': 'tour-22-commit-without-leader-epoch.json', 'tour-22-commit-without-leader-epoch.json': null };
  for (const [file, next] of Object.entries(expect)) {
    const page = await open(`scenario=${file}&theme=light`);
    const n = tour(file).tour.length;
    const link = page.locator('#tour [data-tour="next-tour"]');
    assert.equal(await link.isVisible(), false, `${file}: no link before the last stop`);
    await page.evaluate((k) => {
      for (let j = 0; j < k; j++) failoverLab.tourNext();
    }, n);
    assert.equal(await page.locator('#tour [data-tour="next"]').textContent(), 'End of tour');
    if (!next) {
      assert.equal(await link.isVisible(), false, `${file} is the last tour: no link`);
      continue;
    }
    assert.equal(await link.isVisible(), true, `${file}: the next tour is offered`);
    assert.equal(await link.textContent(), `Next: tour ${/^tour-(\d+)/.exec(next)[1]} ▶`);
    const href = new URL(await link.getAttribute('href'));
    assert.deepEqual([href.searchParams.get('scenario'), href.searchParams.get('theme')], [next, 'light'], 'the theme is kept');
    if (file === 'tour-1-leader-dies.json') {
      await link.click();
      await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
      assert.equal(await page.locator('#scenario').inputValue(), next);
      assert.equal(await page.locator('#tour .tour-count').textContent(), `${tour(next).tour.length} stops`);
    }
  }
  assert.deepEqual(app.errors, []);
});
