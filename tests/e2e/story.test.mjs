// Issue 16 ("tell a story people can follow and trust"): what the page shows
// at a tour stop agrees with the tour, and the page helps a learner find the
// evidence. Needs `make build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, frames, landsAt, tourClick } from './helpers.mjs';

let app;
before(async () => {
  app = await startApp({ viewport: { width: 1440, height: 900 } });
});
after(async () => {
  await app?.close();
});

const open = async (query) => {
  await app.page.goto(`${app.baseUrl}/${query}`);
  await app.page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
};
const nextStop = async (n) => {
  for (let i = 0; i < n; i++) await tourClick(app.page.locator('#tour [data-tour="next"]'));
};

test('point 4: the metrics panel shows the values of the stop\'s exact time, not of the last 500 ms sample', async () => {
  app.errors.length = 0;
  const page = app.page;
  await open('?scenario=tour-8-min-insync-replicas.json');
  await nextStop(3); // 13.001 s: the ISR shrinks to {1}, under min ISR
  assert.equal(await page.evaluate(() => failoverLab.now()), 13001);
  const gauges = ['UnderMinIsrPartitionCount', 'UnderReplicatedPartitions', 'AtMinIsrPartitionCount', 'OfflinePartitionsCount'];
  const shown = async () => Object.fromEntries(await Promise.all(gauges.map(async (g) => [g, await page.locator(`.metric[data-metric="${g}"] .mval`).textContent()])));
  const live = () => page.evaluate((gs) => Object.fromEntries(gs.map((g) => [g, String(failoverLab.view().metrics[g])])), gauges);
  assert.equal((await shown()).UnderMinIsrPartitionCount, '1', 'under min ISR at the stop, as the partition badge says');
  assert.deepEqual(await shown(), await live());
  // Any seek, to a time between two samples, too.
  await page.evaluate(() => failoverLab.seek(5003));
  await page.waitForFunction(() => failoverLab.now() === 5003);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  assert.deepEqual(await shown(), await live());
  assert.deepEqual(app.errors, []);
});

test('point 5: a highlight reuses no colour that means something, and ★ has a legend entry', async () => {
  app.errors.length = 0;
  const page = app.page;
  await open('?scenario=tour-7-acks1-loses-data.json');
  await nextStop(1); // highlights hw:orders-0
  const c = await page.evaluate(() => {
    const css = (el, p) => getComputedStyle(el)[p];
    const hw = document.querySelector('.pcard[data-partition="orders-0"] .marker.hw.tour-hl');
    const leo = document.querySelector('.pcard[data-partition="orders-0"] .marker.leo');
    const card = document.querySelector('.client.tour-hl');
    const fenced = (() => {
      const g = document.createElementNS('http://www.w3.org/2000/svg', 'g');
      g.setAttribute('class', 'broker');
      g.dataset.state = 'fenced';
      const r = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
      g.append(r);
      document.querySelector('#map svg').append(g);
      const v = css(r, 'stroke');
      g.remove();
      return v;
    })();
    const crown = document.querySelector('svg text.crown');
    return {
      hwBg: css(hw, 'backgroundColor'),
      hwPlain: (() => {
        hw.classList.remove('tour-hl');
        const v = css(hw, 'backgroundColor');
        hw.classList.add('tour-hl');
        return v;
      })(),
      leo: css(leo, 'borderLeftColor'),
      ring: css(card, 'outlineColor'),
      ringStyle: css(card, 'outlineStyle'),
      crown: css(crown, 'fill'),
      fenced,
      text: css(document.body, 'color'),
    };
  });
  const meaningful = [c.leo, c.fenced];
  const toRgb = (hex) => `rgb(${[1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(', ')})`;
  for (const hex of ['#56B4E9', '#E69F00', '#CC79A7', '#F0E442', '#009E73', '#D55E00']) meaningful.push(toRgb(hex));
  assert.equal(c.hwBg, c.hwPlain, 'a highlighted HW bar keeps its own colour');
  assert.equal(c.ringStyle, 'dashed');
  for (const m of meaningful) {
    assert.notEqual(c.ring, m, 'the highlight ring is no meaningful colour');
    assert.notEqual(c.crown, m, 'the ★ is no meaningful colour');
  }
  assert.match(await page.locator('#msg-legend [data-legend="crown"]').textContent(), /★\s*leads a partition/);
  assert.equal(await page.locator('#tour .tour-key .hlk').count(), 1, 'the tour card shows what a highlight looks like');
  assert.deepEqual(app.errors, []);
});

test('point 11: a broken ?scenario= link says what was not found; a negative seed is refused with a message', async () => {
  const page = app.page;
  app.errors.length = 0;
  await open('?scenario=does-not-exist.json');
  assert.equal(await page.locator('#banner').isVisible(), true, 'a message is shown');
  const msg = await page.locator('#banner-text').textContent();
  assert.match(msg, /does-not-exist\.json/);
  assert.match(msg, /not found/);
  assert.ok(await page.evaluate(() => failoverLab.view().brokers.length > 0), 'the default scenario runs behind the message');
  await open('?scenario=leader-dies.json&seed=-3');
  assert.match(await page.locator('#banner-text').textContent(), /seed=-3.*whole number/);
  assert.equal(await page.locator('#seed').inputValue(), String(JSON.parse(await page.evaluate(() => fetch('scenarios/leader-dies.json').then((r) => r.text()))).seed ?? 0));
  // The seed box refuses it too, and says so.
  await page.locator('#seed').fill('-5');
  await page.locator('#seed').dispatchEvent('change');
  assert.match(await page.locator('#banner-text').textContent(), /seed: "-5" is not a whole number/);
  assert.notEqual(await page.locator('#seed').inputValue(), '-5');
  await open('?scenario=leader-dies.json&seed=7');
  assert.equal(await page.locator('#seed').inputValue(), '7');
  assert.equal(await page.locator('#banner').isVisible(), false);
});

test('point 7: leaving the tour\'s script is noticed, resuming restores the tour\'s run, and Reset resets the switches', async () => {
  const page = app.page;
  app.errors.length = 0;
  await open('?scenario=tour-1-leader-dies.json');
  await nextStop(2);
  const stopAt = await page.evaluate(() => failoverLab.now());
  const own = await page.evaluate(() => JSON.stringify(failoverLab.report()));
  const off = page.locator('#tour .tour-off');
  assert.equal(await off.isVisible(), false, 'on script: no notice');
  // Crash another broker mid-tour (as the broker menu does).
  await page.evaluate(() => failoverLab.crash(3));
  await page.waitForFunction(() => !document.querySelector('#tour .tour-off').hidden);
  assert.match(await off.textContent(), /left the tour's script \(you did crash broker 3 at \d+\.\d{3} s\)/);
  await page.locator('#tour [data-tour="resume"]').click();
  assert.equal(await off.isVisible(), false);
  await landsAt(page, stopAt);
  assert.deepEqual(await page.evaluate(() => [failoverLab.now(), failoverLab.actions().length]), [stopAt, 0]);
  assert.equal(await page.evaluate(() => JSON.stringify(failoverLab.report())), own, 'back on the tour\'s own run');
  // A changed switch is off script too; Reset puts the switches back (and says so in its tooltip).
  await page.locator('#acks').selectOption('0');
  await page.waitForFunction(() => !document.querySelector('#tour .tour-off').hidden);
  assert.match(await off.textContent(), /you changed acks/);
  assert.match(await page.locator('#reset').getAttribute('title'), /switches/);
  await page.locator('#reset').click();
  assert.equal(await page.locator('#acks').inputValue(), 'all');
  assert.equal(await page.evaluate(() => failoverLab.now()), 0);
  await page.waitForFunction(() => document.querySelector('#tour .tour-off').hidden);
  assert.deepEqual(app.errors, []);
});

test('point 3: the log view is navigable; a minimap shows the whole log, rows show their epoch cache, and a tour stop brings its offsets into view', async () => {
  const page = app.page;
  app.errors.length = 0;
  // Tour 1 stop 6 talks about offset 67 while the log ends at 200: the stop brings 67 into view.
  await open('?scenario=tour-1-leader-dies.json');
  await nextStop(6);
  const card = page.locator('.pcard[data-partition="orders-0"]');
  assert.ok(await card.locator('.cell.tour-hl[data-off="67"]').count() >= 3, 'offset 67 is shown (and ringed) on every replica');
  assert.ok(await card.locator('.cell.tour-hl[data-off="67"]').first().isVisible());
  // Tour 3's last stop: the epoch cache {0 → 0, 1 → 49, 2 → 349, 3 → 599} is on screen, as bands and as row marks.
  await open('?scenario=tour-3-leader-epoch.json');
  await nextStop(10);
  const mm = page.locator('.pcard[data-partition="orders-0"] .minimap');
  // Every band says where its epoch starts (a band too narrow for its label keeps it in its title).
  assert.deepEqual(await mm.locator('.mm-band').evaluateAll((els) => els.map((e) => e.title)), ['epoch 0 from offset 0', 'epoch 1 from offset 49', 'epoch 2 from offset 349', 'epoch 3 from offset 599']);
  assert.deepEqual((await mm.locator('.mm-band').allTextContents()).slice(1), ['1 @49', '2 @349', '3 @599']);
  assert.equal(await mm.locator('.mm-hw').count(), 1, 'the HW on the minimap');
  for (const b of [1, 2, 3]) {
    const marks = await page.locator(`.pcard[data-partition="orders-0"] .rrow[data-broker="${b}"] .eb`).evaluateAll((els) => els.map((e) => e.title));
    assert.ok(marks.includes('leader-epoch cache: epoch 3 starts at offset 599'), `broker ${b}'s row marks where epoch 3 starts`);
  }
  // The keyboard moves the window: Home shows offset 0 and the epoch-1 boundary is reachable; End follows the log end again.
  await mm.focus();
  await page.keyboard.press('Home');
  assert.equal(await mm.getAttribute('aria-valuenow'), '0');
  assert.equal(await page.locator('.pcard[data-partition="orders-0"] .rrow[data-broker="1"] .cell[data-off="0"]').count(), 1);
  await page.keyboard.press('ArrowRight'); // half a window on: offset 49 is in view
  assert.ok(await page.locator('.pcard[data-partition="orders-0"] .rrow[data-broker="1"] .eb', { hasText: 'e1' }).count() === 1, 'the epoch-1 boundary at 49');
  await page.keyboard.press('End');
  const end = await page.evaluate(() => failoverLab.view().partitions[0].replica_views[0].log_end_offset);
  assert.equal(await page.locator(`.pcard[data-partition="orders-0"] .rrow[data-broker="1"] .cell[data-off="${end - 1}"]`).count(), 1);
  // A click on the minimap jumps there.
  const box = await mm.boundingBox();
  await page.mouse.click(box.x + box.width * 0.3, box.y + box.height / 2);
  const v = Number(await mm.getAttribute('aria-valuenow'));
  assert.ok(v > 0.2 * end && v < 0.4 * end, `the window moved to about 30 % of the log (${v} of ${end})`);
  assert.deepEqual(app.errors, []);
});

test('point 12: a first visit opens on a short welcome: Start the guided tour, the tours grouped junior → principal from the index', async () => {
  const page = app.page;
  app.errors.length = 0;
  // A tour the welcome has never heard of (no level) still appears, after the levels.
  await page.route('**/scenarios/index.json', async (route) => {
    const res = await route.fetch();
    const list = await res.json();
    list.push({ file: 'tour-99-new.json', name: 'Tour 99 · A brand new question?', tour: true });
    await route.fulfill({ response: res, json: list });
  });
  await page.evaluate(() => localStorage.clear()).catch(() => {});
  // A theme in the address is no reason to skip the welcome (issue 25):
  // ?theme=light on a first visit shows it, in the light theme.
  await open('?theme=light');
  const w = page.locator('#welcome');
  assert.equal(await w.isVisible(), true, '?theme=light still welcomes a first visit');
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme || document.body.dataset.theme), 'light');
  await open('');
  await page.unroute('**/scenarios/index.json');
  assert.equal(await w.isVisible(), true);
  assert.equal(await page.evaluate(() => failoverLab.playing), false, 'nothing runs behind the welcome');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.welcome), 'start', 'Start has the focus');
  assert.deepEqual(await w.locator('.wgroup').evaluateAll((gs) => gs.map((g) => g.dataset.level)), ['junior', 'mid', 'senior', 'principal', 'other']);
  const index = JSON.parse(await page.evaluate(() => fetch('scenarios/index.json').then((r) => r.text())));
  for (const s of index.filter((x) => x.tour)) {
    assert.equal(await w.locator(`.wgroup[data-level="${s.level || 'other'}"] .wlink[data-file="${s.file}"]`).count(), 1, `${s.file} under ${s.level}`);
  }
  assert.equal(await w.locator('.wgroup[data-level="other"] .wlink[data-file="tour-99-new.json"]').count(), 1);
  await page.keyboard.press('Enter'); // Start the guided tour
  // The scenario's name is written a task after the lab has its tour (afterLoad).
  await page.waitForFunction(() => failoverLab.tour().stops.length > 0 && /^Tour 1 /.test(document.getElementById('scn-name').textContent));
  assert.equal(await w.isVisible(), false);
  assert.match(await page.locator('#scn-name').textContent(), /^Tour 1 /);
  assert.equal(await page.locator('#tour [data-tour="next"]').textContent(), 'Start ▶');
  // Seen once: the next bare visit goes straight to the lab.
  await open('');
  assert.equal(await w.isVisible(), false);
  await open('?welcome=1');
  assert.equal(await w.isVisible(), true, '?welcome=1 shows it again');
  await w.locator('[data-welcome="close"]').click();
  assert.equal(await page.evaluate(() => failoverLab.playing), true, 'Explore on my own starts the lab');
  assert.deepEqual(app.errors.filter((e) => !/tour-99/.test(e)), []);
});

test('point 12: panels fold (metrics folded at first, unfolded by a tour stop that points into them); Next event skips the quiet stretch', async () => {
  const page = app.page;
  app.errors.length = 0;
  await open('?scenario=leader-dies.json&paused=1');
  const metrics = page.locator('[data-panel="metrics"]');
  const fold = metrics.locator(':scope > h2 > .fold');
  assert.equal(await fold.getAttribute('aria-expanded'), 'false');
  assert.equal(await metrics.locator('.metric').first().isVisible(), false);
  await fold.click();
  assert.equal(await metrics.locator('.metric').first().isVisible(), true);
  await page.locator('[data-panel="narration"] > h2 > .fold').click();
  assert.equal(await page.locator('#narration').isVisible(), false, 'any panel folds');
  // Next event: from t = 0 straight to the first thing that happens, paused.
  await page.locator('#skip').click();
  const [now, first] = await page.evaluate(() => [failoverLab.now(), failoverLab.trace(0).find((e) => e.at_ms > 0 && e.event === 'step')?.at_ms]);
  assert.ok(now > 0 && now <= first, `stopped at the first event (${now} ms, first step ${first} ms)`);
  assert.ok(await page.evaluate((t) => failoverLab.trace(0).some((e) => e.at_ms === t), now), 'exactly at an event');
  assert.equal(await page.evaluate(() => failoverLab.playing), false);
  // A tour stop highlighting a metric unfolds the metrics panel.
  await open('?scenario=tour-8-min-insync-replicas.json');
  const stops = await page.evaluate(() => failoverLab.tour().stops);
  const i = stops.findIndex((s) => s.highlight.some((n) => n.startsWith('metric:')));
  assert.ok(i >= 0, 'tour 8 points at a metric');
  await nextStop(i + 1);
  assert.equal(await page.locator('[data-panel="metrics"]').evaluate((s) => s.classList.contains('folded')), false);
  assert.ok(await page.locator('.metric.tour-hl').first().isVisible());
  assert.deepEqual(app.errors, []);
});

test('point 10: small screens: at 800×600 a stop brings its evidence into view under the tour card; at 390×844 the map is readable and LEO/HW stay', async () => {
  const page = app.page;
  app.errors.length = 0;
  await page.setViewportSize({ width: 800, height: 600 });
  try {
    await open('?scenario=tour-1-leader-dies.json');
    await nextStop(6); // "copying offsets 67–199"
    const inView = (sel) => page.locator(sel).first().evaluate((el) => {
      const r = el.getBoundingClientRect();
      return r.top >= 0 && r.bottom <= innerHeight && r.height > 0;
    });
    assert.equal(await inView('.cell.tour-hl[data-off="67"]'), true, 'the record the stop talks about is on screen');
    assert.equal(await inView('#tour .tour-text'), true, 'and so is the text talking about it');
    const card = await page.locator('#tour').boundingBox();
    const cell = await page.locator('.cell.tour-hl[data-off="67"]').first().boundingBox();
    assert.ok(cell.y >= card.y + card.height, 'not hidden under the card');

    await page.setViewportSize({ width: 390, height: 844 });
    await open('?scenario=tour-1-leader-dies.json&paused=1');
    const px = await page.locator('#map svg [data-broker="1"] text').first().evaluate((t) => t.getBoundingClientRect().height);
    assert.ok(px >= 9, `broker text is ${px.toFixed(1)} px tall`);
    assert.equal(await page.locator('.pcard .rrow .rinfo').first().isVisible(), true, 'LEO · HW shown');
    await page.evaluate(() => failoverLab.seek(25000));
    await frames(page);
    const clipped = await page.locator('.pcard').evaluateAll((cards) => cards.some((c) => [...c.querySelectorAll('.badge, .rinfo')].some((b) => b.getBoundingClientRect().right > c.getBoundingClientRect().right + 1)));
    assert.equal(clipped, false, 'no badge or LEO/HW runs out of its card');
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), true, 'no sideways scrolling');
  } finally {
    await page.setViewportSize({ width: 1440, height: 900 });
  }
  assert.deepEqual(app.errors, []);
});
