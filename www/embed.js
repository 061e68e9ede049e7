// www/embed.html: one <failover-lab> filling the frame, configured by URL
// parameters with the element's attribute names, for hosts that allow only
// iframes:
//   embed.html?scenario=leader-dies.json&seed=7&speed=2&autoplay=1&compact=1
//             &controls=play,step,timeline&range=8s-25s&theme=light
//             &compare=acks%3D1%7Cacks%3Dall (compare lanes, as the element's attribute)
// A bare file name (no "/") means one of the site's scenarios/ files. A bad
// parameter shows a message in the frame.

import './failover-lab.js';
import { parseTheme, followTheme } from './theme.js';

const ATTRS = ['scenario', 'seed', 'speed', 'controls', 'panels', 'partitions', 'range', 'theme', 'compare'];
const FLAGS = ['autoplay', 'loop', 'compact'];

function build(params) {
  const el = document.createElement('failover-lab');
  const unknown = [...params.keys()].filter((k) => !ATTRS.includes(k) && !FLAGS.includes(k));
  if (unknown.length) {
    throw new Error(`unknown parameter${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')}; expected ${[...ATTRS, ...FLAGS].join(', ')}`);
  }
  for (const k of ATTRS) {
    if (!params.has(k)) continue;
    let v = params.get(k);
    if (k === 'scenario' && v && !v.includes('/') && !v.includes(':')) v = `scenarios/${v.endsWith('.json') ? v : `${v}.json`}`;
    el.setAttribute(k, v);
  }
  for (const k of FLAGS) {
    if (!params.has(k)) continue;
    const v = params.get(k).toLowerCase();
    if (!['', '1', 'true', '0', 'false'].includes(v)) throw new Error(`${k}=${params.get(k)}: expected 1/true or 0/false`);
    if (v === '' || v === '1' || v === 'true') el.setAttribute(k, '');
  }
  if (!params.has('scenario')) el.setAttribute('scenario', 'scenarios/leader-dies.json');
  return el;
}

const params = new URLSearchParams(location.search);
const open = document.getElementById('open-full');
// ?theme=light|dark|auto: the frame's own background follows the element's theme.
let theme = 'auto';
try {
  theme = parseTheme(params.get('theme'), 'theme');
} catch {
  // build() passes the bad value on: the element shows the message.
}
followTheme(document.documentElement, () => theme).apply();
let el;
try {
  el = build(params);
} catch (e) {
  const box = document.createElement('div');
  box.className = 'embed-error';
  box.setAttribute('role', 'alert');
  box.textContent = `⚠ Failover Lab embed: ${e.message}`;
  document.getElementById('open-full').before(box);
}
if (el) {
  document.getElementById('open-full').before(el);
  if (open) {
    const q = new URLSearchParams();
    const s = params.get('scenario');
    if (s && !s.includes('/')) q.set('scenario', s.endsWith('.json') ? s : `${s}.json`);
    if (params.has('seed')) q.set('seed', params.get('seed'));
    if (theme !== 'auto') q.set('theme', theme);
    const cmp = params.get('compare');
    open.href = `./${q.toString() ? `?${q}` : ''}${cmp ? `#compare=${encodeURIComponent(cmp)}` : ''}`;
  }
}
