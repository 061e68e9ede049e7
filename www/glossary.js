// The `?` help's words — how to use the page, the keyboard shortcuts — and
// the glossary (issue 25, point 4): Kafka's terms, a sentence or two each,
// listed in the help and linked from the tour text. The words live in
// glossary.json, and this module is fetched with them only the first time the
// help opens or a tour stop is shown (app.js), so neither counts against the
// page's first load. In a stop's text the first occurrence of each term
// becomes a button that opens the help at its entry; Esc or Close puts the
// focus back on that button.

import { h } from './render/util.js';

const SHORTCUTS = [
  ['Space', 'play / pause'],
  ['→', 'advance 100 ms of simulated time'],
  ['Shift + →', 'advance 1 s'],
  ['←', 'go back 1 s (time travel)'],
  ['1 – 9', 'crash broker N (restart it if it is down)'],
  ['P', 'produce a burst of 10 records'],
  ['+ / −', 'faster / slower'],
  ['R', 'reset to t = 0 (actions and switches too)'],
  ['N', 'guided tour: next stop'],
  ['E', 'skip to the next event'],
  ['F', 'acting here: replace the future, or fork a "what if" lane'],
  ['?', 'this help'],
  ['Esc', 'close menus and help'],
];

const STYLE = `
.gl-term { font: inherit; color: inherit; background: none; border: 0; border-bottom: 1px dotted currentColor; border-radius: 0; padding: 0; min-width: 0; min-height: 0; cursor: help; }
.gl-term:hover { border-bottom-style: solid; }
/* Focus fills the term: a ring round words in running text crossed the lines above and below. */
.gl-term:focus-visible { outline: none; background: var(--accent); color: var(--bg); border-radius: 2px; }
.gloss dt { font-weight: 650; margin-top: 8px; scroll-margin-top: 8px; }
.gloss dd { margin: 2px 0 0 14px; }
.gloss .on { background: var(--panel2); border-left: 3px solid var(--ctl); padding-left: 6px; }
`;

/**
 * Fetch the glossary from `url`, put it into the help `overlay` (its
 * .help-box, before the Close button) and return { terms, link(el), show(id) }.
 */
export async function init(overlay, url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  const terms = (await res.json()).terms.map((t) => ({ ...t, re: new RegExp(t.match, 'g') }));
  document.head.append(h('style', { text: STYLE }));
  const dl = h('dl.gloss', null, ...terms.flatMap((t) => [h('dt', { id: `gl-${t.id}`, tabindex: '-1', text: t.term }), h('dd', { text: t.text })]));
  const box = overlay.querySelector('.help-box');
  box.prepend(
    h('h2', { text: 'Failover Lab — how to use it' }),
    h('p', { text: 'A deterministic simulation of Kafka replication runs in this page. Click a broker to crash, restart, isolate or heal it; watch the leader epoch bump, the ISR shrink and grow, the high watermark move and a rejoining replica truncate its uncommitted tail.' }),
    h('table.keys', null, ...SHORTCUTS.map(([k, d]) => h('tr', null, h('td', null, h('kbd', { text: k })), h('td', { text: d })))),
    h('p.muted', { text: 'Config switches (acks, min.insync.replicas, unclean election, seed) and the timeline rebuild the scenario and replay your recorded actions: the core is deterministic, so the run is reproduced exactly.' }),
    h('p', null,
      'How faithful is it? The rules are checked against Apache Kafka 4.4.0 itself: thousands of random cases through Kafka\u2019s own classes, and the scenarios and tours replayed on a real Kafka cluster. ',
      h('a', { href: 'book/kafka-4.4.html', 'data-help': 'kafka-checked', text: 'Checked against Kafka 4.4.0' }),
      ' has both tables and every difference left, with its reason; ',
      h('a', { href: 'book/', 'data-help': 'book', text: 'the book' }),
      ' starts there.'),
  );
  box.insertBefore(h('section.gloss-sec', { 'aria-labelledby': 'gl-title' }, h('h3', { id: 'gl-title', text: 'Glossary' }), dl), box.lastElementChild);

  let back = null; // the term button that opened the help
  new MutationObserver(() => {
    if (overlay.hidden && back?.isConnected) back.focus();
    if (overlay.hidden) back = null;
  }).observe(overlay, { attributeFilter: ['hidden'] });

  /** Open the help at entry `id`. */
  const show = (id) => {
    back = document.activeElement;
    overlay.hidden = false;
    dl.querySelectorAll('.on').forEach((e) => e.classList.remove('on'));
    const dt = dl.querySelector(`#gl-${CSS.escape(id)}`);
    if (!dt) return;
    dt.classList.add('on');
    dt.nextElementSibling.classList.add('on');
    dt.scrollIntoView({ block: 'start' });
    dt.focus({ preventScroll: true });
  };

  /** Turn the first occurrence of each term in `el`'s text into a button (its text stays the same). */
  const link = (el) => {
    const text = el.textContent;
    if (el.dataset.glossed === text) return;
    const hits = [];
    for (const t of terms) if (t.link !== false) for (const m of text.matchAll(t.re)) hits.push([m.index, m.index + m[0].length, t]);
    hits.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    const out = [];
    const used = new Set();
    let at = 0;
    for (const [s, e, t] of hits) {
      if (s < at || used.has(t.id)) continue;
      used.add(t.id);
      out.push(text.slice(at, s), h('button.gl-term', { type: 'button', title: `${t.term}: open its glossary entry`, dataset: { term: t.id }, onclick: () => show(t.id) }, text.slice(s, e)));
      at = e;
    }
    out.push(text.slice(at));
    el.replaceChildren(...out);
    el.dataset.glossed = text;
  };

  return { terms, link, show };
}
