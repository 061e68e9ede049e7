// The trade-off explorer (issue 12, item 3): www/tradeoffs.html runs the sweep
// matrix on Web Workers and its rows must be the native CLI's
// `failover-lab sweep --format json` rows for the same seeds and settings;
// cancel leaves partial, marked results; a bad set= is a message naming the
// key; a configuration's mark opens its worst seed in the lab (the same run as
// `failover-lab run --sweep-seed S --sweep-config KEY`). Needs `make build`
// (www/pkg-explorer) and builds the release CLI through cargo when missing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, WWW, cli } from './helpers.mjs';

let app;

before(async () => {
  assert.ok(fs.existsSync(path.join(WWW, 'pkg-explorer', 'failover_lab_bg.wasm')), 'www/pkg-explorer is missing: run `make build` first');
  app = await startApp({ viewport: { width: 1400, height: 900 } });
});

after(async () => {
  await app?.close();
});


const lines = (text) => text.split('\n').filter(Boolean).map((l) => JSON.parse(l));

async function open(query) {
  app.errors.length = 0;
  await app.page.goto(`${app.baseUrl}/tradeoffs.html${query}`);
  return app.page;
}

/** Wait for the sweep to end and the worst-seed links to exist; the results. */
async function finished(page, timeout = 120000) {
  await page.waitForFunction(() => window.tradeoffResults?.done && window.tradeoffResults.links, null, { timeout });
  return page.evaluate(() => window.tradeoffResults);
}

/** The CLI table's rule for a configuration's worst seed (first violation,
 * first loss), else the longest unavailability, from the CLI's own shard. */
function expectedWorst(row, shard) {
  if (row.first_seed_with_violation != null) return row.first_seed_with_violation;
  if (row.first_seed_with_loss != null) return row.first_seed_with_loss;
  const runs = shard.filter((l) => l.key === row.key).map((l) => l.run);
  runs.sort((a, b) => b.unavailable_ms - a.unavailable_ms || a.seed - b.seed);
  return runs[0].seed;
}

test('rows equal the CLI sweep --format json for the same seeds and --set (key, runs, acked, lost, violations: whole rows)', async () => {
  const page = await open('?seeds=4&set=acks=all');
  const res = await finished(page);
  const native = lines(cli(['sweep', '--seeds', '4', '--set', 'acks=all', '--format', 'json']));
  assert.equal(native.length, 20);
  assert.equal(res.state, 'done');
  assert.equal(res.runsDone, 80);
  assert.equal(res.runsTotal, 80);
  assert.ok(res.workers >= 1);
  assert.deepEqual(res.rows.map((r) => r.key), native.map((r) => r.key), 'the same configurations in the same order');
  for (const [i, n] of native.entries()) {
    const w = res.rows[i];
    for (const f of ['key', 'runs', 'acked', 'lost', 'violations']) assert.equal(w[f], n[f], `${n.key}: ${f}`);
    assert.deepEqual(w, n, `${n.key}: the whole row (loss causes, first seeds, availability) equals the CLI's`);
  }
  // The table shows every row; the chart a mark per configuration, the Pareto ones ringed.
  assert.equal(await page.locator('#table tbody tr').count(), 20);
  assert.equal(await page.locator('#chart a.mark').count(), 20);
  assert.ok((await page.locator('#chart .halo').count()) >= 1, 'at least one configuration is on the frontier');
  assert.equal(await page.locator('#chart .frontier').count(), 1);
  assert.match(await page.locator('#chart svg').textContent(), /Unavailable partition-seconds per run, p99 over the seeds \(s\)/);
  assert.match(await page.locator('#chart svg').textContent(), /Acknowledged records lost \(% of acked, log scale\)/);
  // Every worst-seed link names the seed the CLI's rows and shard point to.
  const shard = lines(cli(['sweep', '--seeds', '4', '--set', 'acks=all', '--format', 'jsonl']));
  const linkSeeds = await page.$$eval('#table tbody tr', (trs) => trs.map((tr) => [tr.dataset.key, tr.querySelector('td.wlink a')?.textContent]));
  for (const [key, text] of linkSeeds) {
    const row = native.find((r) => r.key === key);
    assert.equal(text, `seed ${expectedWorst(row, shard)} ↗`, key);
  }
  assert.deepEqual(app.errors, []);
});

test('first= and several set= (a sim. key included) mean what --first-seed and --set mean', async () => {
  const page = await open('?seeds=2&first=7&set=rf=3&set=sim.truncation=high_watermark');
  const res = await finished(page);
  const native = lines(cli(['sweep', '--seeds', '2', '--first-seed', '7', '--set', 'rf=3', '--set', 'sim.truncation=high_watermark', '--format', 'json']));
  assert.equal(native.length, 8);
  assert.deepEqual(res.rows, native);
  assert.equal(await page.inputValue('#first'), '7');
  assert.equal(await page.inputValue('#sets'), 'rf=3, sim.truncation=high_watermark');
  assert.deepEqual(app.errors, []);
});

test('clicking a configuration in the chart opens its worst seed in the lab: the run of run --sweep-seed S --sweep-config KEY', async () => {
  const page = await open('?seeds=4&set=acks=all');
  const res = await finished(page);
  const row = res.rows.find((r) => r.first_seed_with_loss != null) ?? res.rows[0];
  const seed = row.first_seed_with_violation ?? row.first_seed_with_loss;
  assert.ok(seed != null, 'some configuration lost records in 4 seeds');
  const [lab] = await Promise.all([
    app.context.waitForEvent('page'),
    page.locator(`#chart a.mark[data-key="${row.key}"]`).click(),
  ]);
  const errors = [];
  lab.on('pageerror', (e) => errors.push(e.message));
  await lab.waitForFunction(() => document.body?.dataset.ready === 'true', null, { timeout: 30000 });
  assert.match(lab.url(), /\/index\.html#scenario-data=/);
  const scenario = JSON.parse(cli(['run', '--sweep-seed', String(seed), '--sweep-config', row.key, '--emit-scenario']));
  const native = JSON.parse(cli(['run', '--sweep-seed', String(seed), '--sweep-config', row.key, '--format', 'json']));
  const got = await lab.evaluate((until) => {
    failoverLab.pause();
    const loaded = failoverLab.exportScenario();
    failoverLab.seek(until);
    return { loaded, report: failoverLab.report() };
  }, scenario.run_until_ms);
  assert.equal(got.loaded.name, `sweep seed ${seed} (${row.key})`);
  assert.equal(got.loaded.seed, seed);
  assert.deepEqual(got.loaded.steps, scenario.steps, 'the same fault schedule');
  assert.equal(got.report.end_ms, native.end_ms);
  assert.equal(got.report.trace_hash, native.trace_hash, 'the same run as the CLI');
  assert.equal(got.report.acked_records_lost, native.acked_records_lost);
  assert.deepEqual(errors, []);
  await lab.close();
  assert.deepEqual(app.errors, []);
});

test('Cancel stops the workers and leaves partial results, clearly marked', async () => {
  const page = await open('?seeds=500');
  await page.waitForFunction(() => window.tradeoffResults?.state === 'running' && window.tradeoffResults.runsDone >= 12, null, { timeout: 60000 });
  assert.equal(await page.isDisabled('#cancel'), false);
  await page.click('#cancel');
  await page.waitForFunction(() => window.tradeoffResults.state === 'cancelled' && window.tradeoffResults.links, null, { timeout: 30000 });
  const res = await page.evaluate(() => window.tradeoffResults);
  assert.equal(res.done, false);
  assert.equal(res.runsTotal, 40 * 500);
  assert.ok(res.runsDone >= 12 && res.runsDone < res.runsTotal, `${res.runsDone} runs done`);
  assert.equal(res.rows.reduce((s, r) => s + r.runs, 0), res.runsDone, 'the rows count exactly the finished runs');
  assert.ok(res.rows.every((r) => r.runs < 500));
  // Nothing runs on after the cancel.
  await page.waitForTimeout(600);
  assert.equal(await page.evaluate(() => window.tradeoffResults.runsDone), res.runsDone);
  assert.match(await page.locator('#banner').textContent(), new RegExp(`Cancelled after ${res.runsDone} of 20000 runs.*partial`));
  assert.equal(await page.isVisible('#banner'), true);
  assert.match(await page.locator('#chart-title').textContent(), new RegExp(`partial \\(${res.runsDone} of 20000 runs\\)`));
  assert.equal(await page.locator('#table table.partial').count(), 1);
  assert.equal(await page.isDisabled('#run'), false, 'a new sweep can start');
  assert.deepEqual(app.errors, []);
});

test('a bad set= or seeds= shows a message naming the key; the page stays usable', async () => {
  for (const [query, re] of [
    ['?seeds=2&set=bogus.key=3', /bogus\.key/],
    ['?seeds=2&set=rf=x', /rf=x: expected a number/],
    ['?seeds=2&set=acks=2', /acks=2: expected 0, 1 or all/],
    ['?seeds=2&set=novalue', /set=novalue: expected KEY=VALUE/],
    ['?seeds=lots', /seeds=lots: expected a whole number/],
  ]) {
    const page = await open(query);
    await page.waitForFunction(() => window.tradeoffResults?.state === 'error', null, { timeout: 30000 });
    assert.equal(await page.isVisible('#banner'), true, query);
    assert.match(await page.locator('#banner').textContent(), re, query);
    assert.match(await page.evaluate(() => window.tradeoffResults.error), re, query);
    assert.equal(await page.isVisible('#form'), true, 'the form stays to fix the settings');
    assert.deepEqual(app.errors, [], query);
  }
  // Fixing the settings in the form runs the sweep and updates the address.
  await page0Fix();
});

async function page0Fix() {
  const page = app.page;
  await page.fill('#seeds', '1');
  await page.fill('#sets', 'acks=1, rf=2');
  await page.click('#run');
  const res = await finished(page);
  assert.equal(res.rows.length, 4);
  assert.equal(await page.isVisible('#banner'), false);
  assert.match(page.url(), /tradeoffs\.html\?seeds=1&set=acks=1&set=rf=2$/);
  assert.deepEqual(res.rows, lines(cli(['sweep', '--seeds', '1', '--set', 'acks=1', '--set', 'rf=2', '--format', 'json'])));
}

// Issue 25, point 5: an explorer that supports a conclusion.
test('by default 100 seeds per configuration, and the page says why (below 100 a p99 is just the worst run)', async () => {
  const page = await open('');
  await page.waitForFunction(() => window.tradeoffResults?.state === 'running', null, { timeout: 30000 });
  const res = await page.evaluate(() => window.tradeoffResults);
  await page.click('#cancel');
  assert.equal(res.seeds, 100);
  assert.equal(res.runsTotal, 40 * 100);
  assert.equal(await page.inputValue('#seeds'), '100');
  const key = await page.locator('#key').textContent();
  assert.match(key, /Seeds: 100 by default\. The p99 of n runs is the ceil\(0\.99 n\)-th smallest, so with fewer than 100 seeds it is just the worst run/);
  assert.deepEqual(app.errors, []);
});

test('each configuration has 90 % bootstrap whiskers on both axes, within its seeds\u2019 range, drawn and tabled; equal runs give equal intervals', async () => {
  const sets = ['acks=1', 'min.insync.replicas=1', 'unclean.leader.election.enable=false'];
  const page = await open(`?seeds=30&${sets.map((s) => `set=${s}`).join('&')}`);
  const res = await finished(page);
  assert.equal(res.rows.length, 5);
  const shard = lines(cli(['sweep', '--seeds', '30', ...sets.flatMap((s) => ['--set', s]), '--format', 'jsonl']));
  for (const row of res.rows) {
    const iv = res.intervals[row.key];
    assert.ok(iv, `${row.key} has an interval`);
    const runs = shard.filter((l) => l.key === row.key).map((l) => l.run);
    assert.equal(runs.length, 30);
    const u = runs.map((r) => r.unavailable_ms);
    const [u0, u1] = iv.unavailable_ms;
    assert.ok(Math.min(...u) <= u0 && u0 <= row.availability.unavailable_ms.p99 && row.availability.unavailable_ms.p99 <= u1 && u1 <= Math.max(...u), `${row.key}: ${u0}–${u1} around p99 ${row.availability.unavailable_ms.p99}`);
    const rates = runs.filter((r) => r.acked > 0).map((r) => r.lost / r.acked);
    const rate = row.lost / row.acked;
    const [l0, l1] = iv.loss_rate;
    assert.ok(Math.min(...rates) <= l0 && l0 <= rate + 1e-12 && rate <= l1 + 1e-12 && l1 <= Math.max(...rates), `${row.key}: loss ${l0}–${l1} around ${rate}`);
  }
  assert.equal(await page.locator('svg.chart .whisker').count(), 5);
  const ivCells = await page.locator('#table tbody td.iv').allTextContents();
  assert.ok(ivCells.every((t) => / · \d+\.\d–\d+\.\d$/.test(t)), ivCells.join(' | '));
  // The resampling is one fixed stream over the runs in seed order.
  const same = await page.evaluate(async () => {
    const m = await import('./tradeoffs.js');
    const runs = Array.from({ length: 20 }, (_, i) => ({ seed: i + 1, unavailable_ms: (i * 7919) % 5000, lost: i % 3, acked: 100 }));
    return JSON.stringify(m.bootstrap(runs)) === JSON.stringify(m.bootstrap([...runs].reverse()));
  });
  assert.equal(same, true);
  // The line under the chart says what it shows, for how many seeds.
  assert.match(await page.locator('#what').textContent(), /^What this shows: .*p99 over 30 seeds.*Whiskers are 90 % bootstrap intervals/);
  assert.deepEqual(app.errors, []);
});

test('the frontier treats two configurations with the numbers the table shows alike', async () => {
  const page = await open('?seeds=2&set=acks=all&set=rf=3');
  const res = await finished(page);
  const r = await page.evaluate(async () => {
    const m = await import('./tradeoffs.js');
    const row = (p99, lost) => ({ availability: { unavailable_ms: { p99 } }, acked: 1000, lost });
    // 10.040 s and 10.001 s both show as 10.0; 0.55 % twice; a worse third.
    return [...m.paretoSet([row(10040, 0), row(10001, 0), row(12000, 5)])];
  });
  assert.deepEqual(r.sort(), [0, 1]);
  // On the page: rows whose shown unavailable p99 and loss rate are equal carry the badge together.
  const shown = await page.$$eval('#table tbody tr', (trs) => trs.map((tr) => {
    const td = [...tr.querySelectorAll('td')].map((x) => x.textContent);
    return { key: tr.dataset.key, front: tr.classList.contains('front'), nums: `${td[4]}|${td[7]}` };
  }));
  for (const a of shown) for (const b of shown) if (a.nums === b.nums) assert.equal(a.front, b.front, `${a.key} and ${b.key} show ${a.nums}`);
  assert.equal(res.state, 'done');
  assert.deepEqual(app.errors, []);
});

test('on a 390 px phone the header keeps its sentence on full lines, not a one-word column', async () => {
  const ctx = await app.browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: 'dark' });
  const page = await ctx.newPage();
  await page.goto(`${app.baseUrl}/tradeoffs.html?seeds=1&set=acks=1&set=rf=2`);
  await page.waitForSelector('.top .lede');
  const lede = await page.locator('.top .lede').boundingBox();
  assert.ok(lede.width >= 300, `the lede is ${lede.width} px wide`);
  assert.ok(lede.height <= 80, `the lede is ${lede.height} px tall`);
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'no sideways scroll');
  await ctx.close();
});
