// The narration: trace events in plain language with their simulated time,
// newest first. The core narrates only the acknowledgements worth reading
// (explicit produce steps, and records acknowledged after an error), so they
// are all listed.

import { h, fmtTime, setText } from './util.js';

const MAX_ITEMS = 400;
// A jump (a seek, a long run) in the animation frame after another one or
// the same (a dragged timeline, seeks one per frame) that would insert more
// items than SHOWN_AFTER_JUMP draws only that many, the newest; the rest
// follow once the page has been at rest for REST_MS (FILL_STEP items a
// task). So a drag across a busy run (tour 11: 400 items replaced at every
// position) lays out a screenful and a little more, while a lone jump (a tour
// stop, a click) and the list at rest are drawn as ever, but on a big world,
// whose landed seek starts short too (update's `brief`).
const SHOWN_AFTER_JUMP = 60;
const REST_MS = 200;
const FILL_STEP = 120;

// Animation frames counted while jumps come (frames, not wall time: a slow
// seek still follows the last one by one frame when seeks go once a frame).
let frames = 0;
let idleFrames = 0;
function countFrames() {
  if (idleFrames <= 0 && typeof requestAnimationFrame === 'function') requestAnimationFrame(tick);
  idleFrames = 3;
}
function tick() {
  frames++;
  if (--idleFrames > 0) requestAnimationFrame(tick);
}
// What the polite live region reads out.
const SPOKEN = new Set(['step', 'broker_crashed', 'broker_power_loss', 'broker_fenced', 'broker_isolated', 'broker_shut_down',
  'broker_restarted', 'broker_healed', 'leader_elected', 'truncated', 'acked_records_lost']);
const KIND = {
  step: 'user',
  broker_crashed: 'bad',
  broker_power_loss: 'bad',
  broker_fenced: 'warn',
  broker_isolated: 'bad',
  broker_shut_down: 'warn',
  leader_elected: 'key',
  truncated: 'key',
  acked_records_lost: 'bad',
  produce_error: 'warn',
  consumer_truncation_detected: 'warn',
  consumer_preferred_replica_lost: 'warn',
  isr_changed: 'isr',
  alter_partition_rejected: 'warn',
  broker_restarted: 'good',
  broker_healed: 'good',
  broker_unfenced: 'good',
  produce_acked: 'good',
};
const ICON = {
  step: '▶',
  broker_crashed: '✖',
  broker_power_loss: '⚡',
  broker_fenced: '⛔',
  broker_isolated: '✂',
  leader_elected: '★',
  truncated: '✂',
  acked_records_lost: '!',
  produce_error: '⚠',
  isr_changed: '⇄',
  broker_restarted: '↻',
  broker_healed: '✓',
  broker_unfenced: '✓',
  produce_acked: '✔',
  became_leader: '★',
  client_metadata_updated: 'ℹ',
  consumer_read_replica_changed: '⇢',
  consumer_preferred_replica_named: '⇢',
  consumer_preferred_replica_lost: '↩',
};

export class Narration {
  constructor(root, { onSeek }) {
    this.root = root;
    this.onSeek = onSeek;
    // The scrolling list is a focusable, labelled region (keyboard users can
    // scroll it); the newest key events are also spoken through a separate
    // polite live region, so a screen reader hears "broker 1 crashed", not
    // every fetch.
    this.root.setAttribute('role', 'region');
    this.root.setAttribute('aria-label', 'What happened, newest first');
    this.root.tabIndex = 0;
    this.list = h('ol.narr');
    this.live = h('div.sr-only', { role: 'status', 'aria-live': 'polite', 'aria-atomic': 'true' });
    this.root.append(this.list, this.live);
    this.cursor = 0;
    this.generation = -1;
    this.history = -1;
    // Trace events [base, base + cache.length) of this history (a seek keeps
    // them: the core is deterministic), and the list's items: [lo, hi).
    this.base = 0;
    this.cache = [];
    this.lo = 0;
    this.hi = 0;
    // How many of the newest events the list shows (up to MAX_ITEMS; fewer
    // right after a jump, until fill() catches up).
    this.depth = MAX_ITEMS;
    this.fillTimer = null;
    this.jumpFrame = -Infinity;
  }

  /** Events [from, len) of the trace, from the cache (the core is asked only for what it lacks). */
  events(lab, from, len) {
    const end = this.base + this.cache.length;
    if (from < this.base || from > end) {
      this.base = from;
      this.cache = lab.traceSince(from);
    } else if (len > end) {
      for (const ev of lab.traceSince(end)) this.cache.push(ev);
    }
    if (this.cache.length > 20 * MAX_ITEMS) {
      const drop = Math.min(this.cache.length - 10 * MAX_ITEMS, from - this.base);
      if (drop > 0) {
        this.cache.splice(0, drop);
        this.base += drop;
      }
    }
    return this.cache.slice(from - this.base, len - this.base);
  }

  /** Trace event i's list item (kept per history: a scrub back and forth reuses them). */
  item(i, ev) {
    let li = this.items.get(i);
    if (li) return li;
    if (this.items.size >= 10 * MAX_ITEMS) this.items.clear();
    li = h(
      `li.ev.${KIND[ev.event] || 'info'}`,
      { dataset: { event: ev.event }, title: 'click to jump to this moment' },
      h('button.t', { type: 'button', text: fmtTime(ev.at_ms), 'aria-label': `jump to ${fmtTime(ev.at_ms)}`, onclick: () => this.onSeek(ev.at_ms) }),
      h('span.i', { text: ICON[ev.event] || '·', 'aria-hidden': 'true' }),
      h('span.x', { text: ev.text }),
    );
    this.items.set(i, li);
    return li;
  }

  /**
   * Pull new trace events from the lab; returns them (for other panels): after
   * a seek or rebuild, the newest (up to 2 × MAX_ITEMS). The list shows the
   * newest MAX_ITEMS, newest first; a seek within one history only adds and
   * removes the items at its two ends. `brief`: a jump draws the short list
   * even alone (a big world's landed seek, whose draw is split: 400 new
   * items were 36 ms of tour 19's landing and much of its first layout).
   */
  update(lab, { brief = false } = {}) {
    if (lab.history !== this.history) {
      this.history = lab.history;
      this.cache = [];
      this.base = 0;
      this.lo = this.hi = 0;
      this.items = new Map();
      this.list.replaceChildren();
    }
    this.jumped = lab.generation !== this.generation; // a seek or rebuild (partitions.onTrace)
    if (this.jumped) {
      this.generation = lab.generation;
      this.cursor = 0;
    }
    // An action forked the trace: the cached events after the fork are another run's.
    const keep = lab.forkedAt(this.fork);
    this.fork = lab.fork?.n;
    if (keep < this.base + this.cache.length) this.cache.length = Math.max(0, keep - this.base);
    if (keep < Infinity) for (const i of this.items.keys()) if (i >= keep) this.items.delete(i);
    const len = lab.traceLength();
    this.lab = lab;
    if (len === this.cursor) return [];
    // After a long jump only the most recent events are drawn.
    const from = Math.max(this.cursor, len - MAX_ITEMS * 2);
    const first = Math.max(0, Math.min(from, len - MAX_ITEMS));
    const events = this.events(lab, first, len);
    const at = (i) => events[i - first];
    this.cursor = len;
    // The items [lo, len) would need this many new ones (the kept ones aside):
    // more than a jump's worth, and the list starts short.
    const kept = Math.max(0, Math.min(this.hi, len) - Math.max(this.lo, len - this.depth));
    const big = Math.min(len, this.depth) - kept > SHOWN_AFTER_JUMP;
    const far = big && (brief || frames - this.jumpFrame <= 1);
    if (big || this.jumped) {
      this.jumpFrame = frames;
      countFrames();
    }
    if (far) this.depth = SHOWN_AFTER_JUMP;
    else if (big) this.depth = MAX_ITEMS;
    this.show(len, at);
    // Each jump postpones the fill; playing on does not.
    if (far || this.jumped || !this.fillTimer) this.scheduleFill();
    const fresh = events.slice(from - first);
    // Speak the newest events that matter (not after a long jump: that is a
    // seek, and the reader knows where they went).
    if (fresh.length <= 50) {
      const said = fresh.filter((ev) => SPOKEN.has(ev.event)).slice(-3);
      if (said.length) setText(this.live, said.map((ev) => `${fmtTime(ev.at_ms)}: ${ev.text}`).join(' '));
    }
    return fresh;
  }

  /** Show items [len - depth, len), newest first, keeping the ones already listed. */
  show(len, at) {
    const lo = Math.max(0, len - this.depth);
    if (len <= this.lo || lo >= this.hi) {
      this.list.replaceChildren();
      this.lo = this.hi = lo;
    }
    for (; this.hi > len; this.hi--) this.list.firstElementChild.remove();
    for (; this.lo < lo; this.lo++) this.list.lastElementChild.remove();
    const top = document.createDocumentFragment();
    for (; this.hi < len; this.hi++) top.prepend(this.item(this.hi, at(this.hi)));
    this.list.prepend(top);
    const bottom = document.createDocumentFragment();
    while (this.lo > lo) bottom.append(this.item(--this.lo, at(this.lo)));
    this.list.append(bottom);
  }

  /** After a jump: the older items come back once updates have paused for REST_MS. */
  scheduleFill() {
    clearTimeout(this.fillTimer);
    this.filling(this.depth < MAX_ITEMS ? setTimeout(() => this.fill(), REST_MS) : null);
  }

  /** The next fill's timer (null: none): the list is busy (aria-busy) while one is due. */
  filling(timer) {
    this.fillTimer = timer;
    if (timer) this.list.setAttribute('aria-busy', 'true');
    else this.list.removeAttribute('aria-busy');
  }

  fill() {
    const lab = this.lab;
    this.filling(null);
    // Only the run this list was drawn from (an update since re-arms the timer).
    if (!lab?.core || lab.history !== this.history || lab.generation !== this.generation || lab.traceLength() !== this.hi) return;
    const len = this.hi;
    this.depth = Math.min(MAX_ITEMS, this.depth + FILL_STEP);
    const first = Math.max(0, len - this.depth);
    const events = this.events(lab, first, len);
    this.show(len, (i) => events[i - first]);
    if (this.depth < MAX_ITEMS) this.filling(setTimeout(() => this.fill(), 0));
  }
}
