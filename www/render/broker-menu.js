// The broker's fault menu (crash, power loss, controlled shutdown, restart,
// isolate, heal), shared by the full page and the <failover-lab> element.
// It only builds buttons; the caller applies the chosen action.

import { h, STATE_LABEL } from './util.js';

/**
 * Fill `menu` with the actions for broker view `b`. `healEnabled` says whether
 * Heal is offered; `onPick(action)` receives e.g. `{crash: 2}`.
 */
export function fillBrokerMenu(menu, b, { healEnabled, onPick, note = null }) {
  const id = b.id;
  const down = b.state === 'crashed' || b.state === 'shut_down';
  const items = [
    ['crash', 'Crash', 'the process dies; its log survives', !down],
    ['power_loss', 'Power loss', 'unflushed records are lost', !down],
    ['shutdown', 'Controlled shutdown', 'leadership moves away first', !down],
    ['restart', 'Restart', 'start again and rejoin', down],
    ['isolate', 'Isolate', 'cut it off the network', b.state !== 'isolated'],
    ['heal', 'Heal', 'reconnect it', healEnabled],
  ];
  menu.setAttribute('aria-label', `Broker ${id} actions`);
  // A menu's keys: ↑/↓ (and Home/End) move between the enabled items.
  menu.onkeydown = (e) => {
    const items = [...menu.querySelectorAll('button:not([disabled])')];
    const at = items.indexOf(e.composedPath()[0]);
    let to = -1;
    if (e.key === 'ArrowDown') to = (at + 1) % items.length;
    else if (e.key === 'ArrowUp') to = (at - 1 + items.length) % items.length;
    else if (e.key === 'Home') to = 0;
    else if (e.key === 'End') to = items.length - 1;
    if (to < 0 || !items.length) return;
    e.preventDefault();
    e.stopPropagation();
    items[to].focus();
  };
  menu.replaceChildren(
    h('div.menu-title', { role: 'presentation' }, h('b', { text: `Broker ${id}` }), h(`span.st.${b.state}`, { text: STATE_LABEL[b.state] || b.state })),
    // "What if … here?" (issue 65): each item then forks a lane instead of acting on this run.
    ...(note ? [h('div.menu-note', { role: 'presentation', text: note })] : []),
    ...items.map(([action, label, hint, enabled]) =>
      h('button', {
        type: 'button', role: 'menuitem', 'data-action': action, disabled: !enabled,
        onclick: () => onPick({ [action]: id }),
      }, h('span', { text: label }), h('small', { text: hint })),
    ),
  );
}
