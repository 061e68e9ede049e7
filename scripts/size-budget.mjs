#!/usr/bin/env node
// Size budget of the page (issue 6): the wasm, every JS module and every
// stylesheet that www/index.html loads, each gzipped (level 9, as a static
// server would send it), must add up to at most BUDGET bytes. Sizes are
// deterministic, so this is a real check (run by `make test`); it prints the
// actual figure either way. Needs `make build` (www/pkg, www/dist).
//
//   node scripts/size-budget.mjs [page.html ...]   (default: www/index.html)
//   SIZE_BUDGET_WARN=1 reports an overrun without failing.

import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WWW = path.join(ROOT, 'www');
// The budget: 256 KiB (DEVELOPERS.md; it was issue 6's 200 kB). index.html loads the bundle of scripts/build-bundle.mjs
// (www/dist/), so what counts is the minified JS and CSS the page really fetches.
const BUDGET = 256 * 1024; // bytes (256 KiB, DEVELOPERS.md)

/** Files a page loads: module scripts and their static/dynamic imports, stylesheets, wasm. */
function pageFiles(html) {
  const files = new Set();
  const text = fs.readFileSync(html, 'utf8');
  const dir = path.dirname(html);
  const queue = [];
  for (const m of text.matchAll(/<script[^>]*\bsrc="([^"]+)"/g)) queue.push(path.resolve(dir, m[1]));
  for (const m of text.matchAll(/<link[^>]*rel="stylesheet"[^>]*href="([^"]+)"/g)) files.add(path.resolve(dir, m[1]));
  while (queue.length) {
    const file = queue.pop();
    if (files.has(file)) continue;
    if (!fs.existsSync(file)) throw new Error(`${path.relative(ROOT, file)} is missing: run \`make build\``);
    files.add(file);
    const src = fs.readFileSync(file, 'utf8');
    const base = path.dirname(file);
    const refs = [
      ...src.matchAll(/\bimport\s+(?:[^'"]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/g),
      ...src.matchAll(/\bexport\s+[^'"]*?\s+from\s+['"](\.{1,2}\/[^'"]+)['"]/g),
      ...src.matchAll(/\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g),
    ].map((m) => path.resolve(base, m[1]));
    for (const r of refs) queue.push(r);
    for (const m of src.matchAll(/new URL\(\s*['"]([^'"]+\.wasm)['"]\s*,\s*import\.meta\.url\s*\)/g)) {
      files.add(path.resolve(base, m[1]));
    }
  }
  // Every page here runs the wasm core: finding none means the scanner missed
  // how it is loaded, and the total would be ~170 kB short.
  if (![...files].some((f) => f.endsWith('.wasm'))) {
    throw new Error(`${path.relative(ROOT, html)}: no .wasm found (expected new URL('….wasm', import.meta.url))`);
  }
  return [...files].sort();
}

const pages = process.argv.slice(2).length ? process.argv.slice(2) : [path.join(WWW, 'index.html')];
let failed = false;
for (const page of pages) {
  let files;
  try {
    files = pageFiles(path.resolve(page));
  } catch (e) {
    console.error(`size-budget: ${e.message}`);
    process.exit(2);
  }
  const rows = files.map((f) => {
    const raw = fs.readFileSync(f);
    return { file: path.relative(ROOT, f), raw: raw.length, gz: zlib.gzipSync(raw, { level: 9 }).length };
  });
  const kind = (r) => (r.file.endsWith('.wasm') ? 'wasm' : r.file.endsWith('.css') ? 'css' : 'js');
  const sum = (k) => rows.filter((r) => !k || kind(r) === k).reduce((s, r) => s + r.gz, 0);
  for (const r of rows) console.log(`  ${String(r.gz).padStart(8)} B gz  ${String(r.raw).padStart(8)} B  ${r.file}`);
  const total = sum();
  const ok = total <= BUDGET;
  failed ||= !ok;
  console.log(
    `size-budget: ${path.relative(ROOT, page)}: ${total} B gzipped (${(total / 1000).toFixed(1)} kB; wasm ${sum('wasm')}, js ${sum('js')}, css ${sum('css')}) ` +
      `of ${BUDGET} B = ${BUDGET / 1024} KiB (${((100 * total) / BUDGET).toFixed(0)}%) — ${ok ? 'ok' : 'OVER BUDGET'}`,
  );
  console.log(
    ok
      ? `size-budget: ${BUDGET - total} B to spare`
      : `size-budget: ${total - BUDGET} B over the ${BUDGET} B budget`,
  );
}
if (failed && process.env.SIZE_BUDGET_WARN === '1') {
  console.log('size-budget: over budget, but SIZE_BUDGET_WARN=1: reporting only');
  process.exit(0);
}
process.exit(failed ? 1 : 0);
