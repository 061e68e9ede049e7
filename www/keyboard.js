// Keyboard shortcuts and the `?` help overlay.

import { h } from './render/util.js';

export const SHORTCUTS = [
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
  ['?', 'this help'],
  ['Esc', 'close menus and help'],
];

export function installKeyboard(app, overlay) {
  const close = () => {
    overlay.hidden = true;
  };
  overlay.replaceChildren(
    h('div.help-box', { role: 'dialog', 'aria-label': 'Keyboard shortcuts and help' },
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
      h('button', { type: 'button', onclick: close, text: 'Close' }),
    ),
  );
  overlay.addEventListener('click', (e) => {
    if (e.target === overlay) close();
  });

  document.addEventListener('keydown', (e) => {
    const tag = e.target?.tagName;
    if (tag === 'INPUT' && e.target.type !== 'range' && e.target.type !== 'checkbox') return;
    if (tag === 'SELECT' || tag === 'TEXTAREA') return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const k = e.key;
    // Space and Enter press the focused button (keyboard-only use), not play.
    if ((tag === 'BUTTON' || tag === 'SUMMARY' || tag === 'A') && (k === ' ' || k === 'Enter')) return;
    let handled = true;
    if (k === '?') overlay.hidden = !overlay.hidden;
    else if (k === 'Escape') {
      close();
      app.closeMenu();
    } else if (k === ' ') app.togglePlay();
    else if (k === 'ArrowRight') app.stepBy(e.shiftKey ? 1000 : 100);
    else if (k === 'ArrowLeft') app.seek(Math.max(0, app.lab.now() - 1000));
    else if (/^[1-9]$/.test(k)) app.toggleBroker(Number(k));
    else if (k === 'p' || k === 'P') app.produceBurst();
    else if (k === '+' || k === '=') app.nudgeSpeed(1);
    else if (k === '-' || k === '_') app.nudgeSpeed(-1);
    else if (k === 'r' || k === 'R') app.reset();
    else if (k === 'e' || k === 'E') app.skipToNext();
    else if ((k === 'n' || k === 'N') && app.tour?.active) app.tour.go(app.tour.index + 1);
    else handled = false;
    if (handled) e.preventDefault();
  });
}
