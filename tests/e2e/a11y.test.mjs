// Accessibility (issue 13): axe-core (npm, pinned) finds no violation of the
// WCAG 2.1 A/AA rules nor of its best practices (a level-one heading, every
// part of the page in a landmark, landmarks named apart, visible labels) on
// index.html, embed-demo.html, embed.html and tradeoffs.html, nor inside a
// <failover-lab> shadow root, in the light and the dark theme; a
// keyboard-only walk (Tab to a broker, open its menu, crash it, step a tour)
// on the page and in the element; the narration's polite live region;
// prefers-reduced-motion; themes by attribute, ?theme= and the page's switch.
// Needs `make build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, frames, WWW, ROOT } from './helpers.mjs';

const AXE = path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];

let app;

before(async () => {
  assert.ok(fs.existsSync(AXE), 'node_modules/axe-core is missing: run `make setup`');
  assert.ok(fs.existsSync(path.join(WWW, 'dist', 'app.js')), 'www/dist is missing: run `make build` first');
  app = await startApp();
});

after(async () => {
  await app?.close();
});

/** Run axe on the page (open shadow roots included) or on `context`; returns "rule: target" lines. */
async function axe(page, context = null) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(
    async ({ tags, context }) => {
      const res = await window.axe.run(context ?? document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
      return res.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 4).map((n) => JSON.stringify(n.target) + (n.failureSummary ? ` — ${n.failureSummary.split('\n').slice(1, 2).join(' ')}` : '')).join('; ')}`);
    },
    { tags: TAGS, context },
  );
  return violations;
}

async function open(url, { scheme = 'dark', reducedMotion = 'no-preference' } = {}) {
  const page = app.page;
  await page.emulateMedia({ colorScheme: scheme, reducedMotion });
  app.errors.length = 0;
  await page.goto(url);
  return page;
}

const ready = (page) => page.waitForFunction(() => document.body?.dataset.ready === 'true', null, { timeout: 20000 });
const labsReady = (page, n) =>
  page.waitForFunction((k) => document.querySelectorAll('failover-lab[data-ready="true"]').length === k, n, { timeout: 20000 });

for (const theme of ['light', 'dark']) {
  test(`axe: index.html in the ${theme} theme has no violation, best practices included (also with the broker menu and help open)`, async () => {
    const page = await open(`${app.baseUrl}/?theme=${theme}&paused=1`);
    await ready(page);
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), theme);
    // Run a little so every panel has content: a crash, a new leader, narration.
    await page.evaluate(() => {
      window.failoverLab.runFor(12000);
      window.failoverLab.crash(2);
      window.failoverLab.runFor(9000);
    });
    await frames(page);
    assert.deepEqual(await axe(page), []);
    await page.locator('#map [data-broker="3"]').click();
    await page.locator('#broker-menu').waitFor({ state: 'visible', timeout: 5000 }); // its code is fetched when a menu first opens
    assert.deepEqual(await axe(page), [], 'with the broker menu open');
    await page.keyboard.press('Escape');
    await page.locator('#help-btn').click();
    await page.waitForSelector('#help .gloss dt'); // its words and glossary, fetched when it opens
    assert.deepEqual(await axe(page), [], 'with the help open');
    assert.deepEqual(app.errors, []);
  });

  test(`axe: compare mode (three lanes, the divergence, a compare tour) in the ${theme} theme has no violation`, async () => {
    const page = await open(`${app.baseUrl}/?theme=${theme}&paused=1`);
    await ready(page);
    await page.evaluate(async () => {
      await window.failoverLab.compare('acks=1|acks=all,min.insync.replicas=2|unclean.leader.election.enable=true');
      window.failoverLab.runFor(5000);
      window.failoverLab.crash(1);
      window.failoverLab.runFor(15000);
    });
    assert.equal(await page.locator('.lane').count(), 3);
    // Drawn once lanes B and C, built a frame each, have landed.
    await page.locator('.cmp-div').waitFor({ state: 'visible', timeout: 20000 });
    await frames(page);
    assert.deepEqual(await axe(page), []);
    // Lanes whose cluster and logs equal lane A's fold their map into it (lanes.js), as B and C
    // do at 20 s here: open the menu from the first lane whose map is drawn.
    await page.locator('.lane svg [data-broker="2"]').first().click();
    await page.locator('#broker-menu').waitFor({ state: 'visible', timeout: 5000 }); // its code is fetched when a menu first opens
    assert.deepEqual(await axe(page), [], 'with a lane broker menu open');
    await page.keyboard.press('Escape');
    await page.goto(`${app.baseUrl}/?scenario=tour-12-unclean-acceptable.json&theme=${theme}`);
    await ready(page);
    await page.waitForFunction(() => window.failoverLab.lanes().length === 2);
    await page.evaluate(() => window.failoverLab.tourNext());
    await page.evaluate(() => window.failoverLab.tourNext());
    await page.evaluate(() => window.failoverLab.tourNext());
    assert.deepEqual(await axe(page), [], 'compare tour at the divergence');
    const el = await open(`${app.baseUrl}/embed.html?scenario=leader-dies.json&theme=${theme}&compare=${encodeURIComponent('acks=1|acks=all')}`, { scheme: theme });
    await el.waitForSelector('failover-lab[data-ready="true"]', { timeout: 20000 });
    await el.waitForFunction(() => document.querySelector('failover-lab').shadowRoot.querySelectorAll('.lane').length === 2);
    assert.deepEqual(await axe(el), [], 'the element in compare mode');
    assert.deepEqual(app.errors, []);
  });

  test(`axe: a guided tour on index.html in the ${theme} theme has no violation`, async () => {
    const page = await open(`${app.baseUrl}/?scenario=tour-1-leader-dies.json&theme=${theme}`);
    await ready(page);
    await page.evaluate(() => window.failoverLab.tourNext());
    assert.deepEqual(await axe(page), []);
  });

  test(`axe: embed.html?theme=${theme} and its element's shadow root have no violation`, async () => {
    const page = await open(`${app.baseUrl}/embed.html?scenario=leader-dies.json&theme=${theme}&controls=all&panels=all`, { scheme: theme === 'light' ? 'dark' : 'light' });
    await labsReady(page, 1);
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), theme, '?theme= wins over the system scheme');
    assert.equal(await page.evaluate(() => document.querySelector('failover-lab').shadowRoot.querySelector('.fl').dataset.theme), theme);
    await page.evaluate(() => document.querySelector('failover-lab').runFor(20000));
    assert.deepEqual(await axe(page), []);
    // The shadow root on its own (axe's shadow DOM selector: host, then inside).
    assert.deepEqual(await axe(page, { include: [[['failover-lab', '.fl']]] }), []);
    assert.deepEqual(app.errors, []);
  });

  test(`axe: tradeoffs.html in the ${theme} theme, its sweep done, has no violation`, async () => {
    const page = await open(`${app.baseUrl}/tradeoffs.html?seeds=10&theme=${theme}`, { scheme: theme });
    await page.waitForFunction(() => window.tradeoffResults?.done && window.tradeoffResults.links, null, { timeout: 120000 });
    assert.deepEqual(await axe(page), []);
    assert.deepEqual(app.errors, []);
  });

  test(`axe: embed-demo.html with the system in ${theme} (theme="auto" elements follow it) has no violation`, async () => {
    const page = await open(`${app.baseUrl}/embed-demo.html`, { scheme: theme });
    await labsReady(page, 3);
    const themes = await page.evaluate(() => [...document.querySelectorAll('failover-lab')].map((e) => e.shadowRoot.querySelector('.fl').dataset.theme));
    assert.deepEqual(themes, [theme, theme, theme]);
    await page.evaluate(() => {
      for (const lab of document.querySelectorAll('failover-lab')) lab.pause();
      document.querySelector('#lab-a').runFor(20000);
    });
    assert.equal(await page.isVisible('#a-question'), true, "the page's leaderchange listener showed its question");
    assert.deepEqual(await axe(page), []);
    assert.deepEqual(app.errors, []);
  });
}

test('themes: theme="light|dark|auto" on the element, auto follows prefers-color-scheme live; a bad value is an error in the element', async () => {
  const page = await open(`${app.baseUrl}/embed.html?scenario=leader-dies.json`, { scheme: 'light' });
  await labsReady(page, 1);
  const eff = () => page.evaluate(() => document.querySelector('failover-lab').shadowRoot.querySelector('.fl').dataset.theme);
  assert.equal(await eff(), 'light', 'auto + light system');
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.waitForFunction(() => document.querySelector('failover-lab').shadowRoot.querySelector('.fl').dataset.theme === 'dark');
  await page.evaluate(() => document.querySelector('failover-lab').setAttribute('theme', 'light'));
  assert.equal(await eff(), 'light', 'the attribute wins over the system');
  // The light theme really is light: the frame's background is near white, text near black.
  const colours = await page.evaluate(() => {
    const fl = document.querySelector('failover-lab').shadowRoot.querySelector('.fl');
    const cs = getComputedStyle(fl);
    return { bg: cs.backgroundColor, fg: cs.color };
  });
  const lum = (c) => c.match(/\d+/g).slice(0, 3).map(Number).reduce((a, b) => a + b, 0) / 3;
  assert.ok(lum(colours.bg) > 200 && lum(colours.fg) < 60, JSON.stringify(colours));
  await page.evaluate(() => document.querySelector('failover-lab').setAttribute('theme', 'dark'));
  assert.equal(await eff(), 'dark');
  const dark = await page.evaluate(() => getComputedStyle(document.querySelector('failover-lab').shadowRoot.querySelector('.fl')).backgroundColor);
  assert.ok(lum(dark) < 60, dark);
  await page.evaluate(() => document.querySelector('failover-lab').setAttribute('theme', 'purple'));
  await page.waitForFunction(() => document.querySelector('failover-lab').hasAttribute('data-error'));
  assert.match(await page.evaluate(() => document.querySelector('failover-lab').getAttribute('data-error')), /theme="purple": expected light, dark or auto/);
  assert.deepEqual(app.errors, []);
});

test("themes: the page's switch changes the theme and ?theme=; a bad ?theme= is a banner, not a crash", async () => {
  const page = await open(`${app.baseUrl}/?paused=1`, { scheme: 'dark' });
  await ready(page);
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
  await page.selectOption('#theme', 'light');
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'light');
  assert.match(page.url(), /[?&]theme=light/);
  const bg = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  assert.equal(bg, 'rgb(246, 247, 249)');
  await page.selectOption('#theme', 'auto');
  assert.doesNotMatch(page.url(), /theme=/);
  await open(`${app.baseUrl}/?theme=sepia&paused=1`);
  await ready(page);
  assert.match(await page.locator('#banner-text').textContent(), /theme="sepia": expected light, dark or auto/);
  assert.deepEqual(app.errors, []);
});

/** Press Tab until `pred(activeElement)` holds (looking into shadow roots); fails after `max` presses. */
async function tabTo(page, selectorInside, max = 80) {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    const hit = await page.evaluate((sel) => {
      let el = document.activeElement;
      while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
      return !!el?.matches?.(sel);
    }, selectorInside);
    if (hit) return i + 1;
  }
  throw new Error(`${selectorInside} not reached with ${max} Tab presses`);
}

const focused = (page) =>
  page.evaluate(() => {
    let el = document.activeElement;
    while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
    return { tag: el?.tagName, text: el?.textContent?.trim() ?? '', action: el?.dataset?.action ?? null, broker: el?.dataset?.broker ?? null };
  });

test('keyboard only on index.html: Tab to a broker, Enter opens its menu, Enter crashes it; Tab to the tour, Enter steps it', async () => {
  const page = await open(`${app.baseUrl}/?scenario=tour-1-leader-dies.json`);
  await ready(page);
  // The tour's first button press (Start) takes the clock to stop 1.
  await tabTo(page, '#tour button[data-tour="next"]');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('#tour').dataset.stop === '1');
  const t1 = await page.evaluate(() => window.failoverLab.now());
  assert.ok(t1 > 0, 'the tour ran the clock to its first stop');
  // Space on the focused Next button presses it too (not play/pause).
  await page.keyboard.press(' ');
  await page.waitForFunction(() => document.querySelector('#tour').dataset.stop === '2');
  assert.equal(await page.evaluate(() => window.failoverLab.playing), false);
  // Now a broker: Tab until one has focus, open its menu with Enter.
  await tabTo(page, '[data-broker="3"]');
  await page.keyboard.press('Enter');
  await page.locator('#broker-menu').waitFor({ state: 'visible', timeout: 5000 }); // its code is fetched when a menu first opens
  const first = await focused(page);
  assert.equal(first.action, 'crash', `focus moved into the menu: ${JSON.stringify(first)}`);
  await page.keyboard.press('Enter');
  assert.equal(await page.locator('#broker-menu').isVisible(), false);
  assert.equal(await page.locator('#map [data-broker="3"]').getAttribute('data-state'), 'crashed');
  assert.equal((await focused(page)).broker, '3', 'focus is back on the broker');
  assert.deepEqual(
    await page.evaluate(() => window.failoverLab.actions().map((a) => a.action)),
    [{ crash: 3 }],
  );
  // The narration's polite live region said so.
  const live = await page.evaluate(() => {
    const r = document.querySelector('#narration [role="status"]');
    return { polite: r?.getAttribute('aria-live'), text: r?.textContent ?? '' };
  });
  assert.equal(live.polite, 'polite');
  assert.match(live.text, /broker 3|Broker 3/i);
  assert.deepEqual(app.errors, []);
});

test('keyboard only in the element: Tab into its shadow root to a broker, open its menu, crash it, step its tour', async () => {
  const page = await open(`${app.baseUrl}/embed.html?scenario=tour-1-leader-dies.json&controls=all`);
  await labsReady(page, 1);
  await tabTo(page, '[data-tour="next"]');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('failover-lab').shadowRoot.querySelector('section.tour').dataset.stop === '1');
  // The stop is drawn at the next frames (the map for its time): Tab after
  // that, or the broker focused may be one the redraw replaces (the clean
  // clone's run of a8e8fc6 failed so, focus back on the body).
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 50)))));
  await tabTo(page, '[data-broker="2"]');
  await page.keyboard.press('Enter');
  const first = await focused(page);
  assert.equal(first.action, 'crash', JSON.stringify(first));
  await page.keyboard.press('Enter');
  assert.equal(
    await page.evaluate(() => document.querySelector('failover-lab').shadowRoot.querySelector('[data-broker="2"]').dataset.state),
    'crashed',
  );
  assert.deepEqual(await page.evaluate(() => document.querySelector('failover-lab').actions().map((a) => a.action)), [{ crash: 2 }]);
  assert.deepEqual(app.errors, []);
});

test('prefers-reduced-motion: no messages in flight, no flying truncated cells; without it both are drawn', async () => {
  const count = async (reducedMotion) => {
    const page = await open(`${app.baseUrl}/?scenario=rejoining-leader-truncates.json&paused=1`, { reducedMotion });
    await ready(page);
    // Run to just after the old leader rejoins and truncates.
    const t = await page.evaluate(() => {
      const lab = window.failoverLab;
      for (let i = 0; i < 600; i++) {
        lab.runFor(100);
        if (lab.trace(0).some((e) => e.event === 'truncated')) break;
      }
      // Counted at once: the flying cells of the truncation just drawn.
      const ghosts = [...document.querySelectorAll('.cell.ghost')].filter((g) => getComputedStyle(g).display !== 'none').length;
      return { now: lab.now(), ghosts };
    });
    const ghosts = t.ghosts;
    // Step on in 10 ms steps: each drawn frame adds the view's messages in
    // flight as dots (the most seen at once is counted, synchronously).
    const dots = await page.evaluate(() => {
      let most = 0;
      for (let i = 0; i < 300; i++) {
        window.failoverLab.runFor(10);
        most = Math.max(most, document.querySelectorAll('#map .dots circle').length);
      }
      return most;
    });
    return page.evaluate(({ now, dots, ghosts }) => ({
      now,
      dots,
      ghosts,
      animation: getComputedStyle(document.querySelector('.narr li') ?? document.body).animationDuration,
    }), { now: t.now, dots, ghosts });
  };
  const moving = await count('no-preference');
  const still = await count('reduce');
  assert.ok(moving.dots > 0, `messages fly without the preference: ${JSON.stringify(moving)}`);
  assert.ok(moving.ghosts > 0, `truncated records fly off without the preference: ${JSON.stringify(moving)}`);
  assert.equal(still.dots, 0, JSON.stringify(still));
  assert.equal(still.ghosts, 0, JSON.stringify(still));
  assert.equal(still.now, moving.now, 'the same state either way');
  assert.equal(still.animation, '0s', 'CSS animations are instant');
});

// The trade-off explorer (issue 12): axe with results, with a bad set= banner,
// in both themes; the keyboard path to a configuration is its table link.
const explorerDone = (page) =>
  page.waitForFunction(() => window.tradeoffResults?.done && window.tradeoffResults.links, null, { timeout: 120000 });

for (const theme of ['light', 'dark']) {
  test(`axe: tradeoffs.html in the ${theme} theme has no violation (results, hover card, a bad set= banner)`, async () => {
    const page = await open(`${app.baseUrl}/tradeoffs.html?seeds=2&set=acks=all&theme=${theme}`);
    await explorerDone(page);
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), theme);
    assert.deepEqual(await axe(page), []);
    await page.hover('#table tbody tr:nth-child(5)');
    assert.deepEqual(await axe(page), [], 'with a row highlighted');
    await open(`${app.baseUrl}/tradeoffs.html?seeds=2&set=bogus.key=1&theme=${theme}`);
    await page.waitForFunction(() => window.tradeoffResults?.state === 'error');
    assert.deepEqual(await axe(page), [], 'with the error banner');
    assert.deepEqual(app.errors, []);
  });
}

test('keyboard only on tradeoffs.html: Tab through the form to a configuration\'s worst-seed link, which opens that run in the lab', async () => {
  const page = await open(`${app.baseUrl}/tradeoffs.html?seeds=1&set=acks=1&set=rf=3`);
  await explorerDone(page);
  await page.evaluate(() => document.activeElement?.blur());
  let found = null;
  for (let i = 0; i < 40 && !found; i++) {
    await page.keyboard.press('Tab');
    found = await page.evaluate(() => (document.activeElement?.closest('td.wlink') ? document.activeElement.getAttribute('href') : null));
  }
  assert.ok(found, 'a worst-seed link is reachable with Tab');
  assert.match(found, /^index\.html#scenario-data=/);
  // Focus highlights the configuration's mark in the chart too.
  const key = await page.evaluate(() => document.activeElement.closest('tr').dataset.key);
  assert.equal(await page.evaluate((k) => document.querySelector(`#chart a.mark[data-key="${k}"]`).classList.contains('hl'), key), true);
  const [lab] = await Promise.all([app.context.waitForEvent('page'), page.keyboard.press('Enter')]);
  await lab.waitForFunction(() => document.body?.dataset.ready === 'true', null, { timeout: 30000 });
  assert.match(await lab.evaluate(() => window.failoverLab.exportScenario().name), new RegExp(`^sweep seed \\d+ \\(${key.replace(/[.]/g, '\\.')}\\)$`));
  await lab.close();
  assert.deepEqual(app.errors, []);
});

// Issue 62, item 5: the first Tab stop skips the header to the cluster, and
// the header leads back to the welcome (its levels and Check yourself).
test('a skip link is the first Tab stop and takes the focus to the cluster; the header links back to the welcome', async () => {
  const page = await open(`${app.baseUrl}/?scenario=leader-dies.json&paused=1`);
  await ready(page);
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.className), 'skip');
  assert.equal(await page.locator('a.skip').isVisible(), true, 'visible while focused');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'cluster');
  await page.locator('header a[href="?welcome=1"]').click();
  await page.waitForSelector('#welcome:not([hidden])', { timeout: 20000 });
  assert.ok(await page.locator('#welcome [data-check]').count() >= 4, 'Check yourself for each level');
});
