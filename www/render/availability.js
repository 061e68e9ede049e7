// The availability strip (under the timeline) and one recovery badge per
// fault. Everything comes from the core's availability view (view.rs):
// unavailable partitions per cause over time, the producers' p99 latency per
// bucket, and each fault's recovery time in its four phases. Drawing only.

import { h, fmtTime } from './util.js';

/** Cause colours (Okabe-Ito), in the core's cause order. */
export const CAUSE_COLOURS = {
  leader_down: '#D55E00',
  offline: '#9aa4b8',
  below_min_isr: '#E69F00',
  leader_moving: '#56B4E9',
  isr_member_down: '#009E73',
};
const LATENCY_COLOUR = '#CC79A7';
/** The band along the strip's top: partitions of a subscribing group no member reads. */
const NOT_CONSUMED_COLOUR = '#0072B2';
const BAND = 12;
const PHASE_TEXT = {
  detection: 'detection',
  election: 'election',
  metadata: 'metadata',
  client: 'client',
};

// Exact to the millisecond, as the report and the tours state them (9.515 s, not 9.52 s).
const ms = (v) => (v === null || v === undefined ? '…' : v >= 1000 ? `${(v / 1000).toFixed(3)} s` : `${v} ms`);

export class AvailabilityPanel {
  /** onSeek(t): jump to simulated time t. */
  constructor(root, { onSeek }) {
    this.root = root;
    this.onSeek = onSeek;
    this.canvas = h('canvas.avail-strip', { height: 56, role: 'img', 'aria-label': 'unavailable partitions over time, coloured by cause, and the producers\' p99 latency' });
    this.legend = h('div.avail-legend', null,
      ...Object.entries(CAUSE_COLOURS).map(([k, c]) => h('span.lg', { dataset: { cause: k } }, h('i.dotk', { style: { background: c } }), k)),
      h('span.lg', { dataset: { cause: 'p99' } }, h('i.linek', { style: { background: LATENCY_COLOUR } }), 'producer p99 latency'),
      (this.ncKey = h('span.lg', { dataset: { cause: 'not_consumed' }, hidden: true, title: 'a band along the top: partitions of a subscribing consumer group that no member reads (before its first rebalance, during an eager rebalance, or owned by a member whose process is down until its session ends)' },
        h('i.dotk', { style: { background: NOT_CONSUMED_COLOUR } }), 'partitions not consumed')),
      (this.peak = h('span.lg.muted')),
      h('span.lg.muted.avail-def', { text: 'Unavailable: a write with the producer\u2019s acks would not be acknowledged now. The strip counts those partitions, their time adds up to partition-s, and a fault\u2019s RTO runs on to the first acknowledged write of the last partition it stalled.' }));
    this.badges = h('div.avail-badges');
    this.root.append(this.canvas, this.legend, this.badges);
    this.badgeKey = '';
    this.last = null;
  }

  /**
   * The strip's width, read before the frame writes anything (the host calls
   * it first, so reading it forces no layout); unset, it is read when needed.
   */
  measure() {
    this.width = this.root.clientWidth;
  }

  /** Buckets to ask the core for: one per two CSS pixels. */
  buckets() {
    return Math.max(20, Math.min(800, Math.floor(((this.width ?? this.root.clientWidth) || 600) / 2)));
  }

  update(v) {
    this.last = v;
    this.drawStrip(v);
    this.drawBadges(v);
  }

  drawStrip(v) {
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(100, (this.width ?? this.root.clientWidth) || 600);
    const hgt = 56;
    if (c.width !== Math.round(w * dpr)) {
      c.width = Math.round(w * dpr);
      c.height = Math.round(hgt * dpr);
      c.style.width = `${w}px`;
      c.style.height = `${hgt}px`;
    }
    const g = c.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, hgt);
    // The theme's own background (light or dark theme.js), dark as before otherwise.
    const light = this.root.closest('.light') !== null;
    // The theme's colour, read once per theme (getComputedStyle after the frame's writes would force a style pass).
    const theme = `${light}|${document.documentElement.className}|${this.root.getRootNode().host?.className ?? ''}`;
    if (this.barKey !== theme) {
      this.barKey = theme;
      this.bar = light ? getComputedStyle(this.root).getPropertyValue('--bar').trim() || '#e6eaf2' : '#141a26';
    }
    g.fillStyle = this.bar;
    g.fillRect(0, 0, w, hgt);
    const n = Math.max(1, Math.ceil(v.to_ms / v.bucket_ms));
    const bw = w / n;
    let peak = 0;
    for (const b of v.counts) peak = Math.max(peak, b.reduce((x, y) => x + y, 0));
    const order = v.causes;
    // With a subscribing group the top BAND px are its band, the bars below.
    const nc = v.not_consumed;
    const barTop = nc ? BAND + 2 : 4;
    v.counts.forEach((b, i) => {
      let y = hgt;
      for (let k = 0; k < b.length; k++) {
        if (!b[k]) continue;
        const bh = (b[k] / Math.max(1, peak)) * (hgt - barTop);
        g.fillStyle = CAUSE_COLOURS[order[k]];
        g.fillRect(i * bw, y - bh, Math.max(1, bw), bh);
        y -= bh;
      }
    });
    // p99 latency on a log scale (1 ms … the largest seen), as a line.
    const lat = v.p99_ms;
    const top = Math.max(10, ...lat.filter((x) => x !== null));
    const ly = (x) => hgt - 3 - (Math.log10(Math.max(1, x)) / Math.log10(top)) * (hgt - 8);
    g.strokeStyle = LATENCY_COLOUR;
    g.lineWidth = 1.5;
    g.beginPath();
    let pen = false;
    lat.forEach((x, i) => {
      if (x === null) {
        pen = false;
        return;
      }
      const px = (i + 0.5) * bw;
      if (pen) g.lineTo(px, ly(x));
      else g.moveTo(px, ly(x));
      pen = true;
    });
    g.stroke();
    let ncPeak = 0;
    if (nc) {
      for (const x of nc) ncPeak = Math.max(ncPeak, x);
      g.fillStyle = NOT_CONSUMED_COLOUR;
      nc.forEach((x, i) => {
        if (x) g.fillRect(i * bw, 0, Math.max(1, bw), Math.max(2, (x / ncPeak) * BAND));
      });
    }
    if (this.ncKey.hidden !== !nc) {
      this.ncKey.hidden = !nc;
      c.setAttribute('aria-label', `unavailable partitions over time, coloured by cause, and the producers' p99 latency${nc ? '; along the top, partitions of a consumer group that no member reads' : ''}`);
    }
    // Now.
    g.fillStyle = light ? '#0b102066' : '#ffffff55';
    g.fillRect((v.now_ms / v.to_ms) * w, 0, 1, hgt);
    this.peak.textContent = `peak ${peak} unavailable${nc ? ` · up to ${ncPeak} not consumed` : ''} · p99 up to ${ms(top)}`;
    if (nc) this.canvas.dataset.notConsumed = String(ncPeak);
    else delete this.canvas.dataset.notConsumed;
    this.canvas.dataset.peak = String(v.counts.length ? peak : 0);
  }

  drawBadges(v) {
    // Unavailability without a fault (a slow replica still in the ISR, a partition already offline): said so.
    const other = !v.faults.length && v.counts.some((c) => c.some((n) => n > 0));
    const key = JSON.stringify(v.faults) + other;
    if (key === this.badgeKey) return;
    this.badgeKey = key;
    this.badges.replaceChildren(
      ...(v.faults.length ? v.faults : []).map((f, i) => {
        const head = h('span.rb-head', {
          // A fault that made nothing unavailable has nothing to recover: no RTO, not "0 ms".
          text: `${f.action.replace('_', ' ')} of broker ${f.brokers.join(', ')} at ${fmtTime(f.at_ms)} · ${f.partitions} partition${f.partitions === 1 ? '' : 's'}${f.stalled ? ` + ${f.stalled} stalled` : ''} · ${f.partitions || f.stalled ? `RTO ${ms(f.rto_ms)}` : 'nothing to recover'}`,
        });
        const phases = f.phases.map((p) => h('button.rb-phase', {
          type: 'button',
          dataset: { phase: p.name },
          disabled: p.from_ms === null,
          title: `${PHASE_TEXT[p.name]}: ${p.setting}${p.from_ms !== null ? ` · click to jump to ${fmtTime(p.from_ms)}` : ''}`,
          onclick: () => p.from_ms !== null && this.onSeek(p.from_ms),
        }, h('b', { text: PHASE_TEXT[p.name] }), ` ${ms(p.ms)}`));
        return h('div.rbadge', { dataset: { fault: String(i), open: f.rto_ms === null ? '1' : '0' } }, head, ...phases);
      }),
    );
    if (!v.faults.length) {
      this.badges.append(h('span.muted', {
        text: other
          ? 'No broker fault yet, but partitions were unavailable for another reason (the strip\u2019s colour says which, such as a slow replica still in the ISR). Crash, isolate or shut down a broker to see how long recovery takes.'
          : 'No fault yet: crash, isolate or shut down a broker to see how long recovery takes.',
      }));
    }
  }
}
