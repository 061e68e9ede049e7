// The <failover-lab> custom element, the iframe page and the docs example:
// three independent instances on www/embed-demo.html, attributes, range lock,
// no leaked globals, bad attributes shown inside the element without any
// uncaught exception, and the npm-shaped package in dist/element working on
// its own. Needs `make build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, startServer, WWW, ROOT, tourClick } from './helpers.mjs';

let app;

before(async () => {
  for (const f of ['pkg/failover_lab.js', 'scenarios/index.json', 'failover-lab.js', 'embed.html', 'embed-demo.html']) {
    assert.ok(fs.existsSync(path.join(WWW, f)), `www/${f} is missing: run \`make build\` first`);
  }
  app = await startApp();
});

after(async () => {
  await app?.close();
});

/** Serve `html` at `name` under the site root (so relative URLs reach www/). */
async function openHtml(name, html) {
  const url = `${app.baseUrl}/${name}`;
  await app.page.route(url, (route) => route.fulfill({ contentType: 'text/html', body: html }));
  app.errors.length = 0;
  await app.page.goto(url);
  return url;
}

const settled = (sel) =>
  app.page.waitForFunction((s) => [...document.querySelectorAll(s)].every((e) => e.dataset.ready === 'true' || e.hasAttribute('data-error')), sel, { timeout: 20000 });

test('the docs example runs three independent instances; crashing a broker in one leaves the others untouched', async () => {
  app.errors.length = 0;
  const page = app.page;
  await page.goto(`${app.baseUrl}/embed-demo.html`);
  await page.waitForFunction(() => document.querySelectorAll('failover-lab[data-ready="true"]').length === 3, null, { timeout: 20000 });
  const names = await page.evaluate(() => [...document.querySelectorAll('failover-lab')].map((e) => e.report().scenario));
  assert.equal(new Set(names).size, 3, `three different scenarios: ${names}`);
  assert.match(names[1], /acks=1/, 'the inline <script type="application/json"> scenario is loaded');
  // Each instance owns its cluster: pause them all and remember b and c.
  const before = await page.evaluate(() => {
    const [a, b, c] = document.querySelectorAll('failover-lab');
    for (const e of [a, b, c]) e.pause();
    return { b: b.report(), c: c.report(), bNow: b.now(), cNow: c.now(), aLeader: a.report().partitions[0].leader };
  });
  // Crash lab A's leader through its own UI (inside its shadow root).
  const leader = before.aLeader;
  await page.locator(`#lab-a svg [data-broker="${leader}"]`).click();
  await page.locator('#lab-a .menu button[data-action="crash"]').click();
  assert.equal(await page.locator(`#lab-a svg [data-broker="${leader}"]`).getAttribute('data-state'), 'crashed');
  const after = await page.evaluate(() => {
    const [a, b, c] = document.querySelectorAll('failover-lab');
    a.runFor(15000);
    return { a: a.report(), aActions: a.actions(), b: b.report(), c: c.report(), bActions: b.actions(), cActions: c.actions() };
  });
  const pa = after.a.partitions[0];
  assert.notEqual(pa.leader, leader, 'lab A failed over');
  assert.equal(after.aActions.length, 1);
  assert.deepEqual(after.b, before.b, 'lab B did not change');
  assert.deepEqual(after.c, before.c, 'lab C did not change');
  assert.deepEqual(after.bActions, []);
  assert.deepEqual(after.cActions, []);
  // The host page's own script drives an element through its methods.
  await page.locator('button[data-call="crash"][data-lab="lab-a"]').click();
  assert.equal(await page.evaluate(() => document.getElementById('lab-a').actions().length), 2);
  // Sized by its container.
  const widths = await page.evaluate(() => [...document.querySelectorAll('failover-lab')].map((e) => [e.getBoundingClientRect().width, e.parentElement.getBoundingClientRect().width]));
  for (const [w, pw] of widths) assert.ok(Math.abs(w - pw) < 2, `element ${w}px wide in a ${pw}px column`);
  assert.deepEqual(app.errors, []);
});

test('the module defines <failover-lab> and leaks no global; the element has the failoverLab methods', async () => {
  const url = await openHtml('blank-element.html', '<!doctype html><title>blank</title><body></body>');
  assert.ok(url);
  const res = await app.page.evaluate(async () => {
    const before = new Set(Object.getOwnPropertyNames(window));
    await import('/failover-lab.js');
    const added = Object.getOwnPropertyNames(window).filter((k) => !before.has(k));
    const el = document.createElement('failover-lab');
    el.setAttribute('scenario', 'scenarios/leader-dies.json');
    el.setAttribute('seed', '11');
    document.body.append(el);
    const ok = await el.ready;
    const methods = ['load', 'crash', 'powerLoss', 'restart', 'shutdown', 'isolate', 'heal', 'produce', 'apply', 'runFor', 'seek', 'play', 'pause', 'setSpeed', 'report', 'describe', 'view', 'trace', 'now', 'actions'];
    const missing = methods.filter((m) => typeof el[m] !== 'function');
    el.runFor(12000);
    el.produce('orders', 1, 5, 'all');
    el.apply({ isolate: 3 });
    el.runFor(1000);
    return {
      added, ok, missing, ready: el.dataset.ready, seed: el.report().seed, now: el.now(),
      actions: el.actions(), desc: el.describe(), trace: el.trace(0).length, view: el.view(1).partitions.length,
      shadow: !!el.shadowRoot, styleInShadow: !!el.shadowRoot.querySelector('style'), globalLab: typeof window.failoverLab,
    };
  });
  assert.deepEqual(res.added, [], `globals leaked: ${res.added}`);
  assert.equal(res.ok, true);
  assert.deepEqual(res.missing, []);
  assert.equal(res.ready, 'true');
  assert.equal(res.seed, 11, 'the seed attribute overrides the scenario seed');
  assert.equal(res.now, 13000);
  assert.deepEqual(res.actions.map((a) => a.at_ms), [12000, 12000]);
  assert.match(res.desc, /Topic: orders/);
  assert.ok(res.trace > 10);
  assert.equal(res.view, 1);
  assert.equal(res.shadow && res.styleInShadow, true);
  assert.equal(res.globalLab, 'undefined');
  assert.deepEqual(app.errors, []);
});

test('broken attributes show a clear message inside the element; no uncaught exception; the host page keeps working', async () => {
  const cases = [
    ['seed="abc"', '<failover-lab id="e1" scenario="scenarios/leader-dies.json" seed="abc"></failover-lab>', /seed="abc": expected a whole number/],
    ['missing file', '<failover-lab id="e2" scenario="scenarios/no-such.json"></failover-lab>', /no-such\.json.*HTTP 404/],
    ['no scenario', '<failover-lab id="e3"></failover-lab>', /no scenario/],
    ['unknown control', '<failover-lab id="e4" scenario="scenarios/leader-dies.json" controls="play bogus"></failover-lab>', /controls="play bogus": unknown "bogus"/],
    ['bad inline JSON', '<failover-lab id="e5"><script type="application/json">{"brokers": 3,</script></failover-lab>', /inline scenario: scenario is not valid JSON|inline scenario: .*(EOF|expected)/i],
    ['invalid scenario', '<failover-lab id="e6"><script type="application/json">{"brokers": 3, "topics": [{"name": "t", "replication_factor": 4}]}</script></failover-lab>', /replication_factor: 4 exceeds the 3 brokers/],
    ['bad speed', '<failover-lab id="e7" scenario="scenarios/leader-dies.json" speed="fast"></failover-lab>', /speed="fast"/],
    ['bad range', '<failover-lab id="e8" scenario="scenarios/leader-dies.json" range="20s-10s"></failover-lab>', /range="20s-10s": the end must come after the start/],
    ['range past the end', '<failover-lab id="e9" scenario="scenarios/leader-dies.json" range="90s-"></failover-lab>', /after the scenario ends/],
  ];
  const html = `<!doctype html><meta charset="utf-8"><script type="module" src="failover-lab.js"></script>
    <button id="host-btn" onclick="this.dataset.n = (+this.dataset.n || 0) + 1">host</button>
    <failover-lab id="good" scenario="scenarios/leader-dies.json"></failover-lab>
    ${cases.map((c) => c[1]).join('\n')}`;
  await openHtml('broken-attributes.html', html);
  const page = app.page;
  await settled('failover-lab');
  for (const [i, [what, , re]] of cases.entries()) {
    const sel = `#e${i + 1}`;
    const attr = await page.locator(sel).getAttribute('data-error');
    assert.match(attr || '', re, `${what}: data-error="${attr}"`);
    const shown = await page.locator(`${sel} .fl-error`).textContent();
    assert.match(shown, re, `${what}: message inside the element`);
    assert.match(shown, /failover-lab/);
    assert.equal(await page.locator(sel).getAttribute('data-ready'), null);
  }
  // The good one next to them works, and so does the host page.
  assert.equal(await page.locator('#good').getAttribute('data-ready'), 'true');
  await page.evaluate(() => document.getElementById('good').runFor(1000));
  await page.locator('#host-btn').click();
  assert.equal(await page.locator('#host-btn').getAttribute('data-n'), '1');
  // Fixing the attribute restarts the element.
  await page.evaluate(() => document.getElementById('e1').setAttribute('seed', '4'));
  await page.waitForFunction(() => document.getElementById('e1').dataset.ready === 'true', null, { timeout: 20000 });
  assert.equal(await page.evaluate(() => document.getElementById('e1').report().seed), 4);
  // Calling a method before it is ready throws a clear Error, not a TypeError.
  const early = await page.evaluate(() => {
    try {
      document.getElementById('e2').crash(1);
      return null;
    } catch (e) {
      return e.message;
    }
  });
  assert.match(early, /not ready yet/);
  const notFound = app.errors.filter((e) => !/404/.test(e));
  assert.deepEqual(notFound, [], 'no uncaught exception, no console error besides the 404 of the missing file');
});

test('range locks the run to a window; compact and controls shape the element', async () => {
  await openHtml('range.html', `<!doctype html><meta charset="utf-8"><script type="module" src="failover-lab.js"></script>
    <div style="width: 520px"><failover-lab id="r" scenario="scenarios/leader-dies.json" range="8s-25s" compact controls="play timeline"></failover-lab></div>
    <failover-lab id="s" scenario="scenarios/leader-epoch.json" range="steps:1-2" controls="none" panels="map describe"></failover-lab>`);
  const page = app.page;
  await settled('failover-lab');
  const res = await page.evaluate(() => {
    const r = document.getElementById('r');
    const s = document.getElementById('s');
    const start = r.now();
    r.runFor(60000);
    const end = r.now();
    r.seek(2000);
    const clampedLow = r.now();
    const rs = r.shadowRoot;
    return {
      start, end, clampedLow, sStart: s.now(),
      width: r.getBoundingClientRect().width,
      buttons: [...rs.querySelectorAll('[data-control]')].map((b) => b.dataset.control),
      timeline: !!rs.querySelector('.fl-timeline'),
      panels: [...rs.querySelectorAll('[data-panel]')].map((p) => p.dataset.panel),
      sPanels: [...s.shadowRoot.querySelectorAll('[data-panel]')].map((p) => p.dataset.panel),
      sButtons: s.shadowRoot.querySelectorAll('button').length,
    };
  });
  assert.equal(res.start, 8000, 'starts at the start of the range');
  assert.equal(res.end, 25000, 'runFor stops at the end of the range');
  assert.equal(res.clampedLow, 8000, 'seek is clamped to the range');
  assert.equal(res.sStart, 5000, 'steps:1-2 starts at the first step (crash at 5 s)');
  assert.equal(Math.round(res.width), 520, 'sized by its container');
  assert.deepEqual(res.buttons, ['play']);
  assert.equal(res.timeline, true);
  assert.deepEqual(res.panels, ['map', 'partitions'], 'compact: map and partitions');
  assert.deepEqual(res.sPanels, ['map', 'describe']);
  assert.equal(res.sButtons, 0, 'controls="none"');
  // Playing stops at the end of the range.
  await page.evaluate(() => {
    const r = document.getElementById('r');
    r.seek(24000);
    r.setSpeed(50);
    r.play();
  });
  await page.waitForFunction(() => !document.getElementById('r').playing, null, { timeout: 10000 });
  assert.equal(await page.evaluate(() => document.getElementById('r').now()), 25000);
  assert.deepEqual(app.errors, []);
});

test('an element asked to play faster than its core runs the scenario shows the speed it reaches beside the asked one', async () => {
  // 3,000 partitions at 100x: no machine's core runs bench/medium that fast.
  await openHtml('fast.html', `<!doctype html><meta charset="utf-8"><script type="module" src="failover-lab.js"></script>
    <failover-lab id="f" scenario="scenarios/bench/medium.json" speed="100" autoplay controls="play speed"></failover-lab>`);
  const page = app.page;
  await settled('failover-lab');
  const speed = () => page.evaluate(() => document.getElementById('f').shadowRoot.querySelector('.fl-speed').textContent);
  await page.waitForFunction(() => document.getElementById('f').shadowRoot.querySelector('.fl-speed').textContent.includes('→'), null, { timeout: 60000 });
  const text = await speed();
  const m = text.match(/^100× → ([\d.]+)×$/);
  assert.ok(m, `the speed reads "${text}"`);
  assert.ok(Number(m[1]) < 80, `the reached speed (${m[1]}x) is below the asked one`);
  await page.evaluate(() => document.getElementById('f').pause());
  await page.waitForFunction(() => document.getElementById('f').shadowRoot.querySelector('.fl-speed').textContent === '100×', null, { timeout: 30000 });
  assert.deepEqual(app.errors, []);
});

test("an element's dragged timeline (and its ← key) says a long seek, replays it a slice per frame with a bar, takes a new target half-way, and lands it for any other call; a short one at once", async () => {
  await openHtml('long-seek.html', `<!doctype html><meta charset="utf-8"><script type="module" src="failover-lab.js"></script>
    <failover-lab id="s" scenario="scenarios/leader-dies.json" controls="play timeline"></failover-lab>`);
  const page = app.page;
  await settled('failover-lab');
  const r = await page.evaluate(async () => {
    const el = document.getElementById('s');
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    const root = el.shadowRoot;
    const range = root.querySelector('.fl-timeline input');
    const note = root.querySelector('.tl-busy');
    const bar = note.querySelector('.tl-bar');
    el.runFor(30000);
    await frame();
    const drag = (v) => {
      range.value = String(v);
      range.dispatchEvent(new Event('input', { bubbles: true }));
    };
    // This machine's pace, whatever it is, makes this seek short.
    drag(29950);
    await frame();
    const short = { now: el.now(), hidden: note.hidden, seeking: el.seeking };
    // A pace set by hand, one wall second per simulated ms: any seek that
    // replays is long now, and a frame replays a slice of it, at most 40
    // events (whatever this machine's pace).
    el.lab.msPerSimMs = 1000;
    el.lab.sliceEvents = 40;
    drag(12340);
    await frame();
    const said = { seeking: el.seeking, hidden: note.hidden, text: note.textContent, role: note.getAttribute('role'), barHidden: bar.getAttribute('aria-hidden') };
    let frames = 0;
    for (; frames < 5000 && el.seeking; frames++) await frame();
    const after = { now: el.now(), hidden: note.hidden, text: note.textContent, frames };
    const landed = el.lab.traceHash();
    // The ← key (and a time clicked in the narration) goes the same way; a
    // drag half-way takes over, and any other call lands the seek at once.
    el.lab.msPerSimMs = 1000;
    el.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowLeft', bubbles: true, composed: true }));
    await frame();
    const key = { seeking: el.seeking, text: note.textContent };
    await frame();
    drag(11500);
    await frame();
    const moved = el.seeking;
    const settled = { now: el.now(), seeking: el.seeking, hidden: note.hidden, drawn: range.value };
    // What the slices reached is what one seek computes.
    el.seek(20000);
    el.seek(12340);
    const again = el.lab.traceHash();
    // A new scenario drops a long seek under way (its note goes at the next frame).
    const scenario = el.scenario();
    el.lab.msPerSimMs = 1000;
    // Off the checkpoints' 100 ms grid: a slow machine may have taken one
    // at 5.000 s on the way to 30 s, and a seek to it replays nothing.
    drag(5050);
    await frame();
    const dropping = el.seeking?.target;
    el.load(scenario);
    await frame();
    const dropped = { seeking: el.seeking, hidden: note.hidden, now: el.now() };
    return { short, said, after, landed, again, key, moved, settled, dropping, dropped };
  });
  assert.deepEqual(r.short, { now: 29950, hidden: true, seeking: null }, 'a short seek is made in the frame after the drag');
  assert.equal(r.said.seeking?.target, 12340, 'a long seek is under way after the frame that said it');
  assert.equal(r.said.hidden, false);
  assert.equal(r.said.role, 'status');
  assert.equal(r.said.barHidden, 'true');
  assert.match(r.said.text, /^Seeking to 12\.340 s \(about \d+ s\)…$/);
  assert.ok(r.after.frames >= 2, `it was replayed over ${r.after.frames} more frames`);
  assert.deepEqual({ ...r.after, frames: 0 }, { now: 12340, hidden: true, text: '', frames: 0 }, 'it lands and clears the note');
  assert.equal(r.landed, r.again, 'the world the slices reached is the one a seek in one go computes');
  assert.equal(r.key.seeking?.target, 11340, 'a long ← is under way');
  assert.match(r.key.text, /^Seeking to 11\.340 s \(about \d+ s\)…$/);
  assert.equal(r.moved?.target, 11500, 'a drag half-way takes over');
  assert.deepEqual(r.settled, { now: 11500, seeking: null, hidden: true, drawn: '11500' }, 'now() lands the seek first');
  assert.equal(r.dropping, 5050, 'a seek between checkpoints is long at this pace');
  assert.deepEqual(r.dropped, { seeking: null, hidden: true, now: 0 }, 'load() drops the seek under way and its note');
  assert.deepEqual(app.errors, []);
});

test('a tour inside the element: Next runs to each stop and highlights it', async () => {
  await openHtml('element-tour.html', `<!doctype html><meta charset="utf-8"><script type="module" src="failover-lab.js"></script>
    <failover-lab id="t" scenario="scenarios/tour-7-acks1-loses-data.json"></failover-lab>`);
  const page = app.page;
  await settled('failover-lab');
  const stops = JSON.parse(fs.readFileSync(path.join(ROOT, 'scenarios', 'tour-7-acks1-loses-data.json'), 'utf8')).tour;
  assert.equal(await page.locator('#t .tour').isVisible(), true);
  for (let i = 0; i < stops.length; i++) {
    await tourClick(page.locator('#t button[data-tour="next"]'));
    assert.equal(await page.evaluate(() => document.getElementById('t').now()), stops[i].at_ms);
    assert.equal(await page.locator('#t .tour-title').textContent(), stops[i].title);
    assert.ok((await page.locator('#t .tour-hl').count()) > 0, `stop ${i + 1} highlights something`);
  }
  assert.equal(await page.evaluate(() => document.getElementById('t').report().acked_records_lost), 1);
  assert.deepEqual(app.errors, []);
});

test('embed.html takes the attributes as URL parameters and reports bad ones in the frame', async () => {
  const page = app.page;
  app.errors.length = 0;
  await page.goto(`${app.baseUrl}/embed.html?scenario=leader-dies.json&seed=9&compact=1&range=8s-25s&controls=play,timeline&autoplay=0`);
  await page.waitForSelector('failover-lab[data-ready="true"]', { timeout: 20000 });
  const r = await page.evaluate(() => {
    const el = document.querySelector('failover-lab');
    return { now: el.now(), seed: el.report().seed, compact: el.hasAttribute('compact'), autoplay: el.hasAttribute('autoplay'), playing: el.playing };
  });
  assert.deepEqual(r, { now: 8000, seed: 9, compact: true, autoplay: false, playing: false });
  assert.deepEqual(app.errors, []);

  await page.goto(`${app.baseUrl}/embed.html?scenario=leader-dies.json&seed=-1`);
  await page.waitForSelector('failover-lab[data-error]', { timeout: 20000 });
  assert.match(await page.locator('failover-lab .fl-error').textContent(), /seed="-1": expected a whole number/);
  await page.goto(`${app.baseUrl}/embed.html?scenario=leader-dies.json&sed=3`);
  await page.locator('.embed-error').waitFor();
  assert.match(await page.locator('.embed-error').textContent(), /unknown parameter "sed"/);
  assert.deepEqual(app.errors, []);
});

test('the npm-shaped package in dist/element is self-contained: exports resolve, and it runs served on its own', async () => {
  const dir = path.join(ROOT, 'dist', 'element');
  assert.ok(fs.existsSync(path.join(dir, 'package.json')), 'dist/element is missing: run `make build`');
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  assert.equal(pkg.type, 'module');
  assert.deepEqual(pkg.exports['.'], { types: './failover-lab.d.ts', default: './failover-lab.js' });
  assert.equal(pkg.types, './failover-lab.d.ts');
  for (const [k, entry] of Object.entries(pkg.exports)) {
    for (const v of typeof entry === 'string' ? [entry] : Object.values(entry)) {
      if (!v.includes('*')) assert.ok(fs.existsSync(path.join(dir, v)), `exports["${k}"] → ${v} exists`);
    }
  }
  assert.ok(fs.existsSync(path.join(dir, 'pkg', 'failover_lab_bg.wasm')));
  // Serve the package folder alone (no www/) with a page that uses it.
  const srv = await startServer(dir);
  try {
    const page = await app.context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.route(`${srv.baseUrl}/demo.html`, (route) =>
      route.fulfill({
        contentType: 'text/html',
        body: '<!doctype html><script type="module" src="./failover-lab.js"></script><failover-lab scenario="scenarios/unclean-election.json"></failover-lab>',
      }),
    );
    await page.goto(`${srv.baseUrl}/demo.html`);
    await page.waitForSelector('failover-lab[data-ready="true"]', { timeout: 20000 });
    const lost = await page.evaluate(() => {
      const el = document.querySelector('failover-lab');
      el.runFor(70000);
      return el.report().acked_records_lost;
    });
    assert.equal(lost, 269);
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await srv.close();
  }
});

// Issue 62, item 7: for docs writers. The element never widens its host page
// (its describe table scrolls in its own box: tour 11's was 387 px wide in a
// 320 px page), and two elements on one page give axe no landmark-unique
// finding (both narrations were "What happened, newest first").
test('two elements in a narrow page: neither widens it, and axe (best practices included) finds nothing', async () => {
  const page = app.page;
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>two labs</title>
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <script type="module" src="failover-lab.js"></script></head>
    <body style="margin:0"><main><h1>Two labs</h1>
    <failover-lab id="a" scenario="scenarios/tour-11-mass-failover.json"></failover-lab>
    <failover-lab id="b" scenario="scenarios/tour-1-leader-dies.json"></failover-lab>
    </main></body></html>`;
  for (const width of [320, 390, 800]) {
    await page.setViewportSize({ width, height: 900 });
    await openHtml('two-labs.html', html);
    await settled('failover-lab');
    await page.evaluate(() => document.getElementById('a').runFor(20000));
    const r = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: innerWidth, table: document.getElementById('a').shadowRoot.querySelector('.dtable')?.scrollWidth ?? 0 }));
    assert.ok(r.scroll <= r.width, `${width} px: the page is ${r.scroll} px wide (the describe table ${r.table} px)`);
    if (width === 800) {
      await page.addScriptTag({ path: path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js') });
      const found = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations.map((v) => `${v.id}: ${v.nodes.map((n) => JSON.stringify(n.target)).join('; ')}`));
      assert.deepEqual(found, []);
      const labels = await page.evaluate(() => ['a', 'b'].map((id) => document.getElementById(id).shadowRoot.querySelector('.narration').getAttribute('aria-label')));
      assert.deepEqual(labels, ['What happened (lab 1), newest first', 'What happened (lab 2), newest first']);
    }
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  assert.deepEqual(app.errors, []);
});
