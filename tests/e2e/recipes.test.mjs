// The book's Embedding recipes that no other test covers, each run as a
// reader would run it (docs/book/src/embedding.md):
//
// - Vite: examples/vite (the package imported by name, the scenario imported
//   as an asset) built with the real `vite build` (vite from package.json),
//   with dist/element linked in as node_modules/failover-lab-element, as
//   `npm install ./dist/element` would; the built site runs the element,
//   whose tour question module and compare lanes load from Vite's assets.
// - Another bundler (esbuild, already the page's bundler): the same entry
//   bundled into one file, with the wasm, style.css and question.js copied
//   next to it, as the chapter says.
// - Docusaurus-shaped: the package vendored into a static folder served at
//   /failover-lab/, loaded only in the browser by a dynamic import of that
//   absolute path (what the chapter's component does in useEffect), and the
//   element created afterwards by script, as React renders it. Docusaurus
//   itself is not installed (some hundreds of packages); what is checked is
//   everything the recipe relies on.
// In each: the element reaches ready, a crash of the leader elects another
// broker with the leader epoch one higher, and no console error. Needs
// `make build` (dist/element).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startServer, launchBrowser, ROOT } from './helpers.mjs';

const PKG = path.join(ROOT, 'dist', 'element');
let browser;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'failover-lab-recipes-'));

before(async () => {
  assert.ok(fs.existsSync(path.join(PKG, 'failover-lab.js')), 'dist/element is missing: run `make build`');
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** Serve `dir`, open `url`, wait for #lab to be ready; crash its leader; return what happened. */
async function crashInBuiltSite(dir, url = '/') {
  const srv = await startServer(dir);
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => m.type() === 'error' && errors.push(`console.error: ${m.text()}`));
  page.on('response', (r) => r.status() >= 400 && errors.push(`HTTP ${r.status()}: ${r.url()}`));
  try {
    await page.goto(srv.baseUrl + url);
    await page.waitForFunction(() => document.getElementById('lab')?.dataset.ready === 'true', null, { timeout: 20000 });
    const r = await page.evaluate(async () => {
      const lab = document.getElementById('lab');
      lab.pause();
      lab.runFor(3000);
      const before = lab.report().partitions[0];
      lab.crash(before.leader);
      lab.runFor(12000);
      const after = lab.report().partitions[0];
      return { before: [before.leader, before.leader_epoch], after: [after.leader, after.leader_epoch] };
    });
    return { r, errors, page, close: async () => { await page.close(); await srv.close(); } };
  } catch (e) {
    await page.close();
    await srv.close();
    throw e;
  }
}

function assertFailover(r) {
  assert.equal(r.before[0], 1, 'broker 1 leads orders-0 at first');
  assert.ok(r.after[0] !== null && r.after[0] !== 1, `a new leader after the crash (got ${r.after[0]})`);
  assert.equal(r.after[1], r.before[1] + 1, 'the leader epoch is one higher');
}

/** Tour 1's first stop with a question: its index and its first choice's text. */
function firstQuestion() {
  const tour = JSON.parse(fs.readFileSync(path.join(PKG, 'scenarios', 'tour-1-leader-dies.json'), 'utf8')).tour;
  const index = tour.findIndex((s) => s.question);
  assert.ok(index >= 0, 'tour 1 asks a question');
  return { index, choice: tour[index].question.choices[0].text };
}

/** A project folder with examples/vite's sources and the package installed (linked). */
function project(name) {
  const dir = path.join(tmp, name);
  fs.mkdirSync(path.join(dir, 'node_modules'), { recursive: true });
  for (const f of ['index.html', 'main.js']) fs.copyFileSync(path.join(ROOT, 'examples', 'vite', f), path.join(dir, f));
  fs.symlinkSync(PKG, path.join(dir, 'node_modules', 'failover-lab-element'), 'dir');
  return dir;
}

test('Vite: `vite build` of examples/vite runs the element; its tour question and compare lanes load from the built assets', async () => {
  const dir = project('vite');
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--logLevel', 'error'], { cwd: dir, stdio: 'pipe' });
  const assets = fs.readdirSync(path.join(dir, 'dist', 'assets'));
  assert.ok(assets.some((f) => f.endsWith('.wasm')), `the wasm is an asset of the build (${assets.join(', ')})`);
  const { r, errors, page, close } = await crashInBuiltSite(path.join(dir, 'dist'));
  try {
    assertFailover(r);
    // A stop of tour 1 asks a question (question.js, loaded on demand), and
    // compare mode loads lanes.js: both from Vite's assets.
    const more = await page.evaluate(async (q) => {
      const lab = document.getElementById('lab');
      lab.reset();
      for (let i = 0; i <= q.index; i++) lab.tourNext();
      await new Promise((res) => setTimeout(res, 500));
      const asked = [...lab.shadowRoot.querySelectorAll('button')].some((b) => b.textContent.includes(q.choice));
      await lab.compare('acks=1|acks=all');
      return { asked, lanes: lab.lanes().map((l) => l.settings) };
    }, firstQuestion());
    assert.equal(more.asked, true, "the tour's question shows its choices");
    assert.deepEqual(more.lanes, ['acks=1', 'acks=all']);
    assert.deepEqual(errors, []);
  } finally {
    await close();
  }
});

test('another bundler (esbuild): one bundled module with the wasm, style.css and question.js copied next to it', async () => {
  const dir = project('esbuild');
  const out = path.join(dir, 'out');
  fs.mkdirSync(path.join(out, 'assets'), { recursive: true });
  // esbuild has no `?url` assets: the scenario is copied and named by path.
  const main = fs.readFileSync(path.join(dir, 'main.js'), 'utf8').replace(/^import scenario from .*$/m, "const scenario = './tour-1-leader-dies.json';");
  fs.writeFileSync(path.join(dir, 'main.js'), main);
  const { build } = await import('esbuild');
  await build({ entryPoints: [path.join(dir, 'main.js')], bundle: true, format: 'esm', outfile: path.join(out, 'assets', 'main.js'), logLevel: 'error', absWorkingDir: dir });
  fs.copyFileSync(path.join(PKG, 'pkg', 'failover_lab_bg.wasm'), path.join(out, 'assets', 'failover_lab_bg.wasm'));
  fs.copyFileSync(path.join(PKG, 'style.css'), path.join(out, 'assets', 'style.css'));
  fs.copyFileSync(path.join(PKG, 'question.js'), path.join(out, 'assets', 'question.js'));
  fs.copyFileSync(path.join(PKG, 'scenarios', 'tour-1-leader-dies.json'), path.join(out, 'tour-1-leader-dies.json'));
  fs.writeFileSync(path.join(out, 'index.html'), fs.readFileSync(path.join(dir, 'index.html'), 'utf8').replace('./main.js', './assets/main.js'));
  const { r, errors, close } = await crashInBuiltSite(out);
  try {
    assertFailover(r);
    assert.deepEqual(errors, []);
  } finally {
    await close();
  }
});

test('Docusaurus-shaped: vendored under static/failover-lab/, loaded by a browser-only dynamic import, the element rendered by script', async () => {
  const site = path.join(tmp, 'docusaurus-build');
  fs.mkdirSync(site, { recursive: true });
  fs.cpSync(PKG, path.join(site, 'failover-lab'), { recursive: true });
  fs.writeFileSync(
    path.join(site, 'index.html'),
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A Docusaurus-like page</title><link rel="icon" href="data:,"></head>
<body><main><h1>Leader dies</h1><div id="root"></div></main>
<script type="module">
  // What the chapter's FailoverLab component does: render the element with
  // its props, and import the module in the browser only (useEffect).
  const el = document.createElement('failover-lab');
  Object.entries({ id: 'lab', scenario: '/failover-lab/scenarios/leader-dies.json', compact: '' }).forEach(([k, v]) => el.setAttribute(k, v));
  document.getElementById('root').append(el);
  import('/failover-lab/failover-lab.js');
</script></body></html>`,
  );
  const { r, errors, close } = await crashInBuiltSite(site);
  try {
    assertFailover(r);
    assert.deepEqual(errors, []);
  } finally {
    await close();
  }
});
