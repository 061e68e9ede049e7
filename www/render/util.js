// Small DOM helpers and the shared colour palette (Okabe-Ito: colour-blind safe).

export const EPOCH_COLOURS = [
  '#56B4E9', // sky blue
  '#E69F00', // orange
  '#009E73', // bluish green
  '#CC79A7', // reddish purple
  '#F0E442', // yellow
  '#0072B2', // blue
  '#D55E00', // vermillion
];

/** Colour of leader epoch `e` (cycles through the palette). */
export function epochColour(e) {
  return EPOCH_COLOURS[((e % EPOCH_COLOURS.length) + EPOCH_COLOURS.length) % EPOCH_COLOURS.length];
}

export const STATE_LABEL = {
  running: 'running',
  crashed: 'crashed',
  fenced: 'fenced',
  isolated: 'isolated',
  shut_down: 'shut down',
};

/** Create an element: h('div.cls', {attr}, child, ...). */
export function h(tag, attrs, ...children) {
  const [name, ...classes] = tag.split('.');
  const node = document.createElement(name || 'div');
  if (classes.length) node.className = classes.join(' ');
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'text') node.textContent = v;
      else if (k === 'style' && typeof v === 'object') {
        for (const [sk, sv] of Object.entries(v)) {
          if (sk.startsWith('--')) node.style.setProperty(sk, sv);
          else node.style[sk] = sv;
        }
      }
      else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
      else if (k === 'dataset') Object.assign(node.dataset, v);
      else node.setAttribute(k, v === true ? '' : v);
    }
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
export function s(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null) continue;
    if (k === 'text') node.textContent = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c) node.append(c);
  return node;
}

/** Simulated time as "12.345 s". */
export function fmtTime(ms) {
  return `${(ms / 1000).toFixed(3)} s`;
}

/** Set textContent only when it changed (keeps the DOM quiet). */
export function setText(node, text) {
  const t = String(text);
  if (node.textContent !== t) node.textContent = t;
}

let motionQuery = null;
/** True when the reader asked for less motion (prefers-reduced-motion: reduce). */
export function reducedMotion() {
  motionQuery ??= typeof matchMedia === 'function' ? matchMedia('(prefers-reduced-motion: reduce)') : null;
  return !!motionQuery?.matches;
}
