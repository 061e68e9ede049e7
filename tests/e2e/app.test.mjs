// The page (www/index.html) in headless Chromium: it loads, a newcomer's first
// click (the leader's broker → crash) shows a failover, bad input never kills
// the page, keyboard shortcuts work, and the wasm run gives the same trace hash
// as the native CLI. Needs `make build` (www/pkg and www/scenarios).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, ROOT, WWW, cli } from './helpers.mjs';

let app;

before(async () => {
  for (const f of ['pkg/failover_lab.js', 'scenarios/index.json', 'index.html']) {
    assert.ok(fs.existsSync(path.join(WWW, f)), `www/${f} is missing: run \`make build\` first`);
  }
  app = await startApp();
});

after(async () => {
  await app?.close();
});

/** Open the page paused at t = 0 and wait for the first frame. */
async function open(query = '?paused=1') {
  app.errors.length = 0;
  await app.page.goto(`${app.baseUrl}/${query}`);
  await app.page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
  // window.labOf(file): a Lab of its own (www/lab.js) with `file` loaded, and WasmLab.
  await app.page.evaluate(() => {
    window.labOf = async (file) => {
      const { Lab, initWasm } = await import('./lab.js');
      const { WasmLab } = await import('./pkg/failover_lab.js');
      await initWasm();
      const lab = new Lab();
      lab.load(await (await fetch(file)).text());
      return { lab, WasmLab };
    };
    // Keep only the checkpoints of `lab` whose time passes `keep`, freeing the others.
    window.keepCheckpoints = (lab, keep) => {
      for (const c of lab.checkpoints.filter((c) => !keep(c.t))) c.core.free();
      lab.checkpoints = lab.checkpoints.filter((c) => keep(c.t));
    };
  });
}

function describeRow(text, topic, partition) {
  const line = text.split('\n').find((l) => l.includes(`Topic: ${topic}`) && l.includes(`Partition: ${partition}\t`));
  assert.ok(line, `no describe line for ${topic}-${partition} in:\n${text}`);
  return Object.fromEntries(
    line.trim().split('\t').map((f) => {
      const i = f.indexOf(':');
      return [f.slice(0, i).trim(), f.slice(i + 1).trim()];
    }),
  );
}

test('the page loads the default scenario, draws a frame and reports no error', async () => {
  await open('?welcome=0'); // the bare URL opens on the welcome on a first visit (story.test.mjs)
  const page = app.page;
  assert.equal(await page.evaluate(() => typeof window.failoverLab), 'object');
  assert.equal(await page.locator('svg [data-broker]').count(), 3);
  assert.equal(await page.locator('.pcard').count(), 3);
  assert.match(await page.locator('#scn-name').textContent(), /leader's broker dies/i);
  assert.match(await page.locator('[data-testid=acked-lost]').textContent(), /0\s*acknowledged records lost/);
  // It plays on open: simulated time moves.
  const t0 = await page.evaluate(() => failoverLab.now());
  await page.waitForFunction((t) => failoverLab.now() > t, t0, { timeout: 5000 });
  assert.deepEqual(app.errors, []);
});

test("clicking the leader's broker and choosing crash fails orders-0 over to an ISR member", async () => {
  await open();
  const page = app.page;
  await page.evaluate(() => failoverLab.runFor(3000));
  const before = await page.evaluate(() => failoverLab.report().partitions.find((p) => p.topic === 'orders' && p.partition === 0));
  assert.equal(before.leader_epoch, 0);
  const leader = before.leader;
  await page.locator(`svg [data-broker="${leader}"]`).click();
  await page.locator('#broker-menu button[data-action="crash"]').click();
  assert.equal(await page.locator(`svg [data-broker="${leader}"]`).getAttribute('data-state'), 'crashed');
  await page.evaluate(() => failoverLab.runFor(20000));

  const after = await page.evaluate(() => failoverLab.report().partitions.find((p) => p.topic === 'orders' && p.partition === 0));
  assert.notEqual(after.leader, leader);
  assert.ok(after.leader !== null, 'orders-0 has a leader again');
  assert.equal(after.leader_epoch, 1);
  assert.ok(!after.isr.includes(leader), `ISR ${after.isr} no longer holds broker ${leader}`);

  // The DOM shows it: describe table, partition card, narration.
  const row = describeRow(await page.locator('details.raw pre').textContent(), 'orders', 0);
  assert.equal(row.Leader, String(after.leader));
  const cell = await page.locator('table.dtable tr[data-partition="orders-0"] td[data-col="Leader"]').textContent();
  assert.equal(cell, String(after.leader));
  const head = await page.locator('.pcard[data-partition="orders-0"] .phead').textContent();
  assert.match(head, new RegExp(`Leader: broker ${after.leader}`));
  assert.match(head, /Leader epoch: 1/);
  const narration = await page.locator('#narration').textContent();
  assert.match(narration, /elected broker \d from ISR/);
  assert.match(narration, /leader epoch 0 → 1/);
  assert.deepEqual(app.errors, []);
});

test('restarting the crashed broker brings it back into the ISR', async () => {
  await open();
  const page = app.page;
  await page.evaluate(() => {
    failoverLab.runFor(3000);
    failoverLab.crash(1);
    failoverLab.runFor(20000);
    failoverLab.restart(1);
    failoverLab.runFor(15000);
  });
  const p = await page.evaluate(() => failoverLab.report().partitions.find((x) => x.partition === 0));
  assert.ok(p.isr.includes(1), `ISR ${p.isr} holds broker 1 again`);
  const row = describeRow(await page.locator('details.raw pre').textContent(), 'orders', 0);
  assert.ok(row.Isr.split(',').includes('1'));
  assert.match(await page.locator('#narration').textContent(), /ISR expand for orders-0/);
  assert.deepEqual(app.errors, []);
});

test('a bad scenario throws an Error naming the field and the page keeps working', async () => {
  await open();
  const page = app.page;
  const res = await page.evaluate(() => {
    try {
      failoverLab.load('{"brokers": 0}');
      return { threw: false };
    } catch (e) {
      return { threw: true, isError: e instanceof Error, message: e.message };
    }
  });
  assert.equal(res.threw, true);
  assert.equal(res.isError, true);
  assert.match(res.message, /brokers/);
  // The old lab still runs and still draws.
  const t = await page.evaluate(() => {
    failoverLab.runFor(1000);
    return failoverLab.now();
  });
  assert.equal(t, 1000);
  assert.equal(await page.locator('svg [data-broker]').count(), 3);
  // Bad input from the page itself shows a message in the page.
  const bad = await page.evaluate(() => {
    try {
      failoverLab.produce('no-such-topic', 0, 5);
      return null;
    } catch (e) {
      return e.message;
    }
  });
  assert.match(bad, /no-such-topic/);
  // A broken scenario file picked in the page shows a message in the page.
  await page.evaluate(() => document.querySelector('#scenario').append(new Option('missing', 'missing.json')));
  await page.locator('#scenario').selectOption('missing.json');
  await page.locator('#banner').waitFor({ state: 'visible' });
  assert.match(await page.locator('#banner').textContent(), /missing\.json/);
  assert.equal(await page.evaluate(() => failoverLab.now()), 1000);
  app.errors.splice(0, app.errors.length, ...app.errors.filter((e) => !/404/.test(e)));
  assert.deepEqual(app.errors, []);
});

test('keyboard shortcuts: space plays/pauses, → steps, 2 crashes broker 2, ? opens help', async () => {
  await open();
  const page = app.page;
  await page.locator('body').click({ position: { x: 5, y: 795 } });
  assert.equal(await page.evaluate(() => failoverLab.playing), false);
  await page.keyboard.press(' ');
  assert.equal(await page.evaluate(() => failoverLab.playing), true);
  await page.keyboard.press(' ');
  assert.equal(await page.evaluate(() => failoverLab.playing), false);
  const t = await page.evaluate(() => failoverLab.now());
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.evaluate(() => failoverLab.now()), t + 100);
  await page.keyboard.press('2');
  assert.equal(await page.locator('svg [data-broker="2"]').getAttribute('data-state'), 'crashed');
  await page.keyboard.press('?');
  assert.equal(await page.locator('#help').isVisible(), true);
  await page.keyboard.press('Escape');
  assert.equal(await page.locator('#help').isVisible(), false);
  assert.deepEqual(app.errors, []);
});

test('time travel: going back and forward again reproduces the same run', async () => {
  await open();
  const page = app.page;
  const res = await page.evaluate(() => {
    failoverLab.runFor(5000);
    failoverLab.crash(2);
    failoverLab.runFor(25000);
    const first = failoverLab.report().trace_hash;
    failoverLab.seek(2000);
    const back = failoverLab.report();
    failoverLab.seek(30000);
    return { first, again: failoverLab.report().trace_hash, backEnd: back.end_ms };
  });
  assert.equal(res.backEnd, 2000);
  assert.equal(res.again, res.first);
  assert.deepEqual(app.errors, []);
});

test('time travel from a checkpoint: seeking back restores a snapshot and replays actions exactly', async () => {
  await open();
  const page = app.page;
  const res = await page.evaluate(() => {
    failoverLab.pause();
    failoverLab.runFor(7000);
    failoverLab.crash(1);
    failoverLab.runFor(14000);
    failoverLab.restart(1);
    failoverLab.runFor(19000);
    const first = failoverLab.report().trace_hash;
    // 40 s → 12 s: restores the 10 s checkpoint, replays the restart at 21 s on the way back up
    failoverLab.seek(12000);
    const mid = failoverLab.report().end_ms;
    failoverLab.seek(40000);
    return { first, again: failoverLab.report().trace_hash, mid };
  });
  assert.equal(res.mid, 12000);
  assert.equal(res.again, res.first);
  assert.deepEqual(app.errors, []);
});

test('checkpoints share the world, stay under the heap budget, and seeks from them stay exact (issue 14)', async () => {
  await open();
  const res = await app.page.evaluate(async () => {
    const { lab, WasmLab } = await window.labOf('scenarios/tour-11-mass-failover.json');
    // A tight budget: the world at 0 plus 48 MiB for its growth and the checkpoints.
    lab.heapBudgetBytes = WasmLab.heapBytes() + 48 * 2 ** 20;
    let maxOver = 0;
    for (let t = 0; t < 40000; t += 2000) {
      lab.runFor(2000);
      maxOver = Math.max(maxOver, WasmLab.heapBytes() - lab.heapBudgetBytes);
    }
    const hash = lab.traceHash();
    const kept = lab.checkpoints.map((c) => c.t);
    const deltas = lab.checkpoints.map((c) => c.deltas);
    const ends = [];
    for (const t of [31000, 5000, 17000, 29950, 12345]) {
      lab.seek(t);
      ends.push(lab.now());
    }
    lab.seek(40000);
    // The world a seek leaves: this one (a snapshot of it costs about 1 MB)
    // is freed after the seek, in a task of its own; one whose snapshot
    // costs over a 64th of the budget (the large bench's: 10 MB) before the
    // replay, so that two never share the heap.
    lab.heapBudgetBytes = 464 * 2 ** 20; // the page's own
    const small = lab.snapshotCost.bytes;
    lab.seek(1000);
    const heldSmall = lab.doomed != null;
    lab.freeDoomed();
    lab.snapshotCost = { ms: 0, bytes: lab.heapBudgetBytes / 32 };
    lab.seek(500);
    const heldBig = lab.doomed != null;
    lab.seek(40000);
    return { hash, again: lab.traceHash(), kept, deltas, ends, maxOver, heldSmall, heldBig, small };
  });
  // Checkpoints beyond the one at 0 survive, spread over the run, and the
  // heap never ends a stretch of running more than 4 MiB over its budget.
  assert.ok(res.kept.length >= 4, `checkpoints kept: ${res.kept}`);
  // Each checkpoint after the first keeps the replicas the one before it
  // has as that one's copies plus what moved (src/checkpoint.rs): most of
  // tour 11's 1,800 (fewer across its failovers, where roles and ISRs
  // change), and the seeks from them above are exact.
  const later = res.deltas.slice(1);
  assert.ok(later.reduce((a, n) => a + n, 0) >= 0.6 * 1800 * later.length, `replicas written as deltas: ${res.deltas}`);
  assert.equal(res.kept[0], 0);
  assert.ok(res.kept.at(-1) >= 20000, `checkpoints kept: ${res.kept}`);
  assert.ok(res.maxOver <= 4 * 2 ** 20, `heap over budget by ${res.maxOver} bytes`);
  assert.deepEqual(res.ends, [31000, 5000, 17000, 29950, 12345]);
  assert.equal(res.heldSmall, true, `a world whose snapshot costs ${res.small} B waits to be freed`);
  assert.equal(res.heldBig, false, 'a big world is freed before the replay');
  assert.equal(res.again, res.hash, 'seeking back and forth changed the run');
  assert.deepEqual(app.errors, []);
});

/** The widest stretch a seek may replay: between checkpoints, and from the last to `end`. */
const widestGap = (ts, end) => Math.max(...ts.map((t, i) => (ts[i + 1] ?? end) - t));

test("a seek back that must drop checkpoints keeps those ahead of it: the last one's gap runs to the end of what was played, not to now (issue 27)", async () => {
  await open();
  const res = await app.page.evaluate(async () => {
    const { lab, WasmLab } = await window.labOf('scenarios/tour-11-mass-failover.json');
    lab.heapBudgetBytes = WasmLab.heapBytes() + 48 * 2 ** 20;
    lab.runFor(40000);
    const before = lab.checkpoints.map((c) => c.t);
    // 8 MiB over budget: the seek back drops several checkpoints. It lands
    // 250 ms into an early gap between checkpoints, so its replay passes grid
    // steps with no checkpoint on them, where the heap is trimmed (a seek
    // onto a checkpoint replays nothing; where they fall depends on the
    // machine's pace).
    const from = before.find((t, i) => t >= 1000 && before[i + 1] - t >= 300);
    lab.heapBudgetBytes = WasmLab.heapBytes() - 8 * 2 ** 20;
    lab.seek(from + 250);
    const after = lab.checkpoints.map((c) => c.t);
    lab.seek(40000);
    return { before, after, now: lab.now(), horizon: lab.horizon };
  });
  assert.equal(res.now, 40000);
  assert.equal(res.horizon, 40000);
  assert.ok(res.after.length < res.before.length, `nothing was dropped: ${res.after}`);
  // Measured to now (about 3 s), the last checkpoint's gap was negative, so the
  // latest ones went first and a seek forward replayed from ~32 s (widest
  // gap 7.7 s of 1.6 s before); now the narrowest gaps merge wherever they are.
  const before = widestGap(res.before, 40000);
  const after = widestGap(res.after, 40000);
  assert.ok(after < 3 * before, `widest gap ${before} ms before the seek, ${after} ms after: ${res.after}`);
  assert.deepEqual(app.errors, []);
});

test('scrubbing around where a long seek went in a full heap takes checkpoints on rungs behind that moment and keeps them, so each step replays from the rung behind it; a far seek lets them go (issue 27)', async () => {
  await open();
  const res = await app.page.evaluate(async () => {
    const { lab, WasmLab } = await window.labOf('scenarios/tour-11-mass-failover.json');
    lab.heapBudgetBytes = WasmLab.heapBytes() + 24 * 2 ** 20;
    lab.runFor(40000);
    const hash = lab.traceHash();
    // A gap of 20 s, as the even spacing of a full heap leaves on the large bench.
    const widen = () => window.keepCheckpoints(lab, (t) => t <= 10000 || t >= 30000);
    widen();
    // The heap at 92 % of its budget again.
    lab.heapBudgetBytes = WasmLab.heapBytes() / 0.92;
    const has = (t) => lab.checkpoints.some((c) => c.t === t);
    const full = lab.full();
    // The jump: it takes no rungs (seeks from one far moment to another need none).
    lab.seek(25050);
    const rungs = [...lab.focusRungs(25050)].sort((a, b) => a - b);
    const keptAfterJump = rungs.filter((t) => lab.onRung(t));
    widen();
    // A step back near it: its replay takes the rungs it passes, and the way forward again the one at the moment.
    lab.seek(24800);
    lab.seek(25250);
    const taken = rungs.filter(has);
    const overBy = WasmLab.heapBytes() - lab.heapBudgetBytes;
    const steps = [];
    for (const t of [24300, 25200, 23600, 24900, 22100]) {
      const plan = lab.seekPlan(t);
      lab.seek(t);
      steps.push({ t, from: plan.onward ? null : plan.cp.t, now: lab.now() });
    }
    // Trim under a budget nothing fits: every checkpoint but the one at 0 and
    // those kept for the focus goes (the rungs, and the window's first: here a rung).
    const others = () => lab.checkpoints.filter((c) => c.t > 0 && !rungs.includes(c.t)).length;
    const othersBefore = others();
    lab.heapBudgetBytes = 2 ** 20;
    lab.trim();
    const first = lab.checkpoints.find((c) => lab.inFocus(c.t))?.t;
    const afterTrim = { rungs: rungs.filter(has), others: lab.checkpoints.filter((c) => c.t > 0 && !rungs.includes(c.t)).map((c) => c.t), first };
    // A far seek moves the focus: the old rungs are dropped like any other.
    lab.heapBudgetBytes = WasmLab.heapBytes() + 24 * 2 ** 20;
    lab.seek(5000);
    const keptAfterFarSeek = rungs.filter((t) => lab.onRung(t));
    lab.heapBudgetBytes = 2 ** 20;
    lab.trim();
    const oldLeft = rungs.filter(has);
    lab.heapBudgetBytes = 432 * 2 ** 20;
    lab.seek(40000);
    return { hash, again: lab.traceHash(), full, rungs, keptAfterJump, taken, overBy, steps, othersBefore, afterTrim, keptAfterFarSeek, oldLeft };
  });
  assert.equal(res.full, true, 'the heap is near its budget');
  assert.deepEqual(res.rungs, [21000, 23000, 24000, 24500, 25000]);
  assert.deepEqual(res.keptAfterJump, [], 'the jump kept rungs');
  assert.deepEqual(res.taken, res.rungs, 'a checkpoint on every rung the replays passed');
  assert.ok(res.overBy <= 4 * 2 ** 20, `heap over budget by ${res.overBy} bytes`);
  // Each step replays from the rung behind it (or a checkpoint after that rung).
  const behind = { 24300: 24000, 25200: 25000, 23600: 23000, 24900: 24500, 22100: 21000 };
  for (const s of res.steps) {
    assert.equal(s.now, s.t);
    assert.ok(s.from !== null && s.from >= behind[s.t] && s.from <= s.t, `the step to ${s.t} replayed from ${s.from}`);
  }
  assert.ok(res.othersBefore > 0, 'checkpoints off the rungs to drop');
  assert.deepEqual(res.afterTrim.rungs, res.rungs, 'trim kept the rungs');
  // Off the rungs, at most the window's first (where the replays that took the rungs began).
  assert.ok(res.afterTrim.others.length === 0 || (res.afterTrim.others.length === 1 && res.afterTrim.others[0] === res.afterTrim.first), `trim kept ${res.afterTrim.others} off the rungs (the window's first is ${res.afterTrim.first})`);
  assert.deepEqual(res.keptAfterFarSeek, [], 'a seek 20 s away moved the focus');
  assert.deepEqual(res.oldLeft, [], 'the old rungs stayed through a trim');
  assert.equal(res.again, res.hash, 'seeking back and forth changed the run');
  assert.deepEqual(app.errors, []);
});

test('where play stopped is a moment too: the first seek near it takes the rungs behind it (issue 27)', async () => {
  await open();
  const res = await app.page.evaluate(async () => {
    const { lab, WasmLab } = await window.labOf('scenarios/tour-11-mass-failover.json');
    lab.heapBudgetBytes = WasmLab.heapBytes() + 24 * 2 ** 20;
    lab.runFor(40000);
    // Nothing between 20 s and the end, as a full heap's spacing leaves on the large bench.
    window.keepCheckpoints(lab, (t) => t <= 20000);
    lab.heapBudgetBytes = WasmLab.heapBytes() / 0.92;
    const has = (t) => lab.checkpoints.some((c) => c.t === t);
    // The reader steps back 300 ms from where the run stopped, then 1 s.
    lab.seek(39700);
    const rungs = [...lab.focusRungs(40000)].sort((a, b) => a - b);
    const taken = rungs.filter((t) => has(t) && lab.onRung(t));
    const plan = lab.seekPlan(38900);
    lab.seek(38900);
    // Played on again and stopped elsewhere: that is the moment now.
    lab.runFor(1000);
    lab.seek(39600);
    return { rungs, taken, from: plan.cp?.t, now: lab.now(), focus: lab.focus.t };
  });
  assert.deepEqual(res.rungs, [36000, 38000, 39000, 39500, 40000]);
  // The first step's replay ran from 20 s to 39.7 s: every rung but the one at 40 s.
  assert.deepEqual(res.taken, [36000, 38000, 39000, 39500]);
  assert.equal(res.from, 38000, 'the second step replays from the rung behind it');
  assert.equal(res.focus, 39900, 'the focus moves to where the run stopped again');
  assert.equal(res.now, 39600);
  assert.deepEqual(app.errors, []);
});

test('a seek in a nearly full heap takes a checkpoint only where it splits a wide gap, though freeing the world it left made room for a while (issue 27)', async () => {
  await open();
  const res = await app.page.evaluate(async () => {
    const { lab, WasmLab } = await window.labOf('scenarios/bench/medium.json');
    lab.heapBudgetBytes = WasmLab.heapBytes() + 64 * 2 ** 20;
    lab.runFor(12000);
    const before = lab.checkpoints.map((c) => c.t);
    // The heap at 92 % of its budget; a snapshot of medium's world costs over
    // a 64th of it, so the seek frees that world before its replay.
    lab.heapBudgetBytes = WasmLab.heapBytes() / 0.92;
    const big = lab.snapshotCost.bytes > lab.heapBudgetBytes / 64;
    let from = 0;
    let width = 0;
    before.forEach((t, i) => {
      const g = (before[i + 1] ?? 12000) - t;
      if (g > width) [from, width] = [t, g];
    });
    const target = from + Math.floor(width / 2);
    lab.seek(target);
    return { before, after: lab.checkpoints.map((c) => c.t), big, rungs: [...lab.focusRungs(target)] };
  });
  assert.equal(res.big, true);
  const gaps = res.before.slice(1).map((t, i) => t - res.before[i]);
  const narrowest = Math.min(...gaps);
  // Off the rungs behind its target (the test above): those it takes on purpose.
  for (const t of res.after.filter((c) => !res.before.includes(c) && !res.rungs.includes(c))) {
    const prev = res.after.filter((c) => c < t).pop();
    // The heap the seek began with was near its budget: the rule for a full
    // heap holds, even while the freed world's room lasts.
    assert.ok(t - prev >= 2 * narrowest, `the seek took ${t} ms, ${t - prev} ms after ${prev} (narrowest gap ${narrowest}): ${res.before} -> ${res.after}`);
  }
  assert.deepEqual(app.errors, []);
});

test('playing on in a full heap, a checkpoint is taken only as far from the previous one as the gap its eviction leaves, so spacing doubles instead of churning (issue 27)', async () => {
  await open();
  const res = await app.page.evaluate(async () => {
    const { lab, WasmLab } = await window.labOf('scenarios/tour-11-mass-failover.json');
    // Room for a dozen or so of tour 11's checkpoints beyond its world.
    lab.heapBudgetBytes = WasmLab.heapBytes() + 24 * 2 ** 20;
    const taken = [];
    const take = lab.takeCheckpoint.bind(lab);
    lab.takeCheckpoint = (t) => {
      const cps = lab.checkpoints.map((c) => c.t);
      if (WasmLab.heapBytes() > 0.9 * lab.heapBudgetBytes && cps.length > 1) {
        // The gap dropping the cheapest checkpoint would leave (never the
        // one at 0), capped at four times the narrowest gap.
        let gap = Infinity;
        let narrowest = Infinity;
        for (let i = 1; i < cps.length; i++) {
          gap = Math.min(gap, (cps[i + 1] ?? t) - cps[i - 1]);
          narrowest = Math.min(narrowest, cps[i] - cps[i - 1]);
        }
        taken.push({ t, after: t - cps.filter((c) => c < t).pop(), gap: Math.min(gap, 4 * narrowest) });
      }
      return take(t);
    };
    lab.runFor(40000);
    return { taken, kept: lab.checkpoints.map((c) => c.t) };
  });
  assert.ok(res.taken.length >= 3, `checkpoints taken in a full heap: ${JSON.stringify(res.taken)}`);
  for (const c of res.taken) {
    assert.ok(c.after >= c.gap, `a checkpoint at ${c.t} ms, ${c.after} ms after the previous one, cost one whose drop left a ${c.gap} ms gap (kept: ${res.kept})`);
  }
  assert.ok(res.kept.at(-1) >= 30000, `checkpoints kept: ${res.kept}`);
  assert.deepEqual(app.errors, []);
});

test('after a long run in a full heap, the widest replay a seek can face stays within twice the even spacing of the checkpoints kept (issue 27)', async () => {
  await open();
  const res = await app.page.evaluate(async () => {
    const { lab, WasmLab } = await window.labOf('scenarios/tour-11-mass-failover.json');
    // Room for about two dozen of tour 11's checkpoints beyond its world, so
    // the heap fills a few seconds in and the run must thin what it took.
    lab.heapBudgetBytes = WasmLab.heapBytes() + 24 * 2 ** 20;
    lab.runFor(40000);
    return { kept: lab.checkpoints.map((c) => c.t), full: lab.full(), end: lab.now() };
  });
  const { kept, end } = res;
  // Full, and thinned: 400 checkpoints fit a 40 s run at 100 ms apart.
  assert.ok(res.full, 'the heap never filled: the test does not reach the rules for a full heap');
  assert.ok(kept.length >= 10 && kept.length < 100, `checkpoints kept: ${kept}`);
  // Evenly placed, each of the n checkpoints would start a stretch of end / n;
  // an online placement cannot know the end, and this one thins by merging
  // neighbours, so a stretch may be up to twice that, never more
  // (docs/book/src/time-travel.md: about 1.3x on tour 11, 1.45x on large).
  const even = end / kept.length;
  assert.ok(widestGap(kept, end) <= 2 * even, `widest replay ${widestGap(kept, end)} ms against ${Math.round(even)} ms evenly: ${kept}`);
  assert.deepEqual(app.errors, []);
});

test('in a full heap with one checkpoint beyond 0, a later one still replaces it: the bar is at most four times the narrowest gap (issue 27)', async () => {
  await open();
  const res = await app.page.evaluate(async () => {
    const { lab, WasmLab } = await window.labOf('scenarios/leader-dies.json');
    lab.runFor(200);
    if (!lab.checkpoints.some((c) => c.t === 200)) lab.takeCheckpoint(200);
    lab.runFor(800);
    // Keep the checkpoints at 0 and 200 ms only; the lab is at 1 s.
    window.keepCheckpoints(lab, (t) => t === 0 || t === 200);
    const before = lab.checkpoints.map((c) => c.t);
    // The heap at 95 % of its budget: full, with nothing for trim to drop yet.
    const heap = WasmLab.heapBytes();
    lab.heapBudgetBytes = heap / 0.95;
    lab.growth = 0;
    lab.lastHeap = heap;
    lab.sinceCheckpointMs = 1e9;
    // Dropping the one at 200 ms leaves a 1 s gap, which no checkpoint at
    // 1 s (800 ms after it) would reach; four times the narrowest gap does.
    lab.maybeCheckpoint(1000, 0);
    return { before, after: lab.checkpoints.map((c) => c.t) };
  });
  assert.deepEqual(res.before, [0, 200]);
  assert.ok(res.after.includes(1000), `no checkpoint at 1 s: ${res.after}`);
  assert.deepEqual(app.errors, []);
});

test('the trace hash in the browser equals the native CLI one (determinism)', async () => {
  const file = path.join(ROOT, 'scenarios', 'leader-dies.json');
  const out = cli(['run', file, '--format', 'json']);
  const native = JSON.parse(out);
  await open();
  const text = fs.readFileSync(file, 'utf8');
  const wasm = await app.page.evaluate((scenario) => {
    failoverLab.load(scenario);
    failoverLab.runFor(60000);
    return failoverLab.report();
  }, text);
  assert.equal(native.end_ms, 60000);
  assert.equal(wasm.end_ms, native.end_ms);
  assert.equal(wasm.trace_hash, native.trace_hash, 'trace_hash differs between native and wasm');
  assert.deepEqual(wasm.partitions, native.partitions);
  assert.deepEqual(wasm.availability, native.availability, 'availability differs between native and wasm');
  assert.deepEqual(app.errors, []);
});

// Issue 62, item 5: the scenario picker lists the tours in natural order
// (tour 1, 2, …, 19), not as file names sort (1, 10, 11, …, 2).
test('the scenario picker lists the tours in natural order', async () => {
  await open();
  const tours = await app.page.$$eval('#scenario option', (os) => os.map((o) => o.value).filter((v) => /^tour-\d+-/.test(v)));
  const numbers = tours.map((f) => Number(/^tour-(\d+)-/.exec(f)[1]));
  assert.ok(numbers.length >= 19, `${numbers}`);
  assert.deepEqual(numbers, [...numbers].sort((a, b) => a - b));
});
