// The in-browser benchmark (www/bench.html): runs the workloads of
// scenarios/bench/ with the real wasm core in this page, times them with
// performance.now(), then times the overview canvas with every partition of
// the largest workload on screen. Results: a table and window.benchResults
// ({ done, results: [...], frames: {...}, error? }); scripts/bench-browser.mjs
// drives it headless. Speed is reported, never asserted.

import init, { WasmLab, WasmCheckpoint } from './pkg/failover_lab.js';
import { Lab } from './lab.js';
import { OverviewPanel } from './render/overview.js';
import { h } from './render/util.js';

const params = new URLSearchParams(location.search);
const WORKLOADS = (params.has('workloads') ? params.get('workloads') : 'small,medium,large').split(',').map((s) => s.trim()).filter(Boolean);
const UNTIL = params.has('until') ? Number(params.get('until')) : null;
const CHUNK = Math.max(1, Number(params.get('chunk') || 1000));
const FRAMES = Math.max(0, Number(params.get('frames') ?? 300));
// Seek benchmark (issue 14): scenarios (paths under scenarios/, no .json), the
// run length before seeking (capped by each scenario's end), seeks per case,
// and the cases: after runFor, after a jump (seek ahead from 0), after a
// switch change, after a loaded link, and a scrub (dragging the timeline back
// and forth in even steps).
const SEEK = (params.get('seek') || '').split(',').map((s) => s.trim()).filter(Boolean);
const SEEK_UNTIL = Number(params.get('seek_until') || 60000);
const SEEKS = Math.max(1, Number(params.get('seeks') || 20));
const SEEK_CASES = (params.get('seek_cases') || 'runFor,jump,switch,link,scrub').split(',').filter(Boolean);
// App-page seek benchmark (issue: scrub like a video): scenarios (files under
// scenarios/, no .json) opened in the real page (index.html in an iframe);
// failoverLab.seek timed with the page's redraw and a forced layout.
const APP = (params.get('app') || '').split(',').map((s) => s.trim()).filter(Boolean);
// app_scroll=SELECTOR: the app page scrolled to that panel first (the seeks
// then draw what a reader of that panel sees; panels off screen wait).
const APP_SCROLL = params.get('app_scroll') || '';
const $ = (id) => document.getElementById(id);
const MiB = (b) => (b / 1048576).toFixed(1);
const yieldToPage = () => new Promise((r) => setTimeout(r, 0));
const nextFrame = () => new Promise((r) => requestAnimationFrame(r));

window.benchResults = { done: false, results: [], frames: null };
let wasm;

function status(text) {
  $('status').textContent = text;
}

function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] : NaN;
}

function heap() {
  return performance.memory ? performance.memory.usedJSHeapSize : null;
}

async function runWorkload(name) {
  const res = await fetch(`scenarios/bench/${name}.json`);
  if (!res.ok) throw new Error(`scenarios/bench/${name}.json: HTTP ${res.status}`);
  const text = await res.text();
  const t0 = performance.now();
  const lab = new WasmLab(text);
  const setupMs = performance.now() - t0;
  const end = UNTIL ?? lab.runUntilMs();
  const chunks = [];
  let wall = 0;
  let peakHeap = heap();
  for (let t = Math.min(CHUNK, end); ; t = Math.min(t + CHUNK, end)) {
    const w = performance.now();
    lab.runUntil(t);
    const dt = performance.now() - w;
    wall += dt;
    chunks.push({ to_ms: t, wall_ms: dt });
    peakHeap = Math.max(peakHeap ?? 0, heap() ?? 0) || null;
    status(`${name}: ${(t / 1000).toFixed(0)} / ${(end / 1000).toFixed(0)} simulated s, ${(wall / 1000).toFixed(1)} s wall`);
    if (t >= end) break;
    await yieldToPage();
  }
  const phase = (from, to) => {
    const cs = chunks.filter((c) => c.to_ms > from && c.to_ms <= to);
    return cs.length ? { from_ms: from, to_ms: Math.min(to, end), wall_ms: cs.reduce((s, c) => s + c.wall_ms, 0) } : null;
  };
  const result = {
    workload: name,
    partitions: lab.partitionCount(),
    setup_ms: setupMs,
    sim_ms: lab.nowMs(),
    wall_ms: wall,
    sim_to_wall: lab.nowMs() / wall,
    events: lab.eventsProcessed(),
    events_per_sec: lab.eventsProcessed() / (wall / 1000),
    slowest_chunk_ms: Math.max(...chunks.map((c) => c.wall_ms)),
    chunk_ms: CHUNK,
    wasm_memory_bytes: wasm.memory.buffer.byteLength,
    js_heap_bytes: peakHeap,
    trace_hash: lab.traceHash(),
    phases: [phase(0, 20000), phase(20000, 40000), phase(40000, 60000)].filter(Boolean),
  };
  lab.free();
  return result;
}

/** Deterministic seek targets in [0, end] (a small LCG; same on every run). */
function targets(n, end, seed) {
  let x = seed >>> 0;
  const out = [];
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out.push(Math.floor((x / 2 ** 32) * end));
  }
  return out;
}

/** ms to a tenth, as the seek figures are kept. */
const tenth = (x) => Math.round(x * 10) / 10;

// The core's calls a seek makes, by the part of the seek they are: dropping
// the world it leaves, restoring a checkpoint, replaying, and taking or
// dropping checkpoints on the way (the rest of a seek is lab.js itself).
const SEEK_PARTS = [
  [WasmLab.prototype, 'free', 'drop'],
  [WasmCheckpoint.prototype, 'restore', 'restore'],
  [WasmLab.prototype, 'runUntil', 'replay'],
  [WasmLab.prototype, 'checkpoint', 'checkpoints'],
  [WasmCheckpoint.prototype, 'compactAgainst', 'checkpoints'],
  [WasmCheckpoint.prototype, 'free', 'checkpoints'],
];

/**
 * Time lab.seek to each of `ts`: the wall ms of each seek, and what its
 * parts took (SEEK_PARTS, ms per seek) with the simulated ms it replayed.
 */
function timeSeeks(lab, ts) {
  const ms = [];
  const parts = [];
  let part = null;
  const unwrap = SEEK_PARTS.map(([proto, name, key]) => {
    const f = proto[name];
    proto[name] = function (...args) {
      const t0 = performance.now();
      try {
        return f.apply(this, args);
      } finally {
        if (part) part[key] += performance.now() - t0;
      }
    };
    return () => {
      proto[name] = f;
    };
  });
  try {
    for (const t of ts) {
      // Where the seek replays from: now (on from it) or the checkpoint it restores.
      const { onward, cp } = lab.seekPlan(t);
      const from = onward ? lab.now() : (cp?.t ?? 0);
      part = { drop: 0, restore: 0, replay: 0, checkpoints: 0, replayed_sim_ms: t - from };
      const t0 = performance.now();
      lab.seek(t);
      ms.push(performance.now() - t0);
      parts.push(part);
      part = null;
      if (lab.now() !== t) throw new Error(`seek(${t}) ended at ${lab.now()}`);
    }
  } finally {
    part = null;
    for (const u of unwrap) u();
  }
  return { ms, parts };
}

/** A case's seeks by part: p50 and max ms of each, and the replay's pace (wall ms per simulated second, over all its seeks). */
function seekParts(parts) {
  const out = {};
  for (const k of ['drop', 'restore', 'replay', 'checkpoints']) {
    const xs = parts.map((p) => p[k]);
    out[`${k}_p50_ms`] = percentile(xs, 50);
    out[`${k}_max_ms`] = Math.max(...xs);
  }
  const sim = parts.reduce((a, p) => a + p.replayed_sim_ms, 0);
  out.per_seek = parts.map((p) => ({ drop: tenth(p.drop), restore: tenth(p.restore), replay: tenth(p.replay), checkpoints: tenth(p.checkpoints) }));
  out.replayed_sim_ms = parts.map((p) => p.replayed_sim_ms);
  out.replay_ms_per_sim_s = sim > 0 ? (1000 * parts.reduce((a, p) => a + p.replay, 0)) / sim : null;
  return out;
}

/** One scenario: build, run, then time lab.seek (www/lab.js, as the page calls it) per case. */
async function runSeek(name) {
  const res = await fetch(`scenarios/${name}.json`);
  if (!res.ok) throw new Error(`scenarios/${name}.json: HTTP ${res.status}`);
  const text = await res.text();
  const lab = new Lab();
  lab.load(text);
  const end = Math.min(SEEK_UNTIL, lab.endMs());
  const ts = targets(SEEKS, end, 14);
  const cases = {};
  let hash = null;
  for (const c of SEEK_CASES) {
    const w = performance.now();
    if (c === 'jump') {
      lab.load(text);
      lab.seek(end);
    } else if (c === 'switch') {
      lab.load(text);
      lab.runFor(end);
      lab.setOverride('seed', 2);
    } else if (c === 'link') {
      lab.load(text);
      lab.restore({ overrides: {}, actions: [], t: end });
    } else {
      lab.load(text);
      lab.runFor(end);
    }
    const setup = performance.now() - w;
    const setupMemory = wasm.memory.buffer.byteLength;
    // Where the checkpoints are before the seeks, and the widest stretch of
    // simulated time a seek may have to replay (the largest gap, to the end).
    const placed = lab.checkpoints.map((cp) => cp.t);
    const widest = Math.max(...placed.map((t, i) => (placed[i + 1] ?? end) - t));
    if (c === 'runFor') hash = lab.traceHash();
    const targetsOf = c === 'scrub' ? [...Array(SEEKS)].map((_, i) => Math.round(end - ((i + 1) * end) / (SEEKS + 1))) : ts;
    const { ms, parts } = timeSeeks(lab, c === 'scrub' ? [...targetsOf, ...targetsOf.slice().reverse()] : targetsOf);
    if (c === 'runFor') {
      lab.seek(end);
      if (lab.traceHash() !== hash) throw new Error(`${name}: the trace hash changed after seeking back and forth`);
    }
    cases[c] = {
      setup_ms: setup,
      seeks: ms.length,
      ms: ms.map(tenth),
      p50_ms: percentile(ms, 50),
      p95_ms: percentile(ms, 95),
      max_ms: Math.max(...ms),
      checkpoints: lab.checkpoints.length,
      heap_bytes: WasmLab.heapBytes(),
      wasm_memory_bytes: wasm.memory.buffer.byteLength,
      setup_wasm_memory_bytes: setupMemory,
      checkpoints_at_ms: placed,
      widest_replay_ms: widest,
      parts: seekParts(parts),
    };
    status(`seek ${name}: ${c} p95 ${cases[c].p95_ms.toFixed(1)} ms`);
    await yieldToPage();
  }
  const all = Object.values(cases);
  const out = {
    scenario: name,
    sim_ms: end,
    events: lab.core.eventsProcessed(),
    p95_ms: Math.max(...all.map((c) => c.p95_ms)),
    snapshot_ms: lab.snapshotCost?.ms ?? NaN,
    snapshot_bytes: lab.snapshotCost?.bytes ?? NaN,
    wasm_memory_bytes: wasm.memory.buffer.byteLength,
    heap_bytes: WasmLab.heapBytes(),
    trace_hash: hash,
    cases,
  };
  lab.core?.free();
  lab.dropCheckpoints();
  lab.core = null;
  lab.base = null;
  $('seeks').tBodies[0].append(h('tr', null,
    ...[name, (end / 1000).toFixed(0), ...SEEK_CASES.map((c) => `${cases[c].p50_ms.toFixed(1)} / ${cases[c].p95_ms.toFixed(1)}`),
      String(cases[SEEK_CASES[0]].checkpoints), MiB(Math.max(...all.map((c) => c.heap_bytes))), out.snapshot_ms.toFixed(1), MiB(out.snapshot_bytes), MiB(out.wasm_memory_bytes)]
      .map((v) => h('td', { text: v }))));
  return out;
}

function showResult(r) {
  $('results').tBodies[0].append(h('tr', { dataset: { workload: r.workload } },
    ...[r.workload, r.partitions.toLocaleString('en'), r.setup_ms.toFixed(1), (r.sim_ms / 1000).toFixed(1), r.wall_ms.toFixed(0),
      `${r.sim_to_wall.toFixed(2)}×`, r.events.toLocaleString('en'), Math.round(r.events_per_sec).toLocaleString('en'),
      r.slowest_chunk_ms.toFixed(0), MiB(r.wasm_memory_bytes), r.js_heap_bytes == null ? '—' : MiB(r.js_heap_bytes), r.trace_hash.slice(0, 12)]
      .map((v) => h('td', { text: v }))));
}

/**
 * Time the overview with the largest workload on screen: each frame reads the
 * core's overview (wasm → Uint32Array) and redraws every cell. A crash is
 * applied first so the leader-down cells and the flash outlines are drawn too.
 */
async function runFrames() {
  const name = params.get('frames_workload') || 'large';
  const res = await fetch(`scenarios/bench/${name}.json`);
  if (!res.ok) throw new Error(`scenarios/bench/${name}.json: HTTP ${res.status}`);
  const lab = new WasmLab(await res.text());
  const settle = Number(params.get('frames_at') || 300);
  lab.runUntil(settle);
  const panel = new OverviewPanel($('overview'), { describe: (i) => lab.describePartition(i) });
  const brokers = JSON.parse(await (await fetch(`scenarios/bench/${name}.json`)).text()).brokers;
  panel.update(lab.overview(), brokers, 1);
  lab.apply({ crash: 1 });
  lab.runUntil(settle + 50);
  const draw = [];
  const intervals = [];
  let last = await nextFrame();
  for (let i = 0; i < FRAMES; i++) {
    const t0 = performance.now();
    panel.update(lab.overview(), brokers, 1);
    draw.push(performance.now() - t0);
    const now = await nextFrame();
    intervals.push(now - last);
    last = now;
    if (i % 50 === 0) status(`overview: frame ${i} / ${FRAMES}`);
  }
  const frames = {
    workload: name,
    partitions: lab.partitionCount(),
    frames: FRAMES,
    draw_p50_ms: percentile(draw, 50),
    draw_p95_ms: percentile(draw, 95),
    draw_max_ms: Math.max(...draw),
    raf_interval_p95_ms: percentile(intervals, 95),
    cell_px: panel.pitch,
  };
  lab.free();
  $('frames').tBodies[0].append(h('tr', null,
    ...[frames.partitions.toLocaleString('en'), frames.frames, frames.draw_p50_ms.toFixed(2), frames.draw_p95_ms.toFixed(2),
      frames.draw_max_ms.toFixed(2), frames.raf_interval_p95_ms.toFixed(2)].map((v) => h('td', { text: v }))));
  return frames;
}

/** Open index.html?scenario=… in an iframe; resolves its window once the page (and its lanes) are ready. */
async function openApp(name, extra = '') {
  const f = h('iframe', { src: `index.html?scenario=${encodeURIComponent(name)}.json&paused=1&welcome=0${extra}`, style: { width: '1280px', height: '900px', border: '0' } });
  $('app-frame').replaceChildren(f);
  for (let i = 0; i < 600; i++) {
    await new Promise((r) => setTimeout(r, 50));
    const w = f.contentWindow;
    if (w?.document.body?.dataset.ready !== 'true' || !w.failoverLab) continue;
    const lab = w.failoverLab;
    if (lab.tour().stops.length && name.includes('13') && lab.lanes().length < 2) continue;
    return w;
  }
  throw new Error(`${name}: the app page did not get ready`);
}

/** failoverLab.seek in the app page, redraw and layout included, one seek per frame. */
async function runAppSeek(name) {
  const w = await openApp(name);
  const fl = w.failoverLab;
  const frame = () => new Promise((r) => w.requestAnimationFrame(r));
  fl.pause();
  fl.runFor(Math.max(0, 60000 - fl.now()));
  if (APP_SCROLL) {
    const el = w.document.querySelector(APP_SCROLL);
    if (!el) throw new Error(`${name}: no ${APP_SCROLL} to scroll to`);
    el.scrollIntoView({ block: 'start' });
    await new Promise((r) => setTimeout(r, 300)); // the page learns what is on screen
  }
  const end = fl.now();
  const time = async (ts) => {
    const ms = [];
    for (const t of ts) {
      await frame();
      const t0 = performance.now();
      fl.seek(t);
      void w.document.body.getBoundingClientRect().height; // style + layout of what the seek changed
      ms.push(performance.now() - t0);
    }
    return { p50_ms: percentile(ms, 50), p95_ms: percentile(ms, 95), max_ms: Math.max(...ms), seeks: ms.length };
  };
  const spread = await time(targets(SEEKS, end, 14));
  const near = await time(targets(SEEKS, 1000, 15).map((d) => end - d));
  // A drag: even steps across the run, one per frame.
  const drag = await time(Array.from({ length: SEEKS }, (_, i) => Math.round((end * i) / SEEKS)));
  const out = { scenario: APP_SCROLL ? `${name} @${APP_SCROLL}` : name, end_ms: end, lanes: fl.lanes().length, spread, near, drag };
  $('appseeks').tBodies[0].append(h('tr', null, ...[name, (end / 1000).toFixed(0), ...[spread, near, drag].map((c) => `${c.p50_ms.toFixed(1)} / ${c.p95_ms.toFixed(1)}`)].map((v) => h('td', { text: v }))));
  status(`app seek ${name}: p95 ${spread.p95_ms.toFixed(1)} ms`);
  return out;
}

/** Frame intervals while the default scenario plays at speed 1 in the app page. */
async function runAppFrames(n) {
  const w = await openApp('leader-dies');
  const fl = w.failoverLab;
  fl.seek(0);
  fl.play();
  const iv = [];
  let last = await new Promise((r) => w.requestAnimationFrame(r));
  for (let i = 0; i < n; i++) {
    const now = await new Promise((r) => w.requestAnimationFrame(r));
    iv.push(now - last);
    last = now;
  }
  fl.pause();
  return { frames: n, p50_ms: percentile(iv, 50), p95_ms: percentile(iv, 95), max_ms: Math.max(...iv) };
}

async function runAll() {
  $('run').disabled = true;
  const out = window.benchResults;
  out.done = false;
  out.results = [];
  out.env = { userAgent: navigator.userAgent, until: UNTIL, chunk_ms: CHUNK, hardwareConcurrency: navigator.hardwareConcurrency };
  try {
    // Warm-up (untimed): let the engine tier the hot wasm functions up from
    // its baseline compiler first, as a page that has been running would.
    if (params.get('warmup') !== '0') {
      const res = await fetch('scenarios/bench/small.json');
      const lab = new WasmLab(await res.text());
      lab.runUntil(60000);
      lab.free();
    }
    for (const name of WORKLOADS) {
      const r = await runWorkload(name);
      out.results.push(r);
      showResult(r);
      await yieldToPage();
    }
    if (FRAMES > 0) out.frames = await runFrames();
    if (SEEK.length) {
      const head = $('seeks').tHead.rows[0];
      SEEK_CASES.forEach((c, i) => head.insertBefore(h('th', { text: `${c} p50 / p95 ms` }), head.cells[2 + i]));
      out.seeks = [];
      for (const name of SEEK) out.seeks.push(await runSeek(name));
    }
    if (APP.length) {
      out.app = [];
      for (const name of APP) out.app.push(await runAppSeek(name));
      out.appFrames = await runAppFrames(Math.max(60, Number(params.get('app_frames') || 300)));
      $('app-frame').replaceChildren();
    }
    status('done');
  } catch (e) {
    out.error = e instanceof Error ? e.message : String(e);
    status(`error: ${out.error}`);
  }
  out.done = true;
  document.body.dataset.benchDone = 'true';
  $('run').disabled = false;
}

async function main() {
  wasm = await init();
  $('run').addEventListener('click', runAll);
  if (params.get('auto') !== '0') runAll();
  else status('ready');
}

main().catch((e) => {
  window.benchResults = { done: true, results: [], error: e instanceof Error ? e.message : String(e) };
  status(`error: ${window.benchResults.error}`);
});
