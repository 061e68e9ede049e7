// The trade-off explorer (tradeoffs.html): the CLI's sweep matrix run in this
// browser on Web Workers, drawn as acknowledged-record loss against
// unavailability with the Pareto frontier, and as the CLI's table.
//
//   tradeoffs.html?seeds=N&first=S&set=KEY=VALUE&set=…&theme=light|dark|auto
//
// `seeds`, `first` and every `set` mean what `failover-lab sweep --seeds N
// --first-seed S --set KEY=VALUE` means. Nothing here simulates or summarises:
// each worker runs `sweepShard` (src/sweep.rs's sweep_runs + shard_lines) one
// run at a time, and this page merges the shard lines in the CLI's order with
// `sweepMerge` (merge_shards), whose text is the CLI's `sweep --format json`
// output. The page publishes window.tradeoffResults = { done, state, rows, … }.
// Only the choice of a configuration's worst seed (the CLI table's rule, see
// worstSeed) and the drawing live in JS.

import init, { sweepConfigs, sweepMerge, sweepScenario } from './pkg-explorer/failover_lab.js';
import { THEMES, parseTheme, followTheme } from './theme.js';
import { packScenario } from './pack.js';

const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';
// 100 seeds by default: a p99 over n runs (nearest rank, as the CLI's Spread)
// is the ceil(0.99 n)-th smallest, so below 100 seeds it is simply the worst
// run and one unlucky seed sets it alone; at 100 it is the 99th of 100, and
// the bootstrap whiskers show how far it would move with other seeds.
export const DEFAULT_SEEDS = 100;
const BOOT_ROUNDS = 400; // bootstrap resamples per configuration
const MAX_SEEDS = 100_000;
const MAX_WORKERS = 8;
const WASM_URL = new URL('./pkg-explorer/failover_lab_bg.wasm', import.meta.url);

// ---- parameters ----------------------------------------------------------------

function wholeNumber(text, what, min, max) {
  const s = String(text).trim();
  if (!/^\d{1,15}$/.test(s) || Number(s) < min || Number(s) > max) {
    throw new Error(`${what}=${text}: expected a whole number from ${min} to ${max}`);
  }
  return Number(s);
}

/** The sweep a query string asks for; throws an Error naming the bad parameter. */
export function parseParams(search) {
  const p = new URLSearchParams(search);
  const seeds = p.has('seeds') ? wholeNumber(p.get('seeds'), 'seeds', 1, MAX_SEEDS) : DEFAULT_SEEDS;
  const first = p.has('first') ? wholeNumber(p.get('first'), 'first', 0, Number.MAX_SAFE_INTEGER - MAX_SEEDS) : 1;
  const sets = p.getAll('set').map((s) => s.trim()).filter(Boolean);
  for (const s of sets) {
    const eq = s.indexOf('=');
    if (eq <= 0) throw new Error(`set=${s}: expected KEY=VALUE`);
  }
  return { seeds, first, sets };
}

/** The settings field's text as `set` items (split on commas and spaces). */
function splitSets(text) {
  return String(text).split(/[\s,]+/).map((s) => s.trim()).filter(Boolean);
}

function queryFor({ seeds, first, sets }, theme) {
  const p = new URLSearchParams();
  p.set('seeds', String(seeds));
  if (first !== 1) p.set('first', String(first));
  for (const s of sets) p.append('set', s);
  if (theme && theme !== 'auto') p.set('theme', theme);
  return `?${p.toString().replace(/%3D/g, '=').replace(/%2C/g, ',')}`;
}

// ---- the sweep -------------------------------------------------------------------

const message = (e) => (e && e.message) || String(e);

/** A configuration's worst seed, by the rule of the CLI table's "first seed"
 * column: the first seed with an invariant violation, else the first with an
 * acknowledged record lost; where neither happened, the seed with the longest
 * unavailability (the lowest such seed on a tie). */
export function worstSeed(row, longest) {
  if (row.first_seed_with_violation != null) return { seed: row.first_seed_with_violation, why: 'first seed with an invariant violation' };
  if (row.first_seed_with_loss != null) return { seed: row.first_seed_with_loss, why: 'first seed that lost acknowledged records' };
  if (longest) return { seed: longest.seed, why: 'no loss: the seed with the longest unavailability' };
  return null;
}

class Sweep {
  constructor(module, params, { onProgress, onEnd }) {
    this.module = module;
    this.params = params;
    this.onProgress = onProgress;
    this.onEnd = onEnd;
    this.keys = sweepConfigs(params.sets); // throws an Error naming a bad key
    this.total = this.keys.length * params.seeds;
    this.texts = new Array(this.total); // by configuration, then seed: the CLI's order
    this.longest = new Array(this.keys.length).fill(null);
    this.runs = this.keys.map(() => []); // per configuration: { seed, unavailable_ms, lost, acked } of each finished run
    this.done = 0;
    this.next = 0;
    this.state = 'running';
    this.started = performance.now();
    this.workers = [];
    const n = Math.max(1, Math.min(navigator.hardwareConcurrency || 2, MAX_WORKERS, this.total));
    for (let i = 0; i < n; i++) this.spawn();
  }

  spawn() {
    const w = new Worker(new URL('./tradeoffs-worker.js', import.meta.url), { type: 'module' });
    w.onmessage = ({ data }) => this.onMessage(w, data);
    w.onerror = (e) => this.fail(`a worker failed: ${e.message || 'it could not load its script'}`);
    w.postMessage({ type: 'init', module: this.module });
    this.workers.push(w);
  }

  /** Jobs go out seed by seed over every configuration, so partial results
   * (cancel) cover every configuration with the first seeds. */
  feed(w) {
    if (this.state !== 'running' || this.next >= this.total) return;
    const i = this.next++;
    const n = this.keys.length;
    const config = i % n;
    const seed = this.params.first + Math.floor(i / n);
    const job = config * this.params.seeds + (seed - this.params.first);
    w.postMessage({ type: 'run', job, sets: this.params.sets, config, seed });
  }

  onMessage(w, data) {
    if (this.state !== 'running') return;
    if (data.type === 'ready') {
      this.feed(w);
    } else if (data.type === 'shard') {
      this.texts[data.job] = data.text;
      const config = Math.floor(data.job / this.params.seeds);
      for (const line of data.text.split('\n')) {
        if (!line) continue;
        const { run } = JSON.parse(line);
        this.runs[config].push({ seed: run.seed, unavailable_ms: run.unavailable_ms, lost: run.lost, acked: run.acked });
        const best = this.longest[config];
        if (!best || run.unavailable_ms > best.ms || (run.unavailable_ms === best.ms && run.seed < best.seed)) {
          this.longest[config] = { seed: run.seed, ms: run.unavailable_ms };
        }
      }
      this.done++;
      if (this.done === this.total) this.finish('done');
      else {
        this.feed(w);
        this.onProgress(this);
      }
    } else if (data.type === 'failed') {
      this.fail(data.message);
    }
  }

  /** The rows of the runs finished so far: `sweepMerge` over the shard lines
   * in the CLI's order (configuration, then seed). */
  rows() {
    const text = this.texts.filter((t) => t !== undefined).join('');
    if (!text) return [];
    return sweepMerge(text).split('\n').filter(Boolean).map((l) => JSON.parse(l));
  }

  stop() {
    for (const w of this.workers) w.terminate();
    this.workers = [];
  }

  finish(state, error = null) {
    if (this.state !== 'running') return;
    this.state = state;
    this.error = error;
    this.wallMs = performance.now() - this.started;
    this.stop();
    this.onEnd(this);
  }

  cancel() {
    this.finish('cancelled');
  }

  fail(msg) {
    this.finish('error', msg);
  }
}

// ---- drawing helpers ---------------------------------------------------------------

function svg(tag, attrs = {}, ...children) {
  const n = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) n.setAttribute(k, String(v));
  for (const c of children) if (c != null) n.append(c);
  return n;
}

function el(tag, attrs = {}, ...children) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') n.textContent = v;
    else if (k === 'class') n.className = v;
    else n.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c != null) n.append(c);
  return n;
}

const lossRate = (r) => (r.acked > 0 ? r.lost / r.acked : 0);
const unavailS = (r) => (r.availability?.unavailable_ms?.p99 ?? 0) / 1000;
const secs = (ms) => (ms == null ? '–' : (ms / 1000).toFixed(1));

function pct(rate) {
  if (rate === 0) return '0';
  const p = rate * 100;
  if (p >= 1) return `${p.toFixed(p >= 10 ? 0 : 1)} %`;
  return `${Number(p.toPrecision(2))} %`;
}

/** A configuration's intervals as text: "0.5–2.1 % · 30.1–41.0". */
function ivText(iv) {
  const [l0, l1] = iv.loss_rate;
  const [u0, u1] = iv.unavailable_ms;
  const loss = l0 === l1 ? pct(l0) : `${pct(l0).replace(' %', '')}–${pct(l1)}`;
  return `${loss} · ${secs(u0)}–${secs(u1)}`;
}

function decadeLabel(r) {
  const p = r * 100;
  return `${p >= 1 ? p.toFixed(0) : Number(p.toPrecision(1))} %`;
}

const ACKS_CLASS = { 1: 'acks1', all: 'acksall', 0: 'acks0' };

/** A configuration's mark: colour by acks, shape by unclean election, filled
 * when min.insync.replicas ≥ 2, the replication factor written inside. */
function glyph(config, r, { label = true } = {}) {
  const cls = `glyph ${ACKS_CLASS[config.acks] || 'acks0'} ${config.min_insync_replicas >= 2 ? 'filled' : 'hollow'}`;
  const shape = config.unclean_leader_election_enable
    ? svg('path', { d: `M0 ${-r * 1.25}L${r * 1.25} 0L0 ${r * 1.25}L${-r * 1.25} 0Z`, class: 'shape' })
    : svg('circle', { r, class: 'shape' });
  const g = svg('g', { class: cls }, shape);
  if (label) g.append(svg('text', { class: 'rf', 'text-anchor': 'middle', dy: '0.35em' }, String(config.replication_factor)));
  return g;
}

function glyphIcon(config, size = 18) {
  return svg('svg', { class: 'glyph-icon', width: size, height: size, viewBox: `${-size / 2} ${-size / 2} ${size} ${size}`, 'aria-hidden': 'true' }, glyph(config, size * 0.36));
}

/** A p99 by nearest rank, as the CLI's Spread computes it (src/sweep.rs). */
export function p99(values) {
  const v = [...values].sort((a, b) => a - b);
  if (!v.length) return null;
  return v[Math.min(v.length, Math.max(1, Math.ceil(0.99 * v.length))) - 1];
}

/**
 * 90 % bootstrap intervals of a configuration's two plotted numbers — the p99
 * of unavailable partition-s and the loss rate (lost ÷ acked) — from its
 * per-seed runs: BOOT_ROUNDS resamples of the runs with replacement, the 5th
 * and 95th percentile of each statistic over them. Statistics, not a Kafka
 * rule: what other seeds of the same schedules could have shown. The random
 * stream is one fixed sequence and the runs are taken in seed order, so equal
 * runs always give equal intervals. null below 2 runs.
 */
export function bootstrap(runs, rounds = BOOT_ROUNDS) {
  if (runs.length < 2) return null;
  const rs = [...runs].sort((a, b) => a.seed - b.seed);
  let s = 0x2545f491;
  const rand = () => {
    // mulberry32
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const xs = [];
  const ys = [];
  const u = new Array(rs.length);
  for (let k = 0; k < rounds; k++) {
    let lost = 0;
    let acked = 0;
    for (let i = 0; i < rs.length; i++) {
      const r = rs[Math.floor(rand() * rs.length)];
      u[i] = r.unavailable_ms;
      lost += r.lost;
      acked += r.acked;
    }
    xs.push(p99(u));
    ys.push(acked > 0 ? lost / acked : 0);
  }
  const at = (v, q) => v.sort((a, b) => a - b)[Math.round(q * (v.length - 1))];
  return { unavailable_ms: [at(xs, 0.05), at(xs, 0.95)], loss_rate: [at(ys, 0.05), at(ys, 0.95)] };
}

/** The two numbers as the table shows them (0.1 s; the loss rate's shown digits). */
const shown = (r) => [Number(secs(r.availability?.unavailable_ms?.p99 ?? 0)), parseFloat(pct(lossRate(r)))];

/** Configurations no other configuration beats on both axes (loss rate and
 * p99 unavailability, lower is better), compared as the table shows them:
 * two configurations whose shown numbers are equal are on it or off it together. */
export function paretoSet(rows) {
  const pts = rows.map(shown);
  return new Set(
    rows
      .map((r, i) => i)
      .filter((i) => !pts.some(([x, y], j) => j !== i && x <= pts[i][0] && y <= pts[i][1] && (x < pts[i][0] || y < pts[i][1]))),
  );
}

function niceStep(span, ticks) {
  const raw = span / ticks;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

// ---- the chart ------------------------------------------------------------------------

const W = 900;
const H = 470;
const M = { left: 78, right: 22, top: 18, bottom: 56 };
const ZERO_LANE = 48; // px: the "none lost" band under the log axis
const GAP = 16; // px between the log region and the band
const R = 9; // mark radius

function drawChart(box, rows, { pareto, links, highlight, onHover, partial, empty, intervals = new Map() }) {
  box.replaceChildren();
  if (!rows.length) {
    box.append(el('p', { class: 'empty muted', text: empty }));
    return new Map();
  }
  const xs = rows.map(unavailS);
  const ys = rows.map(lossRate);
  const xStep = niceStep(Math.max(...xs, 1), 6);
  const xMax = Math.ceil((Math.max(...xs, 1) * 1.04) / xStep) * xStep;
  const nz = ys.filter((y) => y > 0);
  let lo = nz.length ? 10 ** Math.floor(Math.log10(Math.min(...nz))) : 1e-4;
  let hi = nz.length ? 10 ** Math.ceil(Math.log10(Math.max(...nz))) : 1e-1;
  if (hi <= lo) hi = lo * 10;
  lo = Math.min(lo, hi / 100);
  const plotL = M.left;
  const plotR = W - M.right;
  const top = M.top;
  const logBottom = H - M.bottom - ZERO_LANE - GAP;
  const zeroY = H - M.bottom - ZERO_LANE / 2;
  const px = (x) => plotL + (x / xMax) * (plotR - plotL);
  const py = (y) => (y <= 0 ? zeroY : logBottom - ((Math.log10(y) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (logBottom - top));

  const root = svg('svg', {
    viewBox: `0 0 ${W} ${H}`,
    class: 'chart',
    role: 'group',
    'aria-label': `Acknowledged-record loss rate against p99 unavailability for ${rows.length} configurations${partial ? ' (partial results)' : ''}; the table below lists the same configurations with links.`,
  });
  const grid = svg('g', { class: 'gridlines' });
  const axes = svg('g', { class: 'axes' });
  root.append(grid, axes);

  // x axis: linear seconds
  for (let x = 0; x <= xMax + 1e-9; x += xStep) {
    const X = px(x);
    grid.append(svg('line', { x1: X, x2: X, y1: top, y2: H - M.bottom }));
    axes.append(svg('text', { x: X, y: H - M.bottom + 16, 'text-anchor': 'middle', class: 'tick' }, `${Number(x.toFixed(3))}`));
  }
  axes.append(svg('text', { x: (plotL + plotR) / 2, y: H - 12, 'text-anchor': 'middle', class: 'axis-label' },
    'Unavailable partition-seconds per run, p99 over the seeds (s)'));
  // y axis: log percent, decades with 2× and 5× minor lines
  for (let d = lo; d <= hi * 1.0001; d *= 10) {
    const Y = py(d);
    grid.append(svg('line', { x1: plotL, x2: plotR, y1: Y, y2: Y, class: 'major' }));
    axes.append(svg('text', { x: plotL - 8, y: Y, dy: '0.35em', 'text-anchor': 'end', class: 'tick' }, decadeLabel(d)));
    for (const m of [2, 5]) {
      if (d * m < hi) grid.append(svg('line', { x1: plotL, x2: plotR, y1: py(d * m), y2: py(d * m), class: 'minor' }));
    }
  }
  // the "none lost" band and the axis break
  grid.append(svg('rect', { x: plotL, y: zeroY - ZERO_LANE / 2, width: plotR - plotL, height: ZERO_LANE, class: 'zero-lane' }));
  axes.append(svg('text', { x: plotL - 8, y: zeroY, dy: '0.35em', 'text-anchor': 'end', class: 'tick' }, 'none lost'));
  axes.append(svg('path', { d: `M${plotL - 5} ${logBottom + GAP / 2 + 3}l10 -6M${plotL - 5} ${logBottom + GAP / 2 + 7}l10 -6`, class: 'break' }));
  axes.append(svg('line', { x1: plotL, x2: plotL, y1: top, y2: logBottom, class: 'axis' }));
  axes.append(svg('line', { x1: plotL, x2: plotR, y1: H - M.bottom, y2: H - M.bottom, class: 'axis' }));
  axes.append(svg('text', { x: 16, y: (top + logBottom) / 2, 'text-anchor': 'middle', class: 'axis-label', transform: `rotate(-90 16 ${(top + logBottom) / 2})` },
    'Acknowledged records lost (% of acked, log scale)'));

  // Pareto frontier: a staircase through the non-dominated configurations.
  const front = [...pareto].map((i) => [px(xs[i]), py(ys[i]), xs[i], ys[i]]).sort((a, b) => a[2] - b[2] || b[3] - a[3]);
  if (front.length) {
    let d = `M${front[0][0]} ${top}V${front[0][1]}`;
    for (let k = 1; k < front.length; k++) d += `H${front[k][0]}V${front[k][1]}`;
    d += `H${plotR}`;
    root.append(svg('path', { d, class: 'frontier' }));
  }

  // Whiskers: each configuration's 90 % bootstrap interval on both axes, at its true point.
  const whiskers = svg('g', { class: 'whiskers' });
  rows.forEach((r, i) => {
    const iv = intervals.get(r.key);
    if (!iv) return;
    // Clamped to the plot: a bound below the log axis ends at its bottom.
    const cx = (v) => Math.min(plotR, Math.max(plotL, px(v / 1000)));
    const cy = (v) => (v <= 0 ? (ys[i] > 0 ? logBottom : zeroY) : Math.min(logBottom, Math.max(top, py(v))));
    const [x0, x1] = iv.unavailable_ms.map(cx);
    const [yLo, yHi] = iv.loss_rate.map(cy);
    const X = px(xs[i]);
    const Y = py(ys[i]);
    const cap = 4;
    let d = `M${x0} ${Y}H${x1}M${x0} ${Y - cap}v${2 * cap}M${x1} ${Y - cap}v${2 * cap}`;
    if (yLo !== yHi) d += `M${X} ${yLo}V${yHi}M${X - cap} ${yLo}h${2 * cap}M${X - cap} ${yHi}h${2 * cap}`;
    whiskers.append(svg('path', { d, class: `whisker ${ACKS_CLASS[r.config.acks] || 'acks0'}`, 'data-key': r.key }));
  });
  root.append(whiskers);

  // Marks: overlapping marks are pushed apart (a few rounds of pairwise
  // separation, deterministic), each with a thin line back to its true point.
  const pos = rows.map((r, i) => ({ i, ax: px(xs[i]), ay: py(ys[i]), x: px(xs[i]), y: py(ys[i]) }));
  const same = new Map();
  for (const p of pos) {
    const k = `${Math.round(p.ax)},${Math.round(p.ay)}`;
    const n = same.get(k) || 0;
    same.set(k, n + 1);
    // identical points start on a small circle so they separate evenly
    p.x += 0.5 * n * Math.cos(n * 2.4);
    p.y += 0.5 * n * Math.sin(n * 2.4);
  }
  const minD = 2 * R + 3;
  for (let round = 0; round < 120; round++) {
    let moved = false;
    for (let a = 0; a < pos.length; a++) {
      for (let b = a + 1; b < pos.length; b++) {
        const p = pos[a];
        const q = pos[b];
        let dx = q.x - p.x;
        let dy = q.y - p.y;
        let d = Math.hypot(dx, dy);
        if (d >= minD) continue;
        if (d < 1e-6) {
          dx = Math.cos(b);
          dy = Math.sin(b);
          d = 1;
        }
        const push = (minD - d) / 2 + 0.05;
        p.x -= (dx / d) * push;
        p.y -= (dy / d) * push;
        q.x += (dx / d) * push;
        q.y += (dy / d) * push;
        moved = true;
      }
    }
    // a weak pull back to the true point keeps the fan tight
    for (const p of pos) {
      p.x += (p.ax - p.x) * 0.02;
      p.y += (p.ay - p.y) * 0.02;
    }
    if (!moved) break;
  }
  const marks = svg('g', { class: 'to-marks' });
  const tethers = svg('g', { class: 'tethers' });
  const byKey = new Map();
  for (const p of pos) {
    const row = rows[p.i];
    const mx = Math.min(plotR, Math.max(plotL, p.x));
    const my = p.y;
    if (Math.hypot(mx - p.ax, my - p.ay) > R * 0.6) {
      tethers.append(svg('line', { x1: p.ax, y1: p.ay, x2: mx, y2: my, class: 'tether' }));
      tethers.append(svg('circle', { cx: p.ax, cy: p.ay, r: 2, class: 'anchor' }));
    }
    const g = glyph(row.config, R);
    g.setAttribute('transform', `translate(${mx.toFixed(1)} ${my.toFixed(1)})`);
    if (pareto.has(p.i)) g.prepend(svg('circle', { r: R + 5, class: 'halo' }));
    const link = links.get(row.key);
    const a = svg('a', {
      class: `mark${highlight === row.key ? ' hl' : ''}`,
      'data-key': row.key,
      tabindex: '-1',
      href: link?.href,
      target: link ? '_blank' : undefined,
      rel: link ? 'noopener' : undefined,
      'aria-label': `${row.key}: ${pct(ys[p.i])} lost, ${xs[p.i].toFixed(1)} s unavailable (p99)`,
    }, g);
    a.addEventListener('mouseenter', () => onHover(row.key, mx, my));
    a.addEventListener('mouseleave', () => onHover(null));
    marks.append(a);
    byKey.set(row.key, a);
  }
  root.append(tethers);
  root.append(marks);
  box.append(root);
  return byKey;
}

// ---- the page ------------------------------------------------------------------------------

class Explorer {
  constructor() {
    this.module = null;
    this.sweep = null;
    this.links = new Map();
    this.highlight = null;
    this.theme = 'auto';
    this.renderTimer = null;
    this.results = { done: false, state: 'loading', error: null, rows: [] };
    window.tradeoffResults = this.results;
  }

  setTheme(t) {
    this.theme = parseTheme(t, 'theme');
    this.watch ??= followTheme(document.documentElement, () => this.theme);
    this.watch.apply();
    $('theme').value = this.theme;
    const url = new URL(location.href);
    if (this.theme === 'auto') url.searchParams.delete('theme');
    else url.searchParams.set('theme', this.theme);
    if (url.href !== location.href) history.replaceState(null, '', url);
  }

  mount() {
    const sel = $('theme');
    for (const t of THEMES) sel.append(el('option', { value: t, text: t }));
    sel.addEventListener('change', () => this.setTheme(sel.value));
    $('form').addEventListener('submit', (e) => {
      e.preventDefault();
      this.runFromForm();
    });
    $('cancel').addEventListener('click', () => this.sweep?.cancel());
    this.tip = el('div', { class: 'chart-tip', role: 'presentation', hidden: true });
    $('chart').after(this.tip);
    this.drawKey();
  }

  showBanner(text, kind = 'error') {
    $('banner-text').textContent = text;
    $('banner').className = `banner ${kind}`;
    $('banner').hidden = false;
  }

  hideBanner() {
    $('banner').hidden = true;
  }

  fillForm(p) {
    $('seeds').value = String(p.seeds);
    $('first').value = String(p.first);
    $('sets').value = p.sets.join(', ');
  }

  runFromForm() {
    let params;
    try {
      params = {
        seeds: wholeNumber($('seeds').value, 'seeds', 1, MAX_SEEDS),
        first: wholeNumber($('first').value, 'first', 0, Number.MAX_SAFE_INTEGER - MAX_SEEDS),
        sets: splitSets($('sets').value),
      };
      for (const s of params.sets) if (s.indexOf('=') <= 0) throw new Error(`set=${s}: expected KEY=VALUE`);
    } catch (e) {
      this.showBanner(e.message);
      return;
    }
    history.replaceState(null, '', `${location.pathname}${queryFor(params, this.theme)}`);
    this.start(params);
  }

  publish(patch) {
    Object.assign(this.results, patch);
    window.tradeoffResults = this.results;
  }

  start(params) {
    this.sweep?.cancel();
    this.hideBanner();
    this.links = new Map();
    this.params = params;
    let sweep;
    try {
      sweep = new Sweep(this.module, params, {
        onProgress: () => this.scheduleRender(),
        onEnd: (s) => this.end(s),
      });
    } catch (e) {
      this.sweep = null;
      this.publish({ done: false, state: 'error', error: message(e), rows: [] });
      this.showBanner(`Bad settings: ${message(e)}`);
      $('status').textContent = 'not started';
      this.setRunning(false);
      this.render();
      return;
    }
    this.sweep = sweep;
    this.publish({
      done: false, state: 'running', error: null, rows: [], seeds: params.seeds, firstSeed: params.first,
      sets: params.sets, runsDone: 0, runsTotal: sweep.total, workers: sweep.workers.length, wallMs: null,
    });
    this.setRunning(true);
    this.render();
  }

  setRunning(on) {
    $('run').disabled = on;
    $('cancel').disabled = !on;
    document.body.classList.toggle('running', on);
  }

  scheduleRender() {
    if (this.renderTimer) return;
    // Re-merging grows with the runs done: keep it a small share of the time.
    const wait = Math.max(250, 8 * (this.lastRenderMs || 0));
    this.renderTimer = setTimeout(() => {
      this.renderTimer = null;
      if (this.sweep?.state === 'running') this.render();
    }, wait);
  }

  async end(s) {
    if (s !== this.sweep) return;
    clearTimeout(this.renderTimer);
    this.renderTimer = null;
    this.setRunning(false);
    if (s.state === 'error') this.showBanner(`The sweep stopped: ${s.error}`);
    else if (s.state === 'cancelled') {
      this.showBanner(`Cancelled after ${s.done} of ${s.total} runs. The chart and the table show partial results: each row counts only its finished runs (its "runs" column), so they are not the CLI's rows for ${s.params.seeds} seeds.`, 'warn');
    }
    this.render();
    try {
      await this.makeLinks(s);
    } catch (e) {
      this.showBanner(`The worst-seed links could not be made: ${message(e)}`);
    }
    if (s !== this.sweep) return;
    this.render();
    this.publish({ links: Object.fromEntries([...this.links].map(([k, v]) => [k, v.href])) });
    document.body.dataset.ready = 'true';
  }

  async makeLinks(s) {
    const rows = this.rows;
    for (const row of rows) {
      const c = s.keys.indexOf(row.key);
      const worst = worstSeed(row, s.longest[c]);
      if (!worst) continue;
      const scenario = JSON.parse(sweepScenario(row.key, worst.seed));
      const data = await packScenario(scenario);
      this.links.set(row.key, { href: `index.html#scenario-data=${data}&play=1`, seed: worst.seed, why: worst.why });
    }
  }

  render() {
    const s = this.sweep;
    const t0 = performance.now();
    let rows = [];
    if (s) {
      try {
        rows = s.rows();
      } catch (e) {
        this.showBanner(`The shards could not be merged: ${message(e)}`);
      }
    }
    this.rows = rows;
    const partial = s && s.state !== 'done';
    if (s) {
      const el2 = performance.now() - s.started;
      const wall = ((s.wallMs ?? el2) / 1000).toFixed(1);
      $('progress').max = s.total;
      $('progress').value = s.done;
      const word = { running: 'Running', done: 'Done', cancelled: 'Cancelled', error: 'Stopped' }[s.state];
      $('status').textContent = `${word}: ${s.done} / ${s.total} runs (${s.keys.length} configs × ${s.params.seeds} seeds) · ${s.workers.length || this.results.workers} workers · ${wall} s`;
      this.publish({
        done: s.state === 'done', state: s.state, error: s.error ?? null, rows, runsDone: s.done,
        wallMs: s.wallMs ?? null,
      });
    }
    const pareto = paretoSet(rows);
    this.pareto = pareto;
    // Intervals once the runs stop (a few ms per configuration; not at every progress redraw).
    const intervals = new Map();
    if (s && s.state !== 'running') {
      s.keys.forEach((k, c) => {
        const iv = bootstrap(s.runs[c]);
        if (iv) intervals.set(k, iv);
      });
    }
    this.intervals = intervals;
    if (s) this.publish({ intervals: Object.fromEntries(intervals) });
    $('what').textContent = this.whatText(s, rows, intervals);
    $('chart-title').firstChild.textContent = partial && s?.state !== 'error' && rows.length
      ? `Loss against unavailability — partial (${s.done} of ${s.total} runs) `
      : 'Loss against unavailability ';
    this.marks = drawChart($('chart'), rows, {
      pareto, links: this.links, highlight: this.highlight, partial, intervals,
      empty: s ? 'No finished runs yet.' : 'Nothing to draw: fix the settings above and press Run.',
      onHover: (key, x, y) => this.hover(key, x, y),
    });
    this.drawTable(rows, pareto, partial, intervals);
    this.lastRenderMs = performance.now() - t0;
  }

  /** The line under the chart: what it shows, for how many seeds. */
  whatText(s, rows, intervals) {
    if (!s || !rows.length) return '';
    const n = s.params.seeds;
    return `What this shows: each configuration's share of acknowledged records lost against how long its partitions could not take writes (p99 over ${n} seed${n === 1 ? '' : 's'}), under the same random fault schedules; lower left is better. `
      + (intervals.size
        ? 'Whiskers are 90 % bootstrap intervals: where two configurations\u2019 whiskers overlap, these seeds do not tell them apart.'
        : 'Whiskers (90 % bootstrap intervals) appear when the sweep stops.');
  }

  hover(key, x, y) {
    this.highlight = key;
    for (const [k, m] of this.marks || []) m.classList.toggle('hl', k === key);
    for (const tr of document.querySelectorAll('#table tbody tr')) tr.classList.toggle('hl', tr.dataset.key === key);
    const tip = this.tip;
    const row = key && this.rows.find((r) => r.key === key);
    if (!row || x === undefined) {
      tip.hidden = true;
      return;
    }
    const link = this.links.get(key);
    tip.replaceChildren(
      el('b', { text: row.key }),
      el('div', { text: `${row.lost} of ${row.acked} acknowledged records lost (${pct(lossRate(row))}) in ${row.runs} runs` }),
      el('div', { text: `unavailable ${secs(row.availability.unavailable_ms.p99)} partition-s per run (p99)` }),
      ...(this.intervals?.get(key) ? [el('div', { text: `90 % bootstrap interval: ${ivText(this.intervals.get(key))}` })] : []),
      el('div', { class: 'muted', text: link ? `click: open seed ${link.seed} in the lab (${link.why})` : 'the worst-seed link appears when the sweep ends' }),
    );
    const svgEl = $('chart').querySelector('svg');
    const box = svgEl.getBoundingClientRect();
    const host = $('chart').parentElement.getBoundingClientRect();
    const k = box.width / W;
    tip.style.left = `${box.left - host.left + x * k + 14}px`;
    tip.style.top = `${box.top - host.top + y * k - 10}px`;
    tip.hidden = false;
  }

  drawTable(rows, pareto, partial, intervals = new Map()) {
    const box = $('table');
    const cols = [
      ['configuration', 'key'], ['promises durability', 'num'], ['runs', 'num'], ['acked', 'num'], ['lost', 'num'],
      ['loss rate', 'num'], ['runs with loss', 'num'], ['violations', 'num'], ['unavailable p99 (s)', 'num'],
      ['90 % interval: loss rate · unavailable p99 (s)', 'num'], ['recovery p99 (s)', 'num'], ['produce p99 latency, p99 (s)', 'num'], ['loss causes', 'causes'], ['worst seed', 'wlink'],
    ];
    const table = el('table', { class: `sweep-table${partial ? ' partial' : ''}` });
    table.append(el('caption', { class: 'sr-only', text: partial ? 'Sweep rows (partial results)' : 'Sweep rows' }));
    table.append(el('thead', {}, el('tr', {}, ...cols.map(([t, c]) => el('th', { scope: 'col', class: c, text: t })))));
    const body = el('tbody');
    rows.forEach((r, i) => {
      const a = r.availability;
      const link = this.links.get(r.key);
      const front = pareto.has(i);
      const keyCell = el('th', { scope: 'row', class: 'key' }, glyphIcon(r.config), el('code', { text: r.key }));
      if (front) keyCell.append(el('span', { class: 'front-badge', title: 'On the Pareto frontier: no other configuration loses less and is unavailable for less', text: 'frontier' }));
      const causes = Object.entries(r.loss_causes).map(([c, n]) => `${c} (${n})`).join(' · ');
      const tr = el('tr', { 'data-key': r.key, class: front ? 'front' : undefined },
        keyCell,
        el('td', { class: 'num', text: r.promises_durability ? 'yes' : 'no' }),
        el('td', { class: 'num', text: String(r.runs) }),
        el('td', { class: 'num', text: r.acked.toLocaleString('en-US') }),
        el('td', { class: `num${r.lost ? ' bad' : ''}`, text: r.lost.toLocaleString('en-US') }),
        el('td', { class: 'num', text: pct(lossRate(r)) }),
        el('td', { class: 'num', text: String(r.runs_with_loss) }),
        el('td', { class: `num${r.violations ? ' bad' : ''}`, text: String(r.violations) }),
        el('td', { class: 'num', text: secs(a.unavailable_ms.p99) }),
        el('td', { class: 'num iv', text: intervals.get(r.key) ? ivText(intervals.get(r.key)) : '…' }),
        el('td', { class: 'num', text: secs(a.rto_ms.p99) }),
        el('td', { class: 'num', text: secs(a.produce_latency_p99_ms.p99) }),
        el('td', { class: 'causes', text: causes || '–' }),
        el('td', { class: 'wlink' }, link
          ? el('a', { href: link.href, target: '_blank', rel: 'noopener', title: `${link.why}; opens in a new tab`, 'aria-label': `Open seed ${link.seed} of ${r.key} in the lab (new tab)`, text: `seed ${link.seed} ↗` })
          : el('span', { class: 'muted', text: '…' })),
      );
      tr.addEventListener('mouseenter', () => this.hover(r.key));
      tr.addEventListener('mouseleave', () => this.hover(null));
      tr.addEventListener('focusin', () => this.hover(r.key));
      tr.addEventListener('focusout', () => this.hover(null));
      body.append(tr);
    });
    table.append(body);
    box.replaceChildren(table);
  }

  drawKey() {
    const item = (icon, text) => el('li', {}, icon, el('span', { text }));
    const cfg = (acks, minIsr, unclean, rf = 3) => ({ acks, min_insync_replicas: minIsr, unclean_leader_election_enable: unclean, replication_factor: rf });
    const line = (cls) => svg('svg', { width: 26, height: 14, 'aria-hidden': 'true' }, svg('path', { d: 'M1 2V8H25', class: cls }));
    const halo = svg('svg', { class: 'glyph-icon', width: 26, height: 26, viewBox: '-13 -13 26 26', 'aria-hidden': 'true' },
      svg('circle', { r: 11, class: 'halo' }), glyph(cfg('all', 2, false), 7));
    $('key').append(
      el('ul', { class: 'key-list' },
        item(glyphIcon(cfg('1', 2, false)), 'acks=1'),
        item(glyphIcon(cfg('all', 2, false)), 'acks=all'),
        item(glyphIcon(cfg('all', 2, false)), 'circle: unclean election off'),
        item(glyphIcon(cfg('all', 2, true)), 'diamond: unclean election on'),
        item(glyphIcon(cfg('all', 1, false)), 'hollow: min.insync.replicas=1'),
        item(glyphIcon(cfg('all', 2, false)), 'filled: min.insync.replicas=2'),
        item(glyphIcon(cfg('all', 2, false, 3)), 'the digit: replication factor'),
        item(halo, 'ring: on the Pareto frontier'),
        item(line('frontier'), 'frontier: nothing beats it on both (as the table rounds them)'),
        item(svg('svg', { width: 26, height: 14, 'aria-hidden': 'true' }, svg('path', { d: 'M2 7H24M2 3v8M24 3v8', class: 'whisker acksall' })), 'whiskers: 90 % bootstrap interval'),
      ),
      el('p', { class: 'muted', text: 'Loss rate: acknowledged records lost ÷ acknowledged, over every run of the configuration. Unavailability: partition-seconds per run in which a write with the producer\u2019s acks would not have been acknowledged (leader down, offline, below the effective min ISR, leader moving, an ISR member down) — each run has 2 partitions over 45 s — at the p99 over the seeds.' }),
      el('p', { class: 'muted', text: `Seeds: ${DEFAULT_SEEDS} by default. The p99 of n runs is the ceil(0.99 n)-th smallest, so with fewer than 100 seeds it is just the worst run; at 100 it is the 99th of 100. The whiskers resample the seeds ${BOOT_ROUNDS} times (bootstrap) and span the middle 90 % of the p99s and loss rates that gives: a configuration whose whiskers overlap another's is not shown to be better by these seeds. More seeds narrow them.` }),
      el('h3', { class: 'key-h', text: 'Loss causes (the table\u2019s column: runs per cause)' }),
      el('dl', { class: 'causes-key' },
        ...[
          ['acks=1: leader died before replication', 'The leader acknowledged records as soon as it had appended them (acks=1), then crashed or was cut off before a follower fetched them; the follower elected in its place never had them, and the old leader truncates them when it returns. It needs a follower to take over, so it never happens at replication factor 1.'],
          ['power loss (unflushed records)', 'A broker lost power and with it the records not yet flushed to disk (Kafka leaves flushing to the OS). The sweep cuts power only where the configuration does not promise durability (anything short of acks=all, min.insync.replicas \u2265 2, unclean election off and rf \u2265 2). At replication factor 1 this is nearly all the loss: the one copy is the one that lost power.'],
          ['last known leader elected (KIP-966)', 'With eligible leader replicas on, no replica of the ISR or ELR was left to elect, and the controller chose the last known leader once it came back, with whatever its log still held (after a power loss, not every acknowledged record): an unclean choice made without unclean.leader.election.enable.'],
          ['unclean election', 'unclean.leader.election.enable=true let the controller elect a replica outside the ISR; records it never copied are gone.'],
          ['pre-KIP-101 truncation to the high watermark', 'With sim.truncation=high_watermark a returning replica cuts its log to its own high watermark, which can remove committed records that then exist nowhere else.'],
        ].flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: v })]),
      ),
      el('p', { class: 'muted', text: 'Why acks=1 does not lose less with more replicas: at rf=1 a leader fault only takes the partition offline until the broker is back with its log (only a power loss loses records); from rf=2 on every leader fault is a leader change to a follower that may lack the newest acknowledged records, and the sweep lets up to rf\u22121 brokers be down at once, so larger factors see more overlapping faults and more leader changes. More copies do not protect records that were acknowledged before any copy existed; acks=all does.' }),
      el('p', { class: 'muted', text: 'Marks closer than a few pixels are fanned out around their shared point. Each run is a seeded random fault schedule (crashes, power loss, isolation, slow followers) — the same schedules as failover-lab sweep.' }),
    );
  }
}

async function main() {
  const app = new Explorer();
  app.mount();
  const search = new URLSearchParams(location.search);
  try {
    app.setTheme(search.get('theme'));
  } catch (e) {
    app.setTheme('auto');
    app.showBanner(`?${e.message}`);
  }
  try {
    const res = fetch(WASM_URL);
    app.module = await (WebAssembly.compileStreaming
      ? WebAssembly.compileStreaming(res).catch(async () => WebAssembly.compile(await (await fetch(WASM_URL)).arrayBuffer()))
      : WebAssembly.compile(await (await res).arrayBuffer()));
    await init({ module_or_path: app.module });
    $('run').disabled = false;
  } catch (e) {
    app.publish({ state: 'error', error: message(e) });
    app.showBanner(`The explorer's WebAssembly core did not load (${message(e)}). Run \`make build\` and serve www/.`);
    return;
  }
  let params;
  try {
    params = parseParams(location.search);
  } catch (e) {
    // The form keeps what was asked for, to be fixed and run from there.
    app.fillForm({ seeds: search.get('seeds') ?? DEFAULT_SEEDS, first: search.get('first') ?? 1, sets: search.getAll('set') });
    app.publish({ state: 'error', error: e.message });
    app.showBanner(`Bad parameter: ${e.message}`);
    return;
  }
  app.fillForm(params);
  app.start(params);
}

main();
