// Broker and client metrics under Kafka's own names, each with a sparkline.
// The core gives cumulative counters and gauges; rates per second over the
// sampling window are computed here (presentation only).

import { h, setText } from './util.js';

export const SAMPLE_MS = 500;
const KEEP = 120; // 60 s of samples

const METRICS = [
  { name: 'UnderReplicatedPartitions', src: 'UnderReplicatedPartitions', gauge: true, alarm: true },
  { name: 'UnderMinIsrPartitionCount', src: 'UnderMinIsrPartitionCount', gauge: true, alarm: true },
  { name: 'AtMinIsrPartitionCount', src: 'AtMinIsrPartitionCount', gauge: true },
  { name: 'OfflinePartitionsCount', src: 'OfflinePartitionsCount', gauge: true, alarm: true },
  { name: 'IsrShrinksPerSec', src: 'IsrShrinks' },
  { name: 'IsrExpandsPerSec', src: 'IsrExpands' },
  { name: 'LeaderElectionRateAndTimeMs', src: 'LeaderElections', title: 'leader elections per second' },
  { name: 'UncleanLeaderElectionsPerSec', src: 'UncleanLeaderElections', alarm: true },
  { name: 'FailedProduceRequestsPerSec', src: 'FailedProduceRequests', alarm: true },
  { name: 'record-retry-rate', src: 'RecordRetries', title: 'producer' },
  { name: 'record-error-rate', src: 'RecordErrors', title: 'producer', alarm: true },
  { name: 'record-send-rate', src: 'RecordsAcked', title: 'producer: acknowledged records per second' },
  { name: 'records-consumed-rate', src: 'RecordsConsumed', title: 'consumer' },
  { name: 'request-latency-avg', latency: 'latency_avg_us', scale: 0.001, title: 'producer: mean ms from send to acknowledgement, every record so far' },
  { name: 'request-latency-max', latency: 'latency_max_ms', title: 'producer: the slowest acknowledgement so far (ms)', alarm: true },
];

export class MetricsPanel {
  constructor(root) {
    this.root = root;
    this.samples = []; // [{t, m}]
    this.rows = METRICS.map((d) => {
      const value = h('span.mval');
      const spark = h('canvas.spark', { width: 96, height: 22 });
      const row = h('div.metric', { title: d.title || d.name, dataset: { metric: d.name } }, h('span.mname', { text: d.name }), spark, value);
      this.root.append(row);
      return { d, value, spark, row };
    });
  }

  clear() {
    this.samples = [];
    for (const r of this.rows || []) r.hist = [];
  }

  /** Record the metrics sampled at simulated time t. */
  sample(t, metrics) {
    const last = this.samples[this.samples.length - 1];
    if (last && t <= last.t) {
      // Time went back (scrub): forget the future.
      while (this.samples.length && this.samples[this.samples.length - 1].t >= t) this.samples.pop();
    }
    this.samples.push({ t, m: metrics });
    if (this.samples.length > KEEP + 1) this.samples.splice(0, this.samples.length - KEEP - 1);
  }

  /**
   * The row's series: one point per sample and, when `live` ({t, m}: the
   * metrics at the current time, between two samples) is given, a last point
   * for exactly now, so a paused page (a tour stop, a seek) shows the values
   * of its own moment, not of the last 500 ms boundary (issue 16, point 4).
   */
  series(d, live = null) {
    const pts = this.samples.slice();
    const last = pts[pts.length - 1];
    if (live && (!last || live.t > last.t)) pts.push(live);
    const out = [];
    for (let i = 0; i < pts.length; i++) {
      const cur = pts[i];
      if (d.gauge) out.push(cur.m[d.src]);
      else if (i > 0) {
        // A rate over at least one sampling window, ending at this point.
        let j = i - 1;
        while (j > 0 && cur.t - pts[j].t < SAMPLE_MS) j--;
        const prev = pts[j];
        const dt = (cur.t - prev.t) / 1000;
        out.push(dt > 0 ? (cur.m[d.src] - prev.m[d.src]) / dt : 0);
      }
    }
    return out;
  }

  /**
   * `avail`: the core's availability view, for the latency rows (optional);
   * `live`: {t, m}, the metrics at the current time (optional). Folded
   * (`visible` false), the values are written but no sparkline is drawn:
   * they are drawn when the panel is shown again.
   */
  update(avail, live = null, visible = true) {
    for (const r of this.rows) {
      if (r.d.latency) {
        const raw = avail ? avail[r.d.latency] : null;
        const v = raw === null || raw === undefined ? raw : raw * (r.d.scale || 1);
        r.hist = r.hist || [];
        if (v !== null && v !== undefined && r.hist[r.hist.length - 1] !== v) r.hist.push(v);
        if (r.hist.length > KEEP) r.hist.splice(0, r.hist.length - KEEP);
        setText(r.value, v === null || v === undefined ? '–' : `${v < 10 ? v.toFixed(1) : Math.round(v)} ms`);
        const slow = Boolean(r.d.alarm && v > 1000);
        r.row.classList.toggle('alarm', slow);
        if (visible) draw(r.spark, r.hist, slow ? '#D55E00' : '#56B4E9');
        continue;
      }
      const data = this.series(r.d, live);
      const v = data.length ? data[data.length - 1] : 0;
      const shown = r.d.gauge ? String(v) : v === 0 ? '0/s' : `${v < 10 ? v.toFixed(1) : Math.round(v)}/s`;
      setText(r.value, shown);
      const recent = r.d.gauge ? v > 0 : data.slice(-20).some((x) => x > 0);
      r.row.classList.toggle('alarm', Boolean(r.d.alarm && recent));
      r.row.classList.toggle('active', !r.d.alarm && recent && v > 0);
      if (visible) draw(r.spark, data, r.d.alarm && recent ? '#D55E00' : '#56B4E9');
    }
  }
}

function draw(canvas, data, colour) {
  const ctx = canvas.getContext('2d');
  const { width: w, height: hgt } = canvas;
  ctx.clearRect(0, 0, w, hgt);
  ctx.strokeStyle = 'rgba(148,163,184,0.25)';
  ctx.beginPath();
  ctx.moveTo(0, hgt - 1.5);
  ctx.lineTo(w, hgt - 1.5);
  ctx.stroke();
  if (data.length < 2) return;
  const max = Math.max(1e-9, ...data);
  const step = w / (KEEP - 1);
  const x0 = w - (data.length - 1) * step;
  ctx.beginPath();
  data.forEach((v, i) => {
    const x = x0 + i * step;
    const y = hgt - 2 - (v / max) * (hgt - 5);
    if (i === 0) ctx.moveTo(x, y);
    else ctx.lineTo(x, y);
  });
  ctx.strokeStyle = colour;
  ctx.lineWidth = 1.5;
  ctx.stroke();
  ctx.lineTo(x0 + (data.length - 1) * step, hgt);
  ctx.lineTo(x0, hgt);
  ctx.closePath();
  ctx.fillStyle = colour + '33';
  ctx.fill();
}
