// Import your cluster (issue 65 item 2) in Chromium: the dialog opens from the
// header, is walked with the keyboard alone, and loads the pasted cluster;
// the page's describe at t = 0 is the pasted text again, for 3 brokers / 2
// topics and for 60 brokers / 20,000 partitions; bad input shows its line
// and selects it; a size beyond the page is refused naming the limit;
// nothing is sent anywhere; axe finds no violation in the light and the dark
// theme. Needs `make build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, ROOT } from './helpers.mjs';

const AXE = path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];

// The same cluster as tests/import.rs: broker 1 down, leaders not first in
// their replica lists, an offline partition with an eligible leader replica.
const THREE = [
  'Topic: orders\tTopicId: 3q2lFfyuRW2n0P6CfBDMKA\tPartitionCount: 3\tReplicationFactor: 3\tConfigs: min.insync.replicas=2,unclean.leader.election.enable=true',
  '\tTopic: orders\tPartition: 0\tLeader: 2\tReplicas: 1,2,3\tIsr: 2,3\tElr: \tLastKnownElr: ',
  '\tTopic: orders\tPartition: 1\tLeader: 2\tReplicas: 2,3,1\tIsr: 2,3\tElr: \tLastKnownElr: ',
  '\tTopic: orders\tPartition: 2\tLeader: 3\tReplicas: 3,1,2\tIsr: 3,2\tElr: \tLastKnownElr: ',
  'Topic: payments\tTopicId: Zk9aQ0bXTjW3cVbE1rLm2g\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: min.insync.replicas=2',
  '\tTopic: payments\tPartition: 0\tLeader: 3\tReplicas: 1,3\tIsr: 3\tElr: \tLastKnownElr: ',
  '\tTopic: payments\tPartition: 1\tLeader: none\tReplicas: 2,1\tIsr: \tElr: 1\tLastKnownElr: ',
  '',
].join('\n');

/** 60 brokers, `n` partitions in two topics, leaders and ISRs varied (a seeded PRNG). */
function big(n = 20000) {
  let x = 0x2545f491;
  const next = (k) => {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    return x % k;
  };
  const out = [];
  for (const [name, count, id] of [['clicks', n - 5000, 'CCCCCCCCCCCCCCCCCCCCCC'], ['billing', 5000, 'DDDDDDDDDDDDDDDDDDDDDD']]) {
    out.push(`Topic: ${name}\tTopicId: ${id}\tPartitionCount: ${count}\tReplicationFactor: 3\tConfigs: ${name === 'billing' ? 'min.insync.replicas=2' : ''}`);
    for (let p = 0; p < count; p++) {
      const a = 1 + next(60);
      const b = 1 + ((a + next(58)) % 60);
      let c = 1 + ((b + next(57)) % 60);
      while (c === a || c === b) c = (c % 60) + 1;
      const reps = [a, b, c];
      const kind = next(100);
      let leader, isr, elr = [], lke = [];
      if (kind < 2) {
        leader = 'none'; isr = []; elr = [b]; lke = [a];
      } else {
        const l = reps[next(3)];
        leader = String(l);
        isr = [l, ...reps.filter((r) => r !== l && next(4) !== 0)];
        if (kind < 5) elr = reps.filter((r) => !isr.includes(r)).slice(0, 1);
      }
      out.push(`\tTopic: ${name}\tPartition: ${p}\tLeader: ${leader}\tReplicas: ${reps.join(',')}\tIsr: ${isr.join(',')}\tElr: ${elr.join(',')}\tLastKnownElr: ${lke.join(',')}`);
    }
  }
  return `${out.join('\n')}\n`;
}

let app;
const sent = [];

before(async () => {
  assert.ok(fs.existsSync(AXE), 'node_modules/axe-core is missing: run `make setup`');
  app = await startApp({ viewport: { width: 1400, height: 900 } });
  app.page.on('request', (r) => sent.push({ url: r.url(), method: r.method(), body: r.postData() }));
});

after(async () => {
  await app?.close();
});

async function axe(page) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ path: AXE });
  return page.evaluate(async (tags) => {
    const res = await window.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return res.violations.map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)).join('; ')}`);
  }, TAGS);
}

async function openDialog(theme = 'dark') {
  const page = app.page;
  await page.emulateMedia({ colorScheme: theme });
  app.errors.length = 0;
  await page.goto(`${app.baseUrl}/?paused=1&theme=${theme}`);
  await page.waitForFunction(() => document.body?.dataset.ready === 'true', null, { timeout: 30000 });
  await page.locator('#import-cluster').click();
  await page.locator('#import-dialog').waitFor({ state: 'visible', timeout: 10000 });
  return page;
}

test('the keyboard alone imports 3 brokers / 2 topics, and the page describes the pasted text at t = 0', async () => {
  const page = await openDialog();
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'import-text', 'the text area has the focus');
  await page.keyboard.insertText(THREE);
  await page.keyboard.press('Tab'); // producers' rate
  await page.keyboard.type('10');
  await page.keyboard.press('Tab'); // acks
  await page.keyboard.press('Tab'); // a consumer per topic
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'import-consumers');
  await page.keyboard.press('Space');
  assert.equal(await page.locator('#import-consumers').isChecked(), true);
  await page.keyboard.press('Tab'); // Cancel
  await page.keyboard.press('Tab'); // Import
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'import-go');
  await page.keyboard.press('Enter');
  await page.locator('#import-done strong').waitFor({ timeout: 30000 });
  assert.match(await page.locator('#import-done').textContent(), /Loaded 3 brokers, 2 topics, 5 partitions/);
  assert.match(await page.locator('#import-done').textContent(), /broker 1 crashes at t = 0/);
  assert.equal(await page.evaluate(() => window.failoverLab.describe()), THREE);
  const r = await page.evaluate(() => window.failoverLab.report());
  assert.deepEqual(r.producers.map((p) => p.id), ['producer-orders', 'producer-payments']);
  assert.deepEqual(r.consumers.map((c) => c.id), ['consumer-orders', 'consumer-payments']);
  // Done closes the dialog; the picker names the imported cluster.
  await page.keyboard.press('Enter');
  await page.locator('#import-dialog').waitFor({ state: 'detached', timeout: 5000 });
  assert.match(await page.locator('#scenario option:checked').textContent(), /Imported cluster: 3 brokers.*\(imported\)/);
  assert.deepEqual(app.errors, []);
});

test('60 brokers / 20,000 partitions: the page describes the pasted text at t = 0; nothing is sent anywhere', async () => {
  const page = await openDialog();
  const text = big();
  sent.length = 0;
  // 1.6 MB: set as a paste would, not typed key by key.
  await page.evaluate((t) => { document.getElementById('import-text').value = t; }, text);
  await page.locator('#import-go').click();
  await page.locator('#import-done strong').waitFor({ timeout: 120000 });
  const ms = Number(await page.locator('#import-dialog').getAttribute('data-import-ms'));
  console.log(`import.test: 60 brokers / 20,000 partitions read by the page in ${ms} ms`);
  assert.match(await page.locator('#import-done').textContent(), /Loaded 60 brokers, 2 topics, 20000 partitions/);
  const back = await page.evaluate(() => window.failoverLab.describe());
  if (back !== text) {
    const a = back.split('\n');
    const b = text.split('\n');
    const i = a.findIndex((l, k) => l !== b[k]);
    assert.fail(`line ${i + 1}: page ${JSON.stringify(a[i])}, pasted ${JSON.stringify(b[i])}`);
  }
  const origin = new URL(app.baseUrl).origin;
  assert.deepEqual(sent.filter((r) => new URL(r.url).origin !== origin || r.method !== 'GET' || r.body), [], 'only the lab\'s own files are fetched');
  assert.deepEqual(app.errors, []);
});

test('bad input shows its line and what was expected, and selects that line', async () => {
  const page = await openDialog();
  await page.locator('#import-text').fill('Topic: t\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: \n\tTopic: t\tPartition: 0\tLeader: 2\tReplicas: 1,2,3\tIsr: 1,3\n');
  await page.locator('#import-go').click();
  await page.locator('#import-error:not(:empty)').waitFor({ timeout: 30000 });
  assert.equal(await page.locator('#import-error').textContent(), "line 2: Leader: broker 2 is not in the Isr 1,3 (Kafka's leader is always in sync)");
  const sel = await page.evaluate(() => {
    const t = document.getElementById('import-text');
    return [document.activeElement === t, t.value.slice(t.selectionStart, t.selectionEnd), t.getAttribute('aria-invalid')];
  });
  assert.deepEqual(sel, [true, '\tTopic: t\tPartition: 0\tLeader: 2\tReplicas: 1,2,3\tIsr: 1,3', 'true']);
  // Escape closes the dialog and keeps the lab.
  await page.keyboard.press('Escape');
  await page.locator('#import-dialog').waitFor({ state: 'detached', timeout: 5000 });
  assert.deepEqual(app.errors, []);
});

test('a cluster beyond what the page runs is refused with the limit named', async () => {
  const page = await openDialog();
  await page.evaluate((t) => { document.getElementById('import-text').value = t; }, big(20001));
  await page.locator('#import-go').click();
  await page.locator('#import-error:not(:empty)').waitFor({ timeout: 60000 });
  assert.match(await page.locator('#import-error').textContent(), /^20001 partitions: the page runs at most 20000 partitions \(the CLI's failover-lab import runs up to 100000/);
});

for (const theme of ['light', 'dark']) {
  test(`axe: the import dialog in the ${theme} theme has no violation (empty, with an error, after an import)`, async () => {
    const page = await openDialog(theme);
    assert.deepEqual(await axe(page), []);
    await page.locator('#import-text').fill('Topic: t\n');
    await page.locator('#import-go').click();
    await page.locator('#import-error:not(:empty)').waitFor({ timeout: 30000 });
    assert.deepEqual(await axe(page), [], 'with an error');
    await page.locator('#import-example').click();
    await page.locator('#import-go').click();
    await page.locator('#import-done strong').waitFor({ timeout: 30000 });
    assert.deepEqual(await axe(page), [], 'after an import');
    assert.deepEqual(app.errors, []);
  });
}

test('the welcome offers the import', async () => {
  const page = app.page;
  await page.goto(`${app.baseUrl}/?welcome=1`);
  await page.locator('[data-welcome="import"]').click();
  await page.locator('#import-dialog').waitFor({ state: 'visible', timeout: 10000 });
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'import-text');
});
