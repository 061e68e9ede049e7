#!/usr/bin/env node
// Bundle and minify what www/index.html loads (issue 6, "Size and start-up"):
// www/app.js and every module it imports, the wasm-bindgen glue included,
// become one minified ES module www/dist/app.js; www/style.css becomes the
// minified www/dist/style.css. One file per kind compresses better than twenty
// small ones, and the browser makes 2 requests instead of 21. No source maps
// (they would be served next to the page and are not needed to debug: the
// unbundled modules stay in www/ and the other pages load them as they are).
// Run after scripts/build-wasm.sh (make build does); uses esbuild and terser
// from node_modules (pinned in package.json, installed by scripts/setup.sh).
//
// The glue finds its .wasm with `new URL('failover_lab_bg.wasm',
// import.meta.url)`; in a bundle import.meta.url is the bundle's own URL, so
// that one string is rewritten to the wasm's path relative to www/dist/
// (`../pkg/failover_lab_bg.wasm`). The page keeps loading the one .wasm in
// www/pkg/, and scripts/size-budget.mjs finds it the same way.
//
// esbuild bundles and minifies; terser then compresses the bundle once more
// (several passes, module scope): about 950 B less gzipped than esbuild alone.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { minify } from 'terser';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WWW = path.join(ROOT, 'www');
const OUT = path.join(WWW, 'dist');
const GLUE = path.join(WWW, 'pkg', 'failover_lab.js');
const WASM = 'failover_lab_bg.wasm';

const say = (msg) => console.log(`build-bundle: ${msg}`);
const die = (msg) => {
  console.error(`build-bundle: error: ${msg}`);
  process.exit(1);
};

if (!fs.existsSync(GLUE)) die(`${path.relative(ROOT, GLUE)} is missing: run scripts/build-wasm.sh first`);

// The wasm-bindgen glue, with its default .wasm URL made relative to the bundle.
// Both builds' glue: the page's (www/pkg) and the fast one (www/pkg-explorer,
// bundled into dist/fast-wasm.js, fetched on demand for big scenarios).
const wasmUrlFromBundle = {
  name: 'wasm-url-from-bundle',
  setup(build) {
    build.onLoad({ filter: /[\\/](pkg|pkg-explorer)[\\/]failover_lab\.js$/ }, async (args) => {
      const wasmFromBundle = path.relative(OUT, path.join(path.dirname(args.path), WASM)).split(path.sep).join('/');
      const src = await fs.promises.readFile(args.path, 'utf8');
      const from = new RegExp(`new URL\\((['"])${WASM.replace(/\./g, '\\.')}\\1, import\\.meta\\.url\\)`, 'g');
      const hits = src.match(from) || [];
      if (hits.length !== 1) {
        return { errors: [{ text: `expected one new URL('${WASM}', import.meta.url) in the glue, found ${hits.length}` }] };
      }
      return { contents: src.replace(from, `new URL('${wasmFromBundle}', import.meta.url)`), loader: 'js' };
    });
  },
};

// PROFILE=1 keeps names and lines as written (no minifying), for reading a
// CPU profile of the page (scripts/profile-seek.mjs); never for the site.
const PROFILE = process.env.PROFILE === '1';
if (PROFILE) say('PROFILE=1: not minified, for profiling only');
fs.rmSync(OUT, { recursive: true, force: true });
const common = {
  bundle: true,
  minify: !PROFILE,
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
  absWorkingDir: ROOT,
};
try {
  const js = await esbuild.build({
    ...common,
    entryPoints: [path.join(WWW, 'app.js')],
    outfile: path.join(OUT, 'app.js'),
    format: 'esm',
    // What the page already requires (ES modules, top-level await, import.meta).
    target: ['es2022'],
    plugins: [wasmUrlFromBundle],
  });
  // Compare mode's drawing, fetched by the page only when compare mode opens
  // (app.js: import(new URL('./lanes.js', import.meta.url))): its own file,
  // not part of the page's first load. It imports nothing.
  const lanes = await esbuild.build({
    ...common,
    entryPoints: [path.join(WWW, 'lanes.js')],
    outfile: path.join(OUT, 'lanes.js'),
    format: 'esm',
    target: ['es2022'],
  });
  // The tour card (tour-guide.js, for a scenario with a tour), the overview
  // (render/overview.js, for scenarios with more partitions than
  // the detailed view), the fate view, the tour questions' evaluator, Check yourself, export /
  // import, the welcome (welcome-view.js) with its scenario gallery (gallery.js) and the glossary (whose words are
  // www/glossary.json, fetched with it), fetched only when used
  // (import(new URL('./fate.js' | './question.js' | './check.js' |
  // './exporter.js' | './welcome-view.js' | './glossary.js' | './pack.js',
  // import.meta.url))). And compare mode's Worker (lane-worker.js, issue
  // 63: lanes replayed on other cores, with the fast build), started by
  // dist/lanes.js as new Worker(new URL('./lane-worker.js', import.meta.url)).
  const lazy = await esbuild.build({
    ...common,
    entryPoints: ['tour-guide.js', 'render/fate.js', 'render/group-card.js', 'render/broker-menu.js', 'render/overview.js', 'question.js', 'check.js', 'exporter.js', 'welcome-view.js', 'gallery.js', 'glossary.js', 'pack.js', 'fast-wasm.js', 'lane-worker.js', 'import-view.js'].map((f) => path.join(WWW, f)),
    outdir: OUT,
    entryNames: '[name]',
    format: 'esm',
    target: ['es2022'],
    plugins: [wasmUrlFromBundle],
  });
  const css = await esbuild.build({
    ...common,
    entryPoints: [path.join(WWW, 'style.css')],
    outfile: path.join(OUT, 'style.css'),
  });
  const appJs = path.join(OUT, 'app.js');
  const squeezed = PROFILE
    ? { code: await fs.promises.readFile(appJs, 'utf8') }
    : await minify(await fs.promises.readFile(appJs, 'utf8'), {
        module: true,
        ecma: 2022,
        compress: { passes: 3 },
        mangle: true,
        format: { comments: false },
      });
  await fs.promises.writeFile(appJs, squeezed.code);
  for (const meta of [js.metafile, lanes.metafile, lazy.metafile, css.metafile]) {
    for (const [file, out] of Object.entries(meta.outputs)) {
      const bytes = fs.statSync(path.join(ROOT, file)).size;
      say(`${file}: ${bytes} bytes from ${Object.keys(out.inputs).length} file(s)`);
    }
  }
} catch (e) {
  die(e.message);
}
