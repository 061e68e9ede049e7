// One card per partition: every replica's log as a row of cells (offsets on a
// shared ruler), coloured by leader epoch, records above the replica's high
// watermark hatched, LEO and HW marked, leader / ISR / epoch shown. A
// `truncated` trace event makes the removed cells visibly leave the row.

import { h, epochColour, setText, reducedMotion } from './util.js';

const PITCH = 17; // px per offset (cell 15 + gap 2)
const MAX_WINDOW = 48; // the view sends at most 48 cells per replica

export class PartitionsPanel {
  /** `onAction(action)`, when given, adds per-partition action buttons. */
  constructor(root, onAction = null) {
    this.root = root;
    this.onAction = onAction;
    this.cards = new Map();
    this.key = '';
    this.windowSize = 30;
  }

  measure() {
    const width = this.root.clientWidth || 600;
    // label column 112px, right info 92px (hidden when narrow), paddings.
    const narrow = width < 420;
    this.root.classList.toggle('narrow', narrow);
    const n = Math.floor((width - 112 - (narrow ? 0 : 96) - 30) / PITCH);
    this.windowSize = Math.max(8, Math.min(MAX_WINDOW, n));
  }

  build(view) {
    this.root.replaceChildren();
    this.cards.clear();
    this.measure();
    for (const p of view.partitions) {
      const name = `${p.topic}-${p.partition}`;
      const title = h('span.pname', { text: name });
      const leader = h('span.kv', { dataset: { k: 'leader' } });
      const epoch = h('span.kv', { dataset: { k: 'epoch' } });
      const isr = h('span.kv', { dataset: { k: 'isr' } });
      const badges = h('span.badges');
      const ruler = h('div.ruler');
      const rows = new Map();
      const rowsEl = h('div.rows');
      for (const r of p.replica_views) {
        const label = h('div.rlabel');
        const track = h('div.track', { style: { width: `${this.windowSize * PITCH}px` } });
        const slots = [];
        for (let i = 0; i < this.windowSize; i++) {
          const c = h('div.cell');
          c.style.left = `${i * PITCH}px`;
          track.append(c);
          slots.push(c);
        }
        const hw = h('div.marker.hw', { title: 'high watermark' });
        const leo = h('div.marker.leo', { title: 'log end offset' });
        track.append(hw, leo);
        const info = h('div.rinfo');
        const row = h('div.rrow', { dataset: { broker: r.broker } }, label, track, info);
        rowsEl.append(row);
        rows.set(r.broker, { row, label, track, slots, hw, leo, info, last: null });
      }
      const tools = this.onAction
        ? h('button.ptool', {
            type: 'button',
            text: '⇄ preferred',
            title: `Preferred leader election for ${name}: leadership goes back to the first replica (${p.replicas[0]}) if it is in the ISR (kafka-leader-election.sh --election-type PREFERRED)`,
            onclick: () => this.onAction({ elect_preferred: { topic: p.topic, partition: p.partition } }),
          })
        : null;
      const card = h(
        'section.pcard',
        { dataset: { partition: name } },
        h('header.phead', null, title, leader, epoch, isr, badges, tools),
        h('div.rulerrow', null, h('div.rlabel.muted', { text: 'offset' }), ruler),
        rowsEl,
      );
      this.root.append(card);
      this.cards.set(name, { card, leader, epoch, isr, badges, ruler, rows, rulerStart: -1 });
    }
  }

  update(view, generation) {
    const key = `${generation}|${view.partitions.map((p) => `${p.topic}-${p.partition}:${p.replica_views.length}`).join(',')}`;
    if (key !== this.key) {
      this.key = key;
      this.build(view);
    }
    const n = this.windowSize;
    for (const p of view.partitions) {
      const c = this.cards.get(`${p.topic}-${p.partition}`);
      if (!c) continue;
      setText(c.leader, p.leader == null ? 'Leader: none' : `Leader: broker ${p.leader}`);
      c.leader.classList.toggle('bad', p.leader == null);
      setText(c.epoch, `Leader epoch: ${p.leader_epoch}`);
      c.epoch.style.setProperty('--epoch', epochColour(p.leader_epoch));
      c.epoch.classList.add('epochkv');
      setText(c.isr, `ISR: {${p.isr.join(',')}}  min.insync=${p.min_insync_replicas}`);
      const badges = [];
      if (p.offline) badges.push(['OFFLINE', 'bad']);
      else if (p.under_min_isr) badges.push(['UNDER MIN ISR', 'bad']);
      else if (p.at_min_isr) badges.push(['AT MIN ISR', 'warn']);
      if (p.under_replicated && !p.offline) badges.push(['UNDER-REPLICATED', 'warn']);
      if (p.acked_records_lost > 0) badges.push([`${p.acked_records_lost} ACKED LOST`, 'bad']);
      const bkey = badges.map((b) => b[0]).join('|');
      if (c.badges.dataset.key !== bkey) {
        c.badges.dataset.key = bkey;
        c.badges.replaceChildren(...badges.map(([t, cls]) => h(`span.badge.${cls}`, { text: t })));
      }
      const end = Math.max(0, ...p.replica_views.map((r) => r.log_end_offset));
      const start = Math.max(0, end - n);
      c.start = start;
      if (c.rulerStart !== start) {
        c.rulerStart = start;
        const marks = [];
        for (let i = 0; i < n; i++) {
          const off = start + i;
          if (off % 5 === 0) marks.push(h('span', { text: off, style: { left: `${i * PITCH}px` } }));
        }
        c.ruler.replaceChildren(...marks);
      }
      for (const r of p.replica_views) {
        const row = c.rows.get(r.broker);
        if (!row) continue;
        const isLeader = p.leader === r.broker && r.alive;
        const role = !r.alive ? 'down' : isLeader ? 'leader' : r.role === 'leader' ? 'stale leader' : 'follower';
        const lkey = `${r.broker}|${role}|${r.in_isr}`;
        if (row.label.dataset.key !== lkey) {
          row.label.dataset.key = lkey;
          row.label.replaceChildren(
            h('b', { text: `B${r.broker}` }),
            h(`span.role.${role.replace(' ', '-')}`, { text: isLeader ? '★ leader' : role }),
            h(`span.isr.${r.in_isr ? 'in' : 'out'}`, {
              text: r.in_isr ? 'ISR' : 'out',
              title: r.in_isr ? 'in the ISR' : 'not in the ISR',
            }),
          );
        }
        row.row.classList.toggle('dead', !r.alive);
        row.row.classList.toggle('leader', isLeader);
        for (let i = 0; i < n; i++) {
          const off = start + i;
          const cell = row.slots[i];
          let cls = 'cell empty';
          let bg = '';
          if (off < r.log_end_offset && off >= r.first_cell) {
            const e = r.cells[off - r.first_cell];
            bg = epochColour(e);
            cls = off >= r.high_watermark ? 'cell rec uncommitted' : 'cell rec';
            cell.title = `offset ${off}, leader epoch ${e}${off >= r.high_watermark ? ', above the HW (not committed)' : ''}`;
          } else if (cell.title) cell.title = '';
          if (cell.className !== cls) cell.className = cls;
          if (cell.style.getPropertyValue('--c') !== bg) cell.style.setProperty('--c', bg);
        }
        const place = (el, off) => {
          const x = off - start;
          el.style.display = x < 0 || x > n ? 'none' : '';
          el.style.left = `${x * PITCH - 1}px`;
        };
        place(row.hw, r.high_watermark);
        place(row.leo, r.log_end_offset);
        setText(row.info, `LEO ${r.log_end_offset} · HW ${r.high_watermark}`);
        const cache = `leader-epoch cache: ${(r.epochs || []).map(([e, o]) => `${e} → ${o}`).join(', ')}`;
        if (row.info.title !== cache) row.info.title = cache;
        row.last = { first: r.first_cell, cells: r.cells, start };
      }
    }
  }

  /** React to trace events: show truncated records leaving. */
  onTrace(events) {
    for (const ev of events) {
      if (ev.event !== 'truncated') continue;
      const c = this.cards.get(`${ev.topic}-${ev.partition}`);
      const row = c?.rows.get(ev.broker);
      if (!row) continue;
      row.row.classList.remove('truncating');
      void row.row.offsetWidth;
      row.row.classList.add('truncating');
      const start = c.start ?? 0;
      const lo = Math.max(ev.to_offset, start);
      const hi = Math.min(ev.from_offset, start + this.windowSize);
      // prefers-reduced-motion: the records just vanish (no flying cells) and
      // the note stays 5 s without fading.
      const still = reducedMotion();
      for (let off = still ? hi : lo; off < hi; off++) {
        const k = off - lo;
        const x = off - start;
        let colour = '#888';
        const last = row.last;
        if (last && off >= last.first && off - last.first < last.cells.length) colour = epochColour(last.cells[off - last.first]);
        const g = h('div.cell.ghost', { style: { left: `${x * PITCH}px`, animationDelay: `${k * 60}ms` } });
        g.style.setProperty('--c', colour);
        g.addEventListener('animationend', () => g.remove());
        row.track.append(g);
      }
      const note = h('div.trunc-note', { text: `✂ truncated ${ev.from_offset} → ${ev.to_offset}` });
      if (still) setTimeout(() => note.remove(), 5000);
      else note.addEventListener('animationend', () => note.remove());
      row.track.append(note);
    }
  }

  resize() {
    this.key = '';
  }
}

/** Legend: epoch colours and markers. */
export function partitionLegend() {
  const epochs = [0, 1, 2, 3, 4, 5, 6].map((e) =>
    h('span.lg', null, h('i.cell.rec', { style: { '--c': epochColour(e) } }), `${e}`),
  );
  return h(
    'div.legend',
    null,
    h('span.lg.muted', { text: 'Leader epoch:' }),
    ...epochs,
    h('span.lg', null, h('i.cell.rec.uncommitted', { style: { '--c': epochColour(0) } }), 'above HW (uncommitted)'),
    h('span.lg', null, h('i.mk.hw'), 'high watermark'),
    h('span.lg', null, h('i.mk.leo'), 'log end offset'),
  );
}
