// Forks, "what if … here?" (issue 65): paused in the past, an action can
// fork a lane beside the run instead of replacing its future. A fork
// reproduces from its link in a fresh page frame for frame (the same trace
// hashes, the same lanes at the same time); the element's fork() resolves and
// sends a `fork` event; the fork can be made and the lanes read with the
// keyboard alone; axe finds nothing. Needs `make build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, ROOT, WWW, openPage } from './helpers.mjs';

const AXE = path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];

let app;

before(async () => {
  assert.ok(fs.existsSync(path.join(WWW, 'dist', 'lanes.js')), 'run `make build` first');
  app = await startApp({ viewport: { width: 1400, height: 900 } });
});

after(async () => {
  await app?.close();
});

async function open(page, query = '?scenario=leader-dies.json&paused=1', hash = '') {
  await openPage(page, `${app.baseUrl}/${query}${hash}`, { timeout: 20000 });
}

async function axe(page, context = null) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ path: AXE });
  return page.evaluate(
    async ({ tags, context }) => {
      const res = await window.axe.run(context ?? document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
      return res.violations.map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)).join('; ')}`);
    },
    { tags: TAGS, context },
  );
}

/** What a test compares of the lanes: each lane's trace hash, time, fork and divergence. */
const lanesNow = () =>
  failoverLab.lanes().map((l) => ({ hash: l.report.trace_hash, end: l.report.end_ms, fork: l.fork ?? null, divergence: l.divergence ?? null }));

test('a fork from the API: lane B is lane A up to t, then the action; the core marks where they part; forks of forks', async () => {
  app.errors.length = 0;
  const page = app.page;
  await open(page);
  const r = await page.evaluate(async () => {
    const events = [];
    document.addEventListener('failoverlab:fork', (e) => events.push(e.detail));
    failoverLab.runFor(40000);
    failoverLab.seek(12000); // paused in the past: crash 1 at 10 s has happened, the restart at 30 s not yet
    const b = await failoverLab.fork(12000, { crash: 2 });
    failoverLab.runFor(8000);
    const c = await failoverLab.fork(20000, { restart: 2 }, 'B');
    failoverLab.runFor(20000);
    let refused = null;
    try {
      await failoverLab.fork(1000, { crash: 9 });
    } catch (e) {
      refused = e.message;
    }
    return { b, c, events, refused, forks: failoverLab.forks(), lanes: failoverLab.lanes().map((l) => ({ hash: l.report.trace_hash, end: l.report.end_ms, fork: l.fork ?? null, divergence: l.divergence ?? null })), link: failoverLab.shareUrl() };
  });
  assert.deepEqual(r.b, { lane: 'B', from: 'A', at_ms: 12000, action: { crash: 2 } });
  assert.deepEqual(r.c, { lane: 'C', from: 'B', at_ms: 20000, action: { restart: 2 } });
  assert.deepEqual(r.events, [r.b, r.c], 'one failoverlab:fork event per fork');
  assert.match(r.refused, /action\.crash: 9 is out of range/);
  assert.equal(r.lanes.length, 3);
  assert.deepEqual(r.lanes.map((l) => l.end), [40000, 40000, 40000]);
  assert.deepEqual(r.lanes[1].divergence, { from: 'A', at_ms: 12000, index: r.lanes[1].divergence.index });
  assert.equal(r.lanes[2].divergence.from, 'B');
  assert.equal(r.lanes[2].divergence.at_ms, 20000);
  assert.equal(new Set(r.lanes.map((l) => l.hash)).size, 3, 'three different runs');
  assert.match(r.link, /forks=A~12000:crash:2,B~20000:restart:2/);
  // Drawn: a heading per fork, its parting, the divergence box and the timeline marks.
  assert.equal(await page.locator('.lane[data-fork]').count(), 2);
  assert.match(await page.locator('.lane[data-lane="B"] .lane-fork').textContent(), /fork what if crash broker 2 at 12\.000 s · from lane A/);
  assert.match(await page.locator('.lane[data-lane="B"] .lane-part').textContent(), /Parts from lane A at 12\.000 s: Step: crash broker 2/);
  assert.match(await page.locator('.cmp-div-head span').textContent(), /Lanes A and B diverge at 12\.000 s/);
  assert.equal(await page.locator('.tl-mark.fork').count(), 2);
  // Lane A is the run as it was: broker 1 restarted at 30 s, broker 2 never crashed.
  const a = await page.evaluate(() => failoverLab.report().brokers.map((b) => b.state));
  assert.deepEqual(a, ['running', 'running', 'running']);

  // The link, in a fresh page: the same lanes, frame for frame.
  const fresh = await app.context.newPage();
  try {
    await openPage(fresh, r.link, { timeout: 20000 });
    await fresh.waitForFunction(() => window.failoverLab.lanes().length === 3 && window.failoverLab.now() === 40000, null, { timeout: 20000 });
    const again = await fresh.evaluate(lanesNow);
    assert.deepEqual(again, r.lanes, 'the link reproduces every lane: trace hashes, forks, divergences');
    // The lanes the script's lanes() landed are drawn by the page's next frame.
    const view = (p) => p.evaluate(async () => {
      for (let i = 0; i < 2; i++) await new Promise((res) => requestAnimationFrame(res));
      return [...document.querySelectorAll('.lane')].map((l) => [l.querySelector('.lane-head').textContent, l.querySelector('.lane-part')?.textContent ?? '', l.querySelector('.lane-sum').textContent]);
    });
    assert.deepEqual(await view(fresh), await view(page), 'the same view at the same time');
    // Time travel in the fresh page: back before the fork, the lanes are one run again.
    const before12 = await fresh.evaluate(() => {
      failoverLab.seek(11000);
      return failoverLab.lanes().map((l) => l.report.trace_hash);
    });
    assert.equal(new Set(before12).size, 1, 'before the fork, every lane is lane A');
  } finally {
    await fresh.close();
  }
  assert.deepEqual(app.errors, []);
});

test('the fork lane is the scenario the core builds: the same trace hash as a plain run of it', async () => {
  app.errors.length = 0;
  const page = app.page;
  await open(page);
  const r = await page.evaluate(async () => {
    failoverLab.runFor(5000);
    failoverLab.isolate(3);
    failoverLab.runFor(10000);
    await failoverLab.fork(15000, { crash: 2 });
    failoverLab.runFor(45000);
    const lane = failoverLab.lanes()[1].report.trace_hash;
    // The same fork built twice: the same run.
    await failoverLab.compare(null);
    failoverLab.seek(15000);
    await failoverLab.fork(15000, { crash: 2 });
    failoverLab.runFor(45000);
    return { lane, again: failoverLab.lanes()[1].report.trace_hash, a: failoverLab.lanes()[0].report.trace_hash };
  });
  assert.equal(r.again, r.lane, 'same fork twice, same trace hash');
  assert.notEqual(r.a, r.lane);
  assert.deepEqual(app.errors, []);
});

test('keyboard only: choose "what if … here?", fork with a broker key, read the lanes; replace the future stays the default', async () => {
  app.errors.length = 0;
  const page = app.page;
  await open(page);
  await page.evaluate(() => {
    failoverLab.runFor(20000);
    failoverLab.seek(12000);
  });
  // The choice is shown, "replace the future" pressed.
  assert.equal(await page.locator('.act-mode').isVisible(), true);
  assert.equal(await page.locator('[data-act-mode="replace"]').getAttribute('aria-pressed'), 'true');
  await page.locator('body').focus();
  await page.keyboard.press('f');
  assert.equal(await page.locator('[data-act-mode="fork"]').getAttribute('aria-pressed'), 'true');
  // A digit key crashes that broker: here, in a new lane.
  await page.keyboard.press('3');
  await page.waitForFunction(() => window.failoverLab.lanes().length === 2);
  const r = await page.evaluate(() => ({ forks: failoverLab.forks(), actions: failoverLab.actions() }));
  assert.deepEqual(r.forks, [{ lane: 'B', from: 'A', at_ms: 12000, action: { crash: 3 } }]);
  assert.deepEqual(r.actions, [], 'lane A is untouched');
  // The lanes are read from the keyboard: Tab reaches the lane's Remove button and the divergence's "Go to" button.
  const reached = new Set();
  for (let i = 0; i < 80 && reached.size < 2; i++) {
    await page.keyboard.press('Tab');
    const f = await page.evaluate(() => document.activeElement?.id || document.activeElement?.className || '');
    if (f === 'compare-jump') reached.add('jump');
    if (String(f).includes('lane-drop')) reached.add('drop');
  }
  assert.deepEqual([...reached].sort(), ['drop', 'jump']);
  const region = await page.locator('section.lane[data-lane="B"]').getAttribute('aria-label');
  assert.equal(region, 'Lane B: what if crash broker 3 at 12.000 s, a fork of lane A');
  // The broker menu, opened from the keyboard in fork mode, says where its action goes.
  await page.locator('.lane[data-lane="A"] [data-broker="2"]').first().focus();
  await page.keyboard.press('Enter');
  await page.waitForSelector('#broker-menu:not([hidden]) .menu-note');
  assert.match(await page.locator('#broker-menu .menu-note').textContent(), /new lane C from lane A at 12\.000 s/);
  await page.keyboard.press('Escape');
  // Back to "replace the future": the old behaviour, lane A's later actions dropped.
  await page.keyboard.press('f');
  await page.evaluate(() => failoverLab.compare(null));
  await page.evaluate(() => {
    failoverLab.runFor(3000);
    failoverLab.isolate(2);
    failoverLab.seek(13000);
  });
  await page.locator('body').focus();
  await page.keyboard.press('3');
  const after = await page.evaluate(() => failoverLab.actions());
  assert.deepEqual(after, [{ at_ms: 13000, action: { crash: 3 } }], 'replace the future: the isolate at 15 s is gone');
  assert.deepEqual(app.errors, []);
});

test('a switch changed in "what if" mode adds a settings lane (a setting holds from t = 0); the fork lanes stay, after it', async () => {
  app.errors.length = 0;
  const page = app.page;
  await open(page);
  await page.evaluate(async () => {
    failoverLab.runFor(15000);
    await failoverLab.fork(12000, { crash: 2 });
  });
  await page.locator('[data-act-mode="fork"]').click();
  await page.locator('#acks').selectOption('1');
  await page.waitForFunction(() => window.failoverLab.lanes().length === 3);
  const r = await page.evaluate(() => ({ lanes: failoverLab.lanes().map((l) => [l.settings, l.fork?.from ?? null]), forks: failoverLab.forks(), acks: document.getElementById('acks').value }));
  assert.deepEqual(r.lanes, [['', null], ['acks=1', null], ['', 'A']]);
  assert.deepEqual(r.forks, [{ lane: 'C', from: 'A', at_ms: 12000, action: { crash: 2 } }]);
  assert.equal(r.acks, 'all', 'lane A keeps its acks: the switch went to lane B');
  assert.deepEqual(app.errors, []);
});

test('a tour stop offers "What if … here?": it switches actions to forking, and the next one forks the tour', async () => {
  app.errors.length = 0;
  const page = app.page;
  await open(page, '?scenario=tour-1-leader-dies.json&stop=3');
  await page.waitForSelector('#tour [data-tour="what-if"]:not([hidden])');
  await page.waitForFunction(() => window.failoverLab.now() === 12000 && !window.failoverLab.seeking);
  await page.locator('#tour [data-tour="what-if"]').click();
  assert.equal(await page.locator('[data-act-mode="fork"]').getAttribute('aria-pressed'), 'true');
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.broker), '1', 'focus goes to the map');
  await page.keyboard.press('3');
  await page.waitForFunction(() => window.failoverLab.lanes().length === 2);
  const r = await page.evaluate(() => ({ forks: failoverLab.forks(), div: failoverLab.lanes()[1].divergence }));
  assert.deepEqual(r.forks, [{ lane: 'B', from: 'A', at_ms: 12000, action: { crash: 3 } }]);
  assert.equal(r.div.at_ms, 12000);
  assert.deepEqual(app.errors, []);
});

for (const theme of ['light', 'dark']) {
  test(`axe: forks on the page and in the element (${theme}) have no violation`, async () => {
    app.errors.length = 0;
    const page = app.page;
    await page.emulateMedia({ colorScheme: theme });
    await open(page, `?scenario=leader-dies.json&paused=1&theme=${theme}`);
    await page.evaluate(async () => {
      failoverLab.runFor(20000);
      failoverLab.seek(12000);
      await failoverLab.fork(12000, { crash: 2 });
      failoverLab.runFor(8000);
    });
    await page.evaluate(() => window.failoverLab.pause());
    await page.locator('[data-act-mode="fork"]').click();
    assert.deepEqual(await axe(page), []);
    await page.locator('.lane[data-lane="B"] [data-broker="3"]').first().click();
    await page.waitForSelector('#broker-menu:not([hidden])');
    assert.deepEqual(await axe(page), [], 'with the fork-mode broker menu open');
    await page.keyboard.press('Escape');
    // The element: fork() and its event, then axe on its shadow root.
    await page.goto(`${app.baseUrl}/embed-demo.html`);
    await page.waitForFunction(() => document.querySelector('failover-lab')?.dataset.ready === 'true', null, { timeout: 20000 });
    const r = await page.evaluate(async (th) => {
      const el = document.querySelector('failover-lab');
      el.setAttribute('theme', th);
      const got = [];
      el.addEventListener('fork', (e) => got.push(e.detail));
      el.runFor(12000);
      const d = await el.fork(12000, { crash: 2 });
      el.runFor(6000);
      return { d, got, forks: el.forks(), lanes: el.lanes().map((l) => l.divergence ?? null) };
    }, theme);
    assert.equal(r.d.lane, 'B');
    assert.deepEqual(r.got, [r.d]);
    assert.deepEqual(r.forks, [r.d]);
    assert.equal(r.lanes[1].from, 'A');
    assert.ok(r.lanes[1].at_ms >= 12000);
    assert.deepEqual(await axe(page, await page.evaluate(() => 'failover-lab')), []);
    assert.deepEqual(app.errors, []);
  });
}

test('<failover-lab forks="…"> builds the lanes a link gives; a bad one says why', async () => {
  app.errors.length = 0;
  const page = app.page;
  await page.goto(`${app.baseUrl}/embed-demo.html`);
  const r = await page.evaluate(async () => {
    const mk = (forks) => {
      const el = document.createElement('failover-lab');
      el.setAttribute('scenario', 'scenarios/leader-dies.json');
      el.setAttribute('forks', forks);
      document.body.append(el);
      return el;
    };
    const good = mk('A~12000:crash:2');
    const bad = mk('A~12000:crash:7');
    await Promise.all([good.ready, bad.ready]);
    good.runFor(15000);
    return { forks: good.forks(), lanes: good.lanes().length, error: bad.getAttribute('data-error') };
  });
  assert.deepEqual(r.forks, [{ lane: 'B', from: 'A', at_ms: 12000, action: { crash: 2 } }]);
  assert.equal(r.lanes, 2);
  assert.match(r.error, /^forks="A~12000:crash:7": fork: action\.crash: 7 is out of range/);
});
