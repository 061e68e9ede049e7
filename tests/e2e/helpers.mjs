// Shared set-up for the browser end-to-end tests (node --test tests/e2e/).
//
// startApp() serves www/ from a plain node http server on 127.0.0.1 (a free
// port), launches Debian's /usr/bin/chromium through playwright-core (which never
// downloads a browser), opens a page and records every page error and console
// error so a test can assert there were none.
//
//   import { startApp } from './helpers.mjs';
//   const app = await startApp();            // { page, baseUrl, errors, close, ... }
//   await app.page.goto(app.baseUrl + '/');
//   assert.deepEqual(app.errors, []);
//   await app.close();
//
// `make build` (or scripts/build-wasm.sh) must have run first so www/pkg exists.
//
// How a test waits (CI runs two files at a time on two cores, and every race
// below has failed there once): wait for the state, never for a time.
// - A reader's click that seeks may be made over the frames after it (the
//   page judges the seek long on a loaded machine): `landsAt(page, t)`.
// - A world a script changed is drawn in the page's next frame: `frames(page)`.
// - `data-ready` is the first frame: a scenario's compare lanes, the tour's
//   name and other on-demand parts come after it; wait for what you read.
// - A page opened by a link is handed over before its body exists:
//   `document.body?.dataset`.
// - Something seen *while* another thing runs (a Worker's progress while lane
//   A replays) is a race with the machine's speed: hold the other thing (its
//   frames) until it is seen, so that a missing one fails instead.
// - Read a state a timer replaces (the narration's short list) as the task
//   that drew it ends (a MutationObserver), not some frames later.

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const WWW = path.join(ROOT, 'www');
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.yaml': 'text/yaml; charset=utf-8',
  '.yml': 'text/yaml; charset=utf-8',
  '.toml': 'text/plain; charset=utf-8',
};

/** A script's `--name value` argument, or `fallback` when it is not given (the bench scripts). */
export function scriptArg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const cargoEnv = () => ({ ...process.env, PATH: `${process.env.HOME}/.cargo/bin:${process.env.PATH}` });
let cliBin = null;

/**
 * The real native CLI, built in the fast-test profile (opt-level 3, debug
 * assertions on), the build `make test-native` has just made, so the browser
 * suite pays for no release build with LTO (about 90 s on 2 cores, issue 61);
 * the output is the same, overflow checks included. Built once per test
 * file (a no-op when it is fresh), then the binary itself: `cargo run`
 * holds cargo's build lock while the program runs, so one file's long sweep
 * made another file's run wait (63 s for the determinism test in CI).
 */
function cliPath() {
  if (!cliBin) {
    // Built as tests/cli.rs's binary: with the dev-dependencies' features,
    // as `make test-native` built it. A plain `cargo build --bin` leaves
    // them out, so cargo rebuilt the library for it (47 s in CI).
    execFileSync('cargo', ['test', '-q', '--profile', 'fast-test', '--no-run', '--test', 'cli'], { cwd: ROOT, env: cargoEnv(), stdio: ['ignore', 'ignore', 'inherit'] });
    const target = process.env.CARGO_TARGET_DIR ? path.resolve(ROOT, process.env.CARGO_TARGET_DIR) : path.join(ROOT, 'target');
    cliBin = path.join(target, 'fast-test', 'failover-lab');
  }
  return cliBin;
}

/** The CLI's stdout for `args`. */
export function cli(args) {
  return execFileSync(cliPath(), args, { cwd: ROOT, encoding: 'utf8', env: cargoEnv(), maxBuffer: 64 << 20 });
}

/** Content type for a file name (application/octet-stream when unknown). */
export function mimeType(file) {
  return MIME[path.extname(file).toLowerCase()] || 'application/octet-stream';
}

/**
 * Serve `root` on 127.0.0.1 at a free port. Resolves to { server, baseUrl, close }.
 * A directory serves its index.html; a missing file is a 404.
 */
export async function startServer(root = WWW) {
  const rootDir = path.resolve(root);
  const server = http.createServer((req, res) => {
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    } catch {
      res.writeHead(400).end('bad request');
      return;
    }
    let file = path.resolve(rootDir, '.' + pathname);
    if (file !== rootDir && !file.startsWith(rootDir + path.sep)) {
      res.writeHead(403).end('forbidden');
      return;
    }
    fs.stat(file, (err, st) => {
      if (!err && st.isDirectory()) {
        file = path.join(file, 'index.html');
        st = fs.existsSync(file) ? fs.statSync(file) : null;
      }
      if (err || !st || !st.isFile()) {
        res.writeHead(404, { 'Content-Type': 'text/html; charset=utf-8' });
        res.end('<!doctype html><title>404</title><p>not found</p>');
        return;
      }
      res.writeHead(200, {
        'Content-Type': mimeType(file),
        'Content-Length': st.size,
        'Cache-Control': 'no-store',
      });
      if (req.method === 'HEAD') {
        res.end();
      } else {
        fs.createReadStream(file).pipe(res);
      }
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    server,
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/** Launch Debian's chromium headless through playwright-core. */
export async function launchBrowser() {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} not found: run \`make setup\` (apt-get install chromium)`);
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/**
 * Start the static server and a browser page. Resolves to
 * { page, baseUrl, errors, browser, context, close }.
 * `errors` collects uncaught page errors and console.error messages as strings.
 */
export async function startApp({ root = WWW, viewport = { width: 1280, height: 800 }, colorScheme = 'dark', reducedMotion = 'no-preference' } = {}) {
  const srv = await startServer(root);
  let browser;
  try {
    browser = await launchBrowser();
  } catch (e) {
    await srv.close();
    throw e;
  }
  // The tests were written against the dark theme; the page and the element
  // follow prefers-color-scheme (theme auto), so the browser prefers dark
  // unless a test emulates otherwise (tests/e2e/a11y.test.mjs does).
  const context = await browser.newContext({ viewport, colorScheme, reducedMotion });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console.error: ${msg.text()}`);
  });
  const close = async () => {
    await browser.close().catch(() => {});
    await srv.close();
  };
  return { page, baseUrl: srv.baseUrl, errors, browser, context, close };
}

/**
 * Wait until no tour card (the page's, or one inside an element's shadow
 * root) is busy. A reader's step to a stop the core needs over half a second
 * to reach is announced and computed after a paint (tour.js `step`), so a
 * test that reads the stop right after its click waits for this first: on a
 * loaded machine any stop may be that slow.
 */
export async function tourIdle(page) {
  await page.waitForFunction(
    () => {
      const busy = (root) =>
        root.querySelector('[aria-busy="true"]') !== null ||
        [...root.querySelectorAll('*')].some((e) => e.shadowRoot && busy(e.shadowRoot));
      return !busy(document);
    },
    null,
    { timeout: 120000 },
  );
}

/**
 * Open `url` (absolute, or a query such as `?scenario=…` on `baseUrl`) and
 * wait until the page is ready and, for a link to a tour stop (`stop=K`),
 * until the tour is at stop K with nothing computing. A fresh lab reaches a
 * linked stop in the frames after its first one (issue 63), so data-ready
 * alone comes before the stop on a slow machine.
 */
export async function openPage(page, url, { baseUrl = '', timeout = 30000 } = {}) {
  const full = /^https?:/.test(url) ? url : `${baseUrl}/${url.replace(/^\//, '')}`;
  await page.goto(full);
  await page.waitForSelector('body[data-ready="true"]', { timeout });
  const stop = new URL(full).searchParams.get('stop');
  if (stop === null) return page;
  await page.waitForFunction(
    (k) => {
      const tour = window.failoverLab?.tour?.();
      if (!tour || tour.stops.length === 0) return true; // no tour: nothing to wait for
      const card = document.getElementById('tour');
      const at = Math.max(-1, Math.min(tour.stops.length - 1, k - 1));
      return tour.index === at && card?.getAttribute('aria-busy') !== 'true' && window.failoverLab.seeking === null;
    },
    Number(stop),
    { timeout: Math.max(timeout, 60000) },
  );
  return page;
}

/** Click a tour control (Next, Back, a choice…) as a reader, and wait for the stop it goes to. */
export async function tourClick(locator) {
  await locator.click();
  await tourIdle(locator.page());
}

/**
 * Wait for the page's next `n` frames (requestAnimationFrame): a world
 * changed by a script (runFor, crash, a seek that landed) is drawn in the
 * page's next frame, so after two it is on screen, however loaded the
 * machine (a fixed wait of 100 ms is not).
 */
/**
 * Wait until the lab is at `t` with no seek under way: after a reader's
 * click that seeks (made over the frames after it when the page judges the
 * seek long, as it may on a loaded machine).
 */
export async function landsAt(page, t, timeout = 20000) {
  await page.waitForFunction((t) => failoverLab.now() === t && failoverLab.seeking === null, t, { timeout });
}

export async function frames(page, n = 2) {
  await page.evaluate(async (k) => {
    for (let i = 0; i < k; i++) await new Promise((r) => requestAnimationFrame(r));
  }, n);
}
