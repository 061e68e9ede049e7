// The narration: trace events in plain language with their simulated time,
// newest first. The core narrates only the acknowledgements worth reading
// (explicit produce steps, and records acknowledged after an error), so they
// are all listed.

import { h, fmtTime, setText } from './util.js';

const MAX_ITEMS = 400;
const QUIET = new Set([]);
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
  }

  /** Pull new trace events from the lab; returns them (for other panels). */
  update(lab) {
    if (lab.generation !== this.generation) {
      this.generation = lab.generation;
      this.cursor = 0;
      this.list.replaceChildren();
    }
    const len = lab.traceLength();
    if (len === this.cursor) return [];
    // After a long jump only the most recent events are drawn.
    const from = Math.max(this.cursor, len - MAX_ITEMS * 2);
    const events = lab.traceSince(from);
    this.cursor = len;
    const frag = document.createDocumentFragment();
    for (const ev of events) {
      if (QUIET.has(ev.event)) continue;
      const li = h(
        `li.ev.${KIND[ev.event] || 'info'}`,
        { dataset: { event: ev.event }, title: 'click to jump to this moment' },
        h('button.t', { type: 'button', text: fmtTime(ev.at_ms), 'aria-label': `jump to ${fmtTime(ev.at_ms)}`, onclick: () => this.onSeek(ev.at_ms) }),
        h('span.i', { text: ICON[ev.event] || '·', 'aria-hidden': 'true' }),
        h('span.x', { text: ev.text }),
      );
      frag.prepend(li);
    }
    this.list.prepend(frag);
    // Speak the newest events that matter (not after a long jump: that is a
    // seek, and the reader knows where they went).
    if (events.length <= 50) {
      const said = events.filter((ev) => SPOKEN.has(ev.event)).slice(-3);
      if (said.length) setText(this.live, said.map((ev) => `${fmtTime(ev.at_ms)}: ${ev.text}`).join(' '));
    }
    while (this.list.childElementCount > MAX_ITEMS) this.list.lastElementChild.remove();
    return events;
  }
}
