import { startApp } from './helpers.mjs';
const app = await startApp();
await app.page.goto(app.baseUrl + '/bench.html?workloads=&frames=0' + (process.argv[3] ? '#nocp' : ''));
const file = process.argv[2] || 'tour-11-mass-failover';
const res = await app.page.evaluate(async (file) => {
  const { Lab, initWasm } = await import('./lab.js');
  const { WasmLab } = await import('./pkg/failover_lab.js');
  await initWasm();
  const text = await (await fetch(`scenarios/${file}.json`)).text();
  const lab = new Lab();
  if (location.hash === '#nocp') lab.replayBudgetMs = Infinity;
  lab.load(text);
  const end = Math.min(40000, lab.endMs());
  const w0 = performance.now();
  lab.runFor(end);
  const runMs = performance.now() - w0;
  const out = { runMs, events: lab.core.eventsProcessed(), cps: lab.checkpoints.length, heapMiB: WasmLab.heapBytes() / 2 ** 20, rows: [] };
  let x = 14;
  for (let i = 0; i < 40; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    const t = Math.floor((x / 2 ** 32) * end);
    const cp = lab.checkpoints.filter((c) => c.t <= t).pop();
    const t0 = performance.now();
    lab.core.free();
    const t1 = performance.now();
    lab.core = cp.core.snapshot();
    const t2 = performance.now();
    const e0 = lab.core.eventsProcessed();
    lab.core.runUntil(t);
    const t3 = performance.now();
    out.rows.push({ t, gap: t - cp.t, free: +(t1 - t0).toFixed(2), restore: +(t2 - t1).toFixed(2), replay: +(t3 - t2).toFixed(2), events: lab.core.eventsProcessed() - e0 });
  }
  return out;
}, file);
console.log(JSON.stringify({ runMs: res.runMs, events: res.events, usPerEvent: (1000 * res.runMs / res.events).toFixed(2), cps: res.cps, heapMiB: res.heapMiB }));
const avg = (k) => (res.rows.reduce((a, r) => a + r[k], 0) / res.rows.length).toFixed(2);
const max = (k) => Math.max(...res.rows.map((r) => r[k])).toFixed(2);
for (const k of ['gap', 'free', 'restore', 'replay', 'events']) console.log(k, 'avg', avg(k), 'max', max(k));
await app.close();
