// Compare mode's drawing (loaded on demand, the first time compare mode is
// opened): the settings bar; the delta table, where what differs between the
// lanes comes first (acknowledged records lost, partition-s, each fault's
// RTO, the leader …) and what is the same folds into one line; one lane per
// settings set — its summary row, its own availability strip and recovery
// badges, a compact cluster map and the partitions (folded into lane A's
// while every lane's cluster and logs are identical); and the first
// divergence with both lanes' narration side by side. Only draws: the
// lanes themselves are compare.js. The renderers are handed in by the host
// (page or element), so this module (bundled with compare.js) adds no second
// copy of them. LANES_CSS is its stylesheet, added by the host when it loads.

import { laneWay } from './compare.js';
import { lazyReport } from './lab.js';

export { Compare, setForkBuilder, setLaneWorkers } from './compare.js';

/** An action as a reader says it: "crash broker 2", "produce 10 to orders-0". */
export function actionText(action) {
  const [k, v] = Object.entries(action || {})[0] || ['?', ''];
  const verb = k.replace(/_/g, ' ');
  if (typeof v === 'number') return `${verb} broker ${v}`;
  if (v && typeof v === 'object') {
    if (k === 'produce') return `produce ${v.count ?? 1} to ${v.topic}-${v.partition ?? 0}`;
    if ('broker' in v) return `${verb} broker ${v.broker} on ${v.topic}-${v.partition ?? 0}`;
    if ('topic' in v) return `${verb} ${v.topic}-${v.partition ?? 0}`;
  }
  return `${verb} ${typeof v === 'object' ? JSON.stringify(v) : v}`;
}

/** Compare mode's styles (the page's CSS variables; the host adds them once). */
export const LANES_CSS = `
.compare-panel { margin: 8px 12px 0; display: flex; flex-direction: column; gap: 8px; }
.compare-panel[hidden] { display: none; }
body.comparing .map-panel, body.comparing .parts-panel, body.comparing .overview-panel { display: none; }
.cmp-bar { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 8px; }
.cmp-label { font-size: 12px; font-weight: 650; text-transform: uppercase; letter-spacing: .6px; color: var(--h2); }
#compare-text { flex: 1 1 320px; min-width: 200px; background: var(--panel2); border: 1px solid var(--line); border-radius: 5px; padding: 3px 6px; color: var(--text); font-family: ui-monospace, monospace; font-size: 12px; }
.cmp-error { color: var(--bad-text); flex-basis: 100%; }
.cmp-error:empty { display: none; }
.lanes { display: grid; grid-template-columns: repeat(var(--lanes, 2), minmax(0, 1fr)); gap: 8px; align-items: start; }
.lanes:empty { display: none; }
.lane { border: 1px solid var(--line); border-radius: 8px; padding: 6px 8px; background: var(--panel2); min-width: 0; display: flex; flex-direction: column; gap: 6px; }
.lane-head { margin: 0; font-size: 13px; display: flex; gap: 8px; align-items: baseline; }
.lane-name { display: inline-block; min-width: 20px; text-align: center; border-radius: 4px; background: var(--accent); color: var(--panel); padding: 0 5px; }
/* Settings as written (the panel h2 upper-cases): lines break after a comma (<wbr>), never inside a key. */
.lane-set { font-size: 12px; color: var(--text2); text-transform: none; letter-spacing: 0; overflow-wrap: normal; word-break: keep-all; }
dl.lane-sum { margin: 0; display: flex; flex-wrap: wrap; gap: 4px 6px; }
dl.lane-sum .ls { display: flex; gap: 5px; align-items: baseline; padding: 1px 7px; border: 1px solid var(--line); border-radius: 10px; background: var(--panel); font-size: 11.5px; }
dl.lane-sum .tour-hl { outline-offset: 0; animation: none; }
dl.lane-sum dt { color: var(--muted); }
dl.lane-sum dd { margin: 0; font-weight: 650; font-variant-numeric: tabular-nums; }
dl.lane-sum .bad { border-color: var(--bad); background: var(--bad-bg); }
dl.lane-sum .bad dd { color: var(--bad-text); }
dl.lane-sum .warn dd { color: var(--warn-text); }
dl.lane-sum .good dd { color: var(--good-text); }
.lane .pcard { padding: 3px 6px 4px; }
body.comparing .avail-panel, .fl.comparing [data-panel=availability] { display: none; }
/* In compare mode the lanes show the map and partitions, so the main column
   below them holds only the metrics: the panels flow across the width
   instead, clients, narration and describe side by side, the metrics a strip
   above them (a tall column beside an empty one, tour 21). */
@media (min-width: 1001px) {
  body.comparing .grid { grid-template-columns: repeat(auto-fit, minmax(360px, 1fr)); grid-template-areas: none; }
  body.comparing .maincol, body.comparing .side { display: contents; }
  body.comparing .metrics-panel { grid-column: 1 / -1; }
  body.comparing .clients-panel { order: 1; } body.comparing .narr-panel { order: 2; } body.comparing .describe-panel { order: 3; }
}
.cmp-delta { border: 1px solid var(--line); border-radius: 8px; background: var(--panel2); padding: 4px 8px 6px; overflow-x: auto; }
.cmp-delta table { border-collapse: collapse; font-size: 12.5px; font-variant-numeric: tabular-nums; }
.cmp-delta caption { text-align: left; font-weight: 650; padding: 2px 0 4px; }
.cmp-delta th, .cmp-delta td { text-align: left; padding: 2px 10px 2px 4px; vertical-align: baseline; }
.cmp-delta thead th { font-weight: 600; font-size: 12px; color: var(--text2); border-bottom: 1px solid var(--line); }
.cmp-delta tbody th { font-weight: 500; color: var(--text2); }
.cmp-delta tr.differs th { color: var(--text); font-weight: 650; }
.cmp-delta tr.differs td { font-weight: 700; background: var(--panel); }
.cmp-delta tr.differs th:first-child { box-shadow: inset 3px 0 0 #CC79A7; padding-left: 8px; }
/* A ringed row keeps its ring inside: neighbouring rows' rings would cross each other's text. */
.cmp-delta tr.tour-hl { outline-offset: -2px; animation: none; }
.cmp-delta td.bad { color: var(--bad-text); }
.cmp-delta td.good { color: var(--good-text); }
.cmp-delta td.warn { color: var(--warn-text); }
.cmp-same, .cmp-near { margin: 4px 0 0; font-size: 11.5px; color: var(--text2); }
.cmp-same b { font-weight: 600; }
.lane-avail .avail-legend .lg:not(.muted), .lane-avail .avail-def { display: none; }
.lane-avail .avail-legend { margin: 1px 0 2px; }
.cmp-legend { font-size: 11px; margin: 0; }
.lane-fork { font-size: 12px; color: var(--text); text-transform: none; letter-spacing: 0; font-weight: 600; }
.fork-tag { display: inline-block; font-size: 10.5px; font-weight: 700; text-transform: uppercase; letter-spacing: .5px; color: var(--text); border: 1px solid #CC79A7; border-radius: 8px; padding: 0 6px; margin-right: 2px; }
.lane-part { margin: 0; font-size: 11.5px; color: var(--text2); }
.lane-part b { color: var(--text); }
.lane-drop { margin-left: auto; font-size: 11px; padding: 0 6px; }
.lane[data-fork] { border-color: #CC79A7; }
.tl-mark.fork { background: #CC79A7; height: 10px; width: 3px; top: -2px; }
.menu-note { font-size: 11.5px; color: var(--text); padding: 3px 6px; margin: 0 0 4px; border-left: 3px solid #CC79A7; background: var(--panel2); border-radius: 3px; max-width: 240px; }
/* A lane catching up with the lead's time (compare.js step): its bar, and its figures from before greyed
   out, as are the table and the divergence: grey keeps each text's contrast (axe), a lowered opacity did not. */
.lane-busy { margin: 0; font-size: 12px; font-weight: 600; color: var(--strong, var(--text)); display: flex; flex-wrap: wrap; align-items: center; gap: 4px 8px; }
.lane-busy[hidden] { display: none; }
.lane-bar { display: inline-block; width: 100px; height: 8px; border-radius: 4px; box-shadow: inset 0 0 0 1px var(--ctl, var(--line)); overflow: hidden; }
.lane-bar > span { display: block; width: 0; height: 100%; background: var(--ctl, var(--accent)); }
.lane.behind > :not(.lane-head):not(.lane-busy), .cmp-delta.stale, .cmp-div.stale { filter: grayscale(1); }
.lane.behind, .cmp-delta.stale, .cmp-div.stale { border-style: dashed; }
.cmp-wait { margin: 0; font-size: 12px; font-weight: 600; }
.cmp-wait[hidden] { display: none; }
.lane-same { margin: 0; font-size: 12px; color: var(--text2); border: 1px dashed var(--line2); border-radius: 6px; padding: 6px 8px; }
#compare-preset { max-width: 100%; }
.sw-base { display: inline-block; line-height: 1.5; align-self: center; font-size: 11px; color: var(--text); background: var(--hi-bg, var(--panel2)); border: 1px solid #CC79A7; border-radius: 9px; padding: 0 7px; white-space: normal; }
.cmp-div { border: 1px solid var(--line); border-left: 4px solid var(--hi); border-radius: 8px; padding: 6px 10px; background: var(--panel2); }
.cmp-div-head { display: flex; gap: 10px; align-items: center; font-weight: 650; margin-bottom: 4px; }
.cmp-sides { display: grid; grid-template-columns: 1fr 1fr; gap: 8px; font-size: 12.5px; }
.cmp-side { display: flex; flex-direction: column; gap: 2px; }
.cmp-note { margin: 0; font-size: 11.5px; }
/* Where the lanes part: its own colour and a label above the track, drawn over the slider's thumb so it shows at the stops that name it. */
.tl-mark.diverge { background: #CC79A7; width: 3px; top: -5px; height: calc(100% + 10px); z-index: 2; pointer-events: none; box-shadow: 0 0 0 1px var(--bg); }
.tl-mark.diverge::after { content: '≠'; position: absolute; left: 5px; top: -3px; font-size: 9px; font-weight: 700; color: #CC79A7; white-space: nowrap; }
@media (max-width: 640px) {
  .lanes { grid-template-columns: minmax(0, 1fr); }
  .cmp-delta table { width: 100%; table-layout: fixed; }
  .cmp-delta th, .cmp-delta td { overflow-wrap: anywhere; padding-right: 4px; }
  .cmp-sides { grid-template-columns: minmax(0, 1fr); }
}
`;

const PRESETS = [
  ['acks=1|acks=all', 'acks=1 vs acks=all'],
  ['unclean.leader.election.enable=false|unclean.leader.election.enable=true', 'unclean election off vs on'],
  ['min.insync.replicas=1|min.insync.replicas=2', 'min.insync.replicas 1 vs 2'],
  ['eligible.leader.replicas.enable=true|eligible.leader.replicas.enable=false', 'ELR on vs off'],
  ['sim.truncation=leader_epoch|sim.truncation=high_watermark', 'truncate by leader epoch vs to the HW (pre-KIP-101)'],
];
const PARTS = 2; // partitions drawn per lane
const SUMMARY_EVERY_MS = 250; // wall ms between summary refreshes while playing

/**
 * What a lane's map and partition cards draw, without the lane's settings
 * (each partition's config differs by design): equal keys, identical pictures.
 */
const mapKey = (v) => JSON.stringify([
  v.brokers,
  v.partitions.map((p) => [p.leader, p.leader_epoch, p.isr, p.elr, p.offline, p.replica_views]),
  v.messages,
]);

const secs = (ms) => `${(ms / 1000).toFixed(ms % 1000 ? 3 : 0)} s`;

/** Time figures within this share of the largest are about the same (drawDelta). */
const NEAR = 0.01;
/** Every lane has a number, and the spread is at most NEAR of the largest. */
function near(nums) {
  if (nums.some((n) => typeof n !== 'number')) return false;
  const max = Math.max(...nums);
  return max > 0 && max - Math.min(...nums) <= NEAR * max;
}

/**
 * The summary row of a lane's report (the numbers the tours quote): [key,
 * label, value shown, class, and for a time figure its number, which
 * drawDelta compares within NEAR].
 */
export function laneSummary(r) {
  const av = r.availability;
  // first_partition: partitions[0] built alone (a lazy report's field, the
  // fast build's); a plain report has only partitions.
  const p = r.first_partition ?? r.partitions[0];
  const p99 = av.produce_latency_ms?.p99;
  return [
    ['lost', 'acked lost', String(r.acked_records_lost), r.acked_records_lost > 0 ? 'bad' : 'good'],
    // Acknowledged so far (every producer): at a stop between two lanes'
    // acknowledgements (tour 13, 4.004 s: acks=1 has its record, acks=all
    // waits) this is the figure that differs.
    ['acked', 'acked', String((r.producers || []).reduce((n, p) => n + p.acked, 0)), ''],
    ['unavailable', 'unavailable', `${(av.unavailable_ms / 1000).toFixed(3)} partition-s`, av.unavailable_ms > 0 ? 'warn' : '', av.unavailable_ms],
    ...av.faults.map((f, i) => {
      const nothing = !f.partition_count && !f.stalled_partition_count;
      return [
        `rto-${i}`,
        `${f.action} ${f.brokers.join(',')} @ ${secs(f.at_ms)} → recovery`,
        // Nothing made unavailable: nothing to recover (the report's RTO is then 0).
        nothing ? 'nothing to recover' : f.rto_ms == null ? 'no write yet' : `${f.rto_ms} ms`,
        f.rto_ms == null ? 'warn' : '',
        nothing ? null : f.rto_ms,
      ];
    }),
    ['p99', 'produce p99', p99 == null ? '–' : `${p99} ms`, '', p99],
    ['leader', `${p ? `${p.topic}-${p.partition}` : ''} leader`, p?.leader == null ? 'none' : `broker ${p.leader}`, p?.leader == null ? 'bad' : ''],
    // Offline (no leader): no replica serves a high watermark; each replica's own shows on its row.
    ['hw', 'HW', !p ? '–' : p.leader == null ? 'none (offline)' : String(p.high_watermark), p && p.leader == null ? 'bad' : ''],
    ...consumerSummary(r),
  ];
}

/**
 * A lane's consumers, when one belongs to a group (a consumer setting may be
 * all that differs between lanes): each group's committed offsets as its
 * coordinator holds them (with their leader epoch; a crashed consumer's
 * group keeps them), its positions, the truncations it detected
 * (KIP-320), and the report's delivery: records consumed twice, and committed
 * records never consumed.
 */
function consumerSummary(r) {
  const ks = (r.consumers || []).filter((k) => k.group);
  if (!ks.length) return [];
  const rows = [];
  const groups = new Set();
  for (const k of ks) {
    // Once per group (its first member names the rows): the group's commit as
    // its coordinator holds it, which outlives the consumer's process, and,
    // for a subscribing group, its state as the coordinator sees it: the
    // classic generation or the KIP-848 group epoch.
    if (!groups.has(k.group.group_id)) {
      groups.add(k.group.group_id);
      if ('coordinator_view' in k.group) {
        // Null while no running broker leads the group's offsets partition.
        const v = k.group.coordinator_view;
        const epoch = k.group.member?.protocol === 'consumer' ? 'epoch' : 'generation';
        const state = v ? `${v.state} · ${epoch} ${v.generation} · ${v.members.length} members` : 'coordinator unavailable';
        rows.push([`group-${k.id}`, `${k.group.group_id} group`, state, v?.state === 'Stable' ? '' : 'warn']);
      }
      const stored = k.group.stored;
      const committed = stored == null ? 'coordinator unavailable' : stored.map(([tp, off, ep]) => `${tp} @ ${off}${ep == null ? '' : ` · epoch ${ep}`}`).join(', ') || 'none';
      rows.push([`committed-${k.id}`, `${k.group.group_id} committed`, committed, stored == null ? 'warn' : '']);
    }
    const pos = k.running === false ? 'crashed' : k.positions.map(([tp, off]) => `${tp} @ ${off}`).join(', ');
    rows.push([`position-${k.id}`, `${k.id} position`, pos || '–', k.running === false ? 'warn' : '']);
    rows.push([`truncations-${k.id}`, `${k.id} truncation detected`, String(k.truncations_detected), k.truncations_detected > 0 ? 'warn' : '']);
  }
  const sum = (f) => (r.delivery || []).reduce((n, d) => n + d[f].count, 0);
  const twice = sum('consumed_twice');
  const never = sum('never_consumed');
  rows.push(['twice', 'consumed twice', String(twice), twice > 0 ? 'warn' : '']);
  // The report's never_consumed: committed records no consumer has read so far (at the end, never).
  rows.push(['never', 'not consumed', String(never), never > 0 ? 'bad' : '']);
  return rows;
}

export class LanesView {
  /**
   * deps: { h, fmtTime, BrokerMap, PartitionsPanel, AvailabilityPanel } (the host's renderers);
   * opts: { compare, onApply(text), onBrokerClick(id, anchor), onSeek(t), onClose() }.
   */
  constructor(root, deps, opts) {
    this.root = root;
    this.d = deps;
    this.o = opts;
    this.lanes = [];
    this.key = '';
    const h = deps.h;
    this.input = h('input', {
      id: 'compare-text',
      type: 'text',
      spellcheck: false,
      placeholder: 'acks=1|acks=all,min.insync.replicas=2',
      'aria-label': 'Compare lanes: settings split by |, each lane KEY=VALUE split by commas',
      onkeydown: (e) => {
        if (e.key === 'Enter') this.apply();
      },
    });
    this.preset = h(
      'select',
      { id: 'compare-preset', 'aria-label': 'Compare presets', onchange: () => {
        if (this.preset.value) this.input.value = this.preset.value;
        this.apply();
      } },
      h('option', { value: '', text: 'presets…' }),
      ...PRESETS.map(([v, t]) => h('option', { value: v, text: t })),
    );
    this.error = h('span.cmp-error', { role: 'status' });
    this.bar = h(
      'div.cmp-bar',
      null,
      h('label.cmp-label', { for: 'compare-text', text: 'Compare' }),
      this.input,
      this.preset,
      h('button', { id: 'compare-apply', type: 'button', text: 'Apply', onclick: () => this.apply() }),
      h('button', { id: 'compare-leave', type: 'button', text: 'Leave compare', onclick: () => this.o.onApply(null) }),
      this.error,
    );
    // .lane-sum: a tour's summary:KEY highlight rings the delta row too.
    this.delta = h('section.cmp-delta.lane-sum', { 'aria-label': 'What differs between the lanes', tabindex: 0 });
    this.legend = h('div.cmp-legend');
    this.grid = h('div.lanes');
    this.divBox = h('div.cmp-div', { hidden: true });
    // While a lane catches up (compare.js step), the figures of that lane, the table and the divergence are from before.
    this.wait = h('p.cmp-wait', { role: 'status', hidden: true });
    this.note = h('p.cmp-note.muted', { text: 'Every fault and action applies to all settings lanes. A fork lane keeps lane A\u2019s past up to its fork and its own future: an action later than the fork applies to lane A only. Each lane has its own availability strip and recovery badges; clients, metrics, describe and narration below show lane A.' });
    root.replaceChildren(this.bar, this.wait, this.delta, this.legend, this.grid, this.divBox, this.note);
  }

  apply() {
    this.error.textContent = '';
    this.o.onApply(this.input.value).then((msg) => {
      this.error.textContent = msg || '';
    });
  }

  focus() {
    this.input.focus();
  }

  build(compare) {
    const { h, fmtTime, BrokerMap, PartitionsPanel, AvailabilityPanel } = this.d;
    const labs = compare.labs();
    this.grid.style.setProperty('--lanes', labs.length);
    this.lanes = labs.map((lab, i) => {
      const name = 'ABCD'[i];
      const map = h('div.lane-map');
      const parts = h('div.lane-parts');
      const summary = h('dl.lane-sum');
      const avail = h('div.lane-avail', { dataset: { lane: name } });
      const same = h('p.lane-same', { hidden: true, text: 'Cluster and logs: the same as lane A\u2019s at this time, so they are drawn once, in lane A.' });
      const fk = compare.forkOf(i);
      const what = fk && `what if ${actionText(fk.action)} at ${fmtTime(fk.at_ms)}`;
      // A fork lane says what it changed and where it parts from its parent (drawParting).
      const part = i > 0 ? h('p.lane-part', { 'aria-live': 'polite' }) : null;
      // How far the lane's catch-up got (drawBusy): shown only while it is behind.
      const busyText = h('span');
      const busyBar = h('span.lane-bar', { role: 'progressbar', 'aria-label': `Lane ${name} computing`, 'aria-valuemin': '0', 'aria-valuemax': '100' }, h('span'));
      const busy = h('p.lane-busy', { hidden: true, dataset: { lane: name } }, busyText, busyBar);
      const head = fk
        ? h('h2.lane-head', null, h('span.lane-name', { text: name }),
          h('span.lane-fork', null, h('b.fork-tag', { text: 'fork' }), ` ${what} · from lane ${'ABCD'[fk.parent]}`),
          h('button.lane-drop', { type: 'button', text: 'Remove', 'aria-label': `Remove lane ${name} (and the lanes forked from it)`, onclick: () => this.o.onDropFork?.(i) }))
        : h('h2.lane-head', null, h('span.lane-name', { text: name }), h('code.lane-set', null, ...(compare.settings[i] || 'as is').split(/(?<=,)/).flatMap((part, j) => (j ? [h('wbr'), part] : [part]))));
      const el = h(
        'section.lane',
        { dataset: fk ? { lane: name, fork: String(i) } : { lane: name }, 'aria-label': fk ? `Lane ${name}: ${what}, a fork of lane ${'ABCD'[fk.parent]}` : `Lane ${name}: ${compare.settings[i] || 'the scenario as it is'}` },
        head,
        busy,
        ...(part ? [part] : []),
        summary,
        avail,
        same,
        map,
        parts,
      );
      return {
        el,
        part,
        partKey: null,
        summary,
        same,
        mapBox: map,
        partsBox: parts,
        folded: false,
        avail: new AvailabilityPanel(avail, { onSeek: this.o.onSeek }),
        map: new BrokerMap(map, { onBrokerClick: (id, anchor) => this.o.onBrokerClick(id, anchor, i), fit: true }),
        parts: new PartitionsPanel(parts),
        sumKey: '',
        busy,
        busyText,
        busyBar,
        behind: false,
      };
    });
    this.grid.replaceChildren(...this.lanes.map((l) => l.el));
    this.baseNote(compare);
    // One legend for every lane's strip (each strip keeps its own peak line).
    const legend = this.lanes[0].avail.legend.cloneNode(true);
    legend.querySelector('.lg.muted:not(.avail-def)')?.remove();
    this.legend.replaceChildren(legend);
    this.deltaKey = '';
  }

  /** Draw every lane (after compare.sync()). */
  update(compare, { speed = 0.05, playing = false } = {}) {
    if (!compare.active) {
      this.baseNote(null);
      this.grid.replaceChildren();
      this.delta.replaceChildren();
      this.legend.replaceChildren();
      this.divBox.hidden = true;
      this.key = '';
      return;
    }
    if (document.activeElement !== this.input && this.input.value !== (compare.text ?? '')) this.input.value = compare.text ?? '';
    const labs = compare.labs();
    if (this.key !== compare.key) {
      this.key = compare.key;
      this.build(compare);
    }
    // A lane still on its way to the lead's time (compare.js step) is not
    // read: its world is half-way there. It shows how far it got, and what
    // it showed before is greyed out, as are the table and the divergence.
    const behind = labs.map((lab) => !!laneWay(lab, labs[0]));
    const late = behind.some(Boolean);
    const wall = performance.now();
    // The first update after every lane landed draws their figures at once.
    const fresh = !playing || this.wasLate || !(wall - (this.sumAt || 0) < SUMMARY_EVERY_MS);
    this.wasLate = late;
    if (fresh) this.sumAt = wall;
    this.drawWait(labs, behind);
    const views = labs.map((lab, i) => (behind[i] ? null : lab.view(PARTS)));
    // While every lane's cluster and logs are the same, lanes B… fold theirs into lane A's.
    const keys = views.map((v) => v && mapKey(v));
    const fold = keys.every((k) => k === keys[0]);
    this.lanes.forEach((l, i) => {
      const f = fold && i > 0;
      if (late || f === l.folded) return;
      l.folded = f;
      l.same.hidden = !f;
      l.mapBox.hidden = f;
      l.partsBox.hidden = f;
    });
    // Widths before any write (no forced layout).
    this.lanes.forEach((l, i) => {
      if (behind[i]) return;
      if (!l.folded) l.map.measure();
      l.avail.measure();
    });
    // Each figure of the summary built alone where the core can (lazyReport):
    // the whole report of a 20,000-partition lane is 130-250 ms, of which the
    // summary reads one partition (issue 63).
    const reports = fresh ? labs.map((lab, i) => (behind[i] ? null : lazyReport(lab))) : null;
    labs.forEach((lab, i) => {
      const l = this.lanes[i];
      this.drawBusy(l, lab, behind[i], labs[0]);
      if (behind[i]) return;
      const view = views[i];
      if (!l.folded) {
        // Built once per history: a seek updates the lane as a frame does.
        l.map.update(view, speed, lab.history, lab.generation);
        l.parts.update(view, lab.history);
      }
      l.avail.update(lab.core.availability(lab.endMs(), l.avail.buckets()));
      if (fresh) this.drawSummary(l, reports[i]);
    });
    if (fresh && !late) this.drawDelta(compare, reports, views[0].now_ms);
    this.delta.classList.toggle('stale', late);
    this.divBox.classList.toggle('stale', late);
    if (late) return;
    this.drawDivergence(compare);
    this.drawParting(compare);
  }

  /**
   * A frame of the lanes' catch-up (compare.js step) with nothing else
   * changed: only the bars move; a lane that just landed is drawn in full.
   */
  progress(compare) {
    const labs = compare.labs();
    const behind = labs.map((lab) => !!laneWay(lab, labs[0]));
    if (this.key !== compare.key || this.lanes.some((l, i) => l.behind && !behind[i])) return this.update(compare);
    this.drawWait(labs, behind);
    labs.forEach((lab, i) => this.drawBusy(this.lanes[i], lab, behind[i], labs[0]));
  }

  /** The line above the table while lanes catch up: which, and that what shows is from before. */
  drawWait(labs, behind) {
    const names = labs.map((_, i) => 'ABCD'[i]).filter((_, i) => behind[i]);
    const text = names.length
      ? `Lane${names.length > 1 ? 's' : ''} ${names.join(', ')} computing: ${names.length > 1 ? 'their' : 'its'} figures, the table and the divergence below are from before (greyed out) until ${names.length > 1 ? 'they reach' : 'it reaches'} ${this.d.fmtTime(labs[0].now())}.`
      : '';
    if (text === this.waitText) return;
    this.waitText = text;
    this.wait.hidden = !text;
    this.wait.textContent = text;
  }

  /** Lane l's catch-up: "Lane B: computing … 12.4 s of 30.0 s" and its bar, or nothing once landed. */
  drawBusy(l, lab, behind, lead) {
    if (behind !== l.behind) {
      l.behind = behind;
      l.busy.hidden = !behind;
      l.el.classList.toggle('behind', behind);
      if (behind) l.el.setAttribute('aria-busy', 'true');
      else l.el.removeAttribute('aria-busy');
    }
    if (!behind) return;
    const { target, at } = laneWay(lab, lead);
    const of = `${(at / 1000).toFixed(1)} s of ${(target / 1000).toFixed(1)} s`;
    const pct = target > 0 ? Math.round((100 * at) / target) : lab.unbuilt ? 0 : 100;
    // A Worker makes its way (compare.js sendAway): said, as it leaves this core free.
    l.busyText.textContent = `Lane ${l.el.dataset.lane}: computing${lab.away ? ' on another core' : ''} … ${of}`;
    l.busyBar.firstChild.style.width = `${pct}%`;
    l.busyBar.setAttribute('aria-valuenow', String(pct));
    l.busyBar.setAttribute('aria-valuetext', of);
  }

  /**
   * The page's header switches are the base every lane starts from; in
   * compare mode they say so and name the keys the lanes set for themselves
   * (tour 12's unclean box stays unticked: lane B's own setting turns it on).
   */
  baseNote(compare) {
    const sw = this.root.ownerDocument.getElementById('switches');
    if (!sw || !this.root.isConnected || this.root.getRootNode() !== this.root.ownerDocument) return;
    sw.querySelector('.sw-base')?.remove();
    if (!compare) return;
    const keys = [...new Set(compare.settings.flatMap((l) => l.split(',').map((kv) => kv.split('=')[0].trim()).filter(Boolean)))];
    sw.prepend(this.d.h('span.sw-base', {
      text: `base of every lane${keys.length ? ` · each lane sets its own ${keys.join(', ')}` : ''}`,
      title: 'Compare mode: these switches are the base; each lane applies its own settings on top (see each lane\u2019s heading)',
    }));
  }

  /**
   * The lanes' difference first: one row per summary figure, those that
   * differ between lanes at the top (marked ≠ and highlighted), those that
   * are the same folded into one line under the table.
   */
  drawDelta(compare, reports, now) {
    const { h, fmtTime } = this.d;
    const per = reports.map((r) => new Map(laneSummary(r).map(([k, label, value, cls, num]) => [k, { label, value, cls, num }])));
    const order = [];
    for (const m of per) for (const k of m.keys()) if (!order.includes(k)) order.push(k);
    const rows = order.map((k) => {
      const cells = per.map((m) => m.get(k));
      const label = cells.find(Boolean).label;
      const values = cells.map((c) => c?.value ?? '–');
      const differs = values.some((v) => v !== values[0]);
      return { k, label, cells, values, differs, near: differs && near(cells.map((c) => c?.num)) };
    });
    const differ = rows.filter((r) => r.differs && !r.near);
    const close = rows.filter((r) => r.near);
    const same = rows.filter((r) => !r.differs);
    const parted = !!compare.div && compare.div.at_ms <= now;
    const key = JSON.stringify([now, compare.key, parted && compare.div.at_ms, rows.map((r) => [r.k, r.label, r.values])]);
    if (key === this.deltaKey) return;
    this.deltaKey = key;
    const names = compare.settings.map((s, i) => {
      const fk = compare.forkOf(i);
      return fk ? `${'ABCD'[i]} · what if ${actionText(fk.action)}` : `${'ABCD'[i]} · ${s || 'as is'}`;
    });
    const table = differ.length
      ? h('table', null,
        h('caption', { text: `What differs between the lanes at ${fmtTime(now)}` }),
        h('thead', null, h('tr', null, h('th', { scope: 'col', text: 'figure' }), ...names.map((n) => h('th', { scope: 'col', text: `lane ${n}` })))),
        h('tbody', null, ...differ.map((r) => h('tr.differs', { dataset: { k: r.k } },
          h('th', { scope: 'row' }, h('span', { 'aria-hidden': 'true', text: '\u2260 ' }), r.label),
          ...r.cells.map((c) => h(`td${c?.cls ? `.${c.cls}` : ''}`, { text: c?.value ?? '–' })),
        ))),
      )
      : h('p.cmp-same', null, h('b', { text: `No difference at ${fmtTime(now)}: ` }), parted
        // The lanes' events have parted (the box below), but no summary
        // figure has moved yet: say so, not "one run" (issue 62, tour 13).
        ? `no summary figure differs yet, though the lanes' events part at ${fmtTime(compare.div.at_ms)} (below).`
        : 'the lanes are one run so far.');
    const sameLine = differ.length && same.length
      ? h('p.cmp-same', null, h('b', { text: 'The same in every lane: ' }), same.map((r) => `${r.label} ${r.values[0]}`).join(' · '))
      : null;
    // A time figure the lanes give within NEAR of each other is not the
    // settings' doing: a setting that changes other traffic (a consumer's
    // fetches, say) moves events by a millisecond or so, and with them the
    // availability figures. Shown as about the same, with its range, not ≠
    // (issue 62: tour 15's lanes, which differ only in consumer settings).
    const nearLine = close.length
      ? h('p.cmp-near', null, h('b', { text: `About the same in every lane (within ${NEAR * 100} %): ` }),
        ...close.flatMap((r, i) => {
          const nums = r.cells.map((c) => c.num);
          const lo = r.cells[nums.indexOf(Math.min(...nums))].value;
          const hi = r.cells[nums.indexOf(Math.max(...nums))].value;
          return [i ? ' · ' : '', h('span', { dataset: { k: r.k }, text: `${r.label} ${lo} to ${hi}` })];
        }))
      : null;
    this.delta.dataset.differs = String(differ.length);
    this.delta.replaceChildren(table, ...(sameLine ? [sameLine] : []), ...(nearLine ? [nearLine] : []));
  }

  drawSummary(l, report) {
    const h = this.d.h;
    const rows = laneSummary(report);
    const key = JSON.stringify(rows);
    if (key === l.sumKey) return;
    l.sumKey = key;
    l.summary.replaceChildren(
      ...rows.map(([k, label, value, cls]) => h(`div.ls${cls ? `.${cls}` : ''}`, { dataset: { k } }, h('dt', { text: label }), h('dd', { text: value }))),
    );
  }

  drawDivergence(compare) {
    const { h, fmtTime } = this.d;
    const d = compare.div;
    const key = d ? `${d.at_ms}|${d.lane}|${compare.key}` : '';
    if (key === this.divKey) return;
    this.divKey = key;
    this.divBox.hidden = !d;
    if (!d) return;
    const name = 'ABCD'[d.lane];
    const from = 'ABCD'[d.parent ?? 0];
    const side = (lane, e) =>
      h('div.cmp-side', null, h('b', { text: `Lane ${lane}` }), h('span', { text: e ? `${fmtTime(e.at_ms)}  ${e.text}` : '(no event here)' }));
    this.divBox.replaceChildren(
      h('div.cmp-div-head', null,
        h('span', { text: `Lanes ${from} and ${name} diverge at ${fmtTime(d.at_ms)}` }),
        h('button', { id: 'compare-jump', type: 'button', text: `Go to ${fmtTime(d.at_ms)}`, onclick: () => this.o.onSeek(d.at_ms) }),
      ),
      h('div.cmp-sides', null, side(from, d.a), side(name, d.b)),
    );
  }

  /** Under each lane's heading: where it parts from the lane it is compared with, so far. */
  drawParting(compare) {
    const { h, fmtTime } = this.d;
    this.lanes.forEach((l, i) => {
      if (!l.part) return;
      const d = compare.divOf(i);
      const from = 'ABCD'[compare.parentOf(i)];
      const key = d ? `${d.at_ms}|${from}` : from;
      if (key === l.partKey) return;
      l.partKey = key;
      l.part.replaceChildren(...(d
        ? ['Parts from lane ', h('b', { text: from }), ' at ', h('b', { text: fmtTime(d.at_ms) }), `: ${d.b ? d.b.text : 'lane ' + from + ' has an event this lane has not'}`]
        : [`The same run as lane ${from} so far.`]));
    });
  }

  tick() {
    for (const l of this.lanes) l.map.tick();
  }

  resize() {
    for (const l of this.lanes) {
      l.map.resize();
      l.parts.resize();
      l.avail.measure();
    }
  }
}

// ---- the page's forks ("what if … here?", issue 65) -------------------------
// app.js delegates here, so the page's first load carries none of it: only an
// action in "what if" mode, a fork() call or a link with forks= needs it.

const $ = (id) => document.getElementById(id);

/** Show or hide the lanes as compare mode is on or off, and draw. */
function showState(app) {
  const on = app.compare.active;
  document.body.classList.toggle('comparing', on);
  $('compare').hidden = !on;
  app.draw();
}

export const pageForks = {
  /**
   * Fork lane `from` (0: lane A) at `at` with `action`: a new lane whose
   * run is that lane's up to `at`, then the action. A bad action or a
   * fifth lane is an Error (nothing changes); resolves to the new lane's
   * { lane, from, at_ms, action }, also sent as the `fork` event.
   */
  async fork(app, at, action, from = 0) {
    const c = app.compare;
    try {
      const t = Number(at);
      if (!Number.isInteger(t) || t < 0) throw new Error(`fork: expected a time in ms (a whole number ≥ 0), got ${at}`);
      if (!c.active && from !== 0) throw new Error(`fork: no lane ${'ABCD'[from] ?? from} to fork`);
      c.addFork(from, t, action);
    } finally {
      showState(app);
    }
    const i = c.labs().length - 1;
    const fk = c.forkOf(i);
    const detail = { lane: 'ABCD'[i], from: 'ABCD'[fk.parent], at_ms: fk.at_ms, action: fk.action };
    app.events.emit('fork', detail);
    return detail;
  },

  /** The fork lanes a link gives. */
  setForks(app, list) {
    try {
      app.compare.setForks(list);
    } finally {
      showState(app);
    }
  },

  /** Remove fork lane i and the lanes forked from it. */
  dropFork(app, i) {
    const c = app.compare;
    const k = c.settingsLanes;
    const gone = new Set([i]);
    const kept = [];
    c.forks.forEach((f, j) => {
      if (gone.has(f.parent)) gone.add(k + j);
      else if (!gone.has(k + j)) kept.push({ ...f, parent: f.parent - [...gone].filter((g) => g < f.parent).length });
    });
    pageForks.setForks(app, kept);
  },

  /**
   * "What if KEY=VALUE?": a setting is the cluster's config from t = 0, so
   * its lane is a settings lane (lane A's settings plus this one) beside the
   * others; where it first matters is its divergence. Fork lanes stay.
   */
  async forkSetting(app, key, value) {
    try {
      const c = app.compare;
      const k = c.active ? c.settingsLanes : 1;
      const lanes = c.text ? c.settings.slice(0, k) : [app.lab.laneSettings ?? ''];
      const mine = [lanes[0], `${key}=${value}`].filter(Boolean).join(',');
      const forks = c.forks.map((f) => ({ ...f, parent: f.parent >= k ? f.parent + 1 : f.parent }));
      if (lanes.length + 1 + forks.length > 4) throw new Error('what if: at most 4 lanes (A to D); remove a lane first');
      await app.setCompare([...lanes, mine].join('|'));
      if (forks.length) pageForks.setForks(app, forks);
    } catch (e) {
      app.showError(e.message);
    }
    app.afterRestore();
  },
};
