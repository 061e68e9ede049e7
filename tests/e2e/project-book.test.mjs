// The project's own book (docs/book, built by scripts/build-book.sh into
// www/book/ and served with the page at /book/). Every chapter listed in
// SUMMARY.md is opened in Chromium (tests/e2e/book-chapters.mjs, run in two
// parts by project-book-chapters-1/-2.test.mjs):
//   - each live <failover-lab> reaches ready, with no console error;
//   - every "Try this" button (data-try) is clicked, in page order, and its
//     effect is checked through the element's own API: a fault is the last
//     recorded action and changes the broker's state, runFor and seek move
//     the clock exactly where they say, compare opens the lanes it names (or
//     closes them), a reload carries the producers' new acks, reset returns
//     to the range's start;
//   - axe-core (WCAG 2.1 A/AA) finds nothing in <main>, in the light theme
//     and, picked from mdBook's theme menu, the navy one (the elements
//     follow: dark);
//   - every internal link (main, and the README's links into the book's
//     sources) leads to a page that exists, and a #fragment to an element
//     of that page.
// Also: the page's help links to "Checked against Kafka 4.4.0", whose grid
// has a row per real-cluster recording; the reference chapters name every
// method, property, event and attribute failover-lab.d.ts declares. Needs
// `make build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, ROOT, WWW } from './helpers.mjs';

import { BOOK_SRC, BOOK_OUT, RECORDINGS } from './book-chapters.mjs';

let app;

before(async () => {
  assert.ok(fs.existsSync(path.join(BOOK_OUT, 'kafka-4.4.html')), 'www/book is missing: run `make build` (scripts/build-book.sh)');
  app = await startApp({ colorScheme: 'light' });
});

after(async () => {
  await app?.close();
});

test("the README's links into the book's sources all exist", () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const links = [...readme.matchAll(/\]\(((?:docs)\/[^)#\s]+)(#[^)]*)?\)/g)].map((m) => m[1]);
  assert.ok(links.length >= 30, `the README links into the book (${links.length} links)`);
  const missing = links.filter((l) => !fs.existsSync(path.join(ROOT, l)));
  assert.deepEqual(missing, []);
  const lines = readme.split('\n').length;
  assert.ok(lines < 200, `the README is a front door: ${lines} lines`);
});

test('the reference chapters name every method, property, event and attribute of failover-lab.d.ts', () => {
  const dts = fs.readFileSync(path.join(WWW, 'failover-lab.d.ts'), 'utf8');
  const block = (name) => {
    const start = dts.indexOf(`interface ${name}`);
    assert.ok(start >= 0, `failover-lab.d.ts declares ${name}`);
    const open = dts.indexOf('{', start);
    let depth = 0;
    for (let i = open; i < dts.length; i++) {
      if (dts[i] === '{') depth++;
      if (dts[i] === '}' && --depth === 0) return dts.slice(open + 1, i).replace(/\/\*\*[\s\S]*?\*\//g, '');
    }
    throw new Error(`${name} never closes`);
  };
  const members = (name) => [...block(name).matchAll(/^\s{4}(?:readonly\s+)?(\w+)\??[(:]/gm)].map((m) => m[1]).filter((m) => !['addEventListener', 'removeEventListener'].includes(m));
  const api = fs.readFileSync(path.join(BOOK_SRC, 'reference', 'browser-api.md'), 'utf8');
  const named = (doc, n) => new RegExp('`' + n + '[`(]').test(doc);
  const methods = [...members('FailoverLabApi'), ...members('FailoverLabElement'), ...members('FailoverLabPageApi')];
  assert.ok(methods.length >= 30, `methods read from the type file: ${methods}`);
  assert.deepEqual(methods.filter((m) => !named(api, m)), [], 'browser-api.md names every member');
  const events = [...block('FailoverLabElementEventMap').matchAll(/^\s{4}(\w+): CustomEvent/gm)].map((m) => m[1]);
  const pageEvents = [...block('DocumentEventMap').matchAll(/'(failoverlab:\w+)'/g)].map((m) => m[1]);
  assert.ok(events.length >= 6 && pageEvents.length >= 5, `${events} / ${pageEvents}`);
  assert.deepEqual([...events, ...pageEvents].filter((e) => !named(api, e)), [], 'browser-api.md names every event');
  const element = fs.readFileSync(path.join(BOOK_SRC, 'reference', 'element.md'), 'utf8');
  const attrs = [...block('FailoverLabAttributes').matchAll(/^\s{4}(\w+)\?:/gm)].map((m) => m[1]);
  assert.ok(attrs.length >= 12, `attributes: ${attrs}`);
  assert.deepEqual(attrs.filter((a) => !named(element, a)), [], 'element.md names every attribute');
});

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
  assert.deepEqual(app.errors, []);
});

test("the book's first page runs the default scenario live: crash the leader, a new leader with the epoch one higher", async () => {
  const page = app.page;
  await page.goto(`${app.baseUrl}/book/`);
  await page.evaluate(() => localStorage.setItem('mdbook-theme', 'light'));
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
  assert.deepEqual(app.errors, []);
});

test(`mdBook's search is on: S opens it, and a search for "unclean election" finds its chapter`, async () => {
  const page = app.page;
  await page.goto(`${app.baseUrl}/book/index.html`);
  const index = fs.readdirSync(BOOK_OUT).filter((f) => /^searchindex.*\.js$/.test(f));
  assert.equal(index.length, 1, 'one search index in www/book');
  await page.keyboard.press('s');
  await page.waitForSelector('#mdbook-searchbar', { state: 'visible' });
  await page.locator('#mdbook-searchbar').pressSequentially('unclean election');
  await page.waitForFunction(() => document.querySelectorAll('#mdbook-searchresults a').length > 0, null, { timeout: 20000 });
  const hits = await page.evaluate(() => [...document.querySelectorAll('#mdbook-searchresults a')].map((a) => new URL(a.href).pathname));
  assert.ok(hits.some((h) => h.endsWith('/questions/unclean-election.html')), `the unclean election chapter is found (${hits.slice(0, 5)})`);
  assert.deepEqual(app.errors, []);
});

test("the page's header links to the book", async () => {
  const page = app.page;
  await page.goto(`${app.baseUrl}/`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
  const link = page.locator('header a[href="book/"], a.picker[href="book/"]').first();
  assert.equal(await link.isVisible(), true, 'the header shows the link');
  await Promise.all([page.waitForURL(/\/book\/$/), link.click()]);
  assert.match(await page.locator('main h1').first().textContent(), /Start here/);
  assert.deepEqual(app.errors, []);
});

test('a "Try this" button far below its lab scrolls the lab into view, smoothly unless the reader prefers reduced motion', async () => {
  // The chapter walk (book-chapters.mjs) runs with reduced motion to save a
  // second per button; this checks labs.js's `showLab` in both modes.
  const page = app.page;
  for (const motion of ['no-preference', 'reduce']) {
    await page.emulateMedia({ reducedMotion: motion });
    await page.goto(`${app.baseUrl}/book/cost/rack-loss-tour.html`);
    await page.waitForFunction(() => document.querySelector('main failover-lab')?.dataset.ready === 'true', null, { timeout: 30000 });
    const button = page.locator('button[data-try]').last();
    await button.scrollIntoViewIfNeeded();
    const labTop = () => page.evaluate(() => document.querySelector('main failover-lab').getBoundingClientRect().top);
    assert.ok((await labTop()) < 0, `${motion}: the lab is above the screen before the click`);
    const tops = [];
    await page.evaluate(() => {
      window.__tops = [];
      const lab = document.querySelector('main failover-lab');
      const tick = () => {
        window.__tops.push(lab.getBoundingClientRect().top);
        if (window.__tops.length < 120) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    await button.click();
    await page.waitForFunction(() => {
      const top = document.querySelector('main failover-lab').getBoundingClientRect().top;
      return top > -1 && top < window.innerHeight * 0.5;
    }, null, { timeout: 5000 });
    await page.waitForFunction(() => window.__tops.length >= 120, null, { timeout: 10000 });
    tops.push(...(await page.evaluate(() => window.__tops)));
    // Frames strictly between the start and the end show a scroll in progress.
    const first = tops[0];
    const last = tops.at(-1);
    const between = tops.filter((t) => Math.abs(t - first) > 1 && Math.abs(t - last) > 1).length;
    if (motion === 'reduce') assert.equal(between, 0, `reduce: one jump (${between} frames in between)`);
    else assert.ok(between >= 2, `no-preference: a smooth scroll over frames (${between} frames in between)`);
    assert.equal(await button.evaluate((b) => b === document.activeElement), true, `${motion}: focus stays on the button`);
  }
  await page.emulateMedia({ reducedMotion: 'no-preference' });
  assert.deepEqual(app.errors, []);
});

// Issue 62, item 7: mdBook's own chrome. Its sidebar toggle (a <label> with
// ARIA a label may not carry, and no keyboard stop), the search box named by
// its placeholder and the menu bar outside every landmark failed axe; the
// search breadcrumb read "How to read this part » …"; an `mdx` block made
// highlight.js warn. docs/book/theme-a11y.js mends the chrome at load.
test("mdBook's chrome passes axe (whole page, search open), the sidebar toggle works from the keyboard, search breadcrumbs name the part, no highlight warning", async () => {
  const page = app.page;
  const warnings = [];
  const onConsole = (m) => m.type() === 'warning' && warnings.push(m.text());
  page.on('console', onConsole);
  const axeAll = async () => {
    if (!(await page.evaluate(() => !!window.axe))) await page.addScriptTag({ path: path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js') });
    return page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations.map((v) => `${v.id}: ${v.nodes.map((n) => JSON.stringify(n.target)).join('; ')}`));
  };
  await page.goto(`${app.baseUrl}/book/embedding.html`);
  await page.waitForSelector('button[aria-controls="mdbook-sidebar"]');
  assert.deepEqual(await axeAll(), [], 'the whole page');
  const toggle = page.locator('button[aria-controls="mdbook-sidebar"]');
  const expanded = () => toggle.getAttribute('aria-expanded');
  const before = await expanded();
  await toggle.focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction((b) => document.querySelector('button[aria-controls="mdbook-sidebar"]').getAttribute('aria-expanded') !== b, before);
  assert.equal(await expanded(), before === 'true' ? 'false' : 'true', 'Enter toggles the table of contents');
  await page.keyboard.press('Enter');
  await page.waitForFunction((b) => document.querySelector('button[aria-controls="mdbook-sidebar"]').getAttribute('aria-expanded') === b, before);
  await page.keyboard.press('s');
  await page.waitForSelector('#mdbook-searchbar', { state: 'visible' });
  await page.locator('#mdbook-searchbar').pressSequentially('unclean election');
  await page.waitForFunction(() => document.querySelectorAll('#mdbook-searchresults li').length > 0, null, { timeout: 20000 });
  assert.deepEqual(await axeAll(), [], 'with search results');
  const crumbs = await page.$$eval('#mdbook-searchresults li', (ls) => ls.map((l) => l.innerText.split('\n')[0]));
  assert.ok(crumbs.some((c) => c.startsWith('The questions » ')), `breadcrumbs: ${crumbs.slice(0, 3)}`);
  assert.ok(!crumbs.some((c) => c.includes('How to read this part')), `breadcrumbs: ${crumbs.slice(0, 3)}`);
  page.off('console', onConsole);
  assert.deepEqual(warnings, []);
  assert.deepEqual(app.errors, []);
});
