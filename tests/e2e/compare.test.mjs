// Compare mode (issue 12): the same scenario, seed and actions under 2–4
// settings sets, one lane each, on one clock. Each lane's report equals the
// native CLI's `run FILE --set …` report (trace hash included); a fault
// applies to every lane; the first divergence is marked on the timeline with
// both narrations; the link carries compare= and reproduces the lanes; a bad
// settings string throws an Error naming the key and keeps the running lab;
// <failover-lab compare="…"> and embed.html?compare=… do the same. Needs
// `make build` (www/pkg, www/dist, www/scenarios, dist/element).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, ROOT, WWW, cli, frames, tourClick, openPage } from './helpers.mjs';

let app;

before(async () => {
  assert.ok(fs.existsSync(path.join(WWW, 'dist', 'lanes.js')), 'run `make build` first');
  app = await startApp({ viewport: { width: 1400, height: 900 } });
});

after(async () => {
  await app?.close();
});

/** The native CLI's report of `run FILE --set …` (settings: "k=v,k=v"). */
function report(file, settings, extra = []) {
  const sets = settings ? settings.split(',').flatMap((s) => ['--set', s]) : [];
  return JSON.parse(cli(['run', file, ...sets, '--format', 'json', ...extra]));
}

async function open(query = '?scenario=leader-dies.json&paused=1', hash = '') {
  await openPage(app.page, `${app.baseUrl}/${query}${hash}`, { timeout: 20000 });
}

/** A scenario that declares its lanes is compared once the lanes' code has loaded: after the page's first frame (data-ready). */
async function comparing() {
  await app.page.waitForFunction(() => document.body.classList.contains('comparing') && failoverLab.seeking === null, null, { timeout: 20000 });
}

const LANES = 'acks=1|acks=all,min.insync.replicas=2|unclean.leader.election.enable=true';

test('each lane equals the CLI run with its --set, trace hash included', async () => {
  app.errors.length = 0;
  const file = path.join(ROOT, 'scenarios', 'unclean-election.json');
  const lanes = LANES.split('|');
  const native = lanes.map((l) => report(file, l));
  await open('?scenario=unclean-election.json&paused=1');
  const text = fs.readFileSync(file, 'utf8');
  const end = native[0].end_ms;
  const got = await app.page.evaluate(
    async ([t, cmp, until]) => {
      failoverLab.load(t);
      await failoverLab.compare(cmp);
      failoverLab.runFor(until);
      return failoverLab.lanes();
    },
    [text, LANES, end],
  );
  assert.equal(got.length, 3);
  for (const [i, lane] of got.entries()) {
    assert.equal(lane.settings, lanes[i]);
    assert.equal(lane.report.end_ms, native[i].end_ms);
    assert.equal(lane.report.trace_hash, native[i].trace_hash, `lane ${i}: trace_hash differs from the CLI's`);
    assert.deepEqual(lane.report.settings, native[i].settings, `lane ${i}: settings`);
    assert.deepEqual(lane.report.partitions, native[i].partitions);
    assert.deepEqual(lane.report.availability, native[i].availability);
    assert.equal(lane.report.acked_records_lost, native[i].acked_records_lost);
  }
  assert.notEqual(got[0].report.trace_hash, got[1].report.trace_hash, 'different settings, different runs');
  // Three lanes drawn, each with its summary row (lanes() landed them: the
  // page draws them in its next frame).
  await frames(app.page);
  assert.equal(await app.page.locator('.lane').count(), 3);
  const lost = await app.page.locator('.lane [data-k="lost"] dd').allTextContents();
  assert.deepEqual(lost, native.map((r) => String(r.acked_records_lost)));
  assert.deepEqual(app.errors, []);
});

test('a fault applies to every lane; time travel moves them all; the divergence is marked', async () => {
  app.errors.length = 0;
  await open();
  const r = await app.page.evaluate(async () => {
    await failoverLab.compare('acks=1|acks=all');
    failoverLab.runFor(5000);
    failoverLab.crash(1);
    failoverLab.runFor(15000);
    const at20 = failoverLab.lanes().map((l) => l.report);
    failoverLab.seek(8000);
    const at8 = failoverLab.lanes().map((l) => l.report);
    failoverLab.seek(20000);
    const again = failoverLab.lanes().map((l) => l.report.trace_hash);
    return { at20, at8, again, actions: failoverLab.actions() };
  });
  assert.deepEqual(r.actions, [{ at_ms: 5000, action: { crash: 1 } }]);
  for (const rep of r.at20) {
    assert.equal(rep.end_ms, 20000);
    const b1 = rep.brokers.find((b) => b.id === 1);
    assert.equal(b1.state, 'crashed', 'broker 1 crashed in every lane');
    assert.equal(rep.availability.faults[0].at_ms, 5000);
  }
  assert.deepEqual(r.at8.map((x) => x.end_ms), [8000, 8000], 'seek moves every lane');
  assert.deepEqual(r.again, r.at20.map((x) => x.trace_hash), 'back and forth: the same runs');
  // The first differing trace event is marked on the timeline, with both narrations.
  const mark = app.page.locator('.tl-mark.diverge');
  assert.equal(await mark.count(), 1);
  const title = await mark.getAttribute('title');
  const box = await app.page.locator('.cmp-div').textContent();
  const m = /diverge at ([\d.]+) s/.exec(box);
  assert.ok(m, box);
  assert.ok(title.startsWith(`${m[1]} s: lanes A and B diverge`), title);
  assert.equal(await app.page.locator('.cmp-side').count(), 2);
  assert.deepEqual(app.errors, []);
});

test("in compare mode the page's own map and partitions (hidden) are not drawn; leaving compare mode draws them at the lanes' time (issue 63)", async () => {
  app.errors.length = 0;
  await open();
  const r = await app.page.evaluate(async () => {
    const frame = () => new Promise((res) => requestAnimationFrame(res));
    await failoverLab.compare('acks=1|acks=all');
    failoverLab.runFor(5000);
    failoverLab.crash(1);
    for (let i = 0; i < 3; i++) await frame();
    const seen = new Set();
    const panel = (n) => (n.nodeType === 1 ? n : n.parentElement)?.closest('#map, #partitions, #narration, .lanes');
    const mo = new MutationObserver((recs) => recs.forEach((x) => seen.add(panel(x.target)?.id || panel(x.target)?.className || '')));
    mo.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
    failoverLab.runFor(15000);
    for (let i = 0; i < 3; i++) await frame();
    mo.disconnect();
    const drawn = [...seen].filter(Boolean).sort();
    await failoverLab.compare(null);
    // Lane A, rebuilt at 0, goes back to 20 s (over frames when the page judges it long), then is drawn.
    for (let i = 0; i < 2000 && failoverLab.seeking; i++) await frame();
    for (let i = 0; i < 3; i++) await frame();
    return { drawn, text: document.getElementById('partitions').textContent, map: document.getElementById('map').textContent, view: failoverLab.view() };
  });
  assert.deepEqual(r.drawn, ['lanes', 'narration'], 'while comparing a run on draws the lanes and the narration, not the hidden map and partitions');
  // Left: the page's own panels show the world at 20 s (broker 1 crashed, its partition led elsewhere).
  assert.equal(r.view.now_ms, 20000);
  assert.match(r.map, /Broker 1\s*CRASHED/i);
  const p0 = r.view.partitions.find((p) => p.partition === 0);
  assert.ok(r.text.includes(`Leader: broker ${p0.leader}`) && p0.leader !== 1, `partitions drawn at 20 s: leader ${p0.leader}`);
  assert.ok(r.text.includes(`Leader epoch: ${p0.leader_epoch}`), `epoch ${p0.leader_epoch}`);
  assert.deepEqual(app.errors, []);
});

test('the divergence is the first trace event that differs (checked against both CLI traces)', async () => {
  const file = path.join(ROOT, 'scenarios', 'tour-13-acks1-vs-acks-all.json');
  const trace = (s) =>
    cli(['run', file, '--set', s, '--format', 'trace']).split('\n');
  const [a, b] = [trace('acks=1'), trace('acks=all')];
  const i = a.findIndex((line, k) => line !== b[k]);
  const at = Number(/^\s*(\d+) ms/.exec(a[i])[1]);
  await open('?scenario=tour-13-acks1-vs-acks-all.json');
  await comparing();
  await app.page.evaluate(() => failoverLab.seek(40000));
  // Found once lane B has caught up (over frames, when the page judges its way long).
  await app.page.waitForFunction(() => /diverge at/.test(document.querySelector('.cmp-div')?.textContent ?? ''), null, { timeout: 20000 });
  const box = await app.page.locator('.cmp-div').textContent();
  assert.ok(box.includes(`diverge at ${(at / 1000).toFixed(3)} s`), `${box} (CLI: first difference at ${at} ms)`);
  assert.ok(box.includes(a[i].replace(/^\s*\d+ ms\s+/, '')), 'lane A narration');
  assert.ok(box.includes(b[i].replace(/^\s*\d+ ms\s+/, '')), 'lane B narration');
});

// Issue 25, critical 1: tour 13's lane A sends its record with acks=1 through a
// produce step; the Clients panel (lane A's) must say so, not producer p1's
// configured acks=all and idempotence, beside "1 acknowledged record lost".
test("tour 13: lane A's Clients panel shows the acks lane A sent with", async () => {
  await open('?scenario=tour-13-acks1-vs-acks-all.json');
  await comparing();
  await app.page.evaluate(() => failoverLab.seek(40000));
  const card = await app.page.locator('#clients [data-producer="p1"] .chead').textContent();
  assert.match(card, /acks=1 and all/, `lane A sent 10 records with acks=all and one with acks=1: ${card}`);
  const lanes = await app.page.evaluate(() => failoverLab.lanes().map((l) => l.settings));
  assert.deepEqual(lanes, ['acks=1', 'acks=all']);
  assert.equal(await app.page.locator('#clients .lost .big').textContent(), '1');
  // Every one-lab panel says whose it is.
  for (const name of ['availability', 'metrics', 'clients', 'describe', 'narration']) {
    assert.equal(await app.page.locator(`[data-panel="${name}"] h2 .lane-of`).textContent(), 'lane A · acks=1', name);
  }
  await app.page.evaluate(() => failoverLab.compare(null));
  await app.page.evaluate(() => failoverLab.runFor(10));
  assert.equal(await app.page.locator('h2 .lane-of').count(), 0, 'outside compare mode no panel claims a lane');
});

test('the link carries compare= and reproduces the lanes', async () => {
  app.errors.length = 0;
  await open();
  const before = await app.page.evaluate(async () => {
    await failoverLab.compare('unclean.leader.election.enable=false|unclean.leader.election.enable=true');
    failoverLab.runFor(4000);
    failoverLab.crash(1);
    failoverLab.runFor(12000);
    return { url: failoverLab.shareUrl(), lanes: failoverLab.lanes() };
  });
  assert.match(before.url, /[#&]compare=unclean\.leader\.election\.enable%3Dfalse%7Cunclean\.leader\.election\.enable%3Dtrue/);
  await app.page.waitForFunction(() => location.hash.includes('compare='));
  const page2 = await app.context.newPage();
  await openPage(page2, before.url, { timeout: 20000 });
  await page2.waitForFunction(() => failoverLab.lanes().length === 2, null, { timeout: 10000 });
  const after = await page2.evaluate(() => failoverLab.lanes());
  assert.deepEqual(after.map((l) => l.settings), before.lanes.map((l) => l.settings));
  assert.deepEqual(after.map((l) => l.report.trace_hash), before.lanes.map((l) => l.report.trace_hash));
  assert.equal(await page2.locator('.lane').count(), 2);
  await page2.close();
  // compare(null) leaves compare mode and the link forgets it.
  const off = await app.page.evaluate(async () => {
    await failoverLab.compare(null);
    return { lanes: failoverLab.lanes(), url: failoverLab.shareUrl() };
  });
  assert.deepEqual(off.lanes, []);
  assert.ok(!off.url.includes('compare='), off.url);
  assert.equal(await app.page.locator('#compare').isVisible(), false);
  assert.deepEqual(app.errors, []);
});

test('a bad settings string throws an Error naming the key; the running lab is kept', async () => {
  app.errors.length = 0;
  await open();
  const r = await app.page.evaluate(async () => {
    await failoverLab.compare('acks=1|acks=all');
    failoverLab.runFor(3000);
    const hash = failoverLab.lanes().map((l) => l.report.trace_hash);
    const msgs = [];
    for (const bad of ['acks=1|min.insync.replica=2', 'acks=1|acks=2', 'acks=1', 'acks=1|acks']) {
      try {
        failoverLab.compare(bad);
        msgs.push(null);
      } catch (e) {
        msgs.push(e instanceof Error ? e.message : `not an Error: ${e}`);
      }
    }
    return { msgs, hash, after: failoverLab.lanes().map((l) => l.report.trace_hash), now: failoverLab.now() };
  });
  assert.match(r.msgs[0], /lane B .*min\.insync\.replica/);
  assert.match(r.msgs[1], /lane B .*acks/);
  assert.match(r.msgs[2], /2 to 4 lanes/);
  assert.match(r.msgs[3], /acks.*KEY=VALUE/);
  assert.deepEqual(r.after, r.hash, 'the lanes keep running');
  assert.equal(r.now, 3000);
  // The settings bar shows the message instead of throwing.
  await app.page.fill('#compare-text', 'acks=1|fo.o=1');
  await app.page.click('#compare-apply');
  await app.page.waitForFunction(() => document.querySelector('.cmp-error')?.textContent.includes('fo.o'));
  assert.deepEqual(app.errors, []);
});

test('compare mode from the keyboard: the Compare button, the settings box, Enter', async () => {
  app.errors.length = 0;
  await open();
  await app.page.focus('#compare-btn');
  await app.page.keyboard.press('Enter');
  await app.page.waitForSelector('#compare-text:focus');
  await app.page.keyboard.type('acks=1|acks=all');
  await app.page.keyboard.press('Enter');
  await app.page.waitForFunction(() => failoverLab.lanes().length === 2);
  // A broker in a lane opens the menu; the fault applies to both lanes. While
  // the lanes are one run, lane B's map is folded into lane A's: lane A's is the one to click.
  await app.page.waitForFunction(() => !document.querySelector('.lane[data-lane="B"] .lane-same').hidden);
  await app.page.locator('.lane[data-lane="A"] svg [data-broker="2"]').focus();
  await app.page.keyboard.press('Enter');
  await app.page.waitForSelector('#broker-menu:not([hidden])');
  await app.page.locator('#broker-menu button', { hasText: 'Crash' }).first().click();
  const states = await app.page.evaluate(() => failoverLab.lanes().map((l) => l.report.brokers.find((b) => b.id === 2).state));
  assert.deepEqual(states, ['crashed', 'crashed']);
  assert.deepEqual(app.errors, []);
});

test('<failover-lab compare> and embed.html?compare= draw the lanes; a bad one shows its message', async () => {
  app.errors.length = 0;
  const page = app.page;
  await page.goto(`${app.baseUrl}/embed.html?scenario=leader-dies.json&compare=${encodeURIComponent('acks=1|acks=all')}`);
  await page.waitForSelector('failover-lab[data-ready="true"]', { timeout: 20000 });
  const r = await page.evaluate(() => {
    const el = document.querySelector('failover-lab');
    el.runFor(12000);
    el.crash(1);
    el.runFor(12000);
    return { lanes: el.lanes(), shown: el.shadowRoot.querySelectorAll('.lane').length };
  });
  assert.equal(r.shown, 2);
  assert.deepEqual(r.lanes.map((l) => l.settings), ['acks=1', 'acks=all']);
  for (const l of r.lanes) assert.equal(l.report.brokers.find((b) => b.id === 1).state, 'crashed');
  // The same lanes as the CLI with the same action folded in.
  const file = path.join(ROOT, 'scenarios', 'leader-dies.json');
  const s = JSON.parse(fs.readFileSync(file, 'utf8'));
  s.steps = [...(s.steps || []), { at_ms: 12000, crash: 1 }].sort((a, b) => a.at_ms - b.at_ms);
  s.run_until_ms = 24000;
  const tmp = path.join(ROOT, 'target', 'tmp-compare-element.json');
  fs.mkdirSync(path.dirname(tmp), { recursive: true });
  fs.writeFileSync(tmp, JSON.stringify(s));
  for (const [i, l] of r.lanes.entries()) assert.equal(l.report.trace_hash, report(tmp, ['acks=1', 'acks=all'][i]).trace_hash, `element lane ${i}`);
  // A bad compare attribute: a message in the element, naming the key.
  await page.setContent(`<script type="module" src="${app.baseUrl}/failover-lab.js"></script>
    <failover-lab scenario="${app.baseUrl}/scenarios/leader-dies.json" compare="acks=1|acks=3"></failover-lab>`);
  await page.waitForSelector('failover-lab[data-error]', { timeout: 20000 });
  assert.match(await page.locator('failover-lab').getAttribute('data-error'), /compare=.*lane B .*acks/);
  // A bad compare on a running element: a note, the lab keeps running.
  await page.setContent(`<script type="module" src="${app.baseUrl}/failover-lab.js"></script>
    <failover-lab scenario="${app.baseUrl}/scenarios/leader-dies.json" compare="acks=1|acks=all"></failover-lab>`);
  await page.waitForSelector('failover-lab[data-ready="true"]', { timeout: 20000 });
  const kept = await page.evaluate(async () => {
    const el = document.querySelector('failover-lab');
    let msg = null;
    try {
      el.compare('acks=1|nope=1');
    } catch (e) {
      msg = e.message;
    }
    el.setAttribute('compare', 'acks=1|nope=2');
    await new Promise((r) => setTimeout(r, 100));
    return { msg, note: el.shadowRoot.querySelector('.fl-error')?.textContent ?? '', lanes: el.lanes().length, error: el.getAttribute('data-error') };
  });
  assert.match(kept.msg, /lane B .*nope/);
  assert.match(kept.note, /nope/);
  assert.equal(kept.lanes, 2, 'the running lanes are kept');
  assert.equal(kept.error, null);
  assert.deepEqual(app.errors, []);
});

// Issue 25, point 2: in compare mode each lane draws its own availability
// strip and recovery badges from its own report (the page's one strip was
// lane A's: in tour 13 it read "no write yet" at 40 s while lane B had
// recovered), and the lane says whose settings they are.
test('tour 13 at 40 s: each lane has its own availability strip and recovery badge, from its own report', async () => {
  await open('?scenario=tour-13-acks1-vs-acks-all.json&stop=6');
  await app.page.waitForFunction(() => failoverLab.lanes().length === 2 && document.querySelectorAll('.lane .rbadge').length === 2);
  const reports = await app.page.evaluate(() => failoverLab.lanes().map((l) => l.report));
  assert.equal(reports[0].end_ms, 40000);
  const ms = (v) => (v == null ? '…' : v >= 1000 ? `${(v / 1000).toFixed(3)} s` : `${v} ms`);
  for (const [i, name] of ['A', 'B'].entries()) {
    const lane = app.page.locator(`.lane[data-lane="${name}"]`);
    assert.equal(await lane.locator('.lane-avail canvas.avail-strip').count(), 1, `lane ${name} has a strip`);
    const f = reports[i].availability.faults[0];
    const head = await lane.locator('.rbadge .rb-head').textContent();
    assert.ok(head.endsWith(`RTO ${ms(f.rto_ms)}`), `lane ${name}: ${head} (its report: ${f.rto_ms})`);
    assert.equal(await lane.locator('.lane-set').textContent(), ['acks=1', 'acks=all'][i]);
  }
  // The lanes recover differently, and each badge shows its own lane's.
  assert.notEqual(reports[0].availability.faults[0].rto_ms, reports[1].availability.faults[0].rto_ms);
  assert.equal(await app.page.locator('.lane[data-lane="B"] .rbadge').getAttribute('data-open'), '0', "lane B's producer has written again");
  // The page's one-lab strip is not shown beside them.
  assert.equal(await app.page.locator('.avail-panel').isVisible(), false);
  await app.page.evaluate(() => failoverLab.compare(null));
  await app.page.waitForFunction(() => !document.querySelector('.lane'));
  assert.equal(await app.page.locator('.avail-panel').isVisible(), true, 'outside compare mode the strip is back');
});

test("the delta table puts what differs first: tour 13's acked lost 1 vs 0 leads, highlighted; what is the same folds into one line", async () => {
  await open('?scenario=tour-13-acks1-vs-acks-all.json&stop=6');
  await app.page.waitForSelector('.cmp-delta tr.differs');
  const rows = await app.page.$$eval('.cmp-delta tbody tr', (trs) => trs.map((tr) => ({
    k: tr.dataset.k,
    differs: tr.classList.contains('differs'),
    cells: [...tr.querySelectorAll('td')].map((td) => td.textContent),
  })));
  assert.equal(rows[0].k, 'lost', JSON.stringify(rows));
  assert.deepEqual(rows[0].cells, ['1', '0']);
  assert.ok(rows.every((r) => r.differs && r.cells.some((c) => c !== r.cells[0])), 'only differing rows in the table');
  const r = await app.page.evaluate(() => failoverLab.lanes().map((l) => l.report));
  const p99 = rows.find((x) => x.k === 'p99');
  assert.deepEqual(p99.cells, r.map((x) => `${x.availability.produce_latency_ms.p99} ms`));
  const heads = await app.page.$$eval('.cmp-delta thead th', (ths) => ths.map((th) => th.textContent));
  assert.deepEqual(heads.slice(1), ['lane A · acks=1', 'lane B · acks=all']);
  const same = await app.page.locator('.cmp-delta .cmp-same').textContent();
  assert.match(same, /^The same in every lane: .*orders-0 leader broker 2/, same);
  // Before the lanes part, nothing differs and the table says so.
  await open('?scenario=tour-13-acks1-vs-acks-all.json&stop=1');
  await app.page.waitForFunction(() => document.querySelector('.cmp-delta')?.dataset.differs === '0');
  assert.match(await app.page.locator('.cmp-delta').textContent(), /No difference at 2\.500 s: the lanes are one run so far/);
  // Once the lanes' events part but before any summary figure moves, the
  // table must not call them one run (issue 62: tour 13 stop 2 said so right
  // above "Lanes A and B diverge at 4.000 s").
  await open('?scenario=tour-13-acks1-vs-acks-all.json&stop=2');
  await app.page.waitForFunction(() => !document.querySelector('.cmp-div')?.hidden && document.querySelector('.cmp-delta')?.dataset.differs === '0');
  const parted = await app.page.locator('.cmp-delta').textContent();
  assert.doesNotMatch(parted, /one run so far/, parted);
  assert.match(parted, /no summary figure differs yet, though the lanes' events part at 4\.000 s/, parted);
});

test('identical lanes fold their cluster map and logs into lane A\u2019s; once they differ each lane draws its own', async () => {
  await open('?scenario=tour-13-acks1-vs-acks-all.json&stop=1');
  await app.page.waitForFunction(() => document.querySelectorAll('.lane').length === 2);
  const laneB = app.page.locator('.lane[data-lane="B"]');
  await app.page.waitForFunction(() => !document.querySelector('.lane[data-lane="B"] .lane-same').hidden);
  assert.equal(await laneB.locator('.lane-map').isVisible(), false, 'lane B folds its map at 2.5 s');
  assert.equal(await laneB.locator('.lane-parts').isVisible(), false);
  assert.equal(await app.page.locator('.lane[data-lane="A"] .lane-map svg').isVisible(), true, 'lane A draws the one map');
  assert.match(await laneB.locator('.lane-same').textContent(), /same as lane A/);
  // At 40 s the lanes' logs differ (HW 10 vs 11): both draw.
  await app.page.evaluate(() => failoverLab.seek(40000));
  await app.page.waitForFunction(() => document.querySelector('.lane[data-lane="B"] .lane-same').hidden);
  assert.equal(await laneB.locator('.lane-map svg').isVisible(), true);
  assert.equal(await laneB.locator('.pcard[data-partition="orders-0"]').isVisible(), true);
  assert.deepEqual(app.errors, []);
});

test("in compare mode the header switches say they are every lane's base and name the keys each lane sets (tour 12: unclean)", async () => {
  await open('?scenario=tour-12-unclean-acceptable.json&stop=3');
  await app.page.waitForSelector('#switches .sw-base');
  assert.equal(await app.page.locator('#switches .sw-base').textContent(), 'base of every lane · each lane sets its own unclean.leader.election.enable');
  await app.page.evaluate(() => failoverLab.compare(null));
  await app.page.waitForFunction(() => !document.querySelector('.lane'));
  assert.equal(await app.page.locator('#switches .sw-base').count(), 0, 'gone outside compare mode');
});

// Opened by a link at the stop after its question (Check yourself links so),
// the answer reads every lane: it must be drawn once the lanes have loaded,
// not stay "Working out the answer…".
test("a compare tour opened at the stop after its question shows the run's answer once the lanes load (tour 13, ?stop=4)", async () => {
  await open('?scenario=tour-13-acks1-vs-acks-all.json&stop=4');
  await app.page.waitForFunction(() => failoverLab.lanes().length === 2);
  await app.page.waitForFunction(() => /The run answers/.test(document.querySelector('#tour .tour-a')?.textContent ?? ''), null, { timeout: 10000 });
  assert.match(await app.page.locator('#tour').textContent(), /The run answers: Lane A only/);
});

test('at 390 px the delta table shows every lane\u2019s column inside the panel, and the lanes and the two narrations stack', async () => {
  const ctx = await app.browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: 'light' });
  const page = await ctx.newPage();
  await openPage(page, `${app.baseUrl}/?scenario=tour-12-unclean-acceptable.json&stop=5`, { timeout: 20000 });
  await page.waitForSelector('.cmp-delta tr.differs');
  const panel = await page.locator('.cmp-delta').boundingBox();
  for (const td of await page.locator('.cmp-delta tr.differs').first().locator('td').all()) {
    const b = await td.boundingBox();
    assert.ok(b.x >= panel.x && b.x + b.width <= panel.x + panel.width + 0.5, `a lane's cell at ${b.x}+${b.width} inside ${panel.x}+${panel.width}`);
  }
  const [a, b] = await Promise.all(['A', 'B'].map((n) => page.locator(`.lane[data-lane="${n}"]`).boundingBox()));
  assert.ok(b.y >= a.y + a.height, 'lane B below lane A');
  const sides = await page.locator('.cmp-side').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().top));
  assert.ok(sides[1] > sides[0], 'lane B\u2019s narration below lane A\u2019s');
  await ctx.close();
});

// Issue 25: in tour 13 the "look here" ring must not sit on one lane's figure
// alone (lane A's box read "1 lost" above an acks=all switch): at the stops
// about the loss it rings the delta row and every lane's own acked-lost figure.
test("tour 13's stops about the loss ring the delta row and each lane's acked-lost figure, not lane A's alone", async () => {
  for (const stop of [4, 5, 6]) {
    await open(`?scenario=tour-13-acks1-vs-acks-all.json&stop=${stop}`);
    await app.page.waitForSelector('.cmp-delta tr.differs[data-k="lost"].tour-hl');
    const ringed = await app.page.$$eval('.tour-hl', (els) => els.map((el) => el.closest('.lane')?.dataset.lane ?? (el.closest('.cmp-delta') ? 'delta' : el.dataset.testid || el.className)));
    assert.ok(ringed.includes('delta'), `stop ${stop}: ${ringed}`);
    assert.ok(ringed.includes('A') && ringed.includes('B'), `stop ${stop}: every lane's figure: ${ringed}`);
    assert.ok(!ringed.includes('acked-lost'), `stop ${stop}: not the one-lane Clients box: ${ringed}`);
    const pills = await app.page.$$eval('.lane .lane-sum .tour-hl', (els) => els.map((el) => `${el.closest('.lane').dataset.lane}:${el.dataset.k}:${el.querySelector('dd').textContent}`));
    assert.deepEqual(pills, ['A:lost:1', 'B:lost:0'], `stop ${stop}`);
  }
  assert.deepEqual(app.errors, []);
});

// Issue 62, item 2: a lane's summary pills agree with the lane's own report
// at every stop of every compare tour. The expectations are computed here
// from report() (not from lanes.js's laneSummary): the partition's leader,
// its HW (none while offline: no leader serves one), acknowledged records
// lost, each fault's recovery (nothing to recover for a fault that made no
// partition unavailable, as lane A's second crash in tour 16), and each group's committed offsets as its coordinator holds them
// (a crashed consumer's group keeps them; "coordinator unavailable" while no
// running broker leads the group's offsets partition), once per group, with a subscribing group's state.
const COMPARE_TOURS = fs.readdirSync(path.join(ROOT, 'scenarios')).filter((f) => /^tour-.*\.json$/.test(f) && JSON.parse(fs.readFileSync(path.join(ROOT, 'scenarios', f), 'utf8')).compare);
for (const file of COMPARE_TOURS) {
  test(`${file}: at every stop each lane's summary pills say what the lane's report says`, async () => {
    app.errors.length = 0;
    const page = app.page;
    const stops = JSON.parse(fs.readFileSync(path.join(ROOT, 'scenarios', file), 'utf8')).tour;
    await openPage(page, `${app.baseUrl}/?scenario=${file}`, { timeout: 20000 });
    await page.waitForFunction(() => failoverLab.lanes().length > 1, null, { timeout: 10000 });
    for (const [i] of stops.entries()) {
      await tourClick(page.locator('#tour [data-tour="next"]'));
      const seen = await page.evaluate(() => {
        const lanes = failoverLab.lanes();
        const fmt = (offs) => offs.map(([tp, o, e]) => `${tp} @ ${o}${e == null ? '' : ` · epoch ${e}`}`).join(', ') || 'none';
        return lanes.map((l, j) => {
          const el = document.querySelector(`section.lane[data-lane="${'ABCD'[j]}"] dl.lane-sum`);
          const pill = (k) => el?.querySelector(`[data-k="${k}"] dd`)?.textContent ?? null;
          const r = l.report;
          const p = r.partitions[0];
          const want = {
            leader: p.leader == null ? 'none' : `broker ${p.leader}`,
            hw: p.leader == null ? 'none (offline)' : String(p.high_watermark),
            lost: String(r.acked_records_lost),
          };
          const got = { leader: pill('leader'), hw: pill('hw'), lost: pill('lost') };
          // A fault's recovery: a fault that made nothing unavailable has nothing to recover.
          r.availability.faults.forEach((f, n) => {
            want[`rto-${n}`] = !f.partition_count && !f.stalled_partition_count ? 'nothing to recover' : f.rto_ms == null ? 'no write yet' : `${f.rto_ms} ms`;
            got[`rto-${n}`] = pill(`rto-${n}`);
          });
          // Once per group, named after its first member: its commits and, for a subscribing
          // group, its state as the coordinator holds it (generation, or KIP-848's group epoch).
          const groups = new Set();
          for (const k of r.consumers.filter((c) => c.group)) {
            if (groups.has(k.group.group_id)) {
              got[`committed-${k.id}`] = pill(`committed-${k.id}`);
              want[`committed-${k.id}`] = null;
              continue;
            }
            groups.add(k.group.group_id);
            want[`committed-${k.id}`] = k.group.stored == null ? 'coordinator unavailable' : fmt(k.group.stored);
            got[`committed-${k.id}`] = pill(`committed-${k.id}`);
            if ('coordinator_view' in k.group) {
              const v = k.group.coordinator_view;
              const epoch = k.group.member?.protocol === 'consumer' ? 'epoch' : 'generation';
              want[`group-${k.id}`] = v ? `${v.state} · ${epoch} ${v.generation} · ${v.members.length} members` : 'coordinator unavailable';
              got[`group-${k.id}`] = pill(`group-${k.id}`);
            }
          }
          return { want, got };
        });
      });
      for (const [j, { want, got }] of seen.entries()) assert.deepEqual(got, want, `${file} stop ${i + 1}, lane ${'ABCD'[j]}`);
    }
    assert.deepEqual(app.errors, []);
  });
}
