// The first-visit welcome (issue 16, point 12): one sentence of what this is,
// "Start the guided tour" (tour 1), and every tour grouped by who its question
// is for, from the scenario index (www/scenarios/index.json: `level` is
// junior, mid, senior or principal; a tour without one comes last, so new
// tours appear by themselves). Shown on a first visit to the bare page (no
// query parameter, no shared link) until the reader picks something;
// ?welcome=1 shows it again, ?welcome=0 never.

import { h } from './render/util.js';
import { WasmLab } from './lab.js';

const SEEN = 'failover-lab:welcomed';
const FIRST_TOUR = 'tour-1-leader-dies.json';
const LEVELS = [
  ['junior', 'First questions'],
  ['mid', 'How it works inside'],
  ['senior', 'Trade-offs you configure'],
  ['principal', 'History and scale'],
  ['', 'More tours'],
];

const FINISHED = 'failover-lab:finished';

/** The tours this visitor has walked to their last stop (localStorage only). */
export function finishedTours() {
  try {
    return JSON.parse(localStorage.getItem(FINISHED) || '[]');
  } catch {
    return [];
  }
}

/** Remember that tour `file` was walked to its last stop. */
export function markFinished(file) {
  const done = finishedTours();
  if (done.includes(file)) return;
  try {
    localStorage.setItem(FINISHED, JSON.stringify([...done, file]));
  } catch {
    // Private mode: nothing is remembered.
  }
}

const num = (s) => Number(/^Tour (\d+)/.exec(s.name)?.[1] ?? 1e9);
const byNumber = (list) => list.filter((s) => s.tour).sort((a, b) => num(a) - num(b));
const inLevel = (s, lv) => (lv ? s.level === lv : !LEVELS.some(([l]) => l && l === s.level));

/** The tours of the scenario index in the welcome's order: by level, then by number. */
export const tourOrder = (list) => LEVELS.flatMap(([lv]) => byNumber(list).filter((s) => inLevel(s, lv)));

/** Should the welcome open? (a fresh visit with no scenario asked for) */
export function wantWelcome(params, hash) {
  const w = params.get('welcome');
  if (w === '1' || params.has('check')) return true;
  if (w === '0' || [...params.keys()].some((k) => k !== 'welcome') || hash.length > 1) return false;
  try {
    return !localStorage.getItem(SEEN);
  } catch {
    return true;
  }
}

/**
 * Show the welcome in `box` (a hidden section). `open(file)` loads a scenario
 * (a tour opens paused on its introduction).
 */
export function showWelcome(box, list, open, check = null) {
  const done = (file) => {
    try {
      localStorage.setItem(SEEN, '1');
    } catch {
      // Private mode: the welcome shows again next time, which is fine.
    }
    box.hidden = true;
    open(file);
  };
  const finished = finishedTours();
  let checked = {};
  try {
    checked = JSON.parse(localStorage.getItem('failover-lab:checks') || '{}') || {};
  } catch {
    // Private mode: no scores.
  }
  // Check yourself (check.js, fetched the first time one opens; ?check=LEVEL opens one).
  const quiz = (lv) => import(new URL('./check.js', import.meta.url).href).then((m) =>
    m.showCheck(box, lv, { WasmLab, back: () => showWelcome(box, list, open), names: Object.fromEntries(list.map((s) => [s.file, s.name])) }));
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
      h('button', { type: 'button', 'data-welcome': 'close', onclick: () => done(null) }, 'Explore on my own')),
    h('div.wgroups', null, ...groups),
  );
  box.hidden = false;
  box.querySelector('[data-welcome="start"]').focus();
  if (check) quiz(check);
}
