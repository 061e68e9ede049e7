// The broker's fault menu (crash, power loss, controlled shutdown, restart,
// isolate, heal), shared by the full page and the <failover-lab> element.
// It only builds buttons; the caller applies the chosen action.

import { h, STATE_LABEL } from './util.js';

/**
 * Fill `menu` with the actions for broker view `b`. `healEnabled` says whether
 * Heal is offered; `onPick(action)` receives e.g. `{crash: 2}`.
 */
export function fillBrokerMenu(menu, b, { healEnabled, onPick }) {
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
  menu.replaceChildren(
    h('div.menu-title', null, h('b', { text: `Broker ${id}` }), h(`span.st.${b.state}`, { text: STATE_LABEL[b.state] || b.state })),
    ...items.map(([action, label, hint, enabled]) =>
      h('button', {
        type: 'button', 'data-action': action, disabled: !enabled,
        onclick: () => onPick({ [action]: id }),
      }, h('span', { text: label }), h('small', { text: hint })),
    ),
  );
}
