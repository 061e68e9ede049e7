#!/usr/bin/env node
// Times view(), report() and traceSince() (JSON text + JSON.parse, the
// default) against viewSwb(), reportSwb(), traceSinceSwb() (serde-wasm-bindgen)
// of a wasm package built with `--features swb-compare`, in headless Chromium,
// at 3 and at 1,000 partitions; checks both give the same objects. Run by
// scripts/bench-serde.sh:  node scripts/bench-serde.mjs target/bench-serde/compare
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, launchBrowser } from '../tests/e2e/helpers.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkg = path.relative(ROOT, path.resolve(process.argv[2] || 'target/bench-serde/compare'));

const scenario = (partitions, brokers) => ({
  name: `${partitions} partitions`,
  seed: 1,
  brokers,
  topics: [{ name: 't', partitions, replication_factor: 3 }],
  clients: [
    { type: 'producer', id: 'p1', topic: 't', acks: 'all', records_per_sec: 200 },
    { type: 'consumer', id: 'c1', topic: 't' },
  ],
  steps: [{ at_ms: 8000, crash: 1 }],
  run_until_ms: 30000,
});

const srv = await startServer(ROOT);
const browser = await launchBrowser();
try {
  const page = await browser.newPage();
  await page.goto(`${srv.baseUrl}/${pkg}/`).catch(() => {});
  const rows = await page.evaluate(
    async ({ pkg, cases }) => {
      const m = await import(`/${pkg}/failover_lab.js`);
      await m.default();
      // µs per call over a 150 ms window.
      const window = (fn, ms = 150) => {
        let n = 0;
        const t0 = performance.now();
        while (performance.now() - t0 < ms) {
          fn();
          n++;
        }
        return ((performance.now() - t0) * 1000) / n;
      };
      const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
      // The two ways alternate for 9 rounds (a shared, busy machine drifts);
      // the medians are reported.
      const pair = (a, b) => {
        for (let i = 0; i < 5; i++) a(), b(); // warm up
        const ta = [];
        const tb = [];
        for (let r = 0; r < 9; r++) {
          ta.push(window(a));
          tb.push(window(b));
        }
        return [median(ta), median(tb)];
      };
      const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
      const out = [];
      for (const sc of cases) {
        const lab = new m.WasmLab(JSON.stringify(sc));
        lab.runUntil(20000);
        const len = lab.traceLength();
        const pairs = [
          ['view(8)', () => lab.view(8), () => lab.viewSwb(8)],
          ['view(64)', () => lab.view(64), () => lab.viewSwb(64)],
          ['report()', () => lab.report(), () => lab.reportSwb()],
          ['traceSince(last 50)', () => lab.traceSince(Math.max(0, len - 50)), () => lab.traceSinceSwb(Math.max(0, len - 50))],
        ];
        for (const [name, a, b] of pairs) {
          const [json_us, swb_us] = pair(a, b);
          out.push({ partitions: sc.topics[0].partitions, call: name, json_us, swb_us, same: same(a(), b()), bytes: JSON.stringify(a()).length });
        }
        lab.free();
      }
      return out;
    },
    { pkg, cases: [scenario(3, 3), scenario(1000, 6)] },
  );
  console.log('partitions  call                   JSON+parse µs   serde-wasm-bindgen µs   ratio   same   JSON bytes   (medians of 9 alternating 150 ms rounds)');
  for (const r of rows) {
    console.log(
      `${String(r.partitions).padStart(10)}  ${r.call.padEnd(22)} ${r.json_us.toFixed(1).padStart(13)}   ${r.swb_us.toFixed(1).padStart(21)}   ${(r.swb_us / r.json_us).toFixed(2).padStart(5)}   ${r.same ? 'yes ' : 'NO  '}   ${r.bytes}`,
    );
  }
} finally {
  await browser.close();
  await srv.close();
}
