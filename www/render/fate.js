// The fate view of the Clients panel (issue 24): the report's delivery counts
// per producer, with example record ids that open the core's story of that
// record. Loaded the first time the view is opened (render/clients.js).

import { h } from './util.js';

/**
 * The report's `delivery` counts, in the order the fate view lists them: key
 * (a dotted path for a cause), label, class; a cause's row is indented under
 * the count it splits (`reread` and `never_consumed`, issue 64).
 */
const FATES = [
  ['acked_kept', 'acknowledged, kept'],
  ['acked_lost', 'acknowledged, then lost', 'bad'],
  ['failed_not_written', 'failed, not written'],
  ['failed_but_written', 'failed, yet in the log', 'warn'],
  ['pending', 'not answered yet'],
  ['written_twice', 'written twice', 'warn'],
  ['consumed', 'consumed'],
  ['consumed_twice', 'consumed twice', 'warn'],
  ['reread', 'read again by its group', 'warn'],
  ['reread_causes.rebalance', 'after a rebalance', 'warn'],
  ['reread_causes.restart', 'after a restart', 'warn'],
  ['reread_causes.reset', 'after a reset or seek back', 'warn'],
  ['never_consumed', 'committed, never consumed', 'warn'],
  ['skip_causes.reset', 'skipped by auto.offset.reset', 'warn'],
  ['skip_causes.commit', 'skipped by a committed offset', 'warn'],
  ['skip_causes.unread', 'not read yet'],
];
const FATE_TEXT = Object.fromEntries(FATES.map(([k, t]) => [k, t]));
const at = (d, k) => k.split('.').reduce((o, x) => o?.[x], d);
const secs = (ms) => `${(ms / 1000).toFixed(3)} s`;

export class FateView {
  /** `opts.delivery()` and `opts.story(id)` read the core (see ClientsPanel). */
  constructor(body, storyEl, opts) {
    this.fateBody = body;
    this.storyEl = storyEl;
    this.opts = opts;
  }

  /** Counts per producer, example ids that open their story. */
  draw() {
    const rows = this.opts.delivery() || [];
    const sig = JSON.stringify(rows);
    if (sig !== this.fateSig) {
      this.fateSig = sig;
      this.fateBody.replaceChildren(...rows.map((d) => h('table.fate-t', { dataset: { producer: d.producer } },
        h('caption', { text: `Producer ${d.producer} → ${d.topic}: ${d.sent} sent` }),
        h('tbody', null, ...FATES.filter(([k]) => at(d, k)).map(([k, label, cls]) => {
          const f = at(d, k);
          return h(`tr${f.count && cls ? '.' + cls : ''}${k.includes('.') ? '.sub' : ''}`, { dataset: { fate: k } },
            // Indented inline: this module loads on demand, style.css with the first load.
            h('th', { scope: 'row', text: label, style: k.includes('.') ? { paddingLeft: '1.2em' } : null }),
            h('td.n', { text: String(f.count) }),
            h('td', null, ...f.examples.map((id) => h('button.rid', { type: 'button', text: `#${id}`, 'aria-label': `story of record ${id}`, onclick: () => this.showStory(id) }))));
        })))));
    }
    if (this.storyId != null) this.showStory(this.storyId);
  }

  showStory(id) {
    this.storyId = id;
    const s = this.opts.story(id);
    if (!s) {
      this.storyEl.replaceChildren(h('p.muted', { text: `No record #${id}.` }));
      return;
    }
    const where = s.partition == null ? s.topic || 'no partition' : `${s.topic}-${s.partition}`;
    const line = (label, ...kids) => h('div.sline', null, h('b', { text: `${label} ` }), ...kids);
    this.storyEl.replaceChildren(...[
      h('h3', { text: `Record #${s.id}` }),
      line('Sent', `by ${s.producer} to ${where}${s.sent_ms == null ? '' : ` at ${secs(s.sent_ms)}`}`),
      line('Fate', h(`span.f-${s.fate}`, { text: FATE_TEXT[s.fate] || s.fate }), s.acked_offset == null ? '' : ` (acknowledged at offset ${s.acked_offset})`),
      line('Copies', s.copies.length
        ? s.copies.map((c) => `broker ${c.broker} @ ${c.offset} (epoch ${c.epoch}${c.committed ? ', committed' : ', above its HW'})`).join(' · ')
        : 'no replica has it'),
      line('Read', s.reads.length ? s.reads.map(([c, n]) => `by ${c}${n > 1 ? ` ×${n}` : ''}`).join(' · ') : 'by no consumer'),
      s.events.length ? h('ol.sev', null, ...s.events.map(([t, text]) => h('li', null, h('span.muted', { text: `${secs(t)} ` }), text))) : null,
    ].filter(Boolean));
  }

}
