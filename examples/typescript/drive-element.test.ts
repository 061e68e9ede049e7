// An example for test writers: a Playwright script, in TypeScript, that drives
// a <failover-lab> element on a documentation page, typed by the element
// package's failover-lab.d.ts. `make test-types` checks it with
// `tsc --noEmit --strict`, then compiles and runs it (node --test) against
// www/embed-demo.html, with Debian's /usr/bin/chromium (playwright-core never
// downloads a browser).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
// Types only: registers 'failover-lab' in HTMLElementTagNameMap, its events
// and window.failoverLab. Nothing is loaded at run time.
import type {} from 'failover-lab-element';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const WWW = path.resolve(HERE, '..', '..', '..', 'www'); // build/ → examples/typescript → examples → root
const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.json': 'application/json', '.css': 'text/css', '.wasm': 'application/wasm' };

/** A static server for www/ on a free port. */
async function serve(root: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const file = path.join(root, rel.endsWith('/') ? `${rel}index.html` : rel);
    if (!file.startsWith(root) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  if (addr === null || typeof addr === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${addr.port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What the page saw: the leader change after the crash and the report's numbers. */
interface Observed {
  previousLeader: number | null;
  newLeader: number | null;
  epochBefore: number;
  epochAfter: number;
  faults: string[];
  lost: number;
  /** The report's availability accounting of that crash. */
  recovery: { action: FailoverLabFault; rto_ms: number | null } | null;
}

test('a typed Playwright script crashes the leader of a <failover-lab> and sees the leaderchange event', async () => {
  const srv = await serve(WWW);
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage();
    await page.goto(`${srv.url}/embed-demo.html`);
    const observed: Observed = await page.evaluate(async (): Promise<Observed> => {
      const lab = document.querySelector('failover-lab'); // FailoverLabElement | null
      if (!lab) throw new Error('no <failover-lab> on the page');
      const ok: boolean = await lab.ready;
      if (!ok) throw new Error(lab.getAttribute('data-error') ?? 'not ready');
      lab.pause();
      const before: FailoverLabReport = lab.report();
      const partition: FailoverLabPartitionReport = before.partitions[0];
      const faults: string[] = [];
      lab.addEventListener('fault', (e) => faults.push(`${e.detail.fault} ${e.detail.broker}`));
      const changed = new Promise<FailoverLabLeaderChangeDetail>((resolve) => {
        lab.addEventListener('leaderchange', (e) => resolve(e.detail), { once: true });
      });
      if (partition.leader === null) throw new Error('no leader to crash');
      lab.crash(partition.leader);
      lab.runFor(10_000); // past the broker session timeout: the controller fences it and elects
      const change = await changed;
      const view: FailoverLabView = lab.view(1);
      return {
        previousLeader: change.previous_leader,
        newLeader: view.partitions[0].leader,
        epochBefore: partition.leader_epoch,
        epochAfter: change.leader_epoch,
        faults,
        lost: lab.report().acked_records_lost,
        recovery: ((f?: FailoverLabFaultReport) => (f ? { action: f.action, rto_ms: f.rto_ms } : null))(lab.report().availability.faults[0]),
      };
    });
    assert.notEqual(observed.newLeader, null);
    assert.notEqual(observed.newLeader, observed.previousLeader);
    assert.equal(observed.epochAfter, observed.epochBefore + 1);
    assert.equal(observed.faults.length, 1);
    assert.match(observed.faults[0], /^crash \d+$/);
    assert.equal(observed.lost, 0);
    assert.equal(observed.recovery?.action, 'crash');
    assert.ok((observed.recovery?.rto_ms ?? 0) > 0, `a recovery time: ${JSON.stringify(observed.recovery)}`);
  } finally {
    await browser.close();
    await srv.close();
  }
});
