// The first-visit welcome's view (welcome.js fetches it when the welcome
// opens): one sentence of what this is, "Start the guided tour" (tour 1), and
// every tour grouped by who its question is for, from the scenario index
// (www/scenarios/index.json: `level` is junior, mid, senior or principal; a
// tour without one comes last, so new tours appear by themselves), each level
// with its Check yourself (check.js).

import { h } from './render/util.js';
import { LEVELS, byNumber, inLevel } from './welcome.js';

const FIRST_TOUR = 'tour-1-leader-dies.json';
const CSS = `
.welcome { margin: 8px 12px 0; padding: 12px 16px; }
.welcome h2 { font-size: 17px; text-transform: none; letter-spacing: 0; color: var(--strong); margin: 0 0 4px; }
.welcome p { margin: 0 0 10px; max-width: 80ch; }
.wbtns { display: flex; gap: 8px; flex-wrap: wrap; margin-bottom: 10px; }
.wgroups { display: grid; grid-template-columns: repeat(auto-fit, minmax(230px, 1fr)); gap: 6px 16px; }
.wgroup h3 { font-size: 12px; color: var(--h2); margin: 4px 0; }
.wgroup ul { margin: 0; padding: 0; list-style: none; }
.wlink { background: none; border: 0; padding: 2px 0; color: var(--accent); text-align: left; cursor: pointer; font: inherit; white-space: normal; }
.wlink:hover { text-decoration: underline; }
.wcheck { margin-top: 4px; font-weight: 600; }
.wdone { color: var(--good-text); font-size: 11px; }
`;

/**
 * Show the welcome in `box` (a hidden section). `open(file)` loads a scenario
 * (a tour opens paused on its introduction).
 */
export function showWelcome(box, list, open, check, deps) {
  const { WasmLab, seen, finished } = deps;
  if (!document.getElementById('welcome-css')) document.head.append(h('style', { id: 'welcome-css', text: CSS }));
  const done = (file) => {
    seen();
    box.hidden = true;
    open(file);
  };
  let checked = {};
  try {
    checked = JSON.parse(localStorage.getItem('failover-lab:checks') || '{}') || {};
  } catch {
    // Private mode: no scores.
  }
  // Check yourself (check.js, fetched the first time one opens; ?check=LEVEL opens one).
  const quiz = (lv) => import(new URL('./check.js', import.meta.url).href).then((m) =>
    m.showCheck(box, lv, { WasmLab, back: () => showWelcome(box, list, open, null, deps), names: Object.fromEntries(list.map((s) => [s.file, s.name])) }));
  const tours = byNumber(list);
  const groups = LEVELS.map(([lv, title]) => {
    const items = tours.filter((s) => inLevel(s, lv));
    return items.length
      ? h('div.wgroup', { dataset: { level: lv || 'other' } }, h('h3', { text: `${title}${lv ? ` · ${lv}` : ''}` }),
        h('ul', null, ...items.map((s) => h('li', null, h('button.wlink', { type: 'button', dataset: { file: s.file }, onclick: () => done(s.file) }, s.name.replace(/^Tour (\d+) · /, '$1. ')),
          finished.includes(s.file) ? h('span.wdone', { text: ' ✓ finished', title: 'you walked this tour to its end (remembered in this browser only)' }) : null))),
        lv ? h('button.wlink.wcheck', { type: 'button', dataset: { check: lv }, onclick: () => quiz(lv) }, `Check yourself${checked[lv] ? ` · ${checked[lv].right} of ${checked[lv].of} last time` : ' ▸'}`) : null)
      : null;
  });
  box.replaceChildren(
    h('h2', { id: 'welcome-title', text: 'A Kafka cluster fails over in your browser' }),
    h('p', { text: 'Brokers crash, leaders move, records are kept or lost — simulated to the millisecond, the same way every time. Each guided tour answers one question, stop by stop, pointing at the evidence on screen.' }),
    h('div.wbtns', null,
      h('button.primary', { type: 'button', 'data-welcome': 'start', onclick: () => done(FIRST_TOUR) }, 'Start the guided tour ▶'),
      h('button', { type: 'button', 'data-welcome': 'close', onclick: () => done(null) }, 'Explore on my own'),
      h('button', { type: 'button', 'data-welcome': 'import', onclick: () => (done(null), document.getElementById('import-cluster')?.click()) }, 'Import your cluster')),
    h('div.wgroups', null, ...groups),
  );
  box.hidden = false;
  box.querySelector('[data-welcome="start"]').focus();
  if (check) quiz(check);
}
