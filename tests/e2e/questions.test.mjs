// Tour questions on the page (issue 30): a stop asks before the lab plays
// on; picking a choice plays to the next stop, which shows what the run
// proved, computed from report() (never a stored letter), with the evidence
// ringed. Next skips the question. Keyboard-driven; axe finds nothing.
// Needs `make build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startApp, ROOT, tourClick, openPage } from './helpers.mjs';

const AXE = path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js');
let app;

before(async () => {
  app = await startApp({ viewport: { width: 1400, height: 900 } });
});

after(async () => {
  await app?.close();
});

async function open(query, hash = '') {
  const { page } = app;
  app.errors.length = 0;
  await openPage(page, `${app.baseUrl}/?${query}${hash}`, { timeout: 20000 });
  return page;
}

/** axe-core's WCAG 2.1 A/AA violations inside `sel` (axe.min.js already added to the page). */
const axeIn = (page, sel) => page.evaluate(async (s) => {
  const res = await window.axe.run(document.querySelector(s), { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] });
  return res.violations.map((v) => `${v.id}: ${v.nodes.map((n) => JSON.stringify(n.target)).join('; ')}`);
}, sel);

const toStop = async (page, k) => {
  for (let i = 0; i < k; i++) await tourClick(page.locator('#tour [data-tour="next"]'));
};

test('tour 4: the prediction is asked, picking plays on, and the run answers it', async () => {
  const page = await open('scenario=tour-4-unclean-election.json');
  await toStop(page, 3); // stop 3: the question
  assert.equal(await page.locator('#tour .tour-q').isVisible(), true);
  assert.match(await page.locator('#tour .q-text').textContent(), /What becomes of the records/);
  // Keyboard: Tab to the first choice and press Enter.
  await page.locator('#tour .q-choice').first().focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('#tour')?.dataset.stop === '4');
  const a = page.locator('#tour .tour-a');
  assert.equal(await a.isVisible(), true);
  // Issue 62, item 4: the verdict comes first, then the answer, then what in
  // the run decided it (the question's expression and its value at the stop).
  assert.match(await a.textContent(), /^Right\. You predicted it\. The run answers: /);
  assert.match(await a.locator('.q-why').textContent(), /^Decided by the run at t = [\d.]+ s: .+ = true\.$/);
  const computed = await page.evaluate(() => failoverLab.tourAnswer(2));
  assert.deepEqual(computed, { value: true, right: [0] });
  assert.equal(await a.getAttribute('data-right'), '0');
  assert.equal(await page.locator('.tour-hl[data-testid="acked-lost"], [data-testid="acked-lost"].tour-hl').count() > 0, true, 'the evidence is ringed');
  assert.deepEqual(app.errors, []);
});

test("the answer is the run's: with unclean election off, tour 4's run proves the other choice", async () => {
  // The share link's switch (the unclean checkbox): the same tour, unclean election off.
  const page = await open('', '#scenario=tour-4-unclean-election.json&unclean=false');
  await toStop(page, 3);
  await tourClick(page.locator('#tour .q-choice').first());
  await page.waitForFunction(() => document.querySelector('#tour')?.dataset.stop === '4');
  assert.deepEqual(await page.evaluate(() => failoverLab.tourAnswer(2)), { value: false, right: [1] });
  const a = await page.locator('#tour .tour-a').textContent();
  assert.match(a, /^Not this time\. You predicted “They are lost/);
  assert.match(a, /Nothing is lost/);
  assert.match(a, /Decided by the run at t = [\d.]+ s: .+ = false\./);
});

test('Next skips a question; the next stop still shows the answer, without a verdict', async () => {
  const page = await open('scenario=tour-1-leader-dies.json');
  await toStop(page, 3);
  assert.equal(await page.locator('#tour .tour-q').isVisible(), true);
  await toStop(page, 1);
  const a = await page.locator('#tour .tour-a').textContent();
  assert.match(a, /^The run answers: Broker 2/);
  assert.doesNotMatch(a, /You predicted|Right\.|Not this time/);
  assert.match(a, /Decided by the run at t = [\d.]+ s: partitions\[orders-0\]\.leader = 2\./);
  assert.equal(await page.locator('#tour .tour-q').isVisible(), false, 'stop 4 asks nothing');
});

for (const theme of ['light', 'dark']) {
  test(`axe: a question and its answer in the ${theme} theme have no violation`, async () => {
    const page = await open(`scenario=tour-7-acks1-loses-data.json&theme=${theme}`);
    await toStop(page, 4);
    await page.addScriptTag({ path: AXE });
    const run = () => axeIn(page, '#tour');
    assert.deepEqual(await run(), [], 'the question');
    await tourClick(page.locator('#tour .q-choice').nth(1));
    await page.waitForFunction(() => document.querySelector('#tour')?.dataset.stop === '5');
    assert.match(await page.locator('#tour .tour-a').textContent(), /You predicted “Yes/);
    assert.deepEqual(await run(), [], 'the answer');
  });
}

// Issue 30, point 4: progress stays in this browser (localStorage) and the
// welcome marks the tours walked to their last stop.
test('a tour walked to its last stop is marked finished on the welcome', async () => {
  const page = await open('scenario=tour-8-min-insync-replicas.json');
  await page.evaluate(() => localStorage.removeItem('failover-lab:finished'));
  const n = await page.evaluate(() => failoverLab.tour().stops.length);
  await toStop(page, n);
  assert.deepEqual(await page.evaluate(() => JSON.parse(localStorage.getItem('failover-lab:finished'))), ['tour-8-min-insync-replicas.json']);
  await page.goto(`${app.baseUrl}/?welcome=1`);
  await page.waitForSelector('#welcome:not([hidden]) .wlink');
  const done = await page.$$eval('#welcome li', (li) => li.filter((x) => x.querySelector('.wdone')).map((x) => x.querySelector('.wlink').dataset.file));
  assert.deepEqual(done, ['tour-8-min-insync-replicas.json']);
});

// A compare tour's question reads every lane (lanes[acks=1].report…): on the
// page and in the element, tour 13's answer is lane A's loss and lane B's
// none, the same value tests/questions.rs computes natively.
test('tour 13 (compare lanes): the answer reads every lane, on the page and in the element', async () => {
  const page = await open('scenario=tour-13-acks1-vs-acks-all.json');
  await page.waitForSelector('#compare:not([hidden])');
  await toStop(page, 3);
  assert.match(await page.locator('#tour .q-text').textContent(), /Which lane will have lost/);
  await tourClick(page.locator('#tour .q-choice').nth(1)); // "Both lanes"
  await page.waitForFunction(() => document.querySelector('#tour')?.dataset.stop === '4');
  assert.deepEqual(await page.evaluate(() => failoverLab.tourAnswer(2)), { value: [true, false], right: [0] });
  const a = await page.locator('#tour .tour-a').textContent();
  assert.match(a, /You predicted “Both lanes/);
  assert.match(a, /The run answers: .*Lane A only/);
  assert.deepEqual(app.errors, []);

  const url = `${app.baseUrl}/element-q.html`;
  await page.route(url, (route) => route.fulfill({ contentType: 'text/html', body: `<!doctype html><meta charset="utf-8"><script type="module" src="failover-lab.js"></script>
    <failover-lab id="t" scenario="scenarios/tour-13-acks1-vs-acks-all.json"></failover-lab>` }));
  await page.goto(url);
  await page.waitForFunction(() => document.getElementById('t')?.dataset.ready === 'true', null, { timeout: 20000 });
  await page.waitForFunction(() => document.getElementById('t').lanes().length === 2, null, { timeout: 20000 });
  for (let i = 0; i < 3; i++) await tourClick(page.locator('#t button[data-tour="next"]'));
  await tourClick(page.locator('#t .q-choice').first());
  await page.waitForFunction(() => document.getElementById('t').now() === 13002);
  await page.waitForFunction(() => /You predicted it/.test(document.getElementById('t').shadowRoot.querySelector('.tour-a')?.textContent || ''));
  assert.equal(await page.locator('#t .tour-a').getAttribute('data-right'), '0');
  // The element has tourAnswer too, as the API table says (issue 62, item 7).
  assert.deepEqual(await page.evaluate(() => document.getElementById('t').tourAnswer(2)), { value: [true, false], right: [0] });
  assert.deepEqual(app.errors, []);
});

// Issue 30, point 4: Check yourself. Each level's seed questions, answered
// from a run of the tour that shows it (the right choices below are the ones
// tests/questions.rs computes natively), linking to that stop; the score is
// kept in this browser only and shown on the welcome.
test('Check yourself: answers computed from the tours, a link to the stop, the score remembered', async () => {
  const page = await open('welcome=1');
  await page.evaluate(() => localStorage.removeItem('failover-lab:checks'));
  await page.locator('#welcome [data-check="junior"]').click();
  await page.waitForSelector('#welcome fieldset.ck-q');
  assert.equal(await page.locator('#welcome fieldset.ck-q').count(), 3);
  assert.equal(await page.evaluate(() => document.activeElement?.name), 'ck-0', 'the first choice has the focus');
  // Keyboard alone: Space picks the focused choice; question 2 by a click; question 3 skipped.
  await page.keyboard.press('Space');
  await page.locator('#welcome fieldset[data-q="1"] input').first().check(); // the wrong one
  await page.locator('#welcome [data-check="submit"]').click();
  await page.waitForFunction(() => /of 3 right/.test(document.querySelector('#welcome .ck-sum')?.textContent || ''), null, { timeout: 20000 });
  assert.deepEqual(await page.$$eval('#welcome fieldset.ck-q', (f) => f.map((x) => x.dataset.right)), ['0', '1', '0']);
  assert.match(await page.locator('#welcome .ck-sum').textContent(), /^1 of 3 right \(1 skipped\)/);
  assert.deepEqual(await page.$$eval('#welcome fieldset.ck-q', (f) => f.map((x) => x.className)), ['ck-q ck-hit', 'ck-q ck-miss', 'ck-q']);
  // The verdict first, the answer, then what in the run decided it.
  const said = await page.$$eval('#welcome fieldset.ck-q', (f) => f.map((x) => x.querySelector('output, .ck-result, [class*="result"]')?.textContent ?? x.textContent));
  assert.match(said[0], /Right\. The run answers: .+\. Decided by the run: .+ = .+\./);
  assert.match(said[1], /Not this time\. The run answers: .+\. Decided by the run: /);
  assert.match(said[2], /Skipped\. The run answers: /);
  assert.deepEqual(await page.evaluate(() => JSON.parse(localStorage.getItem('failover-lab:checks'))), { junior: { right: 1, of: 3 } });
  const href = await page.locator('#welcome fieldset[data-q="0"] a').getAttribute('href');
  assert.equal(href, '?scenario=tour-2-producer-finds-leader.json&stop=2');
  assert.deepEqual(app.errors, []);

  // Back: the welcome shows the score. A compare tour's question (mid 3, tour 16's lanes) is answered too,
  // and one of a tour whose consumers subscribe (mid 4, tour 20: the full build's run).
  await page.locator('#welcome [data-check="back"]').click();
  assert.match(await page.locator('#welcome [data-check="junior"]').textContent(), /1 of 3 last time/);
  await page.locator('#welcome [data-check="mid"]').click();
  await page.waitForSelector('#welcome fieldset.ck-q');
  await page.locator('#welcome [data-check="submit"]').click();
  await page.waitForFunction(() => /of 4 right/.test(document.querySelector('#welcome .ck-sum')?.textContent || ''), null, { timeout: 20000 });
  assert.deepEqual(await page.$$eval('#welcome fieldset.ck-q', (f) => f.map((x) => x.dataset.right)), ['1', '0', '1', '1']);

  // The link opens the tour at that stop.
  await openPage(page, `${app.baseUrl}/${href}`, { timeout: 20000 });
  await page.waitForFunction(() => document.querySelector('#tour')?.dataset.stop === '2');
  assert.equal(await page.evaluate(() => failoverLab.now()), await page.evaluate(() => failoverLab.tour().stops[1].at_ms));
  assert.deepEqual(app.errors, []);
});

for (const theme of ['light', 'dark']) {
  test(`axe: Check yourself, asked and answered, in the ${theme} theme has no violation`, async () => {
    const page = await open(`check=senior&theme=${theme}`);
    await page.waitForSelector('#welcome fieldset.ck-q');
    await page.addScriptTag({ path: AXE });
    const run = () => axeIn(page, '#welcome');
    assert.deepEqual(await run(), [], 'asked');
    await page.locator('#welcome fieldset[data-q="0"] input').nth(1).check();
    await page.locator('#welcome [data-check="submit"]').click();
    // Senior has 5 questions; the fifth is a compare tour's (tour 21) with subscribing consumers.
    await page.waitForFunction(() => /of 5 right/.test(document.querySelector('#welcome .ck-sum')?.textContent || ''), null, { timeout: 20000 });
    assert.deepEqual(await page.$$eval('#welcome fieldset.ck-q', (f) => f.map((x) => x.dataset.right)), ['0', '1', '0', '0', '1']);
    assert.deepEqual(await run(), [], 'answered');
    assert.deepEqual(app.errors, []);
  });
}
