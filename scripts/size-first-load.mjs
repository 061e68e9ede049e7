#!/usr/bin/env node
// The first-load budget as a first-time visitor pays it (issue 63): opens
// www/index.html in a fresh headless Chromium profile (playwright-core +
// /usr/bin/chromium, nothing cached), waits for the page's first frame and
// the welcome it shows a first-time visitor, and sums every file the page
// fetched until then, each gzipped at level 9 as a static server would send
// it: index.html, the bundle, the stylesheet, the wasm, the scenario list,
// the default scenario and the welcome's on-demand view included. Files are
// fixed, so the figure is deterministic; `make test` fails over the budget.
// What a later action loads on demand (a tour's card, the explorer and its
// speed-optimised wasm, the book) is not counted.
//
//   node scripts/size-first-load.mjs [path-and-query]   (default: /)
//   SIZE_BUDGET_WARN=1 reports an overrun without failing.
//
// Needs `make build`.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { startServer, launchBrowser, ROOT, WWW } from '../tests/e2e/helpers.mjs';

const BUDGET = 256 * 1024; // bytes (256 KiB, DEVELOPERS.md)
const address = process.argv[2] || '/';

const srv = await startServer(WWW);
const browser = await launchBrowser();
let rows;
try {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const fetched = new Set();
  page.on('requestfinished', (req) => {
    const u = new URL(req.url());
    if (u.origin === srv.baseUrl) fetched.add(decodeURIComponent(u.pathname));
  });
  await page.goto(srv.baseUrl + address);
  await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 60000 });
  // The first frame has run; the welcome (a first-time visitor's view) is drawn by then or just after.
  await page.evaluate(() => new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res))));
  await page.waitForLoadState('networkidle');
  const welcome = await page.evaluate(() => !document.getElementById('welcome')?.hidden);
  rows = [...fetched].map((p) => {
    const file = path.join(WWW, p.endsWith('/') ? `${p}index.html` : p);
    const raw = fs.readFileSync(file);
    return { file: path.relative(ROOT, file), raw: raw.length, gz: zlib.gzipSync(raw, { level: 9 }).length };
  }).sort((a, b) => b.gz - a.gz);
  await context.close();
  for (const r of rows) console.log(`  ${String(r.gz).padStart(8)} B gz  ${String(r.raw).padStart(8)} B  ${r.file}`);
  const total = rows.reduce((s, r) => s + r.gz, 0);
  const ok = total <= BUDGET;
  console.log(`size-first-load: ${address} in Chromium${welcome ? ' (welcome shown)' : ''}: ${rows.length} files, ${total} B gzipped (${(total / 1024).toFixed(1)} KiB) of ${BUDGET} B = 256 KiB — ${ok ? `ok, ${BUDGET - total} B to spare` : `OVER BUDGET by ${total - BUDGET} B`}`);
  if (!ok && process.env.SIZE_BUDGET_WARN !== '1') process.exitCode = 1;
} finally {
  await browser.close();
  await srv.close();
}
