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

/**
 * Make `parent`'s children look like `children` (nodes built with h(), or
 * strings) by changing the nodes already there: a node of the same kind keeps
 * its identity and only its differing attributes and text are written; only
 * what is missing is inserted. Inserting a subtree restyles and lays it out
 * from scratch (a seek redraws most panels); a changed attribute costs only
 * its element. The new nodes' event listeners are not carried over: use it
 * where the children have none (a container's delegated listener still works).
 */
export function patch(parent, children) {
  let old = parent.firstChild;
  for (let c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (!(c instanceof Node)) c = document.createTextNode(String(c));
    old = place(parent, old, c);
  }
  trimFrom(old);
}

/** `c` in place of `old` (morphed into it when of the same kind); returns the node after. */
function place(parent, old, c) {
  if (!old) {
    parent.append(c);
    return null;
  }
  if (old.nodeType === c.nodeType && old.nodeName === c.nodeName) {
    morph(old, c);
    return old.nextSibling;
  }
  parent.replaceChild(c, old);
  return c.nextSibling;
}

function trimFrom(old) {
  while (old) {
    const next = old.nextSibling;
    old.remove();
    old = next;
  }
}

function morph(a, b) {
  if (a.nodeType !== 1) {
    if (a.data !== b.data) a.data = b.data;
    return;
  }
  const attrs = b.attributes;
  for (let i = 0; i < attrs.length; i++) {
    const { name, value } = attrs[i];
    if (a.getAttribute(name) !== value) a.setAttribute(name, value);
  }
  if (a.attributes.length !== attrs.length) {
    for (const { name } of [...a.attributes]) if (!b.hasAttribute(name)) a.removeAttribute(name);
  }
  let old = a.firstChild;
  for (let c = b.firstChild; c; ) {
    const next = c.nextSibling; // (c may move into a)
    old = place(a, old, c);
    c = next;
  }
  trimFrom(old);
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

/**
 * Set textContent only when it changed (keeps the DOM quiet). A lone text
 * child is rewritten in place: replacing it would rebuild its layout object
 * (a seek rewrites hundreds of labels).
 */
export function setText(node, text) {
  const t = String(text);
  const only = node.firstChild;
  if (only && only === node.lastChild && only.nodeType === 3) {
    if (only.data !== t) only.data = t;
  } else if (node.textContent !== t) node.textContent = t;
}

let motionQuery = null;
/** True when the reader asked for less motion (prefers-reduced-motion: reduce). */
export function reducedMotion() {
  motionQuery ??= typeof matchMedia === 'function' ? matchMedia('(prefers-reduced-motion: reduce)') : null;
  return !!motionQuery?.matches;
}

/**
 * The overview's module (render/overview.js), fetched when a scenario first
 * has more partitions than the detailed view draws (issue 27: the page's
 * first load stays within its budget).
 */
export const loadOverview = () => import(new URL('./overview.js', import.meta.url).href);
