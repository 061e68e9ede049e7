// Issue 62, item 6 (what smallscreen.test.mjs did not catch): at 390×844
// the sticky tour card covered the evidence it rings. Tour 16 stop 3 rang
// lane A's leader pill and partition: the first was scrolled into view
// "nearest", so it sat at the window's bottom and the pills above it went
// under the card; the first highlight could also be a hidden panel's copy.
// The card (tour-guide.js `place`) now puts the stop's first evidence just
// under itself, with the rings just above it that fit, and no ring is cut
// by its edge; a card that overflows says so ("more ▾", keyboard reachable);
// the <failover-lab> element's card does the same and keeps Start / Next in
// the window; the partition card's epoch labels and rings stay off the row
// labels and each other's text. Needs `make build`.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, tourClick, ROOT, openPage } from './helpers.mjs';

const stopsOf = (file) => JSON.parse(fs.readFileSync(path.join(ROOT, 'scenarios', file), 'utf8')).tour;

const apps = [];
after(async () => {
  for (const a of apps) await a.close();
});

const frames = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => requestAnimationFrame(r)))));

/** Open `file`'s tour and walk its stops by Next: yields each stop's number once it shows. */
async function* stopsByNext(page, baseUrl, file) {
  await openPage(page, `${baseUrl}/?scenario=${file}`, { timeout: 30000 });
  for (let i = 1; i <= stopsOf(file).length; i++) {
    await tourClick(page.locator('#tour [data-tour="next"]'));
    await page.waitForFunction((k) => document.querySelector('#tour')?.dataset.stop === String(k), i, { timeout: 60000 });
    await frames(page);
    yield i;
  }
}

/**
 * Where the stop's evidence is against the card, read in the page (or in an
 * element's shadow root, `host` its selector): the first evidence (the stop's
 * first highlight name that has a laid-out element outside the card, as
 * tour-guide.js picks it), every ring the card's bottom edge cuts, Next.
 */
async function evidence(page, file, host = null) {
  const stop = Number(await page.evaluate((h) => (h ? document.querySelector(h).shadowRoot : document).querySelector('.tour').dataset.stop, host));
  return page.evaluate(async ([host, names]) => {
    const { highlightSelectors } = await import('/tour.js');
    const root = host ? document.querySelector(host).shadowRoot : document;
    const card = root.querySelector('.tour');
    const shown = (el) => !card.contains(el) && el.getClientRects().length > 0;
    let first = null;
    for (const n of names) {
      for (const sel of highlightSelectors(n)) first ??= [...root.querySelectorAll(sel)].find(shown);
      if (first) break;
    }
    const c = card.getBoundingClientRect();
    const box = (b) => [Math.round(b.top), Math.round(b.bottom)];
    const cut = [...root.querySelectorAll('.tour-hl')].filter(shown).map((e) => e.getBoundingClientRect())
      .filter((b) => b.height > 0 && b.top < c.bottom - 1 && b.bottom > c.bottom + 1).map(box);
    const next = root.querySelector('[data-tour="next"]').getBoundingClientRect();
    const f = first?.getBoundingClientRect();
    // Its compare lane's head, if it is in a lane.
    const head = first?.closest('.lane')?.querySelector('.lane-head')?.getBoundingClientRect();
    return { names, card: box(c), first: f && box(f), head: head && box(head), cut, next: box(next), vh: innerHeight };
  }, [host, stopsOf(file)[stop - 1].highlight]);
}

function assertPlaced(r, at) {
  assert.ok(r.first, `${at}: no evidence of ${r.names} shows`);
  // The first evidence is below the card, not under it (its top may be lower: the page ends).
  assert.ok(r.first[0] >= r.card[1], `${at}: the evidence ${r.first} is under the card ${r.card}`);
  assert.ok(r.first[0] < r.vh, `${at}: the evidence ${r.first} is below the window (${r.vh})`);
  assert.deepEqual(r.cut, [], `${at}: rings cut by the card's edge (${r.card})`);
  assert.ok(r.next[0] >= 0 && r.next[1] <= r.vh, `${at}: Next at ${r.next}`);
}

// Tour 16 stop 3 is the known case; 13 and 16 are compare tours (a ring per
// lane), 17 rings brokers in the map and consumers far below it.
const TOURS = ['tour-13-acks1-vs-acks-all.json', 'tour-16-replication-factor.json', 'tour-17-follower-fetching.json'];

test('390×844: at every stop of tours 13, 16 and 17 the first ringed evidence is below the card, no ring is cut by its edge, Next shows', async () => {
  const app = await startApp({ viewport: { width: 390, height: 844 } });
  apps.push(app);
  const { page } = app;
  for (const file of TOURS) {
    for await (const i of stopsByNext(page, app.baseUrl, file)) assertPlaced(await evidence(page, file), `${file} stop ${i}`);
  }
  // A link to a stop places it too, and keeps it placed while the page
  // grows above it (tour 18's overview loads after the first frame: its
  // brokers went 600 px down, below the window).
  for (const [file, stop] of [['tour-16-replication-factor.json', 3], ['tour-18-rack-loss.json', 1]]) {
    await openPage(page, `${app.baseUrl}/?scenario=${file}&stop=${stop}`, { timeout: 30000 });
    await page.waitForFunction(() => !document.querySelector('.overview-panel') || document.querySelector('.overview-panel').hidden || document.querySelector('#overview canvas'), null, { timeout: 30000 });
    await frames(page);
    assertPlaced(await evidence(page, file), `${file}, a link to stop ${stop}`);
  }
  assert.deepEqual(app.errors, []);
});

// At 1280×800 a compare tour's stop showed a ringed partition row under the
// card with its lane's head (A, the lane's settings) above the window, so the
// row named no lane (tour 13 stop 2); and in compare mode the clients and
// narration stood in a column beside an empty one, the metrics' (tour 21
// stop 2: the window showed the clients' evidence and a blank half).
test('1280×800: at every stop of tours 13, 16 and 21 the evidence shows under the card with its lane\'s head when both fit, and compare mode lays the panels below across the width', async () => {
  const app = await startApp({ viewport: { width: 1280, height: 800 } });
  apps.push(app);
  const { page } = app;
  let lanes = 0;
  for (const file of ['tour-13-acks1-vs-acks-all.json', 'tour-16-replication-factor.json', 'tour-21-group-protocols-failover.json']) {
    for await (const i of stopsByNext(page, app.baseUrl, file)) {
      const at = `${file} stop ${i}`;
      const r = await evidence(page, file);
      assertPlaced(r, at);
      const { head } = r;
      if (head && r.first[1] - head[0] <= r.vh - r.card[1] - 16) {
        lanes++;
        assert.ok(head[0] >= r.card[1], `${at}: the evidence ${r.first} shows, its lane's head ${head} is under the card ${r.card} though both fit`);
      }
    }
    if (file.startsWith('tour-21')) {
      // A link to stop 2, the clients' evidence: what stands beside it.
      await openPage(page, `${app.baseUrl}/?scenario=${file}&stop=2`, { timeout: 30000 });
      await page.waitForFunction(() => document.querySelector('#tour')?.dataset.stop === '2' && document.body.classList.contains('comparing'), null, { timeout: 60000 });
      await frames(page);
      const box = await page.evaluate(() => Object.fromEntries(['.metrics-panel', '.clients-panel', '.narr-panel', '.describe-panel'].map((s) => {
        const b = document.querySelector(s).getBoundingClientRect();
        return [s, { left: Math.round(b.left), right: Math.round(b.right), top: Math.round(b.top), bottom: Math.round(b.bottom) }];
      })));
      const [m, c, nr, d] = Object.values(box);
      assert.ok(c.top >= m.bottom && nr.top === c.top && d.top === c.top, `clients, narration and describe in one row under the metrics: ${JSON.stringify(box)}`);
      assert.ok(c.right <= nr.left && nr.right <= d.left, `side by side, in that order: ${JSON.stringify(box)}`);
    }
  }
  assert.ok(lanes >= 3, `only ${lanes} stops had their evidence in a lane with room for its head`);
  assert.deepEqual(app.errors, []);
});

test('390×844: a card with more text than it shows has a "more" button, reached by keyboard, that pages it and then goes back to the top', async () => {
  const app = await startApp({ viewport: { width: 390, height: 844 } });
  apps.push(app);
  const { page } = app;
  const card = () => page.evaluate(() => {
    const c = document.getElementById('tour');
    const more = c.querySelector('[data-tour="more"]');
    const b = more.getBoundingClientRect();
    const cb = c.getBoundingClientRect();
    return { over: c.scrollHeight > c.clientHeight + 4, top: c.scrollTop, shown: more.checkVisibility(), text: more.textContent, inCard: b.top >= cb.top && b.bottom <= cb.bottom + 1, vh: innerHeight, bottom: b.bottom };
  });
  // Tour 17 stop 1: the text and a question, more than 45% of the window.
  await openPage(page, `${app.baseUrl}/?scenario=tour-17-follower-fetching.json&stop=1`, { timeout: 30000 });
  await frames(page);
  let c = await card();
  assert.ok(c.over, 'tour 17 stop 1 overflows its card');
  assert.ok(c.shown && c.inCard && c.bottom <= c.vh, `the cue shows at the card's bottom: ${JSON.stringify(c)}`);
  assert.match(c.text, /more/);
  // Tab reaches it (after the card's own buttons), Enter pages the card.
  await page.locator('#tour [data-tour="next"]').focus();
  let reached = false;
  for (let k = 0; k < 30 && !reached; k++) {
    await page.keyboard.press('Tab');
    reached = await page.evaluate(() => document.activeElement?.dataset?.tour === 'more');
  }
  assert.ok(reached, 'Tab reaches the "more" button');
  for (let k = 0; k < 10 && !/top/.test((c = await card()).text); k++) {
    const before = c.top;
    await page.keyboard.press('Enter');
    await frames(page);
    assert.ok((await card()).top > before, 'Enter scrolls the card on');
  }
  assert.match(c.text, /top/, 'at the end the button offers the top');
  await page.keyboard.press('Enter');
  await frames(page);
  c = await card();
  assert.equal(c.top, 0);
  assert.match(c.text, /more/);
  // Paged down, then Next: the next stop opens at the top of the card.
  await page.keyboard.press('Enter');
  await frames(page);
  assert.ok((await card()).top > 0);
  await tourClick(page.locator('#tour [data-tour="next"]'));
  await page.waitForFunction(() => document.querySelector('#tour').dataset.stop === '2');
  assert.equal((await card()).top, 0, 'stop 2 opens at the top of the card');
  // A card whose text fits shows no cue.
  await openPage(page, `${app.baseUrl}/?scenario=tour-13-acks1-vs-acks-all.json&stop=1`, { timeout: 30000 });
  await frames(page);
  c = await card();
  assert.ok(!c.over && !c.shown, `tour 13 stop 1 fits: ${JSON.stringify(c)}`);
  assert.deepEqual(app.errors, []);
});

test('390×844: the element\'s tour card keeps Start and Next in the window and its evidence below the card; a script\'s tourNext() leaves the host page where it is', async () => {
  const app = await startApp({ viewport: { width: 390, height: 844 } });
  apps.push(app);
  const { page } = app;
  const url = `${app.baseUrl}/element-small-tour.html`;
  await page.route(url, (r) => r.fulfill({
    contentType: 'text/html',
    body: `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>t</title>
      <script type="module" src="failover-lab.js"></script><main><h1>A page</h1><p>Prose above the lab.</p>
      <failover-lab id="t" scenario="scenarios/tour-16-replication-factor.json"></failover-lab><p style="height: 600px">Prose below.</p></main>`,
  }));
  await page.goto(url);
  await page.waitForFunction(() => document.querySelector('#t')?.dataset.ready === 'true', null, { timeout: 30000 });
  const start = await page.evaluate(() => {
    const b = document.querySelector('#t').shadowRoot.querySelector('[data-tour="next"]');
    const r = b.getBoundingClientRect();
    return { text: b.textContent, top: r.top, bottom: r.bottom, vh: innerHeight };
  });
  assert.match(start.text, /Start/);
  assert.ok(start.top >= 0 && start.bottom <= start.vh, `Start at ${start.top}–${start.bottom}`);
  const n = stopsOf('tour-16-replication-factor.json').length;
  const stopOf = () => page.evaluate(() => document.querySelector('#t').shadowRoot.querySelector('.tour').dataset.stop);
  for (let i = 1; i <= n; i++) {
    await tourClick(page.locator('#t button[data-tour="next"]'));
    await page.waitForFunction((k) => document.querySelector('#t').shadowRoot.querySelector('.tour')?.dataset.stop === String(k), i, { timeout: 60000 });
    await frames(page);
    assertPlaced(await evidence(page, 'tour-16-replication-factor.json', '#t'), `element, tour 16 stop ${i}`);
  }
  // A script drives the tour: the reader's page does not move.
  await page.evaluate(() => scrollTo(0, 0));
  await page.evaluate(() => document.querySelector('#t').tourBack());
  await frames(page);
  assert.equal(await stopOf(), String(n - 1));
  assert.equal(await page.evaluate(() => scrollY), 0);
  assert.deepEqual(app.errors, []);
});

test('390×844 and 1280×800: epoch labels stay off the replica rows\' labels, and a ring stays off its neighbours\' text', async () => {
  const cases = [
    [390, 844, 'tour-5-rejoining-leader.json', 3],
    [390, 844, 'tour-16-replication-factor.json', 3],
    [390, 844, 'tour-13-acks1-vs-acks-all.json', 3],
    [1280, 800, 'tour-13-acks1-vs-acks-all.json', 3],
    [1280, 800, 'tour-5-rejoining-leader.json', 3],
  ];
  for (const [width, height, file, stop] of cases) {
    const app = await startApp({ viewport: { width, height } });
    apps.push(app);
    const { page } = app;
    await openPage(page, `${app.baseUrl}/?scenario=${file}&stop=${stop}`, { timeout: 30000 });
    await frames(page);
    const r = await page.evaluate(() => {
      const meets = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
      const textBoxes = (el, skip) => {
        const out = [];
        const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        for (let t = walk.nextNode(); t; t = walk.nextNode()) {
          if (!t.textContent.trim() || skip(t.parentElement)) continue;
          const range = document.createRange();
          range.selectNodeContents(t);
          for (const b of range.getClientRects()) if (b.width && b.height) out.push({ b, text: t.textContent.trim() });
        }
        return out;
      };
      const bad = [];
      for (const card of document.querySelectorAll('.pcard')) {
        if (!card.getClientRects().length) continue;
        // Epoch labels against the row labels (B1 ★ leader ISR).
        const labels = [...card.querySelectorAll('.rlabel')].flatMap((l) => textBoxes(l, () => false));
        for (const eb of card.querySelectorAll('.eb')) {
          const b = eb.getBoundingClientRect();
          for (const l of labels) if (meets(b, l.b)) bad.push(`${eb.textContent} covers "${l.text}"`);
        }
        // A ring's outline (its box grown by outline-offset + width) against the text outside it
        // (the epoch labels paint over a ring, on their own background).
        for (const hl of card.querySelectorAll('.tour-hl')) {
          const s = getComputedStyle(hl);
          if (s.outlineStyle === 'none') continue;
          const o = hl.getBoundingClientRect();
          const grow = (g) => ({ left: o.left - g, right: o.right + g, top: o.top - g, bottom: o.bottom + g });
          // The ring's line runs between these two boxes.
          const ring = grow(parseFloat(s.outlineOffset) + parseFloat(s.outlineWidth));
          const inner = grow(parseFloat(s.outlineOffset));
          for (const t of textBoxes(card, (el) => hl.contains(el) || el.closest('.eb'))) {
            // Text the ring's line crosses: inside the ring's outer box, not wholly inside its inner one.
            const whollyIn = t.b.left >= inner.left && t.b.right <= inner.right && t.b.top >= inner.top && t.b.bottom <= inner.bottom;
            if (meets(ring, t.b) && !whollyIn) bad.push(`the ring of ${hl.className} "${hl.textContent.trim().slice(0, 20)}" crosses "${t.text}"`);
          }
        }
      }
      return bad;
    });
    assert.deepEqual(r, [], `${width}×${height} ${file} stop ${stop}`);
    assert.deepEqual(app.errors, []);
    await app.close();
  }
});

test('axe: at 390×844, in both themes, a long stop with its "more" cue, a compare stop and the element\'s tour have no violation', async () => {
  const AXE = path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js');
  const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];
  const axe = (page) => page.addScriptTag({ path: AXE }).then(() => page.evaluate(async (tags) => {
    const res = await window.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return res.violations.map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)).join('; ')}`);
  }, TAGS));
  for (const colorScheme of ['light', 'dark']) {
    const app = await startApp({ viewport: { width: 390, height: 844 }, colorScheme });
    apps.push(app);
    const { page } = app;
    for (const q of ['scenario=tour-17-follower-fetching.json&stop=1', 'scenario=tour-16-replication-factor.json&stop=4']) {
      await openPage(page, `${app.baseUrl}/?${q}`, { timeout: 30000 });
      await frames(page);
      assert.ok(await page.locator('#tour [data-tour="more"]').isVisible(), `${q}: the cue shows`);
      assert.deepEqual(await axe(page), [], `${colorScheme} ${q}`);
    }
    await page.goto(`${app.baseUrl}/embed.html?scenario=tour-17-follower-fetching.json`);
    await page.waitForFunction(() => document.querySelector('failover-lab')?.dataset.ready === 'true', null, { timeout: 30000 });
    await tourClick(page.locator('failover-lab button[data-tour="next"]'));
    await frames(page);
    assert.deepEqual(await axe(page), [], `${colorScheme} the element at tour 17 stop 1`);
    assert.deepEqual(app.errors, []);
  }
});

test('390×844: a glossary term focused by keyboard in a stop\'s text marks itself without crossing the lines above and below', async () => {
  const app = await startApp({ viewport: { width: 390, height: 844 } });
  apps.push(app);
  const { page } = app;
  await openPage(page, `${app.baseUrl}/?scenario=tour-16-replication-factor.json&stop=3`, { timeout: 30000 });
  await page.waitForSelector('#tour .gl-term');
  // Back from the card's first stop dot into its text: the text's last terms.
  await page.locator('#tour .tour-dot').first().focus();
  for (let k = 0; k < 3; k++) {
    await page.keyboard.press('Shift+Tab');
    const r = await page.evaluate(() => {
      const el = document.activeElement;
      if (!el.matches('.gl-term')) return { term: false };
      const s = getComputedStyle(el);
      const g = s.outlineStyle === 'none' ? 0 : parseFloat(s.outlineOffset) + parseFloat(s.outlineWidth);
      const o = el.getBoundingClientRect();
      const mark = { left: o.left - g, right: o.right + g, top: o.top - g, bottom: o.bottom + g };
      const crossed = [];
      const walk = document.createTreeWalker(document.querySelector('#tour .tour-text'), NodeFilter.SHOW_TEXT);
      for (let t = walk.nextNode(); t; t = walk.nextNode()) {
        if (el.contains(t)) continue;
        const range = document.createRange();
        range.selectNodeContents(t);
        for (const b of range.getClientRects()) {
          if (b.width && b.left < mark.right && mark.left < b.right && b.top < mark.bottom && mark.top < b.bottom && (b.bottom <= o.top || b.top >= o.bottom)) crossed.push(t.textContent.trim().slice(0, 30));
        }
      }
      return { term: true, text: el.textContent, visible: s.outlineStyle !== 'none' || s.backgroundColor !== 'rgba(0, 0, 0, 0)', crossed };
    });
    assert.ok(r.term, `Shift+Tab ${k + 1} is on a term`);
    assert.ok(r.visible, `${r.text}: focus shows`);
    assert.deepEqual(r.crossed, [], `${r.text}: its focus mark crosses the lines beside it`);
  }
  assert.deepEqual(app.errors, []);
});
