#!/usr/bin/env node
// Runs www/bench.html in headless Chromium (playwright-core + /usr/bin/chromium),
// one fresh page per workload so each one's memory figure is its own, then the
// overview frame-time measurement; runs the same workloads natively
// (target/release/failover-bench) for the wasm/native ratio and checks that
// both give the same trace hash. Prints a table and writes JSON. Speed is
// reported, never asserted: this is `make bench`, not `make test`.
//
//   node scripts/bench-browser.mjs [--workloads small,medium,large] [--until MS]
//        [--frames N] [--no-native] [--json target/bench/browser.json]
//        [--seek leader-dies,tour-4-unclean-election,bench/large] [--seek-until MS]
//        [--seeks N] [--seek-cases runFor,jump,switch,link,scrub]
//        [--app leader-dies,tour-1-leader-dies,tour-11-mass-failover,tour-13-acks1-vs-acks-all]
//        [--app-scroll .parts-panel]
//
// --app times failoverLab.seek in the app page itself (index.html in an
// iframe of bench.html), the page's redraw and layout included, after
// runFor(60000): SEEKS (default 40 here) targets spread over the run, near
// now, and a drag in even steps; then the frame intervals while the default
// scenario plays. One fresh page per scenario. --app-scroll SELECTOR scrolls
// the page to that panel first (panels off screen wait during a burst of
// seeks, so the figures depend on what is on screen).
//
// --seek times the page's time travel (www/lab.js's seek, as the timeline
// calls it) in each scenario after runFor, a jump, a switch change, a loaded
// link, and along a scrub; one fresh page per scenario.
//
// Needs `make build` (www/pkg, www/scenarios/bench) and, for the native side,
// `cargo build --release --bin failover-bench`.

import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startServer, launchBrowser, scriptArg, ROOT, CHROMIUM_ARGS } from '../tests/e2e/helpers.mjs';
import { chromium } from 'playwright-core';

const arg = scriptArg;
const WORKLOADS = arg('workloads', 'small,medium,large').split(',').filter(Boolean);
const UNTIL = arg('until', '');
const FRAMES = Number(arg('frames', '300'));
const NATIVE = !process.argv.includes('--no-native');
const OUT = arg('json', path.join(ROOT, 'target', 'bench', 'browser.json'));
const TIMEOUT_MS = Number(arg('timeout-min', '120')) * 60_000;
const SEEK = arg('seek', '').split(',').filter(Boolean);
const SEEK_UNTIL = arg('seek-until', '60000');
const SEEKS = arg('seeks', '20');
const SEEK_CASES = arg('seek-cases', 'runFor,jump,switch,link,scrub');
const APP = arg('app', '').split(',').filter(Boolean);
const NATIVE_BIN = path.join(ROOT, 'target', 'release', 'failover-bench');

const fmt = (x, d = 0) => (x == null || Number.isNaN(x) ? '—' : Number(x).toFixed(d));

async function benchPage(browser, baseUrl, query) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await page.goto(`${baseUrl}/bench.html?${query}`);
  await page.waitForFunction(() => window.benchResults?.done === true, null, { timeout: TIMEOUT_MS, polling: 1000 });
  const res = await page.evaluate(() => window.benchResults);
  await context.close();
  if (res.error || errors.length) throw new Error(`bench.html?${query}: ${res.error || errors.join('; ')}`);
  return res;
}

function native(workload) {
  const args = ['run', path.join(ROOT, 'scenarios', 'bench', `${workload}.json`)];
  if (UNTIL) args.push('--until', UNTIL);
  const out = execFileSync(NATIVE_BIN, args, { encoding: 'utf8', maxBuffer: 1 << 26 });
  return JSON.parse(out.trim().split('\n').pop());
}

async function main() {
  if (!fs.existsSync(path.join(ROOT, 'www', 'pkg', 'failover_lab_bg.wasm'))) {
    throw new Error('www/pkg is missing: run `make build` first');
  }
  if (NATIVE && !fs.existsSync(NATIVE_BIN)) {
    throw new Error(`${path.relative(ROOT, NATIVE_BIN)} is missing: cargo build --release --bin failover-bench (or pass --no-native)`);
  }
  const srv = await startServer();
  // Precise performance.memory figures; otherwise the same flags as the tests.
  const browser = fs.existsSync('/usr/bin/chromium')
    ? await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: [...CHROMIUM_ARGS, '--enable-precise-memory-info'] })
    : await launchBrowser();
  const rows = [];
  let frames = null;
  let env = null;
  const seeks = [];
  const app = [];
  let appFrames = null;
  try {
    for (const w of WORKLOADS) {
      const q = new URLSearchParams({ workloads: w, frames: '0' });
      if (UNTIL) q.set('until', UNTIL);
      process.stderr.write(`bench-browser: ${w} in Chromium …\n`);
      const res = await benchPage(browser, srv.baseUrl, q.toString());
      env = res.env;
      const wasm = res.results[0];
      let nat = null;
      if (NATIVE) {
        process.stderr.write(`bench-browser: ${w} native …\n`);
        nat = native(w);
      }
      rows.push({ workload: w, wasm, native: nat });
    }
    if (FRAMES > 0) {
      process.stderr.write(`bench-browser: overview frames (${FRAMES}) …\n`);
      frames = (await benchPage(browser, srv.baseUrl, new URLSearchParams({ workloads: '', frames: String(FRAMES) }).toString())).frames;
    }
    for (const s of SEEK) {
      process.stderr.write(`bench-browser: seek in ${s} …\n`);
      const q = new URLSearchParams({ workloads: '', frames: '0', seek: s, seek_until: SEEK_UNTIL, seeks: SEEKS, seek_cases: SEEK_CASES });
      seeks.push(...(await benchPage(browser, srv.baseUrl, q.toString())).seeks);
    }
    for (const s of APP) {
      process.stderr.write(`bench-browser: app-page seek in ${s} …\n`);
      const q = new URLSearchParams({ workloads: '', frames: '0', app: s, seeks: arg('seeks', '40'), warmup: '0', app_scroll: arg('app-scroll', '') });
      const res = await benchPage(browser, srv.baseUrl, q.toString());
      app.push(...res.app);
      appFrames = res.appFrames;
    }
  } finally {
    await browser.close().catch(() => {});
    await srv.close();
  }

  console.log('\nworkload  sim s  native wall ms  sim/wall  chromium wall ms  sim/wall  wasm/native speed  native peak RSS MiB  wasm memory MiB  JS heap MiB  same trace hash');
  for (const r of rows) {
    const n = r.native;
    const speed = n ? n.wall_ms / r.wasm.wall_ms : null;
    r.wasm_native_speed = speed;
    r.same_trace_hash = n ? n.trace_hash === r.wasm.trace_hash : null;
    console.log(
      [
        r.workload.padEnd(8),
        fmt(r.wasm.sim_ms / 1000, 1).padStart(5),
        fmt(n?.wall_ms).padStart(14),
        `${fmt(n && n.sim_to_wall, 2)}×`.padStart(8),
        fmt(r.wasm.wall_ms).padStart(16),
        `${fmt(r.wasm.sim_to_wall, 2)}×`.padStart(8),
        `${fmt(speed, 2)}×`.padStart(17),
        fmt(n && n.peak_rss_kib / 1024, 1).padStart(19),
        fmt(r.wasm.wasm_memory_bytes / 1048576, 1).padStart(15),
        fmt(r.wasm.js_heap_bytes && r.wasm.js_heap_bytes / 1048576, 1).padStart(11),
        String(r.same_trace_hash ?? '—').padStart(15),
      ].join('  '),
    );
  }
  if (frames) {
    console.log(
      `\noverview: ${frames.partitions} partitions (${frames.cell_px}px cells), ${frames.frames} frames: ` +
        `draw p50 ${fmt(frames.draw_p50_ms, 2)} ms, p95 ${fmt(frames.draw_p95_ms, 2)} ms, max ${fmt(frames.draw_max_ms, 2)} ms; ` +
        `rAF interval p95 ${fmt(frames.raf_interval_p95_ms, 2)} ms`,
    );
  }
  if (seeks.length) {
    const cases = SEEK_CASES.split(',');
    console.log(`\nseek (lab.seek, ${SEEKS} targets per case; p50 / p95 ms)`);
    console.log(['scenario'.padEnd(32), 'sim s', ...cases.map((c) => c.padStart(15)), 'seek p95', 'checkpoints', 'heap MiB', 'snapshot ms', 'snapshot MiB', 'wasm MiB'].join('  '));
    for (const r of seeks) {
      const c0 = r.cases[cases[0]];
      console.log(
        [
          r.scenario.padEnd(32),
          fmt(r.sim_ms / 1000).padStart(5),
          ...cases.map((c) => `${fmt(r.cases[c].p50_ms, 1)} / ${fmt(r.cases[c].p95_ms, 1)}`.padStart(15)),
          fmt(r.p95_ms, 1).padStart(8),
          String(c0.checkpoints).padStart(11),
          fmt(Math.max(...Object.values(r.cases).map((c) => c.heap_bytes)) / 1048576, 0).padStart(8),
          fmt(r.snapshot_ms, 2).padStart(11),
          fmt(r.snapshot_bytes / 1048576, 2).padStart(12),
          fmt(r.wasm_memory_bytes / 1048576, 0).padStart(8),
        ].join('  '),
      );
    }
  }
  if (seeks.length) {
    // Where a seek's time goes (www/bench.js, SEEK_PARTS): the core's calls by part.
    console.log('\nseek parts (ms per seek, p50 / max; the replay\'s pace in wall ms per simulated second)');
    console.log(['scenario, case'.padEnd(40), 'drop world', 'restore', 'replay', 'checkpoints', 'pace'].map((x, i) => (i ? x.padStart(13) : x)).join(' '));
    for (const r of seeks) {
      for (const [c, v] of Object.entries(r.cases)) {
        const p = v.parts;
        const pair = (k) => `${fmt(p[`${k}_p50_ms`], 1)} / ${fmt(p[`${k}_max_ms`], 1)}`.padStart(13);
        console.log([`${r.scenario}, ${c}`.padEnd(40), pair('drop'), pair('restore'), pair('replay'), pair('checkpoints'), (p.replay_ms_per_sim_s == null ? '—' : fmt(p.replay_ms_per_sim_s, 1)).padStart(13)].join(' '));
      }
    }
  }
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  if (app.length) {
    console.log('\napp page: failoverLab.seek, redraw and layout included (p50 / p95 / max ms)');
    console.log(['scenario'.padEnd(30), 'sim s', 'lanes', 'spread'.padStart(20), 'near now'.padStart(20), 'drag'.padStart(20)].join('  '));
    const c = (x) => `${fmt(x.p50_ms, 1)} / ${fmt(x.p95_ms, 1)} / ${fmt(x.max_ms, 0)}`.padStart(20);
    for (const r of app) console.log([r.scenario.padEnd(30), fmt(r.end_ms / 1000, 0).padStart(5), String(r.lanes).padStart(5), c(r.spread), c(r.near), c(r.drag)].join('  '));
    if (appFrames) console.log(`frames while playing leader-dies (last page): ${appFrames.frames} frames, interval p50 ${fmt(appFrames.p50_ms, 1)} ms, p95 ${fmt(appFrames.p95_ms, 1)} ms, max ${fmt(appFrames.max_ms, 0)} ms`);
  }
  fs.writeFileSync(OUT, JSON.stringify({ env, until: UNTIL || null, rows, frames, seeks, app, appFrames }, null, 1) + '\n');
  console.log(`\nbench-browser: wrote ${path.relative(ROOT, OUT)}`);
}

main().catch((e) => {
  console.error(`bench-browser: ${e.message}`);
  process.exit(1);
});
