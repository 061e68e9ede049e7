// One card per partition: every replica's log as a row of cells (offsets on a
// shared ruler), coloured by leader epoch, records above the replica's high
// watermark hatched, LEO and HW marked, leader / ISR / epoch shown. A
// `truncated` trace event makes the removed cells visibly leave the row.
//
// The log view is navigable (issue 16, point 3): a minimap of the whole log
// (the longest replica's epochs as bands, the leader's HW, the visible window)
// moves the window (click, drag, arrow keys, Home/End; a sideways wheel on the
// rows too); each row marks where its replica's epoch cache starts an epoch;
// `reveal(name, offset)` brings an offset into view (tour stops use it). The
// view sends only the last 48 cells of each replica; older cells take their
// epoch from the replica's epoch cache, which says exactly that.

import { h, patch, epochColour, setText, reducedMotion } from './util.js';

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
    this.pins = new Map(); // partition name → first offset shown (absent: follow the log end)
  }

  /** Show `offset` of partition `name` (a tour stop's evidence). */
  reveal(name, offset) {
    this.pins.set(name, Math.max(0, offset - Math.floor(this.windowSize / 3)));
    this.redraw();
  }

  /** Move a partition's window to start at `start` (null: follow the log end). */
  pin(name, start) {
    if (start == null) this.pins.delete(name);
    else this.pins.set(name, Math.max(0, Math.round(start)));
    this.redraw();
  }

  redraw() {
    if (this.last) this.update(...this.last);
  }

  measure() {
    const width = this.root.clientWidth || 600;
    // label column 112px, right info 92px, paddings; when narrow, label and
    // info share a line above the track, which takes the whole width.
    const narrow = width < 520;
    this.root.classList.toggle('narrow', narrow);
    const n = Math.floor((width - (narrow ? 0 : 112 + 96) - 30) / PITCH);
    this.windowSize = Math.max(8, Math.min(MAX_WINDOW, n));
  }

  build(view) {
    this.root.replaceChildren();
    this.cards.clear();
    this.measure();
    for (const p of view.partitions) {
      const name = `${p.topic}-${p.partition}`;
      const title = h('span.pname', { text: name },
        p.groups?.length ? h('span.muted', { text: ` · offsets of group ${p.groups.join(', ')}`, title: 'a partition of Kafka\'s internal __consumer_offsets topic: its leader is the group\'s coordinator' }) : null);
      const leader = h('span.kv', { dataset: { k: 'leader' } });
      const epoch = h('span.kv', { dataset: { k: 'epoch' } });
      const isr = h('span.kv', { dataset: { k: 'isr' } });
      const badges = h('span.badges');
      const ruler = h('div.ruler');
      const mm = h('div.minimap', {
        tabindex: 0,
        role: 'slider',
        'aria-label': `${name}: whole log; the box is the part shown. Arrows, Home and End move it.`,
        onpointerdown: (e) => {
          const go = (ev) => {
            const box = mm.getBoundingClientRect();
            const c = this.cards.get(name);
            this.pin(name, ((ev.clientX - box.left) / box.width) * (c.end || 0) - this.windowSize / 2);
          };
          go(e);
          mm.setPointerCapture?.(e.pointerId);
          mm.onpointermove = (ev) => ev.buttons && go(ev);
        },
        onkeydown: (e) => {
          const c = this.cards.get(name);
          const n = this.windowSize;
          const step = { ArrowLeft: -n / 2, ArrowRight: n / 2, PageUp: -n, PageDown: n }[e.key];
          if (step) this.pin(name, c.start + step);
          else if (e.key === 'Home') this.pin(name, 0);
          else if (e.key === 'End') this.pin(name, null);
          else return;
          e.preventDefault();
        },
      });
      mm.style.width = `${this.windowSize * PITCH}px`;
      // Where each consumer group's committed offset stands in this log.
      const cmarks = h('div.cmarks', { style: { width: `${this.windowSize * PITCH}px` } });
      const cmRow = h('div.rulerrow.cmrow', { hidden: true }, h('div.rlabel.muted', { text: 'committed' }), cmarks);
      // Where each member of a subscribing group that owns this partition reads next.
      const pmarks = h('div.cmarks', { style: { width: `${this.windowSize * PITCH}px` } });
      const posRow = h('div.rulerrow.posrow', { hidden: true }, h('div.rlabel.muted', { text: 'member position' }), pmarks);
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
        const marks = h('div.ebs');
        track.append(marks);
        const info = h('div.rinfo');
        const row = h('div.rrow', { dataset: { broker: r.broker } }, label, track, info);
        rowsEl.append(row);
        rows.set(r.broker, { row, label, track, slots, offs: slots.map(() => null), bgs: slots.map(() => ''), hw, leo, info, marks, last: null, cellTitle: null });
      }
      // A cell's tooltip is written when the pointer reaches it (and kept
      // current while it stays), not for every cell on every frame: a title
      // change restyles its element (the browser's own style sheet has
      // abbr[title]), and a seek that moves the window changed all of them.
      rowsEl.addEventListener('pointerover', (e) => {
        const cell = e.target.closest?.('.cell:not(.ghost)');
        const row = cell && rows.get(Number(cell.closest('.rrow')?.dataset.broker));
        this.hover = row ? { cell, row } : null;
        this.titleHovered();
      });
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
        cmRow,
        posRow,
        rowsEl,
        // Under the rows, not over their offset axis: it has a scale of its own.
        h('div.rulerrow.mmrow', null, h('div.rlabel.muted', { text: 'whole log' }), mm),
      );
      rowsEl.addEventListener('wheel', (e) => {
        if (Math.abs(e.deltaX) <= Math.abs(e.deltaY) && !e.shiftKey) return;
        e.preventDefault();
        const c = this.cards.get(name);
        this.pin(name, c.start + Math.sign(e.deltaX || e.deltaY) * 3);
      }, { passive: false });
      this.root.append(card);
      this.cards.set(name, { card, leader, epoch, isr, badges, ruler, mm, rows, cmRow, cmarks, posRow, pmarks, rulerStart: -1 });
    }
  }

  update(view, generation) {
    this.last = [view, generation];
    const key = `${generation}|${view.partitions.map((p) => `${p.topic}-${p.partition}:${p.replica_views.length}`).join(',')}`;
    if (key !== this.key) {
      this.key = key;
      this.build(view);
    }
    const n = this.windowSize;
    // The minimaps' widths (whether an epoch's label fits its band), read for
    // every new card before any write below: read card by card between the
    // writes, each read laid the page out again (tour 11's first draw: 45 ms
    // in 60 layouts, issue 63).
    // (A folded panel's are 0: read again once it shows.)
    const shown = !this.root.closest('.folded');
    for (const c of this.cards.values()) if (!c.mmWidth && (c.mmWidth === undefined || shown)) c.mmWidth = c.mm.clientWidth;
    for (const p of view.partitions) {
      const c = this.cards.get(`${p.topic}-${p.partition}`);
      if (!c) continue;
      setText(c.leader, p.leader == null ? 'Leader: none' : `Leader: broker ${p.leader}`);
      c.leader.classList.toggle('bad', p.leader == null);
      setText(c.epoch, `Leader epoch: ${p.leader_epoch}`);
      c.epoch.style.setProperty('--epoch', epochColour(p.leader_epoch));
      c.epoch.classList.add('epochkv');
      // The leader applies min(RF, min.insync.replicas): say so when it is lower than the setting.
      const minEff = Math.min(p.min_insync_replicas, p.replicas?.length ?? p.min_insync_replicas);
      setText(c.isr, `ISR: {${p.isr.join(',')}}  min.insync=${p.min_insync_replicas}${minEff < p.min_insync_replicas ? ` (effective ${minEff})` : ''}`);
      const badges = [];
      if (p.offline) badges.push(['OFFLINE', 'bad']);
      else if (p.under_min_isr) badges.push(['UNDER MIN ISR', 'bad']);
      else if (p.at_min_isr) badges.push(['AT MIN ISR', 'warn']);
      if (p.under_replicated && !p.offline) badges.push(['UNDER-REPLICATED', 'warn']);
      if (p.acked_records_lost > 0) badges.push([`${p.acked_records_lost} ACKED LOST`, 'bad']);
      const bkey = badges.map((b) => b[0]).join('|');
      if (c.badges.dataset.key !== bkey) {
        c.badges.dataset.key = bkey;
        patch(c.badges, badges.map(([t, cls]) => h(`span.badge.${cls}`, { text: t })));
      }
      const name = `${p.topic}-${p.partition}`;
      const end = Math.max(0, ...p.replica_views.map((r) => r.log_end_offset));
      const pinned = this.pins.get(name);
      const start = pinned == null || pinned >= end - n ? Math.max(0, end - n) : pinned;
      if (pinned != null && pinned >= end - n) this.pins.delete(name);
      c.start = start;
      c.end = end;
      this.minimap(c, p, end, start, n);
      const commits = [];
      for (const k of view.consumers || []) {
        // The group's commit as its coordinator holds it (a crashed consumer's group keeps it);
        // once per group, however many of its members the lab runs.
        for (const [tp, off] of k.group?.stored ?? k.group?.committed ?? []) {
          if (tp === name && !commits.some(([g, o]) => g === k.group.group_id && o === off)) commits.push([k.group.group_id, off]);
        }
      }
      const ckey = `${start}|${n}|${commits.join(';')}`;
      if (c.cmarks.dataset.key !== ckey) {
        c.cmarks.dataset.key = ckey;
        if (c.cmRow.hidden !== (commits.length === 0)) c.cmRow.hidden = commits.length === 0;
        // In the window's right half the label ends at its mark (its arrow
        // last), so it never runs past the log's edge and widens the page.
        patch(c.cmarks, commits.filter(([, o]) => o >= start && o <= start + n).map(([g, o]) => {
          const right = o - start > n / 2;
          return h(`span.cm${right ? '.cm-end' : ''}`, { text: right ? `${g} @ ${o} ▾` : `▾ ${g} @ ${o}`, dataset: { group: g }, title: `group ${g} committed offset ${o}: a consumer of the group that restarts reads from here`, style: { left: `${(o - start) * PITCH + (right ? 10 : -4)}px` } });
        }));
      }
      // Each member's position on the partitions its group gave it (the
      // consumer's own, from the view): a crashed member has none, so a
      // partition it still owns shows none either.
      const positions = [];
      for (const k of view.consumers || []) {
        if (!k.group?.member) continue;
        for (const q of k.partitions || []) if (q.partition === name && !q.waiting) positions.push([k.id, q.position]);
      }
      const pkey = `${start}|${n}|${positions.join(';')}`;
      if (c.pmarks.dataset.key !== pkey) {
        c.pmarks.dataset.key = pkey;
        if (c.posRow.hidden !== (positions.length === 0)) c.posRow.hidden = positions.length === 0;
        patch(c.pmarks, positions.filter(([, o]) => o >= start && o <= start + n).map(([id, o]) => {
          const right = o - start > n / 2;
          return h(`span.cm.pm${right ? '.cm-end' : ''}`, { text: right ? `${id} @ ${o} ▾` : `▾ ${id} @ ${o}`, dataset: { consumer: id }, title: `member ${id} reads offset ${o} next (its position)`, style: { left: `${(o - start) * PITCH + (right ? 10 : -4)}px` } });
        }));
      }
      if (c.rulerStart !== start) {
        c.rulerStart = start;
        const marks = [];
        for (let i = 0; i < n; i++) {
          const off = start + i;
          if (off % 5 === 0) marks.push(h('span', { text: off, style: { left: `${i * PITCH}px` } }));
        }
        patch(c.ruler, marks);
      }
      // Committed is the partition's: below the leader's high watermark
      // (on every ISR member). A follower's own HW, which lags, is its marker;
      // with no leader each row falls back to its own.
      const leadView = p.replica_views.find((r) => r.broker === p.leader && r.alive);
      for (const r of p.replica_views) {
        const row = c.rows.get(r.broker);
        if (!row) continue;
        const committedTo = leadView ? leadView.high_watermark : r.high_watermark;
        const isLeader = p.leader === r.broker && r.alive;
        const role = !r.alive ? 'down' : isLeader ? 'leader' : r.role === 'leader' ? 'stale leader' : 'follower';
        const lkey = `${r.broker}|${role}|${r.in_isr}`;
        if (row.label.dataset.key !== lkey) {
          row.label.dataset.key = lkey;
          patch(row.label, [
            h('b', { text: `B${r.broker}` }),
            h(`span.role.${role.replace(' ', '-')}`, { text: isLeader ? '★ leader' : role }),
            h(`span.isr.${r.in_isr ? 'in' : 'out'}`, {
              text: r.in_isr ? 'ISR' : 'out',
              title: r.in_isr ? 'in the ISR' : 'not in the ISR',
            }),
          ]);
        }
        row.row.classList.toggle('dead', !r.alive);
        row.row.classList.toggle('leader', isLeader);
        for (let i = 0; i < n; i++) {
          const off = start + i;
          const cell = row.slots[i];
          let cls = 'cell empty';
          let bg = '';
          // What each cell shows is kept beside it (reading the DOM back costs more than the writes).
          if (row.offs[i] !== off) cell.dataset.off = row.offs[i] = off;
          if (off < r.log_end_offset) {
            const e = off >= r.first_cell ? r.cells[off - r.first_cell] : epochAt(r.epochs, off);
            bg = epochColour(e);
            cls = off >= committedTo ? 'cell rec uncommitted' : 'cell rec';
          }
          if (cell.className !== cls) cell.className = cls;
          if (row.bgs[i] !== bg) cell.style.setProperty('--c', (row.bgs[i] = bg));
        }
        const place = (el, off) => {
          const x = off - start;
          el.style.display = x < 0 || x > n ? 'none' : '';
          el.style.left = `${x * PITCH - 1}px`;
        };
        place(row.hw, r.high_watermark);
        place(row.leo, r.log_end_offset);
        setText(row.info, `LEO ${r.log_end_offset} · HW ${r.high_watermark}`);
        // Where this replica's leader-epoch cache starts each epoch, in the window.
        const ekey = `${start}|${n}|${(r.epochs || []).join(';')}`;
        if (row.marks.dataset.key !== ekey) {
          row.marks.dataset.key = ekey;
          patch(row.marks, (r.epochs || []).filter(([, o]) => o >= start && o < start + n).map(([e, o]) =>
            h('span.eb', { text: `e${e}`, title: `leader-epoch cache: epoch ${e} starts at offset ${o}`, style: { left: `${(o - start) * PITCH - 1}px`, '--c': epochColour(e) } })));
        }
        const cache = `leader-epoch cache: ${(r.epochs || []).map(([e, o]) => `${e} → ${o}`).join(', ')}`;
        if (row.info.title !== cache) row.info.title = cache;
        row.last = { first: r.first_cell, cells: r.cells, start };
        row.cellTitle = (off) => {
          if (off >= r.log_end_offset) return '';
          const e = off >= r.first_cell ? r.cells[off - r.first_cell] : epochAt(r.epochs, off);
          return `offset ${off}, leader epoch ${e}${off >= committedTo ? ", above the leader's HW (not committed)" : ''}`;
        };
      }
    }
    this.titleHovered();
  }

  /** The tooltip of the cell under the pointer, for the offset it shows now. */
  titleHovered() {
    const hv = this.hover;
    if (!hv || !hv.cell.isConnected || !hv.row.cellTitle) return;
    const t = hv.row.cellTitle(Number(hv.cell.dataset.off));
    if (hv.cell.title !== t) hv.cell.title = t;
  }

  /** The card's minimap: epoch bands of the longest log, the leader's HW, the window. */
  minimap(c, p, end, start, n) {
    const longest = p.replica_views.reduce((a, r) => (!a || r.log_end_offset > a.log_end_offset ? r : a), null);
    const lead = p.replica_views.find((r) => r.broker === p.leader) || longest;
    const hw = lead ? lead.high_watermark : 0;
    const key = `${end}|${start}|${n}|${hw}|${longest ? longest.epochs.join(';') : ''}`;
    if (c.mmKey === key) return;
    c.mmKey = key;
    const pct = (o) => `${end ? (100 * o) / end : 0}%`;
    const eps = longest ? longest.epochs : [];
    // Its width once per card (reading it after this frame's writes would force a layout every seek).
    const bands = eps.map(([e, o], i) => {
      const to = i + 1 < eps.length ? eps[i + 1][1] : end;
      const wide = end && ((to - o) / end) * (c.mmWidth || 600) > 44;
      return h('span.mm-band', { style: { left: pct(o), width: pct(to - o), '--c': epochColour(e) }, title: `epoch ${e} from offset ${o}` }, wide ? h('span.mm-lbl', { text: `${e} @${o}` }) : null);
    });
    patch(c.mm, [...bands,
      h('span.mm-hw', { style: { left: pct(hw) }, title: `leader's high watermark ${hw}` }),
      h('span.mm-win', { style: { left: pct(start), width: pct(Math.min(n, end - start)) } })]);
    c.mm.setAttribute('aria-valuemin', 0);
    c.mm.setAttribute('aria-valuemax', Math.max(0, end - n));
    c.mm.setAttribute('aria-valuenow', start);
    c.mm.setAttribute('aria-valuetext', `offsets ${start} to ${Math.min(end, start + n) - 1} of ${end}`);
  }

  /**
   * React to trace events: show truncated records leaving. `jumped` (a seek
   * or rebuild handed over the newest events at once): the rows flag and note
   * their truncations, without the flying cells (a transient, thousands of
   * nodes for a seek's hundreds of events).
   */
  onTrace(events, jumped = false) {
    const hits = [];
    // Only what is happening at the time shown: a truncation finished long
    // before it (a seek, a long runFor) is not replayed, and a seek clears
    // the notes and ghosts of the time it left, so nothing reads
    // "truncating now" afterwards.
    const now = this.last?.[0]?.now_ms ?? Infinity;
    // A seek that only ran on (no checkpoint restored, so no new generation)
    // is still a jump when the time shown moved back or further than a frame
    // at the fastest speed covers.
    const was = this.shownAt;
    this.shownAt = now;
    if (was != null && (now < was || now - was > RECENT_MS)) jumped = true;
    if (jumped) {
      for (const c of this.cards.values()) {
        for (const row of c.rows.values()) {
          row.row.classList.remove('truncating');
          row.track.querySelectorAll('.trunc-note, .ghost').forEach((el) => el.remove());
        }
      }
    }
    for (const ev of events) {
      if (ev.event !== 'truncated' || ev.at_ms < now - RECENT_MS) continue;
      const c = this.cards.get(`${ev.topic}-${ev.partition}`);
      const row = c?.rows.get(ev.broker);
      if (row) hits.push([ev, c, row]);
    }
    // (The row's class only colours its label: no animation to restart, so no
    // forced layout per truncation, which was most of a seek's cost.)
    for (const [ev, c, row] of hits) {
      row.row.classList.add('truncating');
      clearTimeout(row.untruncate);
      row.untruncate = setTimeout(() => row.row.classList.remove('truncating'), 5000);
      const start = c.start ?? 0;
      const lo = Math.max(ev.to_offset, start);
      const hi = Math.min(ev.from_offset, start + this.windowSize);
      // prefers-reduced-motion: the records just vanish (no flying cells) and
      // the note stays 5 s without fading.
      const still = jumped || reducedMotion();
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

/**
 * How recent (simulated ms before the time shown) a truncation must be to be
 * shown: a frame at the fastest speed covers 1.7 s, a seek or a long runFor
 * more, and what it skipped over is not replayed.
 */
const RECENT_MS = 2000;

/** The epoch of `off` from a leader-epoch cache [[epoch, start offset], …]. */
function epochAt(epochs, off) {
  let e = 0;
  for (const [ep, o] of epochs || []) if (o <= off) e = ep;
  return e;
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
    h('span.lg', null, h('i.cell.rec.uncommitted', { style: { '--c': epochColour(0) } }), "above the leader's HW (uncommitted)"),
    h('span.lg', null, h('i.mk.hw'), "the replica's high watermark"),
    h('span.lg', null, h('i.mk.leo'), 'log end offset'),
  );
}
