// Check yourself (issue 30, point 4): after a level's tours, the seed
// questions asked without the tour around them (who serves writes, who may
// become leader, what keeps a follower in the ISR, when acks=1 loses data,
// what min.insync.replicas refuses …). The questions are
// scenarios/quiz/check-yourself.json; no answer is stored there: each is
// computed from a run of the tour that shows it, at its stop, by the same
// expression language as a tour question (question.js), and the result links
// to that stop (?scenario=FILE&stop=K). The score is kept in this browser
// only (localStorage). Fetched by the welcome the first time a check opens.

import { h } from './render/util.js';
import { rightChoices } from './question.js';

/**
 * The full build's WasmLab (www/fast-wasm.js), for a tour whose consumers
 * subscribe: the page's first-load wasm leaves the classic group protocol
 * out (lab.js, needsFullBuild).
 */
async function fullBuild() {
  const m = await import(new URL('./fast-wasm.js', import.meta.url).href);
  await m.default();
  return m.WasmLab;
}

const SCORES = 'failover-lab:checks';

/** The last score of each level in this browser: {junior: {right, of}, …}. */
export function scores() {
  try {
    return JSON.parse(localStorage.getItem(SCORES) || '{}') || {};
  } catch {
    return {};
  }
}

function remember(level, right, of) {
  try {
    localStorage.setItem(SCORES, JSON.stringify({ ...scores(), [level]: { right, of } }));
  } catch {
    // Private mode: nothing is remembered.
  }
}

/** Lane texts of a compare string, as the page's lanes name them ("acks=1"). */
const laneTexts = (c) => String(c).split('|').map((l) => l.split(',').map((x) => x.trim()).filter(Boolean).join(','));

/**
 * What the question's answer reads: tour `file` run to its stop `stop`
 * (from 1): the report, lane A's in a compare tour with `lanes` beside it
 * (each lane's settings and report, as failoverLab.lanes() gives them).
 */
async function rootAt(PageLab, file, stop) {
  const res = await fetch(`scenarios/${encodeURIComponent(file)}`);
  if (!res.ok) throw new Error(`scenarios/${file}: HTTP ${res.status}`);
  const text = await res.text();
  const s = JSON.parse(text);
  // A tour with subscribing consumers runs on the full build.
  const WasmLab = (s.clients || []).some((c) => c?.subscribe === true) ? await fullBuild() : PageLab;
  const at = s.tour?.[stop - 1]?.at_ms;
  if (at == null) throw new Error(`${file} has no stop ${stop}`);
  const run = (lane) => {
    const core = lane == null ? new WasmLab(text) : WasmLab.withSettings(text, lane);
    try {
      core.runUntil(at);
      return core.report();
    } finally {
      core.free();
    }
  };
  if (!s.compare) return { root: run(null), s };
  const lanes = laneTexts(s.compare);
  const reports = lanes.map(run);
  return { root: { ...reports[0], lanes: lanes.map((settings, i) => ({ settings, report: reports[i] })) }, s };
}

const CSS = `
.ck-q { border: 1px solid var(--ctl); border-radius: 6px; margin: 0 0 8px; padding: 6px 12px 8px; max-width: 110ch; }
.ck-q legend { font-weight: 600; color: var(--strong); padding: 0 4px; }
.ck-q label { display: flex; gap: 8px; align-items: baseline; padding: 2px 0; cursor: pointer; }
.ck-q .ck-r { margin: 4px 0 0; padding: 4px 8px; border-left: 3px solid var(--accent); background: var(--bar); border-radius: 4px; }
.ck-q.ck-hit .ck-r { border-left-color: var(--good); }
.ck-q.ck-miss .ck-r { border-left-color: var(--bad); }
.ck-q a { color: var(--accent); }
.ck-sum { font-weight: 600; }
`;

/**
 * Show level `level`'s check in `box` (the welcome). `deps`: {WasmLab,
 * back() — the welcome again, names: {file: tour name}}.
 */
export async function showCheck(box, level, { WasmLab, back, names = {} }) {
  if (!document.getElementById('ck-css')) document.head.append(h('style', { id: 'ck-css', text: CSS }));
  let quiz;
  try {
    const res = await fetch('scenarios/quiz/check-yourself.json');
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    quiz = await res.json();
  } catch (e) {
    box.replaceChildren(h('h2', { id: 'welcome-title', text: 'Check yourself' }), h('p', { text: `The questions could not be read (scenarios/quiz/check-yourself.json: ${e.message}); run \`make build\`.` }),
      h('button', { type: 'button', onclick: back }, '◀ Back'));
    return;
  }
  const qs = quiz.levels?.find((l) => l.level === level)?.questions || [];
  const sets = qs.map((q, i) => {
    const inputs = q.choices.map((c, j) => h('input', { type: 'radio', name: `ck-${i}`, value: String(j) }));
    const result = h('p.ck-r', { hidden: true });
    const fs = h('fieldset.ck-q', { dataset: { q: i } },
      h('legend', { text: `${i + 1}. ${q.text}` }),
      ...q.choices.map((c, j) => h('label', null, inputs[j], h('span', { text: c.text }))),
      result);
    return { q, fs, inputs, result };
  });
  const summary = h('p.ck-sum', { role: 'status' });
  const checkBtn = h('button.primary', { type: 'button', 'data-check': 'submit' }, 'Check my answers');
  checkBtn.onclick = async () => {
    checkBtn.disabled = true;
    summary.textContent = 'Running the tours to their stops…';
    let right = 0;
    let answered = 0;
    for (const { q, fs, inputs, result } of sets) {
      const pick = inputs.findIndex((x) => x.checked);
      if (pick >= 0) answered++;
      let text;
      try {
        const { root, s } = await rootAt(WasmLab, q.tour, q.stop);
        const res = rightChoices(q, root);
        const hit = pick >= 0 && res.right.includes(pick);
        if (hit) right++;
        fs.classList.toggle('ck-hit', hit);
        fs.classList.toggle('ck-miss', pick >= 0 && !hit);
        fs.dataset.right = res.right.join(',');
        const truth = res.right.map((j) => q.choices[j].text).join(' / ') || `none of the choices (${JSON.stringify(res.value)})`;
        const name = names[q.tour] || s.name || q.tour;
        text = [
          h('b', { text: pick < 0 ? 'Skipped. ' : hit ? 'Right. ' : 'Not this time. ' }),
          `The run answers: ${truth}. `,
          // Issue 62, item 4: what in the run decided it.
          h('span.muted', { text: `Decided by the run: ${q.answer} = ${JSON.stringify(res.value)}. ` }),
          h('a', { href: `?scenario=${encodeURIComponent(q.tour)}&stop=${q.stop}`, text: `See it: ${name}, stop ${q.stop}` }),
        ];
      } catch (e) {
        text = [`This answer cannot be computed: ${e.message}`];
      }
      result.replaceChildren(...text);
      result.hidden = false;
    }
    remember(level, right, sets.length);
    summary.textContent = `${right} of ${sets.length} right${answered < sets.length ? ` (${sets.length - answered} skipped)` : ''}: each answer was computed from a run of the tour that shows it.`;
    checkBtn.disabled = false;
  };
  box.replaceChildren(
    h('h2', { id: 'welcome-title', text: `Check yourself · ${level}` }),
    h('p', { text: 'Pick what you expect; each answer is then computed from a run of the tour that shows it, and links to the stop where you can watch it happen.' }),
    ...sets.map((x) => x.fs),
    summary,
    h('div.wbtns', null, checkBtn, h('button', { type: 'button', 'data-check': 'back', onclick: back }, '◀ Back to the tours')),
  );
  box.hidden = false;
  sets[0]?.inputs[0]?.focus();
}
