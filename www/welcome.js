// The first-visit welcome (issue 16, point 12): one sentence of what this is,
// "Start the guided tour" (tour 1), and every tour grouped by who its question
// is for, from the scenario index (www/scenarios/index.json: `level` is
// junior, mid, senior or principal; a tour without one comes last, so new
// tours appear by themselves). Shown on a first visit to the bare page (no
// query parameter, no shared link) until the reader picks something;
// ?welcome=1 shows it again, ?welcome=0 never.

// The welcome itself (welcome-view.js) is fetched only when it opens: most
// visits never show it.

const SEEN = 'failover-lab:welcomed';
export const LEVELS = [
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
export const byNumber = (list) => list.filter((s) => s.tour).sort((a, b) => num(a) - num(b));
export const inLevel = (s, lv) => (lv ? s.level === lv : !LEVELS.some(([l]) => l && l === s.level));

/** The tours of the scenario index in the welcome's order: by level, then by number. */
export const tourOrder = (list) => LEVELS.flatMap(([lv]) => byNumber(list).filter((s) => inLevel(s, lv)));

/** Should the welcome open? (a fresh visit with no scenario asked for) */
export function wantWelcome(params, hash) {
  const w = params.get('welcome');
  if (w === '1' || params.has('check')) return true;
  if (w === '0' || [...params.keys()].some((k) => k !== 'welcome' && k !== 'theme') || hash.length > 1) return false;
  try {
    return !localStorage.getItem(SEEN);
  } catch {
    return true;
  }
}

/**
 * Show the welcome in `box` (a hidden section). `open(file)` loads a scenario
 * (a tour opens paused on its introduction); `check` (?check=LEVEL) opens
 * that level's Check yourself; `WasmLab` runs its tours.
 */
export function showWelcome(box, list, open, check, WasmLab) {
  const seen = () => {
    try {
      localStorage.setItem(SEEN, '1');
    } catch {
      // Private mode: the welcome shows again next time, which is fine.
    }
  };
  return import(new URL('./welcome-view.js', import.meta.url).href).then((m) =>
    m.showWelcome(box, list, open, check, { WasmLab, seen, finished: finishedTours() }));
}
