// The project's own book (docs/book, built by scripts/build-book.sh into
// www/book/ and served with the page at /book/). Every chapter listed in
// SUMMARY.md is opened in Chromium:
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

const AXE = path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js');
const BOOK_SRC = path.join(ROOT, 'docs', 'book', 'src');
const BOOK_OUT = path.join(WWW, 'book');
const RECORDINGS = fs
  .readdirSync(path.join(ROOT, 'tests', 'kafka-recorded'))
  .filter((f) => f.endsWith('.json') && f !== 'differences.json')
  .map((f) => f.replace(/\.json$/, ''))
  .sort();
/** Every chapter of SUMMARY.md, as the .html path mdBook writes. */
const CHAPTERS = [...fs.readFileSync(path.join(BOOK_SRC, 'SUMMARY.md'), 'utf8').matchAll(/\]\(([^)]+\.md)\)/g)].map((m) =>
  m[1] === 'README.md' ? 'index.html' : m[1].replace(/README\.md$/, 'index.html').replace(/\.md$/, '.html'),
);
const FAULTS = { crash: 'crashed', isolate: 'isolated', restart: null, heal: null, shutdown: null, powerLoss: 'crashed' };

let app;

before(async () => {
  assert.ok(fs.existsSync(path.join(BOOK_OUT, 'kafka-4.4.html')), 'www/book is missing: run `make build` (scripts/build-book.sh)');
  app = await startApp({ colorScheme: 'light' });
});

after(async () => {
  await app?.close();
});

async function axeMain(page) {
  if (!(await page.evaluate(() => !!window.axe))) await page.addScriptTag({ path: AXE });
  return page.evaluate(async () => {
    const res = await window.axe.run('main', { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] });
    return res.violations.map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)).join('; ')}`);
  });
}

async function labsReady(page, label) {
  await page
    .waitForFunction(() => [...document.querySelectorAll('failover-lab')].every((l) => l.dataset.ready === 'true' || l.hasAttribute('data-error')), null, { timeout: 30000 })
    .catch(() => {});
  const states = await page.evaluate(() => [...document.querySelectorAll('failover-lab')].map((l) => l.getAttribute('data-error') ?? (l.dataset.ready === 'true' ? 'ready' : 'not ready')));
  assert.ok(states.every((s) => s === 'ready'), `${label}: every lab reaches ready (${JSON.stringify(states)})`);
  return states.length;
}

/** The lab's state a button's effect is read from. */
function labState(page, index) {
  return page.evaluate((i) => {
    const lab = document.querySelectorAll('main failover-lab')[0];
    const b = document.querySelectorAll('button[data-try]')[i];
    return {
      now: lab.now(),
      actions: lab.actions(),
      lanes: lab.lanes().map((l) => l.settings),
      brokers: Object.fromEntries(lab.report().brokers.map((x) => [x.id, x.state])),
      producerAcks: (lab.scenario().clients || []).filter((c) => c.type === 'producer').map((c) => String(c.acks ?? 'all')),
      end: lab.scenario().run_until_ms,
      range: lab.getAttribute('range'),
      done: Number(b.dataset.done || 0),
      said: b.closest('.try')?.querySelector('output')?.textContent ?? '',
    };
  }, index);
}

function rangeStart(range) {
  if (!range) return 0;
  const m = /^(\d+(?:\.\d+)?)(s?)-/.exec(range);
  return m ? Number(m[1]) * (m[2] ? 1000 : 1) : 0;
}

/** Click button `i` and check its effect; returns a label for messages. */
async function clickAndCheck(page, i, chapter) {
  const button = page.locator('button[data-try]').nth(i);
  const action = JSON.parse(await button.getAttribute('data-try'));
  const [key] = Object.keys(action);
  const v = action[key];
  const label = `${chapter}: button ${i} ${JSON.stringify(action)}`;
  const before = await labState(page, i);
  await button.scrollIntoViewIfNeeded();
  await button.click();
  await page.waitForFunction(
    ([n, prev]) => {
      const b = document.querySelectorAll('button[data-try]')[n];
      const out = b.closest('.try')?.querySelector('output')?.textContent ?? '';
      return Number(b.dataset.done || 0) > prev || out.startsWith('refused');
    },
    [i, before.done],
    { timeout: 20000 },
  );
  const s = await labState(page, i);
  assert.equal(s.done, before.done + 1, `${label}: done, not refused (${s.said})`);
  assert.ok(s.said.length > 0, `${label}: says what it did`);
  const last = s.actions.at(-1);
  if (key in FAULTS) {
    assert.deepEqual(last?.action, { [key === 'powerLoss' ? 'power_loss' : key]: v }, `${label}: recorded as the last action`);
    assert.equal(last.at_ms, s.now, `${label}: at the time shown`);
    if (FAULTS[key]) assert.equal(s.brokers[v], FAULTS[key], `${label}: broker ${v} is ${FAULTS[key]}`);
  } else if (key === 'apply' || key === 'produce') {
    const want = key === 'apply' ? v : { produce: { topic: v.topic, partition: v.partition ?? 0, count: v.count, ...(v.acks ? { acks: v.acks } : {}) } };
    assert.deepEqual(last?.action, want, `${label}: recorded as the last action`);
  } else if (key === 'runFor') {
    assert.equal(s.now, Math.min(before.now + v, s.end), `${label}: the clock moved by ${v} ms`);
  } else if (key === 'seek') {
    assert.equal(s.now, v, `${label}: the lab shows ${v} ms`);
  } else if (key === 'compare') {
    assert.deepEqual(s.lanes, v === null ? [] : v.split('|'), `${label}: the lanes`);
  } else if (key === 'acks') {
    assert.ok(s.producerAcks.length > 0 && s.producerAcks.every((a) => a === v), `${label}: every producer has acks=${v} (${s.producerAcks})`);
    assert.deepEqual(s.actions, [], `${label}: a fresh run`);
  } else if (key === 'reset') {
    assert.equal(s.now, rangeStart(s.range), `${label}: back to the range's start`);
    assert.deepEqual(s.actions, [], `${label}: actions forgotten`);
  } else {
    assert.fail(`${label}: the test does not know how to check "${key}"`);
  }
  return label;
}

/** Internal links of the page's <main>: each must exist (and its #fragment). */
async function deadLinks(page, baseUrl) {
  const hrefs = await page.evaluate(() => [...document.querySelectorAll('main a[href]')].map((a) => a.href));
  const dead = [];
  for (const href of new Set(hrefs)) {
    const u = new URL(href);
    if (u.origin !== new URL(baseUrl).origin) continue;
    let file = path.join(WWW, decodeURIComponent(u.pathname));
    if (u.pathname.endsWith('/')) file = path.join(file, 'index.html');
    if (!fs.existsSync(file)) {
      dead.push(`${u.pathname} (no such file)`);
      continue;
    }
    if (u.hash.length > 1 && file.endsWith('.html')) {
      const id = decodeURIComponent(u.hash.slice(1));
      const html = fs.readFileSync(file, 'utf8');
      if (!html.includes(`id="${id}"`)) dead.push(`${u.pathname}${u.hash} (no such anchor)`);
    }
  }
  return dead;
}

test('every chapter: its labs reach ready, every "Try this" button does what it says, axe finds nothing in light and navy, no dead internal link', async () => {
  const page = app.page;
  let buttons = 0;
  let labs = 0;
  await page.goto(`${app.baseUrl}/book/`);
  await page.evaluate(() => localStorage.setItem('mdbook-theme', 'light'));
  for (const chapter of CHAPTERS) {
    // Each chapter opens in the theme the previous one left (light for the
    // first), is checked, and is switched to the other theme from mdBook's
    // theme menu, as a reader does, and checked again.
    await page.goto(`${app.baseUrl}/book/${chapter}`);
    labs += await labsReady(page, chapter);
    assert.deepEqual(app.errors, [], `${chapter}: no console error on load`);
    assert.deepEqual(await deadLinks(page, app.baseUrl), [], `${chapter}: internal links`);
    for (let k = 0; k < 2; k++) {
      const theme = await page.evaluate(() => (document.documentElement.classList.contains('navy') ? 'navy' : 'light'));
      const dark = theme === 'navy';
      const themes = await page.evaluate(() => [...document.querySelectorAll('failover-lab')].map((l) => l.getAttribute('theme')));
      assert.ok(themes.every((t) => t === (dark ? 'dark' : 'light')), `${chapter}: the labs follow ${theme} (${themes})`);
      assert.deepEqual(await axeMain(page), [], `${chapter}: axe, ${theme} theme`);
      if (k === 0) {
        const other = dark ? 'light' : 'navy';
        await page.click('#mdbook-theme-toggle');
        await page.click(`#mdbook-theme-${other}`);
        await page.waitForFunction((o) => document.documentElement.classList.contains(o), other);
      }
    }
    const n = await page.locator('button[data-try]').count();
    for (let i = 0; i < n; i++) await clickAndCheck(page, i, chapter);
    buttons += n;
    assert.deepEqual(app.errors, [], `${chapter}: no console error after its buttons`);
  }
  // The question chapters have a lab each, and the book has many buttons: a
  // SUMMARY that lost its chapters, or a build without the tours' prose,
  // would fail here.
  assert.ok(CHAPTERS.length >= 40, `chapters: ${CHAPTERS.length}`);
  assert.ok(labs >= 18, `labs: ${labs}`);
  assert.ok(buttons >= 150, `buttons: ${buttons}`);
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
