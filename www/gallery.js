// The welcome's scenario gallery (issue 65, item 3): the lab's own scenarios,
// tours aside, each as a card with its question (the scenario's name), its
// level and a thumbnail of its map at t = 0, with Open and "What if…" (open
// it paused with fork mode on, so the next action makes a lane B).
// welcome-view.js fetches this module, and www/scenarios/gallery.json (written
// by scripts/build-site.sh from each file's brokers, racks and topics), only
// when the reader opens the gallery. The thumbnail draws the topology the file
// declares, nothing the simulation computes: brokers grouped by rack, then
// each topic's partitions as columns of replica-factor cells.

import { h } from './render/util.js';

const CSS = `
.wgallery { display: grid; grid-template-columns: repeat(auto-fill, minmax(250px, 1fr)); gap: 10px; margin: 8px 0 4px; padding: 0; list-style: none; }
.gcard { display: flex; flex-direction: column; gap: 4px; border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; background: var(--panel2); }
.gcard h3 { font-size: 13px; margin: 0; color: var(--strong); text-transform: none; letter-spacing: 0; }
.gcard svg { width: 100%; height: auto; aspect-ratio: 200 / 60; }
.gmeta { font-size: 11px; color: var(--muted); }
.glevel { font-weight: 700; color: var(--text2); text-transform: uppercase; letter-spacing: .4px; }
.gacts { display: flex; gap: 6px; margin-top: auto; }
.gthumb .b { fill: var(--panel); stroke: var(--line2); }
.gthumb .r { fill: none; stroke: var(--line); stroke-dasharray: 3 2; }
.gthumb .p { fill: var(--accent); }
.gthumb text { fill: var(--muted); font-size: 9px; }
`;
const NS = 'http://www.w3.org/2000/svg';
const s = (tag, attrs, text) => {
  const n = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v);
  if (text != null) n.textContent = text;
  return n;
};

/** The thumbnail of a scenario's map: its brokers by rack, its topics' partitions. */
export function thumbnail(sc) {
  const W = 200;
  const svg = s('svg', { class: 'gthumb', 'aria-hidden': 'true', focusable: 'false', preserveAspectRatio: 'xMinYMin meet' });
  const ids = Array.from({ length: sc.brokers }, (_, i) => i + 1);
  // Brokers in rack order (a rack's brokers side by side), a gap between racks.
  const rackOf = (b) => sc.racks[b] ?? '';
  const racks = [...new Set(ids.map(rackOf))];
  const bw = Math.min(34, (W - 8 * racks.length) / Math.max(1, ids.length) - 4);
  const top = racks[0] ? 11 : 2;
  let x = 3;
  for (const r of racks) {
    const x0 = x;
    for (const b of ids.filter((i) => rackOf(i) === r)) {
      svg.append(s('rect', { class: 'b', x, y: top + 2, width: bw, height: 16, rx: 3 }), s('text', { x: x + 4, y: top + 14 }, bw > 16 ? `b${b}` : ''));
      x += bw + 4;
    }
    if (r) svg.append(s('rect', { class: 'r', x: x0 - 3, y: top - 1, width: x - x0 + 2, height: 22, rx: 4 }), s('text', { x: x0 - 2, y: 8 }, /^rack/i.test(r) ? r : `rack ${r}`));
    x += 8;
  }
  // Each topic: its name, then one column per partition, one cell per replica
  // (the first, its preferred leader, solid).
  let y = top + 26;
  for (const t of sc.topics.slice(0, 3)) {
    const shown = Math.min(t.partitions, 20);
    const rf = Math.min(t.rf, 4);
    svg.append(s('text', { x: 3, y: y + 8 }, `${t.name}${t.partitions > shown ? ` (${t.partitions})` : ''}`));
    for (let p = 0; p < shown; p++) for (let k = 0; k < rf; k++) {
      svg.append(s('rect', { class: 'p', x: 64 + p * 7, y: y + k * 5, width: 5, height: 4, opacity: k ? 0.45 : 1 }));
    }
    y += Math.max(11, rf * 5 + 3);
  }
  svg.setAttribute('viewBox', `0 0 ${W} ${y}`);
  return svg;
}

const plural = (n, w) => `${n} ${w}${n === 1 ? '' : 's'}`;

/** The topology in words (what the thumbnail shows, for a screen reader too). */
export function describe(sc) {
  const racks = new Set(Object.values(sc.racks)).size;
  const topics = sc.topics.map((t) => `${t.name}: ${plural(t.partitions, 'partition')} × RF ${t.rf}`).join('; ');
  return `${plural(sc.brokers, 'broker')}${racks ? ` in ${plural(racks, 'rack')}` : ''} · ${topics}`;
}

/**
 * The welcome's "Scenario gallery" button `button` opens or closes the gallery
 * (drawn under it the first time); `open` as for showGallery.
 */
export function toggle(button, open) {
  let box = document.getElementById('wgallery');
  if (!box) {
    box = h('div', { id: 'wgallery' });
    button.setAttribute('aria-controls', 'wgallery');
    button.after(box);
    showGallery(box, open);
  } else box.hidden = !box.hidden;
  button.setAttribute('aria-expanded', !box.hidden);
  button.textContent = `Scenario gallery ${box.hidden ? '▸' : '▾'}`;
}

/**
 * Fill `box` with the gallery: `open(file, fork)` loads a scenario (fork: with
 * fork mode on). Resolves once the cards are drawn.
 */
export async function showGallery(box, open) {
  if (!document.getElementById('gallery-css')) document.head.append(h('style', { id: 'gallery-css', text: CSS }));
  let list;
  try {
    const res = await fetch('scenarios/gallery.json');
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    list = await res.json();
  } catch (e) {
    box.replaceChildren(h('p', { role: 'alert', text: `The gallery did not load (scenarios/gallery.json: ${e.message}); run \`make build\`.` }));
    return;
  }
  box.replaceChildren(h('ul.wgallery', { 'aria-label': 'Scenarios' }, ...list.map((sc) => {
    const id = `g-${sc.file.replace(/\W/g, '-')}`;
    return h('li.gcard', { dataset: { file: sc.file, level: sc.level || '' }, 'aria-labelledby': id },
      thumbnail(sc),
      h('h3', { id, text: sc.name }),
      h('div.gmeta', null, h('span.glevel', { text: sc.level || 'any level' }), ` · ${describe(sc)}`),
      h('div.gacts', null,
        h('button', { type: 'button', dataset: { gallery: 'open' }, 'aria-describedby': id, onclick: () => open(sc.file) }, 'Open'),
        h('button', { type: 'button', dataset: { gallery: 'fork' }, 'aria-describedby': id, title: 'Open it paused with fork mode on: your next action (a broker crash, a restart…) makes a lane B beside the original run', onclick: () => open(sc.file, true) }, 'What if… (fork)')));
  })));
}
