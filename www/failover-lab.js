// <failover-lab>: the whole simulator as one custom element, for documentation
// pages. Each instance owns its own WasmLab (the wasm module is instantiated
// once per page and shared), draws into its own shadow root with its own
// styles, listens only to its own events, and defines no global other than the
// custom element name itself.
//
//   <script type="module" src="failover-lab.js"></script>
//   <failover-lab scenario="scenarios/leader-dies.json" seed="7" speed="2"
//                 autoplay compact controls="play step timeline"
//                 range="8s-25s"></failover-lab>
//
// Attributes (all optional except a scenario):
//   scenario   URL of a scenario file (relative to the page), or put the
//              scenario in a <script type="application/json"> child instead
//   seed       whole number ≥ 0: overrides the scenario's seed
//   speed      simulated ms per real ms (0.01 – 100), default 1
//   autoplay   start playing once loaded (default: paused)
//   loop       with range: start over at the end of the range
//   compact    cluster map and partitions only, tighter spacing
//   controls   which controls to show: play step speed time timeline reset
//              brokers produce switches tour, or "all" / "none"
//   panels     which panels to show: map partitions clients describe
//              narration metrics availability
//   partitions how many partitions to draw (1 – 64, default 8)
//   range      lock the run to a window of simulated time: "8000-25000",
//              "8s-25s", "8s-" (to the end), or "steps:1-2" (from the time of
//              scenario step 1 to that of step 2, counting from 1)
//   theme      light | dark | auto (default: follows prefers-color-scheme)
//   compare    compare lanes, "acks=1|acks=all,min.insync.replicas=2": the
//              same scenario, seed and actions under each settings set, side
//              by side (compare.js, lanes.js); a scenario's own "compare"
//              field does the same
//   forks      fork lanes, "A~15000:crash:2,B~20000:restart:2" (issue 65): each
//              forks the lane named before ~ at the time with the action
//              ("what if … here?"), as the page's #forks= gives them
// The element has the methods of window.failoverLab (crash, runFor, report …)
// and sets data-ready="true" on itself once its first frame is drawn. It
// dispatches the DOM events of events.js (ready, fault, leaderchange,
// recordslost, tourstop, fork) on itself; types in failover-lab.d.ts. A bad
// attribute or scenario shows a message inside the element (and sets
// data-error); it never throws into the host page.

import { Lab, initWasm, initFastWasm, PlayMeter, lazyReport } from './lab.js';
import { h, fmtTime, setText } from './render/util.js';
import { fillBrokerMenu } from './render/broker-menu.js';
import { BrokerMap } from './render/brokers.js';
import { PartitionsPanel, partitionLegend } from './render/partitions.js';
import { ClientsPanel } from './render/clients.js';
import { Narration } from './render/narration.js';
import { DescribeTable } from './render/describe.js';
import { MetricsPanel, SAMPLE_MS } from './render/metrics.js';
import { SeekSlicer, inSlices } from './tour.js';
import { TourGuide } from './tour-guide.js';
import { parseTheme, followTheme } from './theme.js';
import { LabEvents } from './events.js';
import { AvailabilityPanel } from './render/availability.js';

const TAG = 'failover-lab';
const CONTROLS = ['play', 'step', 'speed', 'time', 'timeline', 'reset', 'brokers', 'produce', 'switches', 'tour'];
const DEFAULT_CONTROLS = ['play', 'step', 'speed', 'time', 'timeline', 'reset', 'brokers', 'tour'];
const PANELS = ['map', 'partitions', 'clients', 'describe', 'narration', 'metrics', 'availability'];
const DEFAULT_PANELS = ['map', 'partitions', 'clients', 'describe', 'narration'];
const COMPACT_PANELS = ['map', 'partitions'];
const SPEED_MIN = 0.01;
const SPEED_MAX = 100;
const OBSERVED = ['scenario', 'seed', 'speed', 'autoplay', 'loop', 'compact', 'controls', 'panels', 'partitions', 'range', 'theme', 'compare', 'forks'];

// ---- styles: the page's component styles, scoped to the shadow root ---------

let sharedCss = null;
function componentCss() {
  sharedCss ??= fetch(new URL('./style.css', import.meta.url))
    .then((r) => (r.ok ? r.text() : ''))
    .catch(() => '')
    // The page's variables live on :root; in a shadow root they belong on :host.
    .then((css) => css.replace(/:root\b/g, ':host'));
  return sharedCss;
}

const ELEMENT_CSS = `
:host { display: block; position: relative; min-width: 280px; text-align: left; line-height: normal; background: transparent; }
:host([hidden]) { display: none; }
.fl { position: relative; container-type: inline-size; background: var(--bg); color: var(--text);
  border: 1px solid var(--line); border-radius: 10px; padding: 8px; display: flex; flex-direction: column; gap: 6px; }
.fl-bar { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 10px; }
.fl-name { font-weight: 700; font-size: 13.5px; flex: 1 1 180px; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.fl-name .logo { color: var(--warn); margin-right: 4px; }
.fl-ctl { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; }
.fl-ctl input[type=range] { width: 84px; accent-color: var(--accent); }
.fl-speed { min-width: 40px; font-variant-numeric: tabular-nums; color: var(--muted); }
.fl-clock { font-variant-numeric: tabular-nums; font-weight: 600; min-width: 86px; }
.fl-lost { font-size: 11.5px; padding: 1px 7px; border-radius: 10px; background: var(--good-bg); border: 1px solid var(--good-line); color: var(--good-text); white-space: nowrap; }
.fl-lost.bad { background: var(--bad-bg); border-color: var(--bad); color: var(--bad-text); font-weight: 700; }
.fl-switches { display: flex; flex-wrap: wrap; gap: 4px 12px; color: var(--muted); }
.fl-switches label { display: inline-flex; align-items: center; gap: 4px; white-space: nowrap; }
.fl-timeline { display: flex; flex-wrap: wrap; align-items: center; gap: 2px 6px; }
.fl-timeline input { flex: 1; margin: 0; accent-color: var(--accent); }
.fl-timeline span { color: var(--muted); font-size: 11px; font-variant-numeric: tabular-nums; white-space: nowrap; }
.fl-timeline .tl-busy { flex: 1 0 100%; }
.fl .tour { margin: 0; }
@container (max-width: 700px) { .fl .tour { grid-template-columns: minmax(0, 1fr); grid-template-areas: "head" "nav" "text"; } }
.fl-body { display: grid; gap: 8px; grid-template-columns: minmax(0, 1fr); }
@container (min-width: 880px) { .fl-body.side { grid-template-columns: minmax(0, 1fr) 330px; } }
.fl-col { display: flex; flex-direction: column; gap: 8px; min-width: 0; }
.fl svg.map { max-height: none; }
.fl .partitions { display: flex; flex-direction: column; gap: 6px; }
.fl .narration { max-height: 260px; overflow-y: auto; position: relative; }
.fl .metrics { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 1px 16px; }
.fl-error { padding: 10px 12px; border-radius: 8px; background: #3b1a0c; border: 1px solid #D55E00; color: #ffd9c4; white-space: pre-wrap; font: 13px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
.fl-error b { color: #ff9a63; }
.fl-loading { color: var(--muted); padding: 18px; text-align: center; }
.fl.compact { padding: 6px; gap: 4px; }
.fl.compact .panel { padding: 4px 6px 6px; }
.fl.compact .panel h2 { display: none; }
.fl.compact .pcard { padding: 3px 6px 4px; }
.fl.comparing [data-panel=map], .fl.comparing [data-panel=partitions] { display: none; }
.fl .compare-panel { margin: 0; padding: 0; border: 0; background: transparent; }
.fl .cmp-bar, .fl .cmp-note { display: none; }
@container (max-width: 700px) { .fl .lanes { grid-template-columns: minmax(0, 1fr); } }
`;

// ---- attributes ---------------------------------------------------------------

function boolAttr(el, name) {
  const v = el.getAttribute(name);
  return v !== null && v.toLowerCase() !== 'false';
}

function listAttr(el, name, valid, fallback) {
  const v = el.getAttribute(name);
  if (v === null) return fallback;
  const words = v.split(/[\s,]+/).filter(Boolean);
  if (words.length === 1 && words[0] === 'all') return [...valid];
  if (words.length === 1 && words[0] === 'none') return [];
  const bad = words.filter((w) => !valid.includes(w));
  if (bad.length) throw new Error(`${name}="${v}": unknown ${bad.map((b) => `"${b}"`).join(', ')}; expected some of: ${valid.join(' ')} (or all / none)`);
  return words;
}

function parseTime(text, what) {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s)?$/.exec(text.trim());
  if (!m) throw new Error(`${what}: "${text}" is not a time (write 12000, 12000ms or 12s)`);
  return Math.round(Number(m[1]) * (m[2] === 's' ? 1000 : 1));
}

/** range="8s-25s" | "8000-" | "steps:1-2" → {start, end|null} or {steps: [a, b]}. */
function parseRange(v) {
  const text = v.trim();
  const steps = /^steps?:\s*(\d+)\s*-\s*(\d+)$/.exec(text);
  if (steps) {
    const a = Number(steps[1]);
    const b = Number(steps[2]);
    if (a < 1 || b < a) throw new Error(`range="${v}": expected steps:A-B with 1 ≤ A ≤ B`);
    return { steps: [a, b] };
  }
  const m = /^([^-]*)-([^-]*)$/.exec(text);
  if (!m) throw new Error(`range="${v}": expected START-END in simulated time (e.g. "8s-25s", "8000-25000", "8s-") or steps:A-B`);
  const start = m[1].trim() ? parseTime(m[1], `range="${v}"`) : 0;
  const end = m[2].trim() ? parseTime(m[2], `range="${v}"`) : null;
  if (end !== null && end <= start) throw new Error(`range="${v}": the end must come after the start`);
  return { start, end };
}

/** Read and check every attribute; throws Error with a message for the page. */
function readConfig(el) {
  const cfg = {};
  const url = el.getAttribute('scenario');
  const script = [...el.children].find((c) => c.localName === 'script' && (c.type || '').toLowerCase() === 'application/json');
  if (url !== null && script) throw new Error('give the scenario once: either a scenario="URL" attribute or a <script type="application/json"> child, not both');
  if (url !== null && !url.trim()) throw new Error('scenario="": expected the URL of a scenario file');
  if (url === null && !script) throw new Error('no scenario: add scenario="URL of a scenario file" or a <script type="application/json"> child holding the scenario');
  cfg.url = url?.trim() ?? null;
  cfg.inline = script ? script.textContent : null;
  const seed = el.getAttribute('seed');
  if (seed !== null && !/^\s*\d{1,15}\s*$/.test(seed)) throw new Error(`seed="${seed}": expected a whole number ≥ 0`);
  cfg.seed = seed === null ? null : Number(seed);
  const speed = el.getAttribute('speed');
  cfg.speed = 1;
  if (speed !== null) {
    const n = Number(speed);
    if (!speed.trim() || !Number.isFinite(n) || n < SPEED_MIN || n > SPEED_MAX) throw new Error(`speed="${speed}": expected a number from ${SPEED_MIN} to ${SPEED_MAX} (simulated ms per real ms)`);
    cfg.speed = n;
  }
  cfg.autoplay = boolAttr(el, 'autoplay');
  cfg.loop = boolAttr(el, 'loop');
  cfg.compact = boolAttr(el, 'compact');
  cfg.controls = listAttr(el, 'controls', CONTROLS, DEFAULT_CONTROLS);
  cfg.panels = listAttr(el, 'panels', PANELS, cfg.compact ? COMPACT_PANELS : DEFAULT_PANELS);
  const parts = el.getAttribute('partitions');
  cfg.partitions = 8;
  if (parts !== null) {
    if (!/^\s*\d+\s*$/.test(parts) || Number(parts) < 1 || Number(parts) > 64) throw new Error(`partitions="${parts}": expected a whole number from 1 to 64`);
    cfg.partitions = Number(parts);
  }
  const range = el.getAttribute('range');
  cfg.range = range === null ? null : parseRange(range);
  cfg.theme = parseTheme(el.getAttribute('theme'), 'theme');
  cfg.compare = el.getAttribute('compare');
  cfg.forks = el.getAttribute('forks');
  return cfg;
}

const message = (e) => (e instanceof Error ? e.message : String(e));

// ---- the element ----------------------------------------------------------------

class FailoverLabElement extends HTMLElement {
  static get observedAttributes() {
    return OBSERVED;
  }

  constructor() {
    super();
    this.attachShadow({ mode: 'open' });
    this.lab = null;
    this.gen = 0; // bumps on every (re)start; stale async work checks it
    this.playing = false;
    this.speed = 1;
    this.meter = new PlayMeter(); // the speed playing reaches (shown when short of the asked one)
    this.simTarget = 0;
    // Long seeks, a slice per frame (tour.js); the note is the timeline's, when it shows.
    this.seeks = new SeekSlicer({
      lab: () => this.lab,
      attempt: (fn) => this.guard(fn),
      say: (text) => {
        const note = this.ui?.seekNote;
        if (!note) return;
        note.hidden = !text;
        setText(this.ui.seekText, text || '');
      },
      bar: (f) => {
        if (this.ui?.seekBar) this.ui.seekBar.firstChild.style.width = `${Math.round(100 * f)}%`;
      },
      landed: () => {
        this.simTarget = this.lab.now();
        this.draw();
      },
    });
    this.dirty = true;
    this.visible = true;
    this.raf = 0;
    this.onDocPointer = (e) => {
      if (this.menu && !this.menu.hidden && !e.composedPath().includes(this.menu)) this.closeMenu();
    };
    this.addEventListener('keydown', (e) => this.onKey(e));
    this.events = new LabEvents(this, '');
    this.readyPromise = new Promise((resolve) => {
      this.resolveReady = resolve;
    });
  }

  connectedCallback() {
    if (!this.hasAttribute('tabindex')) this.tabIndex = 0;
    document.addEventListener('pointerdown', this.onDocPointer, true);
    this.io ??= new IntersectionObserver((entries) => {
      for (const en of entries) this.visible = en.isIntersecting;
      this.lastWall = performance.now();
    });
    this.io.observe(this);
    // Children (the inline scenario) are parsed after the element itself.
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', () => this.boot(), { once: true });
    else this.boot();
  }

  disconnectedCallback() {
    this.themeWatch?.stop();
    this.themeWatch = null;
    document.removeEventListener('pointerdown', this.onDocPointer, true);
    this.io?.disconnect();
    this.ro?.disconnect();
    this.stopLoop();
    this.gen++;
    this.lab?.core?.free();
    this.lab = null;
    delete this.dataset.ready;
  }

  attributeChangedCallback(name, oldValue, newValue) {
    if (!this.isConnected || oldValue === newValue || !this.started) return;
    if (name === 'speed' && this.lab) {
      try {
        const cfg = readConfig(this);
        this.setSpeed(cfg.speed);
      } catch (e) {
        this.fail(message(e));
      }
      return;
    }
    if (name === 'autoplay') return;
    if (name === 'compare' && this.lab) {
      // A bad compare string shows a message; the running lab is kept.
      Promise.resolve()
        .then(() => this.setCompare(newValue))
        .catch((e) => this.showNote(message(e)));
      return;
    }
    if (name === 'theme' && this.cfg) {
      try {
        this.cfg.theme = parseTheme(newValue, 'theme');
        this.themeWatch?.apply();
      } catch (e) {
        this.fail(message(e));
      }
      return;
    }
    // Anything else changes what is shown: start over (once per task).
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => this.boot(), 0);
  }

  /** Resolves to true once the first frame is drawn, false on a bad setup. */
  get ready() {
    return this.readyPromise;
  }

  // ---- setup ---------------------------------------------------------------

  /** (Re)start from the attributes: parse, fetch, load, build, draw. */
  async boot() {
    const gen = ++this.gen;
    this.started = true;
    this.stopLoop();
    delete this.dataset.ready;
    this.removeAttribute('data-error');
    if (this.settled) {
      this.readyPromise = new Promise((resolve) => {
        this.resolveReady = resolve;
      });
      this.settled = false;
    }
    let cfg;
    try {
      cfg = readConfig(this);
    } catch (e) {
      return this.fail(message(e));
    }
    this.cfg = cfg;
    const css = await componentCss();
    if (gen !== this.gen) return;
    this.css = css + ELEMENT_CSS;
    const loading = h('div.fl', null, h('div.fl-loading', { text: 'Loading the simulator…' }));
    this.followTheme(loading);
    this.shadowRoot.replaceChildren(h('style', { text: this.css }), loading);
    let text = cfg.inline;
    try {
      await initWasm();
    } catch (e) {
      if (gen === this.gen) this.fail(`the WebAssembly core did not load (${message(e)})`);
      return;
    }
    if (cfg.url !== null) {
      let url;
      try {
        url = new URL(cfg.url, document.baseURI);
      } catch {
        return this.fail(`scenario="${cfg.url}": not a valid URL`);
      }
      try {
        const res = await fetch(url);
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        text = await res.text();
      } catch (e) {
        if (gen === this.gen) this.fail(`scenario="${cfg.url}": could not be fetched (${message(e)})`);
        return;
      }
    }
    if (gen !== this.gen) return;
    const lab = new Lab();
    lab.sampleMs = SAMPLE_MS;
    // A big scenario runs on the fast build when the package has it (lab.prepare).
    await lab.prepare(text);
    if (gen !== this.gen) return;
    try {
      lab.load(text);
      if (cfg.seed !== null) lab.setOverride('seed', cfg.seed);
    } catch (e) {
      const where = cfg.url !== null ? `scenario="${cfg.url}"` : 'the inline scenario';
      return this.fail(`${where}: ${message(e)}`);
    }
    let range = null;
    if (cfg.range) {
      try {
        range = this.resolveRange(cfg.range, lab);
      } catch (e) {
        lab.core.free();
        return this.fail(message(e));
      }
    }
    this.lab?.core?.free();
    this.lab = lab;
    this.range = range;
    this.speed = cfg.speed;
    this.build(cfg);
    lab.onSample = (t, m) => this.metrics?.sample(t, m);
    lab.onRebuild = () => this.metrics?.clear();
    this.afterLoad();
    const lanes = cfg.compare ?? lab.base.compare;
    if (lanes) {
      try {
        await this.setCompare(lanes);
      } catch (e) {
        return this.fail(`compare="${lanes}": ${message(e)}`);
      }
      if (gen !== this.gen) return;
    }
    // Fork lanes belong to the run they forked: a restart keeps only the attribute's.
    if (!cfg.forks && this.cmp?.forks.length) this.cmp.setForks([]);
    if (cfg.forks) {
      try {
        const { decodeForks } = await import('./share.js');
        await this.setForkList(decodeForks(cfg.forks));
      } catch (e) {
        return this.fail(`forks="${cfg.forks}": ${message(e)}`);
      }
      if (gen !== this.gen) return;
    }
    if (cfg.autoplay && !this.tour?.active) this.play();
    this.startLoop(gen);
  }

  resolveRange(r, lab) {
    const endMs = lab.endMs();
    if (r.steps) {
      const steps = (lab.effectiveScenario().steps || []).map((s) => s.at_ms).sort((a, b) => a - b);
      const [a, b] = r.steps;
      if (b > steps.length) throw new Error(`range="steps:${a}-${b}": the scenario has ${steps.length} step${steps.length === 1 ? '' : 's'}`);
      const start = steps[a - 1];
      const end = steps[b - 1] > start ? steps[b - 1] : Math.min(endMs, start + 5000);
      return { start, end };
    }
    if (r.start >= endMs) throw new Error(`range: starts at ${r.start} ms, after the scenario ends (run_until_ms ${endMs})`);
    return { start: r.start, end: r.end === null ? endMs : r.end };
  }

  fail(msg) {
    this.gen++;
    this.stopLoop();
    this.playing = false;
    this.setAttribute('data-error', msg);
    delete this.dataset.ready;
    this.shadowRoot.replaceChildren(
      h('style', { text: ELEMENT_CSS }),
      h('div.fl-error', { role: 'alert', part: 'error' }, h('b', { text: '⚠ failover-lab: ' }), msg),
    );
    this.settle(false);
    this.dispatchEvent(new CustomEvent('error', { detail: { message: msg } }));
  }

  /** Draw `frame` in the theme attribute's colours (auto: the system's), following changes. */
  followTheme(frame) {
    this.themeWatch?.stop();
    this.themeWatch = followTheme(frame, () => this.cfg?.theme ?? 'auto', () => {
      this.dirty = true;
    });
    this.themeWatch.apply();
  }

  settle(ok) {
    if (this.settled) return;
    this.settled = true;
    this.resolveReady(ok);
  }

  build(cfg) {
    const show = new Set(cfg.controls);
    const panels = new Set(cfg.panels);
    const btn = (label, title, onclick, extra = {}) => h('button', { type: 'button', title, onclick, ...extra }, label);
    this.ui = {};
    const ui = this.ui;
    ui.name = h('span.fl-name', null, h('span.logo', { text: '◆' }), h('span', { text: '' }));
    ui.lost = h('span.fl-lost', { title: 'acknowledged records lost' });
    const ctl = h('span.fl-ctl');
    if (show.has('play')) ctl.append((ui.play = btn('▶ Play', 'Play / pause (Space)', () => this.togglePlay(), { class: 'primary', 'data-control': 'play' })));
    if (show.has('step')) ctl.append(btn('+100 ms', 'Advance simulated time by 100 ms (→)', () => this.guard(() => this.runFor(100)), { 'data-control': 'step' }));
    if (show.has('speed')) {
      ui.speed = h('input', {
        type: 'range', min: -2, max: 2, step: 0.05, value: Math.log10(this.speed), 'aria-label': 'speed', title: 'Speed: simulated ms per real ms (log scale)',
        oninput: () => this.setSpeed(10 ** Number(ui.speed.value)),
      });
      ui.speedOut = h('span.fl-speed');
      ctl.append(ui.speed, ui.speedOut);
    }
    if (show.has('time')) ctl.append((ui.clock = h('span.fl-clock', { title: 'simulated time' })));
    if (show.has('reset')) ctl.append(btn('↺', 'Back to the start, forgetting your actions', () => this.guard(() => this.reset()), { 'data-control': 'reset' }));
    if (show.has('produce')) {
      ui.burstPart = h('select', { title: 'partition for the produce burst', 'aria-label': 'partition' });
      ctl.append(btn('Produce 10', 'Produce 10 records now', () => this.produceBurst(), { 'data-control': 'produce' }), ui.burstPart);
    }
    ctl.append(ui.lost);
    const bar = h('div.fl-bar', null, ui.name, ctl);

    let switches = null;
    if (show.has('switches')) {
      ui.acks = h('select', { onchange: () => this.setOption('acks', ui.acks.value) }, ...['0', '1', 'all'].map((v) => h('option', { value: v, text: v })));
      ui.minIsr = h('select', { onchange: () => this.setOption('min.insync.replicas', Number(ui.minIsr.value)) });
      ui.unclean = h('input', { type: 'checkbox', onchange: () => this.setOption('unclean.leader.election.enable', ui.unclean.checked) });
      ui.seed = h('input', { type: 'number', min: 0, step: 1, onchange: () => this.setOption('seed', Math.max(0, Math.floor(Number(ui.seed.value) || 0))) });
      switches = h('div.fl-switches', { title: 'Changing a switch rebuilds the scenario and replays your actions' },
        h('label', null, 'acks', ui.acks), h('label', null, 'min.insync.replicas', ui.minIsr),
        h('label', null, ui.unclean, 'unclean.leader.election.enable'), h('label', null, 'seed', ui.seed));
    }
    let timeline = null;
    if (show.has('timeline')) {
      ui.range = h('input', { type: 'range', step: 10, 'aria-label': 'timeline', title: 'Drag to travel in simulated time', oninput: () => (this.pendingSeek = Number(ui.range.value)), onchange: () => this.endScrub() });
      ui.tStart = h('span');
      ui.tEnd = h('span');
      // A long seek says so while it runs (SeekSlicer); the bar is drawn, not read out.
      ui.seekText = h('span');
      ui.seekBar = h('span.tl-bar', { 'aria-hidden': 'true' }, h('span'));
      ui.seekNote = h('span.tl-busy', { role: 'status', hidden: true }, ui.seekText, ui.seekBar);
      timeline = h('div.fl-timeline', null, ui.tStart, ui.range, ui.tEnd, ui.seekNote);
    }
    // Named after the scenario once it loads (afterLoad): a page with two
    // labs then has two differently named tour landmarks.
    const tourBox = h('section', { 'aria-label': `Guided tour${this.landmarkSuffix()}` });
    this.tourBox = tourBox;
    this.tour = show.has('tour')
      ? new TourGuide(tourBox, {
        now: () => this.lab.now(),
        report: () => lazyReport(this.lab),
        lanes: () => this.cmp?.active && (this.settleSeek(), this.cmp.sync(), this.cmp.lanes()),
        goTo: (t) => this.goTo(t),
        // A stop waits for the compare lanes too (compare.js estimateMs, landAt).
        estimateMs: (t) => {
          const e = this.lab.estimateSeekMs(t, { measure: true });
          return this.cmp ? this.cmp.estimateMs(t, e) : e;
        },
        seekInSlices: (t, progress) => this.seekInSlices(t, progress),
        paced: () => this.lab.msPerSimMs !== null,
        queryRoot: this.shadowRoot,
        // The host page scrolls to a stop's evidence when the reader steps, not for a script's tourNext().
        placeForReader: true,
        onStop: (i, stop) => this.events.tourStop(i, this.tour.stops.length, stop),
      })
      : null;

    const panel = (name, title, body) => h('section.panel', { dataset: { panel: name } }, title && !cfg.compact ? h('h2', { text: title }) : null, body);
    const main = h('div.fl-col');
    const side = h('div.fl-col');
    this.map = this.partitions = this.clients = this.narration = this.describeTable = this.metrics = this.availability = null;
    let availBox = null;
    if (panels.has('availability')) {
      const root = h('div');
      this.availability = new AvailabilityPanel(root, { onSeek: (t) => this.guard(() => this.jump(t)) });
      availBox = panel('availability', 'Availability', root);
    }
    if (panels.has('map')) {
      const root = h('div');
      this.map = new BrokerMap(root, { fit: true, onBrokerClick: (id, anchor) => (show.has('brokers') ? this.openMenu(id, anchor) : null) });
      main.append(panel('map', show.has('brokers') ? 'Cluster · click a broker' : 'Cluster', root));
    }
    if (panels.has('partitions')) {
      const root = h('div.partitions');
      this.partitions = new PartitionsPanel(root);
      main.append(panel('partitions', 'Partitions', h('div', null, cfg.compact ? null : partitionLegend(), root)));
    }
    if (panels.has('metrics')) {
      const root = h('div.metrics');
      this.metrics = new MetricsPanel(root);
      main.append(panel('metrics', 'Metrics', root));
    }
    if (panels.has('clients')) {
      const root = h('div');
      this.clients = new ClientsPanel(root, {
        onAction: (action) => this.guard(() => this.act(action)),
        delivery: () => this.lab?.delivery(),
        story: (id) => this.lab?.story(id),
        endMs: () => this.lab?.endMs() ?? 0,
        onSeek: (t) => this.guard(() => this.jump(t)),
      });
      side.append(panel('clients', 'Clients', root));
    }
    if (panels.has('describe')) {
      const root = h('div');
      this.describeTable = new DescribeTable(root);
      side.append(panel('describe', 'kafka-topics.sh --describe', root));
    }
    if (panels.has('narration')) {
      const root = h('div.narration');
      this.narration = new Narration(root, { onSeek: (t) => this.guard(() => this.jump(t)) });
      root.setAttribute('aria-label', `What happened${this.landmarkSuffix()}, newest first`);
      side.append(panel('narration', 'What happened', root));
    }
    const body = h('div.fl-body', null, main);
    if (side.childElementCount) {
      if (main.childElementCount) body.classList.add('side');
      body.append(side);
    }
    this.menu = h('div.menu', { role: 'menu', 'aria-label': 'Broker actions', hidden: true });
    // Without the narration panel, key events are still spoken (polite).
    this.live = this.narration ? null : h('div.sr-only', { role: 'status', 'aria-live': 'polite', 'aria-atomic': 'true' });
    this.lanesBox = h('section.compare-panel', { 'aria-label': `Compare lanes${this.landmarkSuffix()}`, hidden: true });
    this.cmp?.dispose();
    this.cmp = this.lanesView = null;
    this.frameEl = h(`div.fl${cfg.compact ? '.compact' : ''}`, { part: 'lab' }, bar, switches, timeline, availBox, tourBox, this.lanesBox, body, this.menu, this.live);
    this.followTheme(this.frameEl);
    this.events.announce = this.live ? (text) => setText(this.live, text) : null;
    this.shadowRoot.replaceChildren(h('style', { text: this.css }), this.frameEl);
    this.ro?.disconnect();
    this.ro = new ResizeObserver(() => {
      this.partitions?.resize();
      this.map?.resize();
      this.dirty = true;
    });
    this.ro.observe(this.frameEl);
  }

  afterLoad() {
    const lab = this.lab;
    setText(this.ui.name.lastChild, lab.name());
    this.ui.name.title = lab.description() || lab.name();
    this.tourBox.setAttribute('aria-label', `Guided tour${this.landmarkSuffix()}: ${lab.name()}`);
    this.tour?.load(lab.tour(), { name: lab.name(), description: lab.description() });
    if (this.tour?.active) this.playing = false;
    if (this.range && this.range.start > 0) lab.seek(this.range.start);
    this.simTarget = lab.now();
    this.syncSettings();
    this.draw();
  }

  syncSettings() {
    const ui = this.ui;
    const view = this.lab.view(0);
    if (ui.acks) {
      const st = this.lab.settings();
      ui.acks.value = st.acks === '-1' ? 'all' : st.acks;
      if (ui.minIsr.options.length !== view.brokers.length) {
        ui.minIsr.replaceChildren(...view.brokers.map((_, i) => h('option', { value: i + 1, text: i + 1 })));
      }
      ui.minIsr.value = String(st.minIsr);
      ui.unclean.checked = st.unclean;
      ui.seed.value = st.seed;
    }
    if (ui.burstPart) {
      const parts = this.lab.view(this.cfg.partitions).partitions;
      ui.burstPart.replaceChildren(...parts.map((p) => h('option', { value: JSON.stringify([p.topic, p.partition]), text: `${p.topic}-${p.partition}` })));
    }
  }

  // ---- clock ---------------------------------------------------------------

  startLoop(gen) {
    this.lastWall = performance.now();
    const frame = (wall) => {
      if (gen !== this.gen || !this.isConnected) return;
      this.frame(wall);
      if (this.dataset.ready !== 'true') {
        this.dataset.ready = 'true';
        this.settle(true);
        this.events.ready(this.lab.now());
      }
      this.raf = requestAnimationFrame(frame);
    };
    this.raf = requestAnimationFrame(frame);
  }

  stopLoop() {
    cancelAnimationFrame(this.raf);
    this.raf = 0;
  }

  frame(wall) {
    const elapsed = Math.max(0, wall - this.lastWall);
    const dt = Math.min(100, elapsed);
    this.lastWall = wall;
    if (!this.visible && this.dataset.ready === 'true') return; // off screen: no work
    try {
      if (this.pendingSeek != null) {
        const t = this.pendingSeek;
        this.pendingSeek = null;
        // A long one is begun now and replayed over the next frames.
        if (!this.announceSeek(t)) this.guard(() => this.seek(t));
      } else if (this.lab.seekJob) this.seeks.step();
      else this.seeks.tidy();
      // Compare lanes on their way to lane A's time: a slice per frame (compare.js).
      const lanes = this.cmp && this.guard(() => this.cmp.frame());
      if (lanes === 'landed') this.dirty = true;
      else if (lanes && !this.dirty) this.lanesView.progress(this.cmp);
      if (this.playing && !this.lab.seekJob) {
        const before = this.lab.now();
        // No further than the core runs in its share of a frame (lab.reach):
        // a world too big for the asked speed plays slower, the page answers.
        this.simTarget = this.lab.reach(this.simTarget + dt * this.speed);
        let t = Math.floor(this.simTarget);
        let stop = -1;
        if (this.tour) ({ t, stop } = this.tour.limit(t));
        const end = this.range ? this.range.end : this.lab.endMs();
        const atEnd = t >= end;
        if (atEnd) t = end;
        // A frame's share of the core's work at most (lab.playTo): the next frame goes on.
        let there = true;
        if (t > this.lab.now() || this.lab.partial !== null) {
          there = this.lab.playTo(t);
          this.dirty = true;
        }
        if (stop < 0 && !atEnd) this.meter.note(this.lab.now() - before, elapsed);
        if (!there) {
          // Not at the stop or the end yet: the next frame goes on.
        } else if (stop >= 0) {
          this.pause();
          this.tour.arrive(stop);
        } else if (atEnd && this.range && this.cfg.loop) {
          this.lab.seek(this.range.start);
          this.simTarget = this.lab.now();
          this.dirty = true;
        } else if (atEnd) this.pause();
      }
      // Nothing is drawn of a world half-way through a long seek.
      if (this.dirty && !this.lab.seekJob) this.draw();
      else {
        this.map?.tick();
        this.lanesView?.tick();
      }
    } catch (e) {
      this.playing = false;
      this.showNote(`Simulation stopped: ${message(e)}`);
    }
  }

  clamp(t) {
    t = Math.max(0, Math.floor(t));
    if (this.range) t = Math.min(this.range.end, Math.max(this.range.start, t));
    return t;
  }

  goTo(t) {
    this.pause();
    this.guard(() => this.seek(t));
  }

  // ---- compare mode (compare.js, lanes.js) -----------------------------------

  /**
   * Compare lanes ("acks=1|acks=all"), or none (null). A bad string throws an
   * Error naming the lane and key at once; the lab is kept.
   */
  compare(text) {
    return this.setCompare(text ?? null);
  }

  setCompare(text) {
    const lab = this.need();
    const on = text != null && String(text).trim() !== '';
    if (on) lab.checkLanes(text);
    const want = (this.compareWant = {});
    if (!on && !this.cmp) return Promise.resolve();
    return this.lanesReady().then(() => on && this.cmp.prebuild(text)).then(() => {
      if (want !== this.compareWant || lab !== this.lab) return;
      const t = lab.destination();
      this.cmp.set(on ? text : null);
      this.showLanes(false);
      // Lane A was rebuilt at 0: back to t, a long way in slices when the timeline can say it.
      if (lab.now() !== t && this.announceSeek(t)) return;
      if (lab.now() !== t) this.seek(t);
      else this.draw();
    });
  }

  /** WasmLab.fork is in the full build only: loaded before the first fork. */
  async forkReady() {
    const [mod, W] = await Promise.all([import('./lanes.js'), initFastWasm()]);
    mod.setForkBuilder(W.fork ? W.fork.bind(W) : null);
  }

  /** Compare mode's code (lanes.js with compare.js), fetched the first time it is used. */
  async lanesReady() {
    const mod = await import('./lanes.js');
    if (!this.lanesView) {
      this.shadowRoot.append(h('style', { text: mod.LANES_CSS }));
      this.cmp = new mod.Compare(this);
      this.lanesView = new mod.LanesView(this.lanesBox, { h, fmtTime, BrokerMap, PartitionsPanel, AvailabilityPanel }, {
        onApply: async (t) => {
          try {
            await this.setCompare(t);
            return '';
          } catch (e) {
            return message(e);
          }
        },
        onBrokerClick: (id, anchor) => (this.cfg.controls.includes('brokers') ? this.openMenu(id, anchor) : null),
        onSeek: (t) => this.guard(() => this.jump(t)),
        onDropFork: (i) => this.guard(() => this.setForkList(this.cmp.forks.filter((f, j) => this.cmp.settingsLanes + j < i))),
      });
    }
    return mod;
  }

  showLanes(draw = true) {
    const on = this.cmp.active;
    this.lanesBox.hidden = !on;
    this.frameEl.classList.toggle('comparing', on);
    if (draw) this.draw();
  }

  // ---- forks: "what if … here?" (issue 65) ------------------------------------

  /**
   * Fork lane `from` ('A' by default) at `atMs` with `action`: a new lane
   * whose run is that lane's up to atMs, then the action, beside the others.
   * Resolves to { lane, from, at_ms, action } (also the `fork` event);
   * rejects with the core's message for a bad action, or past four lanes.
   */
  async fork(atMs, action, from = 'A') {
    const lab = this.need();
    const t = Number(atMs);
    if (!Number.isInteger(t) || t < 0) throw new Error(`fork: expected a time in ms (a whole number ≥ 0), got ${atMs}`);
    await this.lanesReady();
    await this.forkReady();
    if (lab !== this.lab) throw new Error('fork: the lab was replaced meanwhile');
    this.cmp.addFork('ABCD'.indexOf(String(from)), t, action);
    this.showLanes();
    const i = this.cmp.labs().length - 1;
    const detail = { lane: 'ABCD'[i], from: String(from), at_ms: t, action };
    this.events.emit('fork', detail);
    return detail;
  }

  /** The fork lanes: [{ lane, from, at_ms, action }]. */
  forks() {
    const c = this.cmp;
    return (c?.forks ?? []).map((f, j) => ({ lane: 'ABCD'[c.settingsLanes + j], from: 'ABCD'[f.parent], at_ms: f.at_ms, action: f.action }));
  }

  /** Replace the fork lanes ([{ parent, at_ms, action }]). */
  async setForkList(list) {
    await this.lanesReady();
    await this.forkReady();
    this.cmp.setForks(list);
    this.showLanes();
  }

  /** Each lane's settings and report at the current time ([] outside compare mode). */
  lanes() {
    this.need();
    this.cmp?.sync();
    return this.cmp?.lanes() ?? [];
  }

  // ---- drawing -------------------------------------------------------------

  draw() {
    const lab = this.lab;
    if (lab.seekJob) {
      // A redraw asked for half-way through a long seek lands it first.
      this.settleSeek();
      return;
    }
    // Widths before any write (read after them, each forces a layout).
    this.availability?.measure();
    this.map?.measure();
    const view = lab.view(this.cfg.partitions);
    this.lastView = view;
    this.cmp?.sync();
    this.lanesView?.update(this.cmp, { speed: this.playing ? this.speed : 0.05, playing: this.playing });
    this.events.update(lab, view);
    this.map?.update(view, this.playing ? this.speed : 0.05, lab.history, lab.generation);
    this.partitions?.update(view, lab.history);
    if (this.narration) {
      const events = this.narration.update(lab);
      this.partitions?.onTrace(events, this.narration.jumped);
    } else if (this.partitions) {
      // Without the narration panel the truncation animation still needs the events.
      const jumped = this.traceGen !== lab.generation;
      if (jumped) {
        this.traceGen = lab.generation;
        this.traceCursor = 0;
      }
      const len = lab.traceLength();
      if (len > this.traceCursor) {
        this.partitions.onTrace(lab.traceSince(Math.max(this.traceCursor, len - 200)), jumped);
        this.traceCursor = len;
      }
    }
    this.clients?.update(view);
    const avail = this.availability || this.metrics ? this.lab.core.availability(this.lab.endMs(), this.availability ? this.availability.buckets() : 20) : null;
    if (avail && this.availability) this.availability.update(avail);
    this.metrics?.update(avail);
    this.describeTable?.update(lab.describe());
    const ui = this.ui;
    const lost = view.acked_records_lost;
    setText(ui.lost, `${lost} acked record${lost === 1 ? '' : 's'} lost`);
    ui.lost.classList.toggle('bad', lost > 0);
    if (ui.play) {
      setText(ui.play, this.playing ? '❚❚ Pause' : '▶ Play');
      ui.play.classList.toggle('on', this.playing);
    }
    if (ui.speedOut) {
      const label = (x) => `${x >= 10 ? Math.round(x) : +x.toFixed(2)}×`;
      // The asked speed, and what playing reaches when it falls short of it.
      const reached = this.meter.shortOf(this.speed); // null when paused: pause() resets the meter
      setText(ui.speedOut, reached === null ? label(this.speed) : `${label(this.speed)} → ${label(reached)}`);
    }
    if (ui.clock) setText(ui.clock, `t = ${fmtTime(view.now_ms)}`);
    if (ui.range) {
      const lo = this.range ? this.range.start : 0;
      const hi = this.range ? this.range.end : Math.max(lab.endMs(), view.now_ms);
      if (Number(ui.range.min) !== lo) ui.range.min = lo;
      if (Number(ui.range.max) !== hi) ui.range.max = hi;
      if (this.shadowRoot.activeElement !== ui.range || this.playing) ui.range.value = view.now_ms;
      setText(ui.tStart, `${+(lo / 1000).toFixed(1)} s`);
      setText(ui.tEnd, `${+(hi / 1000).toFixed(1)} s`);
    }
    this.tour?.sync(view.now_ms);
    this.dirty = false;
  }

  showNote(msg) {
    let note = this.frameEl?.querySelector('.fl-error');
    if (!note && this.frameEl) {
      note = h('div.fl-error', { role: 'alert' });
      this.frameEl.querySelector('.fl-body')?.before(note);
    }
    if (!note) return;
    note.replaceChildren(h('b', { text: '⚠ ' }), msg);
    clearTimeout(this.noteTimer);
    this.noteTimer = setTimeout(() => note.remove(), 10000);
  }

  guard(fn) {
    try {
      return fn();
    } catch (e) {
      this.showNote(message(e));
      this.dirty = true;
      return undefined;
    }
  }

  // ---- interaction -----------------------------------------------------------

  togglePlay() {
    if (this.playing) this.pause();
    else this.play();
  }

  setOption(key, value) {
    this.guard(() => {
      this.lab.setOverride(key, value);
      this.syncSettings();
      this.draw();
    });
  }

  produceBurst() {
    let target;
    try {
      target = JSON.parse(this.ui.burstPart.value);
    } catch {
      return;
    }
    this.guard(() => this.act({ produce: { topic: target[0], partition: target[1], count: 10, acks: this.lab.settings().acks } }));
  }

  openMenu(id, anchor) {
    const b = this.lastView?.brokers.find((x) => x.id === id);
    if (!b) return;
    fillBrokerMenu(this.menu, b, {
      healEnabled: true,
      onPick: (action) => {
        this.closeMenu();
        this.guard(() => this.act(action));
      },
    });
    this.menu.hidden = false;
    this.menuAnchor = anchor;
    const box = this.frameEl.getBoundingClientRect();
    const r = anchor.getBoundingClientRect();
    const mw = this.menu.offsetWidth;
    const left = Math.max(4, Math.min(r.left - box.left + r.width / 2 - mw / 2, box.width - mw - 4));
    this.menu.style.left = `${left}px`;
    this.menu.style.top = `${r.bottom - box.top + 4}px`;
    this.menu.querySelector('button:not([disabled])')?.focus({ preventScroll: true });
  }

  closeMenu() {
    if (!this.menu || this.menu.hidden) return;
    // Keyboard users go back to the broker they opened the menu from.
    const hadFocus = this.menu.contains(this.shadowRoot.activeElement);
    this.menu.hidden = true;
    if (hadFocus && this.menuAnchor?.isConnected) this.menuAnchor.focus({ preventScroll: true });
  }

  onKey(e) {
    if (!this.lab || e.ctrlKey || e.metaKey || e.altKey) return;
    const target = e.composedPath()[0];
    const tag = target?.tagName;
    if ((tag === 'INPUT' && target.type !== 'range' && target.type !== 'checkbox') || tag === 'SELECT' || tag === 'TEXTAREA') return;
    if (tag === 'BUTTON' && (e.key === ' ' || e.key === 'Enter')) return;
    const k = e.key;
    const show = new Set(this.cfg.controls);
    let handled = true;
    if (k === ' ' && show.has('play')) this.togglePlay();
    else if (k === 'ArrowRight' && show.has('step')) this.guard(() => this.runFor(e.shiftKey ? 1000 : 100));
    else if (k === 'ArrowLeft' && show.has('timeline')) this.guard(() => this.jump((this.pendingSeek ?? this.lab.destination()) - 1000));
    else if (/^[1-9]$/.test(k) && show.has('brokers')) {
      const id = Number(k);
      const b = this.lastView?.brokers.find((x) => x.id === id);
      if (b) this.guard(() => this.act(b.state === 'crashed' || b.state === 'shut_down' ? { restart: id } : { crash: id }));
    } else if ((k === 'n' || k === 'N') && this.tour?.active) this.tour.step(this.tour.index + 1);
    else if (k === 'Escape') this.closeMenu();
    else handled = false;
    if (handled) e.preventDefault();
  }

  // ---- the API (same as window.failoverLab) -----------------------------------

  /** The lab with its world in place (a long seek under way lands first); throws before the element is ready. */
  need() {
    const lab = this.labReady();
    this.settleSeek();
    return lab;
  }

  /** The lab, as it is (a seek plans from where a seek under way got); throws before the element is ready. */
  labReady() {
    if (!this.lab?.core) throw new Error(`<${TAG}> is not ready yet: wait for data-ready="true" (or await element.ready)`);
    return this.lab;
  }

  /** Replace the lab with a scenario (object or JSON text); throws the core's Error. */
  load(scenario) {
    // A long seek under way is dropped, not landed: the world it leads to goes.
    const lab = this.labReady();
    lab.load(scenario);
    this.afterLoad();
  }

  /** Apply an action now (a scenario step without at_ms); recorded for replay. */
  act(action) {
    this.need().act(action);
    this.draw();
  }

  apply(action) {
    this.act(action);
  }
  crash(b) {
    this.act({ crash: b });
  }
  powerLoss(b) {
    this.act({ power_loss: b });
  }
  restart(b) {
    this.act({ restart: b });
  }
  shutdown(b) {
    this.act({ shutdown: b });
  }
  isolate(b) {
    this.act({ isolate: b });
  }
  heal(b) {
    this.act({ heal: b });
  }
  produce(topic, partition, count, acks) {
    this.act({ produce: acks === undefined ? { topic, partition, count } : { topic, partition, count, acks } });
  }

  /** Advance simulated time synchronously (not past the end of a locked range), then redraw. */
  runFor(ms) {
    const lab = this.need();
    const n = Number(ms);
    if (!Number.isFinite(n) || n < 0) throw new Error(`runFor: expected a number of ms, got ${ms}`);
    const t = this.range ? Math.min(this.range.end, lab.now() + Math.floor(n)) : lab.now() + Math.floor(n);
    lab.runUntil(t);
    this.simTarget = lab.now();
    this.draw();
  }

  /** The dragged timeline let go: its last position is sought (jump). */
  endScrub() {
    const t = this.pendingSeek;
    if (t == null) return;
    this.pendingSeek = null;
    this.guard(() => this.jump(t));
  }

  /** A long seek, when the timeline can say it: said and begun (SeekSlicer.begin); else false. */
  announceSeek(t) {
    if (!this.lab?.core || !this.ui?.seekNote) return false;
    return this.seeks.begin(this.clamp(t));
  }

  /**
   * The tour's long stop: the lab taken to t a slice per frame, as a long
   * seek of the timeline is (paused; the tour's card says it).
   */
  seekInSlices(t, progress) {
    this.pause();
    this.pendingSeek = null;
    const to = this.clamp(t);
    // In compare mode lane A fills the bar's first half, the other lanes its second.
    const c = this.cmp?.active && this.cmp;
    return this.seeks.forTour(to, (f) => progress(c ? f / 2 : f)).then((there) => (there && c ? c.landAt(to, (f) => progress(0.5 + f / 2)) : there));
  }

  /** Finish a long seek under way at once (nothing to do when none is). */
  settleSeek() {
    this.seeks.settle();
  }

  /**
   * A seek the reader asked for (a time clicked, the ← key, the end of a
   * drag): made at once, or, when the core needs longer than SLICE_MS for it
   * (or a long seek is under way) and the timeline can say so, by the next
   * frames (SeekSlicer.begin).
   */
  jump(t) {
    const lab = this.labReady();
    const to = this.clamp(Number(t) || 0);
    if (this.ui?.seekNote && (lab.seekJob || inSlices(lab.estimateSeekMs(to, { measure: true }), to, lab.now()))) this.pendingSeek = to;
    else this.seek(to);
  }

  /** Time travel to t ms (clamped to a locked range). */
  seek(t) {
    this.pendingSeek = null;
    const to = this.clamp(Number(t) || 0);
    this.seeks.drop(to);
    const lab = this.labReady();
    lab.seek(to);
    this.simTarget = lab.now();
    this.draw();
  }

  /** Back to the start (of the range), forgetting recorded actions. */
  reset() {
    const lab = this.need();
    lab.reset();
    if (this.range) lab.seek(this.range.start);
    this.simTarget = lab.now();
    this.draw();
  }

  play() {
    this.need();
    const end = this.range ? this.range.end : this.lab.endMs();
    if (this.lab.now() >= end && this.range) this.lab.seek(this.range.start);
    this.playing = true;
    this.simTarget = this.lab.now();
    this.lastWall = performance.now();
    this.meter.reset();
    this.dirty = true;
  }

  pause() {
    this.playing = false;
    this.meter.reset();
    this.dirty = true;
  }

  setSpeed(x) {
    const n = Number(x);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`setSpeed: expected a positive number, got ${x}`);
    this.speed = Math.min(SPEED_MAX, Math.max(SPEED_MIN, n));
    if (this.lab) this.simTarget = this.lab.now();
    this.meter.reset();
    if (this.ui?.speed) this.ui.speed.value = Math.log10(this.speed);
    this.dirty = true;
  }

  report() {
    return this.need().report();
  }
  delivery() {
    return this.need().delivery();
  }
  story(id) {
    return this.need().story(id);
  }
  /**
   * Named regions inside the element (the tour, the narration, the lanes)
   * must be unique on the page (axe's landmark-unique, issue 62 item 7): with
   * several elements, each names itself by its own aria-label, or else by its
   * place among the page's elements ("lab 2").
   */
  landmarkSuffix() {
    const own = this.getAttribute('aria-label');
    if (own) return ` (${own})`;
    const all = [...document.querySelectorAll('failover-lab')];
    return all.length > 1 ? ` (lab ${all.indexOf(this) + 1})` : '';
  }

  describe() {
    return this.need().describe();
  }
  view(n = this.cfg?.partitions ?? 8) {
    return this.need().view(n);
  }
  trace(cursor = 0) {
    return this.need().traceSince(cursor);
  }
  /** The long seek under way, replayed over the element's frames ({ target, progress } 0 to 1, and the compare `lanes` on their way), or null. */
  get seeking() {
    const s = this.lab?.seekState() ?? null;
    return this.cmp ? this.cmp.seeking(s) : s;
  }

  now() {
    return this.need().now();
  }
  actions() {
    return this.need().actions.map(({ at_ms, action }) => ({ at_ms, action }));
  }
  /** The scenario with the switches applied (what runs). */
  scenario() {
    return this.need().effectiveScenario();
  }
  tourNext() {
    this.need();
    this.tour?.go(this.tour.index + 1);
  }
  tourBack() {
    this.need();
    this.tour?.go(this.tour.index - 1);
  }
  /** What the run answers to stop i's question now: `{ value, right }`, or null (no question, or its evaluator not loaded yet). */
  tourAnswer(i) {
    this.need();
    return this.tour?.answer(i) ?? null;
  }
}

if (!customElements.get(TAG)) customElements.define(TAG, FailoverLabElement);

export { FailoverLabElement };
