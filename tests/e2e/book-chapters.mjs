// The walk through every chapter of the project's book (docs/book, built by
// scripts/build-book.sh into www/book/), split so that its parts run in
// parallel test files (issue 61): project-book-chapters-1.test.mjs and -2
// each register one part with `chapterWalk(part, parts)`. What a part checks
// is what project-book.test.mjs says at its top: every lab ready, every
// "Try this" button's effect, axe in light and navy, no dead internal link.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, ROOT, WWW } from './helpers.mjs';

export const AXE = path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js');
export const BOOK_SRC = path.join(ROOT, 'docs', 'book', 'src');
export const BOOK_OUT = path.join(WWW, 'book');
export const RECORDINGS = fs
  .readdirSync(path.join(ROOT, 'tests', 'kafka-recorded'))
  .filter((f) => f.endsWith('.json') && f !== 'differences.json')
  .map((f) => f.replace(/\.json$/, ''))
  .sort();
/** Every chapter of SUMMARY.md, as the .html path mdBook writes. */
export const CHAPTERS = [...fs.readFileSync(path.join(BOOK_SRC, 'SUMMARY.md'), 'utf8').matchAll(/\]\(([^)]+\.md)\)/g)].map((m) =>
  m[1] === 'README.md' ? 'index.html' : m[1].replace(/README\.md$/, 'index.html').replace(/\.md$/, '.html'),
);
const FAULTS = { crash: 'crashed', isolate: 'isolated', restart: null, heal: null, shutdown: null, powerLoss: 'crashed' };

export async function axeMain(page) {
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
  } else if (key === 'fork') {
    // "What if … here?": one more lane, and the clock where it was.
    assert.equal(s.lanes.length, (before.lanes.length || 1) + 1, `${label}: one more lane`);
    assert.equal(s.now, before.now, `${label}: the time shown is kept`);
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

/** Register the walk through chapters part, part + parts, … of SUMMARY.md. */
export function chapterWalk(part, parts) {
  let app;
  before(async () => {
    assert.ok(fs.existsSync(path.join(BOOK_OUT, 'kafka-4.4.html')), 'www/book is missing: run `make build` (scripts/build-book.sh)');
    // Reduced motion: labs.js brings a lab into view with a smooth scroll,
    // and Playwright's click waits for its next button to stop moving, about
    // a second per button (191 buttons: 245 of the walk's 285 s). Instant
    // scrolling checks the same effects in 86 s (issue 61); the smooth scroll
    // itself is project-book.test.mjs's.
    app = await startApp({ colorScheme: 'light', reducedMotion: 'reduce' });
  });
  after(async () => {
    await app?.close();
  });

  test(`every chapter (part ${part + 1} of ${parts}, alternating through SUMMARY.md): its labs reach ready, every "Try this" button does what it says, axe finds nothing in light and navy, no dead internal link`, async () => {
    const page = app.page;
    let buttons = 0;
    let labs = 0;
    await page.goto(`${app.baseUrl}/book/`);
    await page.evaluate(() => localStorage.setItem('mdbook-theme', 'light'));
    for (const chapter of CHAPTERS.filter((_, i) => i % parts === part)) {
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
    // Split in parts, each part checks its share (every part's chapters
    // alternate through SUMMARY.md: 10 and 9 labs, 96 and 95 buttons in two).
    assert.ok(CHAPTERS.length >= 40, `chapters: ${CHAPTERS.length}`);
    assert.ok(labs >= Math.floor(18 / parts), `labs: ${labs}`);
    assert.ok(buttons >= Math.floor(150 / parts), `buttons: ${buttons}`);
  });
}
