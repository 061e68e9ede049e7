// Scrubbing like a video: a seek redraws incrementally (the panels keep their
// DOM nodes when their data did not change), a dragged timeline seeks once
// per animation frame (the latest position wins), and the address bar is
// written a few times a second while dragging and once when the drag ends.
// No timing is asserted (speed is measured by scripts/bench-browser.mjs --app).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp } from './helpers.mjs';

let app;
before(async () => {
  app = await startApp();
});
after(async () => {
  await app?.close();
});

async function open(query) {
  await app.page.goto(`${app.baseUrl}/?${query}`);
  await app.page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
}

test('a drag seeks once per animation frame, to the latest position', async () => {
  app.errors.length = 0;
  await open('scenario=leader-dies.json&paused=1');
  const r = await app.page.evaluate(async () => {
    failoverLab.runFor(30000);
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    await frame();
    const range = document.getElementById('timeline');
    const before = failoverLab.now();
    for (const v of [20000, 15000, 10000, 12340]) {
      range.value = String(v);
      range.dispatchEvent(new Event('input', { bubbles: true }));
    }
    const sameTask = failoverLab.now();
    await frame();
    await frame();
    return { before, sameTask, after: failoverLab.now() };
  });
  assert.equal(r.sameTask, r.before, 'input events in one frame do not seek at once');
  assert.equal(r.after, 12340, 'the next frame seeks to the latest position');
  assert.deepEqual(app.errors, []);
});

test('while dragging the address bar is written a few times a second, and once when the drag ends', async () => {
  app.errors.length = 0;
  await open('scenario=leader-dies.json&paused=1');
  const r = await app.page.evaluate(async () => {
    failoverLab.runFor(40000);
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    await frame();
    const writes = [];
    const orig = history.replaceState.bind(history);
    history.replaceState = (s, title, url) => {
      writes.push(String(url));
      return orig(s, title, url);
    };
    const range = document.getElementById('timeline');
    const t0 = performance.now();
    for (let i = 0; i < 30; i++) {
      range.value = String(40000 - i * 1000);
      range.dispatchEvent(new Event('input', { bubbles: true }));
      await frame();
    }
    const elapsed = performance.now() - t0;
    const during = writes.length;
    range.value = '5000';
    range.dispatchEvent(new Event('input', { bubbles: true }));
    range.dispatchEvent(new Event('change', { bubbles: true }));
    const atEnd = { now: failoverLab.now(), hash: location.hash, writes: writes.length };
    await new Promise((res) => setTimeout(res, 400));
    history.replaceState = orig;
    return { elapsed, during, atEnd, total: writes.length, last: writes.at(-1) };
  });
  assert.ok(r.during <= Math.ceil(r.elapsed / 250) + 1, `${r.during} writes in ${Math.round(r.elapsed)} ms of dragging`);
  assert.equal(r.atEnd.now, 5000, 'the drag ends where it was let go');
  assert.match(r.atEnd.hash, /&t=5000$/, 'the address bar holds the end of the drag at once');
  assert.equal(r.atEnd.writes, r.during + 1, 'one write when the drag ends');
  assert.equal(r.total, r.atEnd.writes, 'and none after it');
  assert.match(r.last, /&t=5000$/);
  assert.equal(await app.page.evaluate(() => location.href === failoverLab.shareUrl()), true);
  assert.deepEqual(app.errors, []);
});

test('a seek keeps the panels\' DOM nodes and updates them, as a frame does', async () => {
  app.errors.length = 0;
  await open('scenario=leader-dies.json&paused=1');
  const r = await app.page.evaluate(() => {
    failoverLab.runFor(35000);
    const q = (sel) => document.querySelector(sel);
    const nodes = { card: q('.pcard'), svg: q('#map svg'), row: q('#describe tr[data-partition]'), oldest: q('#narration li:last-child'), cells: q('.pcard .track'), client: q('#clients .client'), acked: q('#clients .client .stat b'), ruler: q('.pcard .ruler span') };
    const count = document.querySelectorAll('#narration li').length;
    const ackedText = nodes.acked.textContent;
    failoverLab.seek(25000);
    const back = { card: q('.pcard'), svg: q('#map svg'), row: q('#describe tr[data-partition]'), cells: q('.pcard .track'), client: q('#clients .client'), acked: q('#clients .client .stat b'), ruler: q('.pcard .ruler span') };
    const ackedBack = back.acked.textContent;
    const ackedView = String(failoverLab.view().producers[0].acked);
    const kept = Object.fromEntries(Object.keys(back).map((k) => [k, back[k] === nodes[k]]));
    failoverLab.seek(35000);
    return { kept, oldestKept: nodes.oldest.isConnected, count, countAgain: document.querySelectorAll('#narration li').length, clock: q('#clock')?.textContent ?? '', ackedText, ackedBack, ackedView };
  });
  assert.deepEqual(r.kept, { card: true, svg: true, row: true, cells: true, client: true, acked: true, ruler: true });
  assert.notEqual(r.ackedBack, r.ackedText, 'the kept producer card shows the count of the time sought');
  assert.equal(r.ackedBack, r.ackedView);
  assert.equal(r.oldestKept, true, 'the narration keeps the items still in its window');
  assert.equal(r.countAgain, r.count, 'and shows the same items back at the same time');
  assert.deepEqual(app.errors, []);
});

test('after a seek the narration lists exactly what a fresh run to that time lists', async () => {
  app.errors.length = 0;
  await open('scenario=leader-dies.json&paused=1');
  const items = () => [...document.querySelectorAll('#narration li')].map((li) => li.textContent);
  const scrubbed = await app.page.evaluate(`(() => { failoverLab.runFor(50000); failoverLab.seek(12000); failoverLab.seek(31000); failoverLab.seek(22000); return (${items})(); })()`);
  await open('scenario=leader-dies.json&paused=1');
  const fresh = await app.page.evaluate(`(() => { failoverLab.runFor(22000); return (${items})(); })()`);
  assert.ok(fresh.length > 0);
  assert.deepEqual(scrubbed, fresh);
  assert.deepEqual(app.errors, []);
});

test('compare lanes keep their maps and partitions across a seek; the divergence is found again', async () => {
  app.errors.length = 0;
  await open('scenario=tour-13-acks1-vs-acks-all.json');
  await app.page.waitForFunction(() => failoverLab.lanes().length === 2);
  await app.page.evaluate(() => failoverLab.runFor(20000));
  const r = await app.page.evaluate(() => {
    const q = () => [...document.querySelectorAll('#compare .lane-map svg, #compare .pcard')];
    const before = q();
    const div = document.querySelector('.cmp-div')?.textContent;
    failoverLab.seek(2000);
    const early = document.querySelector('.cmp-div')?.hidden;
    failoverLab.seek(15000);
    const after = q();
    return { n: before.length, same: before.every((el, i) => el === after[i]) && before.length === after.length, div, early, divAgain: document.querySelector('.cmp-div')?.textContent };
  });
  assert.ok(r.n >= 4, `lanes drawn (${r.n} nodes)`);
  assert.equal(r.same, true, 'the same DOM nodes after seeks');
  assert.equal(r.early, true, 'before the lanes diverge, no divergence is shown');
  assert.equal(r.divAgain, r.div, 'the same divergence once past it again');
  assert.deepEqual(app.errors, []);
});

test('a jump in a burst of seeks lists the newest events at once and the rest at rest: the same list as a fresh run', async () => {
  app.errors.length = 0;
  // Tour 11 (600 partitions): its 400 newest events change at every jump.
  await open('scenario=tour-11-mass-failover.json&paused=1');
  const items = () => [...document.querySelectorAll('#narration li')].map((li) => li.textContent);
  // On screen: off screen the list waits for the burst to end (the next test).
  const r = await app.page.evaluate(`(async () => {
    failoverLab.runFor(40000);
    document.querySelector('.narr-panel').scrollIntoView();
    // At rest: the list filled (not a fixed wait, which a slow machine
    // outlasts), then frames enough that the next seek is a jump of its own.
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    const filling = () => document.querySelectorAll('#narration li').length < 400 || document.querySelector('#narration ol')?.getAttribute('aria-busy') === 'true';
    for (let i = 0; i < 2000 && filling(); i++) await frame();
    for (let i = 0; i < 3; i++) await frame();
    const full = document.querySelectorAll('#narration li').length;
    failoverLab.seek(30000);
    const lone = document.querySelectorAll('#narration li').length;
    failoverLab.seek(20000);
    const atOnce = (${items})();
    return { full, lone, atOnce };
  })()`);
  assert.equal(r.full, 400, 'at rest the list holds its 400 newest events');
  assert.equal(r.lone, 400, 'a lone jump lists them all at once');
  assert.ok(r.atOnce.length > 0 && r.atOnce.length < 100, `right after the jump: ${r.atOnce.length} items`);
  await app.page.waitForFunction(() => document.querySelectorAll('#narration li').length === 400, null, { timeout: 10000 });
  const filled = await app.page.evaluate(`(${items})()`);
  assert.deepEqual(filled.slice(0, r.atOnce.length), r.atOnce, 'the items shown first are the newest, in order');
  await open('scenario=tour-11-mass-failover.json&paused=1');
  await app.page.evaluate(() => failoverLab.runFor(20000));
  await app.page.waitForFunction(() => document.querySelectorAll('#narration li').length === 400, null, { timeout: 10000 });
  const fresh = await app.page.evaluate(`(${items})()`);
  assert.deepEqual(filled, fresh);
  assert.deepEqual(app.errors, []);
});

test('in a burst of seeks the panels off screen wait and catch up at rest; those on screen follow every seek', async () => {
  app.errors.length = 0;
  // Tour 11 at 1280x800, scrolled to the top: the partition cards, the
  // narration and the metrics are below the fold; the describe table is not.
  await open('scenario=tour-11-mass-failover.json&paused=1');
  const grab = () => ({
    parts: document.getElementById('partitions').textContent,
    narr: [...document.querySelectorAll('#narration li')].map((li) => li.textContent).join('\n'),
    describe: document.getElementById('describe').textContent,
  });
  const r = await app.page.evaluate(`(async () => {
    failoverLab.runFor(40000);
    await new Promise((res) => setTimeout(res, 400));
    failoverLab.seek(30000);
    const lone = (${grab})();
    failoverLab.seek(20000);
    const burst = (${grab})();
    await new Promise((res) => setTimeout(res, 1000));
    return { lone, burst, rest: (${grab})() };
  })()`);
  assert.notEqual(r.lone.describe, r.rest.describe, 'the describe table differs between 30 s and 20 s');
  assert.equal(r.burst.describe, r.rest.describe, 'on screen: drawn for 20 s by the seek in the burst');
  assert.equal(r.burst.parts, r.lone.parts, 'off screen: the partition cards still show 30 s during the burst');
  assert.equal(r.burst.narr, r.lone.narr, 'off screen: the narration still shows 30 s during the burst');
  assert.notEqual(r.rest.parts, r.lone.parts);
  // At rest, every panel shows what a lone seek to 20 s shows.
  await open('scenario=tour-11-mass-failover.json&paused=1');
  const lone = await app.page.evaluate(`(async () => {
    failoverLab.runFor(40000);
    await new Promise((res) => setTimeout(res, 400));
    failoverLab.seek(20000);
    return (${grab})();
  })()`);
  assert.deepEqual(r.rest, lone);
  assert.deepEqual(app.errors, []);
});

test('a log cell says its offset and epoch when the pointer is on it, also after a seek under it', async () => {
  app.errors.length = 0;
  await open('scenario=leader-dies.json&paused=1');
  await app.page.evaluate(() => failoverLab.runFor(30000));
  const cell = app.page.locator('.pcard[data-partition="orders-0"] .rrow[data-broker="2"] .cell.rec').first();
  await cell.hover();
  const first = await cell.evaluate((c) => ({ title: c.title, off: c.dataset.off, others: document.querySelectorAll('.pcard .cell[title]:not([title=""])').length }));
  assert.match(first.title, new RegExp(`^offset ${first.off}, leader epoch \\d+`));
  assert.equal(first.others, 1, 'only the cell under the pointer carries a tooltip');
  const moved = await cell.evaluate((c) => {
    failoverLab.seek(6000);
    return { title: c.title, off: c.dataset.off, cls: c.className };
  });
  assert.notEqual(moved.off, first.off, 'the seek moved the window under the pointer');
  if (moved.cls.includes('rec')) assert.match(moved.title, new RegExp(`^offset ${moved.off}, leader epoch \\d+`));
  else assert.equal(moved.title, '', 'an empty cell has no tooltip');
  assert.deepEqual(app.errors, []);
});

test('in a burst of seeks the address bar is written from a task of its own, a lone seek at once', async () => {
  app.errors.length = 0;
  await open('scenario=leader-dies.json&paused=1');
  const r = await app.page.evaluate(async () => {
    failoverLab.runFor(40000);
    await new Promise((res) => setTimeout(res, 1200));
    failoverLab.seek(30000);
    const lone = location.hash;
    failoverLab.seek(20000);
    const inBurst = location.hash;
    await new Promise((res) => setTimeout(res, 400));
    return { lone, inBurst, later: location.hash };
  });
  assert.match(r.lone, /&t=30000$/, 'a lone seek writes the address bar at once');
  assert.match(r.inBurst, /&t=30000$/, 'the next seek of a burst leaves it as it was');
  assert.match(r.later, /&t=20000$/, 'and it is written soon after');
  assert.deepEqual(app.errors, []);
});

test('a seek frees the world it left in a task of its own, and seeks stay exact', async () => {
  app.errors.length = 0;
  await open('scenario=leader-dies.json&paused=1');
  const r = await app.page.evaluate(async () => {
    const { Lab, initWasm } = await import('./lab.js');
    const { WasmLab } = await import('./pkg/failover_lab.js');
    await initWasm();
    const lab = new Lab();
    lab.load(await (await fetch('scenarios/tour-11-mass-failover.json')).text());
    lab.runFor(20000);
    const hash = lab.traceHash();
    await new Promise((res) => setTimeout(res, 0));
    lab.seek(3000);
    const during = WasmLab.heapBytes();
    await new Promise((res) => setTimeout(res, 0));
    const after = WasmLab.heapBytes();
    lab.seek(11000);
    lab.seek(2000);
    lab.seek(20000);
    return { during, after, hash, again: lab.traceHash(), now: lab.now() };
  });
  assert.ok(r.after < r.during, `the world left at 20 s is freed after the seek's task (${r.during} → ${r.after} bytes)`);
  assert.equal(r.now, 20000);
  assert.equal(r.again, r.hash, 'seeking back and forth changed the run');
  assert.deepEqual(app.errors, []);
});

test('a scenario loaded over a world is checked first, and built only once the old world and its checkpoints are freed; a bad one leaves everything as it was', async () => {
  app.errors.length = 0;
  await open('scenario=leader-dies.json&paused=1');
  const r = await app.page.evaluate(async () => {
    const { Lab, initWasm } = await import('./lab.js');
    const { WasmLab } = await import('./pkg/failover_lab.js');
    await initWasm();
    const text = await (await fetch('scenarios/tour-11-mass-failover.json')).text();
    const empty = WasmLab.heapBytes();
    const lab = new Lab();
    lab.load(text);
    lab.runFor(20000);
    const full = WasmLab.heapBytes();
    const checkpoints = lab.checkpoints.length;
    // A bad scenario: the core's message, and the world and its checkpoints stay.
    let message = null;
    try {
      lab.load(text.replace('"brokers"', '"brokers_"'));
    } catch (e) {
      message = String(e.message ?? e);
    }
    const kept = { now: lab.now(), checkpoints: lab.checkpoints.length, heap: WasmLab.heapBytes() };
    // A seek leaves the world it left waiting to be freed in a task of its
    // own; a load in the same task frees it first too.
    lab.seek(15000);
    const waiting = lab.doomed != null;
    // The heap when the new world starts to be built.
    const build = lab.newCore.bind(lab);
    let atBuild = null;
    let waitingAtBuild = null;
    lab.newCore = (...a) => {
      atBuild = WasmLab.heapBytes();
      waitingAtBuild = lab.doomed != null;
      return build(...a);
    };
    lab.load(text);
    lab.runFor(1000);
    return { empty, full, checkpoints, message, kept, atBuild, waiting, waitingAtBuild, now: lab.now() };
  });
  assert.ok(r.message && /brokers/.test(r.message), `the core names the field: ${r.message}`);
  assert.equal(r.kept.now, 20000);
  assert.equal(r.kept.checkpoints, r.checkpoints);
  assert.ok(r.checkpoints > 3, `checkpoints at 20 s: ${r.checkpoints}`);
  const world = r.full - r.empty;
  assert.ok(
    r.atBuild - r.empty < world / 10,
    `the new world is built once the old one is gone: ${r.atBuild - r.empty} bytes held then, against ${world} for the old world and its checkpoints`,
  );
  assert.equal(r.waiting, true, 'the seek left a world waiting');
  assert.equal(r.waitingAtBuild, false, 'the waiting world is freed before the new one is built');
  assert.equal(r.now, 1000);
  assert.deepEqual(app.errors, []);
});

test('a fresh big world (tour 18, 3,000 partitions) asked to estimate a long seek runs nothing: no estimate until the seek itself has timed a step (its start and the measuring were 80 ms of a shared link\u2019s task, issue 63)', async () => {
  app.errors.length = 0;
  await open('scenario=leader-dies.json&paused=1');
  const r = await app.page.evaluate(async () => {
    const { Lab, initFastWasm } = await import('./lab.js');
    const text = await (await fetch('scenarios/tour-18-rack-loss.json')).text();
    const a = new Lab();
    await a.prepare(text);
    a.load(text);
    const est = a.estimateSeekMs(30000, { measure: true });
    const out = { fast: a.W === (await initFastWasm()), est, now: a.now(), events: a.core.eventsProcessed() };
    a.free?.();
    return out;
  });
  assert.equal(r.fast, true, 'the big world runs on the fast build');
  assert.equal(r.est, null, 'no estimate: the pace is left to the seek');
  assert.equal(r.now, 0, 'nothing was run to measure it');
  assert.equal(r.events, 0);
  assert.deepEqual(app.errors, []);
});

test('a fresh lab asked to estimate a long seek measures its pace on the first steps of the way after the start, and the seek lands on the same run', async () => {
  app.errors.length = 0;
  await open('scenario=leader-dies.json&paused=1');
  const r = await app.page.evaluate(async () => {
    const { Lab, initWasm } = await import('./lab.js');
    await initWasm();
    const text = await (await fetch('scenarios/tour-11-mass-failover.json')).text();
    const a = new Lab();
    a.load(text);
    const plain = a.estimateSeekMs(15000);
    const fresh = a.now();
    const est = a.estimateSeekMs(15000, { measure: true });
    const probed = a.now();
    const again = a.estimateSeekMs(15000, { measure: true });
    const after = a.now();
    // The step from 0 carries the cluster's start: it is no measure of the pace.
    const c = new Lab();
    c.load(text);
    c.runFor(100);
    const paceAfterStart = c.msPerSimMs;
    c.runFor(100);
    const paceAfterNext = c.msPerSimMs;
    c.free?.();
    a.seek(15000);
    const b = new Lab();
    b.load(text);
    b.seek(15000);
    const out = { plain, fresh, est, probed, again, after, paceAfterStart, paceAfterNext, hashA: a.traceHash(), hashB: b.traceHash() };
    a.free?.();
    b.free?.();
    return out;
  });
  assert.equal(r.plain, null, 'no pace before the core has run, unless asked to measure');
  assert.equal(r.fresh, 0);
  assert.ok(r.est > 0, `an estimate once measured (${r.est} ms)`);
  assert.ok(r.probed >= 200 && r.probed % 100 === 0 && r.probed <= 15000, `the measuring steps run past the start's step, to grid boundaries (${r.probed} ms)`);
  assert.ok(r.again > 0);
  assert.equal(r.after, r.probed, 'with a pace known, estimating runs nothing');
  assert.equal(r.paceAfterStart, null, 'the step from 0 (the start) measures no pace');
  assert.ok(r.paceAfterNext > 0, 'the step after it does');
  assert.equal(r.hashA, r.hashB, 'the seek after the measuring step lands on the run a plain seek reaches');
  assert.deepEqual(app.errors, []);
});

test('a folded metrics panel draws no sparkline on a seek; unfolded it draws them for the time shown', async () => {
  app.errors.length = 0;
  await open('scenario=leader-dies.json&paused=1');
  const r = await app.page.evaluate(async () => {
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    failoverLab.runFor(30000);
    failoverLab.seek(12000);
    const folded = document.querySelector('[data-panel="metrics"]').classList.contains('folded');
    const spark = document.querySelector('.metric[data-metric="record-send-rate"] canvas.spark');
    const inked = () => spark.getContext('2d').getImageData(0, 0, spark.width, spark.height).data.some((v) => v !== 0);
    const value = (name) => document.querySelector(`.metric[data-metric="${name}"] .mval`).textContent;
    const whileFolded = { inked: inked(), value: value('UnderReplicatedPartitions') };
    document.querySelector('[data-panel="metrics"] > h2 > .fold').click();
    await frame();
    await frame();
    return { folded, whileFolded, inked: inked(), shown: value('UnderReplicatedPartitions'), want: String(failoverLab.view().metrics.UnderReplicatedPartitions) };
  });
  assert.equal(r.folded, true, 'the metrics panel starts folded');
  assert.equal(r.whileFolded.inked, false, 'no sparkline was drawn while folded');
  assert.equal(r.whileFolded.value, r.want, 'its values are written all the same');
  assert.equal(r.inked, true, 'unfolded, the sparklines are drawn');
  assert.equal(r.shown, r.want);
  assert.deepEqual(app.errors, []);
});

test('a frame of play runs the core only as far as its share of a frame reaches at its recent pace, and a run played in such frames is the same run', async () => {
  app.errors.length = 0;
  await open('scenario=leader-dies.json&paused=1');
  const r = await app.page.evaluate(async () => {
    const { Lab, initWasm, FRAME_WORK_MS, PlayMeter } = await import('./lab.js');
    await initWasm();
    const text = await (await fetch('scenarios/tour-11-mass-failover.json')).text();
    const a = new Lab();
    a.load(text);
    const unknown = a.reach(5000);
    a.runFor(300);
    const now = a.now();
    const measured = a.msPerSimMs;
    // A known pace, set by hand: 0.5 wall ms per simulated ms.
    a.msPerSimMs = 0.5;
    const far = a.reach(now + 10000);
    const near = a.reach(now + 50);
    a.msPerSimMs = 1000;
    const crawl = a.reach(now + 10000);
    a.msPerSimMs = measured;
    // Played in frames that each stop where reach says, to 8 s, against one run.
    let frames = 0;
    while (a.now() < 8000) {
      a.runUntil(a.reach(8000, 5));
      frames += 1;
    }
    const b = new Lab();
    b.load(text);
    b.runUntil(8000);
    const meter = new PlayMeter();
    const early = [];
    for (let i = 0; i < 10; i++) {
      early.push(meter.speed);
      meter.note(10, 100);
    }
    const out = {
      FRAME_WORK_MS, unknown, now, measured, far, near, crawl, frames,
      hashA: a.traceHash(), hashB: b.traceHash(), nowA: a.now(),
      early, speed: meter.speed, short: meter.shortOf(1), notShort: meter.shortOf(0.11),
    };
    a.free?.();
    b.free?.();
    return out;
  });
  assert.equal(r.FRAME_WORK_MS, 50);
  assert.equal(r.unknown, 5000, 'before the core has run, a frame may go all the way');
  assert.ok(r.measured > 0, 'running measured a pace');
  assert.equal(r.far, r.now + 100, 'at 0.5 ms per simulated ms, 50 ms of work reach 100 simulated ms');
  assert.equal(r.near, r.now + 50, 'a target within reach is kept');
  assert.equal(r.crawl, r.now + 1, 'however slow the core, a frame moves at least 1 ms');
  assert.ok(r.frames > 1, `the run to 8 s took ${r.frames} frames`);
  assert.equal(r.nowA, 8000);
  assert.equal(r.hashA, r.hashB, 'a run played frame by frame is the run computed at once');
  assert.deepEqual(r.early, Array(10).fill(null), 'no speed before ten frames');
  assert.ok(Math.abs(r.speed - 0.1) < 1e-9, `10 simulated ms per 100 wall ms is 0.1x (${r.speed})`);
  assert.ok(Math.abs(r.short - 0.1) < 1e-9, 'short of 1x');
  assert.equal(r.notShort, null, '0.1x is not short of 0.11x (within 80 %)');
  assert.deepEqual(app.errors, []);
});

test('play and seeks cut into slices of a few events (between two events of one millisecond, across recorded actions, the first estimate cut short of the start) build the run one seek builds (issue 63)', async () => {
  app.errors.length = 0;
  await open('scenario=leader-dies.json&paused=1');
  const r = await app.page.evaluate(async () => {
    const { Lab, initWasm } = await import('./lab.js');
    await initWasm();
    const text = await (await fetch('scenarios/tour-11-mass-failover.json')).text();
    // One run in one go, with two recorded actions.
    const whole = new Lab();
    whole.load(text);
    whole.runUntil(3000);
    whole.act({ crash: 2 });
    whole.runUntil(6000);
    whole.act({ restart: 2 });
    whole.runUntil(15000);
    const actions = whole.actions.map(({ at_ms, action }) => ({ at_ms, action }));
    // The same, played in slices of at most 37 events: most stop between two
    // events of one millisecond.
    const sliced = new Lab();
    sliced.load(text);
    sliced.sliceEvents = 37;
    let frames = 0;
    let cut = 0;
    const play = (t) => {
      while (!sliced.playTo(t)) {
        frames++;
        if (sliced.partial !== null) cut++;
      }
    };
    play(3000);
    sliced.act({ crash: 2 });
    play(6000);
    sliced.act({ restart: 2 });
    play(15000);
    // A link's run (recorded actions, replayed from 0) reached by a seek in slices.
    const seeker = new Lab();
    seeker.load(text);
    seeker.restore({ actions, t: 0 });
    seeker.sliceEvents = 53;
    const est = seeker.estimateSeekMs(15000, { measure: true });
    seeker.seekBegin(15000);
    let slices = 0;
    while (!seeker.seekSlice()) slices++;
    // Back and forth: a seek back to the start (the checkpoint at 0, then the
    // cluster's start: hundreds of events) cut in a slice is finished by what follows.
    seeker.seekBegin(50);
    seeker.seekSlice();
    const mid = { partial: seeker.partial !== null, seeking: seeker.seekState() !== null };
    seeker.seek(15000);
    const out = {
      frames, cut, slices, est, mid,
      hash: [whole.traceHash(), sliced.traceHash(), seeker.traceHash()],
      now: [whole.now(), sliced.now(), seeker.now()],
    };
    whole.free?.();
    sliced.free?.();
    seeker.free?.();
    return out;
  });
  assert.ok(r.frames > 50 && r.cut > 50, `play ran in ${r.frames} slices, ${r.cut} of them cut mid-step`);
  assert.ok(r.slices > 50, `the seek ran in ${r.slices} slices`);
  assert.deepEqual(r.now, [15000, 15000, 15000]);
  assert.equal(r.hash[1], r.hash[0], 'played in slices: the same run');
  assert.equal(r.hash[2], r.hash[0], 'sought in slices: the same run');
  assert.deepEqual(r.mid, { partial: true, seeking: true }, 'a seek back is under way after one slice, cut mid-step');
  assert.deepEqual(app.errors, []);
});

test('a page asked to play faster than its core runs the scenario shows the speed it reaches beside the asked one', async () => {
  app.errors.length = 0;
  // 3,000 partitions at 100x: no machine's core runs bench/medium that fast.
  await open('scenario=bench%2Fmedium.json&speed=100');
  const out = app.page.locator('output.speedout');
  await app.page.waitForFunction(() => document.querySelector('output.speedout').textContent.includes('→'), null, { timeout: 60000 });
  const text = await out.textContent();
  const m = text.match(/^100× → ([\d.]+)×$/);
  assert.ok(m, `the speed reads "${text}"`);
  assert.ok(Number(m[1]) < 80, `the reached speed (${m[1]}x) is below the asked one`);
  assert.match(await out.getAttribute('title'), /^Asked 100×; this machine's core runs this scenario at about [\d.]+× real time/);
  await app.page.click('#play');
  await app.page.waitForFunction(() => document.querySelector('output.speedout').textContent === '100×', null, { timeout: 30000 });
  assert.equal(await out.getAttribute('title'), '', 'paused, the speed is the asked one alone');
  assert.deepEqual(app.errors, []);
});

test('a long seek of the dragged timeline is said first ("Seeking to 12.000 s (about N s)…"), replayed a slice per frame with a bar while the page answers, and a new position takes over half-way (the 20,000-partition bench)', async () => {
  app.errors.length = 0;
  await open('scenario=bench%2Flarge.json&paused=1');
  const r = await app.page.evaluate(async () => {
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    const note = document.querySelector('#timeline-bar .tl-busy');
    const bar = note.querySelector('.tl-bar');
    const range = document.getElementById('timeline');
    const drag = (v) => {
      range.value = String(v);
      range.dispatchEvent(new Event('input', { bubbles: true }));
    };
    await frame();
    const before = note.hidden;
    drag(12000);
    // The page's frame runs before this callback: it says the seek and begins it.
    await frame();
    const said = { seeking: failoverLab.seeking, hidden: note.hidden, text: note.textContent, role: note.getAttribute('role'), barHidden: bar.getAttribute('aria-hidden') };
    // Frames go on while the core replays; the bar follows the replay.
    const widths = [];
    let moved = null;
    for (let i = 0; i < 5000 && failoverLab.seeking; i++) {
      widths.push([failoverLab.seeking.target, parseFloat(bar.firstChild.style.width)]);
      if (!moved && failoverLab.seeking.progress > 0.3) {
        drag(14000);
        range.dispatchEvent(new Event('change', { bubbles: true }));
        await frame();
        moved = { seeking: failoverLab.seeking, text: note.textContent };
      }
      await frame();
    }
    const view = failoverLab.view();
    return { before, said, widths, moved, after: { hidden: note.hidden, seeking: failoverLab.seeking, now: failoverLab.now(), drawn: view.now_ms, range: Number(range.value) } };
  });
  assert.equal(r.before, true);
  assert.equal(r.said.seeking?.target, 12000, 'the seek is under way, not made in one frame');
  assert.ok(r.said.seeking.progress < 0.3, `it has replayed little yet (${r.said.seeking.progress})`);
  assert.equal(r.said.hidden, false);
  assert.equal(r.said.role, 'status');
  assert.equal(r.said.barHidden, 'true', 'the bar is drawn, not read out');
  // The estimate is said once the replay has timed a step (the start of 20,000 partitions is seconds of work, issue 63).
  assert.match(r.said.text, /^Seeking to 12\.000 s( \(about [\d.]+ s\))?…$/);
  assert.ok(r.widths.length >= 4, `the page drew ${r.widths.length} frames while the core replayed`);
  assert.ok(r.widths.every(([t, w], i) => i === 0 || t !== r.widths[i - 1][0] || w >= r.widths[i - 1][1]), `the bar only grows toward one target: ${r.widths}`);
  assert.ok(r.widths.some(([t, w]) => t === 14000 && w > 0), 'and moves toward the new one');
  assert.equal(r.moved?.seeking?.target, 14000, 'the drag moved on: the seek takes the new position');
  assert.match(r.moved.text, /^Seeking to 14\.000 s/);
  assert.deepEqual(r.after, { hidden: true, seeking: null, now: 14000, drawn: 14000, range: 14000 }, 'it lands on the new position, drawn, the note cleared');
  assert.deepEqual(app.errors, []);
});
