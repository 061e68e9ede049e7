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
const DEFAULT_SEEDS = 10;
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

/** Configurations no other configuration beats on both axes (loss rate and
 * p99 unavailability, lower is better). */
export function paretoSet(rows) {
  const pts = rows.map((r) => [unavailS(r), lossRate(r)]);
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

function drawChart(box, rows, { pareto, links, highlight, onHover, partial, empty }) {
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
    $('chart-title').firstChild.textContent = partial && s?.state !== 'error' && rows.length
      ? `Loss against unavailability — partial (${s.done} of ${s.total} runs) `
      : 'Loss against unavailability ';
    this.marks = drawChart($('chart'), rows, {
      pareto, links: this.links, highlight: this.highlight, partial,
      empty: s ? 'No finished runs yet.' : 'Nothing to draw: fix the settings above and press Run.',
      onHover: (key, x, y) => this.hover(key, x, y),
    });
    this.drawTable(rows, pareto, partial);
    this.lastRenderMs = performance.now() - t0;
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

  drawTable(rows, pareto, partial) {
    const box = $('table');
    const cols = [
      ['configuration', 'key'], ['promises durability', 'num'], ['runs', 'num'], ['acked', 'num'], ['lost', 'num'],
      ['loss rate', 'num'], ['runs with loss', 'num'], ['violations', 'num'], ['unavailable p99 (s)', 'num'],
      ['recovery p99 (s)', 'num'], ['produce p99 latency, p99 (s)', 'num'], ['loss causes', 'causes'], ['worst seed', 'wlink'],
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
        item(line('frontier'), 'frontier: nothing beats it on both'),
      ),
      el('p', { class: 'muted', text: 'Loss rate: acknowledged records lost ÷ acknowledged, over every run of the configuration. Unavailability: partition-seconds per run without a writable leader (leader down, offline, below min ISR or moving) — each run has 2 partitions over 45 s — at the p99 over the seeds.' }),
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
