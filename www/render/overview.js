// The overview: every partition of the cluster at once on one canvas, one cell
// per partition in partition order, drawn in colour batches (cells bucketed by
// colour, each bucket written into one pixel buffer, one putImageData) from the core's compact overview (a Uint32Array, 4 words per
// partition: leader, isr|replicas<<8|min_isr<<16, leader epoch, flags). Hover a
// cell for its `--describe` line, click it to open its detailed log view.
// Cells whose leader, epoch or state just changed flash, so a broker crash
// visibly ripples through thousands of partitions (unless most cells change
// at once: that is a jump in time, not a ripple). No Kafka rule lives here.

import { h, reducedMotion } from './util.js';

export const STRIDE = 4;
export const FLAG = {
  OFFLINE: 1,
  UNDER_REPLICATED: 2,
  AT_MIN_ISR: 4,
  UNDER_MIN_ISR: 8,
  TRUNCATING: 16,
  ACKED_LOST: 32,
  LEADER_DOWN: 64,
};

const MAX_HEIGHT = 520; // css px
const FLASH_MS = 1200; // wall ms a changed cell stays outlined
const OFFLINE = '#000000';
const LEADER_DOWN = '#4a4f5c';
const HEALTHY = '#2b3a55';
const STATUS = [
  // [flag, colour, label] — drawn as an inner square, the most severe wins.
  [FLAG.UNDER_MIN_ISR, '#ff3b30', 'under min ISR'],
  [FLAG.AT_MIN_ISR, '#D55E00', 'at min ISR'],
  [FLAG.UNDER_REPLICATED, '#E69F00', 'under-replicated'],
];
const TRUNCATING = '#ffffff';

/** Colour of broker `b` (1-based) among `n`: Okabe-Ito for small clusters, spread hues otherwise. */
const OKABE = ['#56B4E9', '#E69F00', '#009E73', '#CC79A7', '#F0E442', '#0072B2', '#D55E00'];
export function brokerColour(b, n) {
  if (n <= OKABE.length) return OKABE[(b - 1) % OKABE.length];
  const hue = Math.round(((b - 1) * 137.508) % 360);
  return `hsl(${hue} 55% ${b % 2 ? 52 : 62}%)`;
}

export function flagNames(flags) {
  const out = [];
  if (flags & FLAG.OFFLINE) out.push('OFFLINE');
  if (flags & FLAG.LEADER_DOWN) out.push('leader down, not yet fenced');
  if (flags & FLAG.UNDER_MIN_ISR && !(flags & FLAG.OFFLINE)) out.push('UNDER MIN ISR');
  if (flags & FLAG.AT_MIN_ISR) out.push('AT MIN ISR');
  if (flags & FLAG.UNDER_REPLICATED) out.push('UNDER-REPLICATED');
  if (flags & FLAG.TRUNCATING) out.push('truncating');
  if (flags & FLAG.ACKED_LOST) out.push('ACKED RECORDS LOST');
  return out;
}

export class OverviewPanel {
  /**
   * @param root element to draw into
   * @param describe (index) => the partition's describe line
   * @param onPick (index) => open the partition's detailed view
   */
  constructor(root, { describe, onPick } = {}) {
    this.root = root;
    this.describe = describe || (() => '');
    this.onPick = onPick || (() => {});
    this.mode = 'leader';
    this.canvas = h('canvas.ov-canvas', { 'aria-label': 'Every partition: one cell each', role: 'img' });
    this.tip = h('div.ov-tip', { hidden: true, role: 'tooltip' });
    this.summary = h('span.ov-sum');
    this.select = h(
      'select.ov-mode',
      { 'aria-label': 'Colour cells by', onchange: () => { this.mode = this.select.value; this.draw(); } },
      h('option', { value: 'leader', text: 'colour: leader broker' }),
      h('option', { value: 'health', text: 'colour: health only' }),
    );
    this.legend = h('div.legend.ov-legend');
    this.wrap = h('div.ov-wrap', null, this.canvas, this.tip);
    root.replaceChildren(h('div.ov-bar', null, this.select, this.summary), this.wrap, this.legend);
    this.ctx = this.canvas.getContext('2d', { alpha: false });
    this.words = new Uint32Array(0);
    this.prev = new Uint32Array(0);
    this.flashAt = new Float64Array(0);
    this.brokers = 0;
    this.selected = -1;
    this.layoutKey = '';
    this.hover = -1;
    this.lastDrawMs = 0;
    this.colourCache = new Map();
    this.canvas.addEventListener('mousemove', (e) => this.onMove(e));
    this.canvas.addEventListener('mouseleave', () => this.hideTip());
    this.canvas.addEventListener('click', (e) => {
      const i = this.indexAt(e);
      if (i >= 0) {
        this.selected = i;
        const m = /Topic: (\S+)\s+Partition: (\d+)/.exec(this.describe(i));
        this.onPick(i, m ? `${m[1]}-${m[2]}` : '');
        this.draw();
      }
    });
  }

  /**
   * Once per app frame: shown only when the scenario has more partitions than
   * the detailed view draws (`minPartitions`), then fed from the core.
   */
  sync(core, view, generation, minPartitions) {
    const show = core.partitionCount() > minPartitions;
    const section = this.root.closest('section') || this.root;
    if (section.hidden === show) section.hidden = !show;
    if (show) this.update(core.overview(), view.brokers.length, generation);
  }

  /** New state: `words` from core.overview(), `brokers` = broker count. */
  update(words, brokers, generation) {
    const n = words.length / STRIDE;
    const now = performance.now();
    if (generation !== this.generation || this.prev.length !== words.length) {
      this.generation = generation;
      this.flashAt = new Float64Array(n).fill(-1e9);
      this.prev = words.slice();
      this.selected = -1;
    } else {
      const prev = this.prev;
      const changed = [];
      for (let i = 0; i < words.length; i += STRIDE) {
        if (words[i] !== prev[i] || words[i + 2] !== prev[i + 2] || words[i + 3] !== prev[i + 3] || words[i + 1] !== prev[i + 1]) {
          changed.push(i / STRIDE);
        }
      }
      // A ripple is some of the cells changing; most of them changing at
      // once is a jump in time (a seek, the cluster starting up), and
      // outlining every cell would only blank the picture.
      // prefers-reduced-motion: no ripple, the cells just take their new colour.
      if (changed.length <= n / 2 && !reducedMotion()) for (const c of changed) this.flashAt[c] = now;
      prev.set(words);
    }
    this.words = words;
    if (brokers !== this.brokers) {
      this.brokers = brokers;
      this.buildLegend();
    }
    this.draw();
  }

  buildLegend() {
    const sw = (c, label, cls = '') => h('span.lg', null, h(`i.ovk${cls}`, { style: { background: c } }), label);
    const items = [h('span.lg.muted', { text: 'Cell:' })];
    if (this.brokers <= 12) {
      for (let b = 1; b <= this.brokers; b++) items.push(sw(brokerColour(b, this.brokers), `leader B${b}`));
    } else {
      items.push(sw(`linear-gradient(90deg, ${[1, 2, 3, 4, 5].map((b) => brokerColour(b, this.brokers)).join(',')})`, `leader broker (${this.brokers} hues)`));
    }
    items.push(sw(LEADER_DOWN, 'leader down, not yet fenced'), sw(OFFLINE, 'offline', '.off'));
    items.push(h('span.lg.muted', { text: 'Inner square:' }));
    for (const [flag, c, label] of STATUS) items.push(sw(c, flag === FLAG.UNDER_MIN_ISR ? label : `${label} (cells of 5 px or more)`, '.inner'));
    items.push(sw(TRUNCATING, 'truncating', '.dot'), sw('transparent', 'just changed', '.flash'));
    this.legend.replaceChildren(...items);
  }

  /** Its width, read by the host before the frame writes anything (no forced layout); unset, read when needed. */
  measure() {
    this.width = this.wrap.clientWidth || this.root.clientWidth;
  }

  layout() {
    const n = this.words.length / STRIDE;
    const width = Math.max(120, Math.floor((this.width ?? (this.wrap.clientWidth || this.root.clientWidth)) || 600));
    let pitch = Math.floor(Math.sqrt((width * MAX_HEIGHT) / Math.max(1, n)));
    pitch = Math.max(2, Math.min(28, pitch));
    let cols = Math.max(1, Math.floor(width / pitch));
    while (pitch > 2 && Math.ceil(n / cols) * pitch > MAX_HEIGHT) {
      pitch--;
      cols = Math.max(1, Math.floor(width / pitch));
    }
    const rows = Math.ceil(n / cols);
    const key = `${n}|${width}|${pitch}|${devicePixelRatio}`;
    if (key !== this.layoutKey) {
      this.layoutKey = key;
      const dpr = window.devicePixelRatio || 1;
      const cssH = Math.max(pitch, rows * pitch);
      this.canvas.style.width = `${cols * pitch}px`;
      this.canvas.style.height = `${cssH}px`;
      this.canvas.width = Math.round(cols * pitch * dpr);
      this.canvas.height = Math.round(cssH * dpr);
      this.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    }
    this.pitch = pitch;
    this.cols = cols;
    this.gap = pitch >= 5 ? 1 : 0;
  }

  /** A CSS colour as a little-endian RGBA word for the pixel buffer (cached). */
  rgba(css) {
    let v = this.colourCache.get(css);
    if (v === undefined) {
      const c = (this.probe ??= new OffscreenCanvas(1, 1).getContext('2d', { willReadFrequently: true }));
      c.clearRect(0, 0, 1, 1);
      c.fillStyle = css;
      c.fillRect(0, 0, 1, 1);
      const [r, g, b, a] = c.getImageData(0, 0, 1, 1).data;
      v = ((a << 24) | (b << 16) | (g << 8) | r) >>> 0;
      this.colourCache.set(css, v);
    }
    return v;
  }

  /**
   * Full redraw. Cells are bucketed by fill colour (a counting sort), each
   * bucket written with its one colour into a pixel buffer, then the status
   * marks, truncation dots and change outlines, and one putImageData: all the
   * rasterisation happens here, so the time returned (ms) is the frame's cost
   * short of the compositor's blit.
   */
  draw() {
    const t0 = performance.now();
    const words = this.words;
    const n = words.length / STRIDE;
    this.layout();
    const { ctx, cols } = this;
    const dpr = this.canvas.width / Math.max(1, cols * this.pitch);
    const W = this.canvas.width;
    const H = this.canvas.height;
    if (!this.image || this.image.width !== W || this.image.height !== H) {
      this.image = ctx.createImageData(W, H);
      this.pixels = new Uint32Array(this.image.data.buffer);
    }
    const px = this.pixels;
    const P = Math.max(1, Math.floor(this.pitch * dpr)); // device px per cell
    const size = P - (this.gap ? Math.max(1, Math.round(dpr)) : 0);
    const fill = (i, inset, s, colour) => {
      const x0 = (i % cols) * P + inset;
      let o = (Math.floor(i / cols) * P + inset) * W + x0;
      for (let y = 0; y < s; y++, o += W) px.fill(colour, o, o + s);
    };
    // The page's background (light or dark theme); the cells keep their colours.
    // The theme's background, read once per theme (a style pass otherwise, after the frame's writes).
    const theme = `${this.root.closest('.light') !== null}|${document.documentElement.className}`;
    if (this.bgKey !== theme) {
      this.bgKey = theme;
      this.bg = this.rgba(getComputedStyle(this.root).getPropertyValue('--bg').trim() || '#0d1320');
    }
    px.fill(this.bg);
    // Bucket cells by fill colour: 0 = offline, 1..B = leader broker (or
    // HEALTHY in health mode), B+1 = leader down.
    const B = this.brokers;
    const buckets = B + 2;
    const health = this.mode === 'health';
    const key = new Uint16Array(n);
    const count = new Uint32Array(buckets + 1);
    let bad = 0;
    for (let i = 0; i < n; i++) {
      const w = i * STRIDE;
      const flags = words[w + 3];
      let k;
      if (flags & FLAG.OFFLINE) k = 0;
      else if (flags & FLAG.LEADER_DOWN) k = B + 1;
      else k = health ? 1 : Math.min(B, words[w]);
      if (flags & (FLAG.OFFLINE | FLAG.UNDER_REPLICATED | FLAG.LEADER_DOWN)) bad++;
      key[i] = k;
      count[k + 1]++;
    }
    for (let k = 0; k < buckets; k++) count[k + 1] += count[k];
    const order = new Uint32Array(n);
    const next = count.slice(0, buckets);
    for (let i = 0; i < n; i++) order[next[key[i]]++] = i;
    for (let k = 0; k < buckets; k++) {
      if (count[k] === count[k + 1]) continue;
      const colour = this.rgba(k === 0 ? OFFLINE : k === B + 1 ? LEADER_DOWN : health ? HEALTHY : brokerColour(k, B));
      for (let j = count[k]; j < count[k + 1]; j++) fill(order[j], 0, size, colour);
    }
    // Status: an inner square (the most severe state wins) and truncation dots.
    const inset = size >= 5 ? Math.max(1, Math.floor(size / 4)) : 0;
    const status = STATUS.map(([flag, colour]) => [flag, this.rgba(colour)]);
    const dot = Math.max(1, Math.floor(size / 3));
    const dotAt = Math.floor((size - dot) / 2);
    const white = this.rgba(TRUNCATING);
    for (let i = 0; i < n; i++) {
      const flags = words[i * STRIDE + 3];
      if (flags & FLAG.OFFLINE) continue;
      for (const [flag, colour] of status) {
        // Cells under 5 px have no inset: a square would hide the leader's
        // colour, and after a rack's loss every partition is under-replicated
        // and at min ISR (tour 19: one orange block). There only the
        // under-min state, the one that refuses writes, is drawn.
        if (!inset && flag !== FLAG.UNDER_MIN_ISR) continue;
        if (flags & flag) {
          fill(i, inset, size - 2 * inset, colour);
          break;
        }
      }
      if (flags & FLAG.TRUNCATING) fill(i, dotAt, dot, white);
    }
    // Just changed: an outline that fades over FLASH_MS.
    const now = performance.now();
    const flash = this.flashAt;
    this.flashing = false;
    // Outlines fade from the theme's strongest colour (white on dark, ink on light).
    const light = this.root.closest('.light') !== null;
    const ramps = light
      ? [this.rgba('#0b1020'), this.rgba('#3a4458'), this.rgba('#8a93a6')]
      : [this.rgba('rgba(255,255,255,1)'), this.rgba('#c8ccd4'), this.rgba('#8d99b3')];
    for (let i = 0; i < flash.length && i < n; i++) {
      const age = (now - flash[i]) / FLASH_MS;
      if (age < 0 || age >= 1) continue;
      this.flashing = true;
      const c = ramps[Math.min(2, Math.floor(age * 3))];
      const x0 = (i % cols) * P;
      const y0 = Math.floor(i / cols) * P;
      px.fill(c, y0 * W + x0, y0 * W + x0 + size);
      px.fill(c, (y0 + size - 1) * W + x0, (y0 + size - 1) * W + x0 + size);
      for (let y = y0; y < y0 + size; y++) {
        px[y * W + x0] = c;
        px[y * W + x0 + size - 1] = c;
      }
    }
    ctx.putImageData(this.image, 0, 0);
    if (this.selected >= 0 && this.selected < n) {
      const pitch = this.pitch;
      const i = this.selected;
      ctx.strokeStyle = '#F0E442';
      ctx.lineWidth = 2;
      ctx.strokeRect((i % cols) * pitch - 1, Math.floor(i / cols) * pitch - 1, pitch + 1, pitch + 1);
    }
    this.summary.textContent = `${n.toLocaleString('en')} partitions · ${bad.toLocaleString('en')} not fully healthy · ${this.pitch}px cells`;
    this.lastDrawMs = performance.now() - t0;
    return this.lastDrawMs;
  }

  /** Redraw while a flash is fading (call every animation frame). */
  tick() {
    if (this.flashing) this.draw();
  }

  indexAt(e) {
    const r = this.canvas.getBoundingClientRect();
    const x = e.clientX - r.left;
    const y = e.clientY - r.top;
    if (x < 0 || y < 0) return -1;
    const col = Math.floor(x / this.pitch);
    if (col >= this.cols) return -1;
    const i = Math.floor(y / this.pitch) * this.cols + col;
    return i < this.words.length / STRIDE ? i : -1;
  }

  onMove(e) {
    const i = this.indexAt(e);
    if (i < 0) return this.hideTip();
    if (i !== this.hover) {
      this.hover = i;
      const line = this.describe(i).trim().replace(/\t/g, '  ');
      const flags = flagNames(this.words[i * STRIDE + 3]);
      this.tip.replaceChildren(
        h('div.ov-line', { text: line }),
        h('div.ov-flags', { text: `leader epoch ${this.words[i * STRIDE + 2]}${flags.length ? ' · ' + flags.join(' · ') : ' · healthy'} · click for its logs` }),
      );
    }
    this.tip.hidden = false;
    const r = this.wrap.getBoundingClientRect();
    const x = e.clientX - r.left + 14;
    const y = e.clientY - r.top + 14;
    this.tip.style.left = `${Math.min(x, Math.max(0, r.width - this.tip.offsetWidth - 4))}px`;
    this.tip.style.top = `${y}px`;
  }

  hideTip() {
    this.hover = -1;
    this.tip.hidden = true;
  }
}
