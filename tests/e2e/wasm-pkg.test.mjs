// The built wasm package (www/pkg, from `make build`) loads and instantiates in
// headless Chromium when served with the MIME types the static server uses.
// Independent of www/index.html: the page is an empty same-origin page that
// Playwright fulfils itself.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, WWW } from './helpers.mjs';

const PKG_JS = path.join(WWW, 'pkg', 'failover_lab.js');
let app;

before(async () => {
  assert.ok(fs.existsSync(PKG_JS), `${PKG_JS} is missing: run \`make build\` first`);
  app = await startApp();
});

after(async () => {
  await app?.close();
});

test('the server sends application/wasm for the wasm binary', async () => {
  const res = await fetch(`${app.baseUrl}/pkg/failover_lab_bg.wasm`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'application/wasm');
  const bytes = new Uint8Array(await res.arrayBuffer());
  assert.deepEqual([...bytes.slice(0, 4)], [0x00, 0x61, 0x73, 0x6d]);
});

test('the wasm package instantiates in Chromium without errors', async () => {
  const blank = `${app.baseUrl}/__blank__.html`;
  await app.page.route(blank, (route) =>
    route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>blank</title>' }),
  );
  await app.page.goto(blank);
  const exports = await app.page.evaluate(async () => {
    const mod = await import('/pkg/failover_lab.js');
    await mod.default();
    return Object.keys(mod).sort();
  });
  assert.ok(exports.includes('default'), `exports: ${exports}`);
  assert.deepEqual(app.errors, []);
});
