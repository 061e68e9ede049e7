// Shareable, replayable state of the full page: the URL hash holds scenario,
// switches, recorded actions and time, and opening the link elsewhere gives
// the same run (same report, same trace hash); export of the scenario with the
// actions folded in and of the trace; import by file picker and drag-and-drop.
// Needs `make build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApp, ROOT, WWW, cli, openPage } from './helpers.mjs';

let app;

before(async () => {
  assert.ok(fs.existsSync(path.join(WWW, 'pkg', 'failover_lab.js')), 'run `make build` first');
  app = await startApp();
});

after(async () => {
  await app?.close();
});

async function open(page, url) {
  await openPage(page, url, { timeout: 20000 });
}

/** Open `url` in a fresh page (a different tab: nothing shared but the link). */
async function openFresh(url) {
  const page = await app.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await open(page, url);
  return { page, errors };
}


test('a shared link reproduces the run exactly: same report, same trace hash', async () => {
  app.errors.length = 0;
  const page = app.page;
  await open(page, `${app.baseUrl}/?paused=1`);
  await page.evaluate(() => {
    failoverLab.runFor(5000);
    failoverLab.crash(2);
    failoverLab.runFor(3000);
  });
  // A config switch through the page's own control: rebuild + replay.
  await page.locator('#acks').selectOption('1');
  await page.locator('#unclean').check();
  await page.evaluate(() => {
    failoverLab.runFor(10000);
    failoverLab.restart(2);
    failoverLab.produce('orders', 1, 7, '1');
    failoverLab.apply({ isolate: 3 });
    failoverLab.runFor(9000);
    failoverLab.heal(3);
    failoverLab.apply({ slow: { broker: 1, topic: 'orders', partition: 2 } });
    failoverLab.runFor(2345);
  });
  const original = await page.evaluate(() => ({ report: failoverLab.report(), actions: failoverLab.actions(), url: location.href, share: failoverLab.shareUrl() }));
  assert.equal(original.report.end_ms, 29345);
  assert.equal(original.url, original.share, 'the address bar always holds the shareable link');
  assert.match(original.url, /#scenario=leader-dies\.json&acks=1&unclean=true&actions=5000:crash:2,/);
  assert.match(original.url, /&t=29345$/);

  const fresh = await openFresh(original.url);
  const copy = await fresh.page.evaluate(() => ({ report: failoverLab.report(), actions: failoverLab.actions(), playing: failoverLab.playing }));
  assert.equal(copy.report.trace_hash, original.report.trace_hash, 'same trace hash');
  assert.deepEqual(copy.report, original.report, 'same report');
  assert.deepEqual(copy.actions, original.actions, 'same recorded actions');
  assert.equal(copy.playing, false, 'opens paused on the same frame');
  assert.equal(await fresh.page.locator('#acks').inputValue(), '1', 'the switch is restored');
  assert.equal(await fresh.page.locator('#unclean').isChecked(), true);
  // The same frame is drawn: describe table and clock agree.
  assert.equal(await fresh.page.locator('#clock').textContent(), await page.locator('#clock').textContent());
  assert.equal(await fresh.page.locator('details.raw pre').textContent(), await page.locator('details.raw pre').textContent());
  // Playing on from the link reproduces the future too.
  const [a, b] = await Promise.all([page, fresh.page].map((p) => p.evaluate(() => (failoverLab.runFor(20000), failoverLab.report().trace_hash))));
  assert.equal(a, b);
  assert.deepEqual(fresh.errors, []);
  await fresh.page.close();
  assert.deepEqual(app.errors, []);
});

test('an imported scenario travels inside the link; drag-and-drop imports too', async () => {
  app.errors.length = 0;
  const page = app.page;
  await open(page, `${app.baseUrl}/?paused=1`);
  const scenario = JSON.parse(fs.readFileSync(path.join(ROOT, 'scenarios', 'unclean-election.json'), 'utf8'));
  scenario.name = 'My own unclean election';
  scenario.seed = 99;
  await page.locator('#import-file').setInputFiles({ name: 'mine.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(scenario)) });
  await page.waitForFunction(() => failoverLab.report().scenario === 'My own unclean election');
  await page.evaluate(() => {
    failoverLab.pause();
    failoverLab.seek(0);
    failoverLab.runFor(20000);
    failoverLab.crash(1);
    failoverLab.runFor(20000);
  });
  assert.match(await page.locator('#scenario option:checked').textContent(), /My own unclean election \(imported\)/);
  await page.waitForFunction(() => location.hash.includes('scenario-data=') && location.hash.includes('t=40000'));
  const original = await page.evaluate(() => ({ report: failoverLab.report(), url: location.href }));
  assert.equal(original.report.seed, 99);
  const fresh = await openFresh(original.url);
  const copy = await fresh.page.evaluate(() => failoverLab.report());
  assert.deepEqual(copy, original.report);
  await fresh.page.close();

  // Drop a file on the page.
  const dropped = await page.evaluate(async () => {
    const text = JSON.stringify({ name: 'Dropped', brokers: 2, topics: [{ name: 't', replication_factor: 2 }], run_until_ms: 5000 });
    const dt = new DataTransfer();
    dt.items.add(new File([text], 'dropped.json', { type: 'application/json' }));
    for (const type of ['dragenter', 'dragover', 'drop']) document.body.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    // The file is read and loaded asynchronously: polled, not a fixed wait.
    for (let i = 0; i < 2000 && failoverLab.report().scenario !== 'Dropped'; i++) await new Promise((r) => setTimeout(r, 10));
    return failoverLab.report().scenario;
  });
  assert.equal(dropped, 'Dropped');
  // A broken file shows the core's message and keeps the current scenario.
  await page.locator('#import-file').setInputFiles({ name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('{"brokers": 0}') });
  await page.locator('#banner').waitFor({ state: 'visible' });
  assert.match(await page.locator('#banner-text').textContent(), /broken\.json: .*brokers/);
  assert.equal(await page.evaluate(() => failoverLab.report().scenario), 'Dropped');
  assert.deepEqual(app.errors, []);
});

test('a damaged link shows a message and the page still works', async () => {
  app.errors.length = 0;
  const page = app.page;
  await open(page, `${app.baseUrl}/?x=1#scenario=leader-dies.json&actions=5000:explode:1`);
  assert.match(await page.locator('#banner-text').textContent(), /actions\[0\]: unknown action "explode"/);
  assert.equal(await page.evaluate(() => failoverLab.report().scenario), "The leader's broker dies: an in-sync follower takes over");
  await open(page, `${app.baseUrl}/?y=1#scenario-data=zAAAA&t=5`);
  assert.match(await page.locator('#banner-text').textContent(), /damaged/);
  assert.deepEqual(app.errors, []);
});

test('export: the scenario with your actions folded in, and the trace exactly as the CLI prints it', async () => {
  app.errors.length = 0;
  const page = app.page;
  await open(page, `${app.baseUrl}/?paused=1`);
  await page.evaluate(() => {
    failoverLab.runFor(10000);
    failoverLab.pause();
  });
  // Trace after a full run of the unchanged scenario = the CLI's --format trace.
  await page.evaluate(() => failoverLab.runFor(50000));
  await page.locator('details.export summary').click();
  const [dl] = await Promise.all([page.waitForEvent('download'), page.locator('#export-trace').click()]);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fl-export-'));
  const tracePath = path.join(tmp, dl.suggestedFilename());
  await dl.saveAs(tracePath);
  const native = cli(['run', path.join(ROOT, 'scenarios', 'leader-dies.json'), '--format', 'trace']);
  assert.equal(fs.readFileSync(tracePath, 'utf8'), native, 'exported trace = `failover-lab run leader-dies.json --format trace`');

  // Scenario export with actions.
  await page.evaluate(() => {
    failoverLab.seek(12000);
    failoverLab.crash(2);
    failoverLab.runFor(3000);
    failoverLab.produce('orders', 0, 4, '1');
  });
  await page.locator('details.export summary').click();
  const [dl2] = await Promise.all([page.waitForEvent('download'), page.locator('#export-scenario').click()]);
  const scnPath = path.join(tmp, dl2.suggestedFilename());
  await dl2.saveAs(scnPath);
  const exported = JSON.parse(fs.readFileSync(scnPath, 'utf8'));
  assert.deepEqual(exported.steps, [
    { at_ms: 10000, crash: 1 },
    { at_ms: 12000, crash: 2 },
    { at_ms: 15000, produce: { topic: 'orders', partition: 0, count: 4, acks: '1' } },
    { at_ms: 30000, restart: 1 },
  ]);
  assert.match(cli(['check', scnPath]), /ok/, 'the exported file is a valid scenario for the CLI');
  const jsonl = await page.evaluate(() => failoverLab.trace(0).length);
  assert.ok(jsonl > 0);
  fs.rmSync(tmp, { recursive: true, force: true });
  assert.deepEqual(app.errors, []);
});

test('share.js: every kind of action survives the round trip', async () => {
  const page = app.page;
  await open(page, `${app.baseUrl}/?paused=1`);
  const res = await page.evaluate(async () => {
    const m = await import('/share.js');
    const actions = [
      { at_ms: 0, action: { crash: 1 } },
      { at_ms: 10, action: { power_loss: 2 } },
      { at_ms: 20, action: { produce: { topic: 'a.b_c-d', partition: 3, count: 5 } } },
      { at_ms: 30, action: { produce: { topic: 'x', partition: 0, count: 1, acks: 'all', producer: 'p 1' } } },
      { at_ms: 40, action: { slow: { broker: 3, topic: 't', partition: 0 } } },
      { at_ms: 50, action: { elect_preferred: { topic: 't:1', partition: 0 } } },
    ];
    const hash = m.encodeHash({ scenario: 'a b.json', overrides: { seed: 3, acks: 'all', 'min.insync.replicas': 2, 'unclean.leader.election.enable': false }, actions, t: 77 });
    const back = m.parseHash(`#${hash}`);
    const packed = await m.packScenario({ name: 'é', brokers: 1 });
    return { hash, back, actions, unpacked: await m.unpackScenario(packed) };
  });
  assert.deepEqual(res.back.actions, res.actions);
  assert.equal(res.back.scenario, 'a b.json');
  assert.deepEqual(res.back.overrides, { seed: 3, acks: 'all', 'min.insync.replicas': 2, 'unclean.leader.election.enable': false });
  assert.equal(res.back.t, 77);
  assert.deepEqual(JSON.parse(res.unpacked), { name: 'é', brokers: 1 });
});

// Issue 62, item 7: a link holds the scenario once. Opened as
// ?scenario=…&stop=…, the address bar and shareUrl() carry it in the hash
// only (which wins over the query anyway); other query parameters stay.
test('a shared link holds the scenario once, in its hash, and keeps the other query parameters', async () => {
  const { page, errors } = await openFresh(`${app.baseUrl}/?scenario=tour-1-leader-dies.json&stop=3&speed=2`);
  await page.waitForFunction(() => failoverLab.now() === failoverLab.tour().stops[2].at_ms, null, { timeout: 20000 });
  const url = new URL(await page.evaluate(() => failoverLab.shareUrl()));
  assert.equal(url.searchParams.get('scenario'), null, url.href);
  assert.equal(url.searchParams.get('stop'), null, url.href);
  assert.equal(url.searchParams.get('speed'), '2', url.href);
  assert.equal((url.href.match(/scenario=/g) || []).length, 1, url.href);
  assert.match(url.hash, /^#scenario=tour-1-leader-dies\.json&/);
  assert.equal(await page.evaluate(() => location.href === failoverLab.shareUrl()), true);
  // The link opens the same run at the same time.
  const t = await page.evaluate(() => failoverLab.now());
  const again = await openFresh(url.href);
  assert.equal(await again.page.evaluate(() => failoverLab.now()), t);
  assert.equal(await again.page.evaluate(() => failoverLab.tour().index), 2);
  assert.deepEqual([...errors, ...again.errors], []);
  await page.close();
  await again.page.close();
});
