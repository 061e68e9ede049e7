// Shareable, replayable state in the URL hash. The core is deterministic, so a
// run is fully given by: the scenario (a file name, or the scenario itself,
// deflated), the config switches, the user's recorded actions with their
// simulated times, and the time shown. Opening the link rebuilds the lab,
// applies the switches and replays the actions up to that time: the same run,
// frame for frame, with the same trace hash.
//
//   #scenario=leader-dies.json&seed=8&acks=1&min.insync.replicas=2&unclean=true
//    &actions=10000:crash:1,30000:restart:1,31000:produce:orders:0:10:all&t=31000
//
// `scenario-data=z…` replaces `scenario=` for a scenario that is not one of the
// site's files (imported, or loaded through the API): base64url of the
// deflate-raw'ed JSON ('j…' when CompressionStream is missing: plain JSON).
// `play=1` means the run was playing (the link opens playing from t = 0).
// `compare=acks%3D1%7Cacks%3Dall` opens compare mode with those lanes (compare.js).
// `forks=A~15000:crash:2,B~20000:restart:2` adds fork lanes after them (issue
// 65): each forks the lane named before `~` at the action's time, with the
// action (encoded as in `actions`); the first is lane B (after any settings
// lanes), the next C, and so on.

const BROKER_VERBS = ['crash', 'power_loss', 'restart', 'shutdown', 'isolate', 'heal', 'flush'];
const SWITCHES = [
  // [hash key, override key, parse]
  ['seed', 'seed', (v) => nonNegInt(v, 'seed')],
  ['acks', 'acks', (v) => oneOf(v, ['0', '1', 'all'], 'acks')],
  ['min.insync.replicas', 'min.insync.replicas', (v) => posInt(v, 'min.insync.replicas')],
  ['unclean', 'unclean.leader.election.enable', (v) => bool(v, 'unclean')],
  ['truncation', 'sim.truncation', (v) => oneOf(v, ['leader_epoch', 'high_watermark'], 'truncation')],
  ['elr', 'eligible.leader.replicas.enable', (v) => bool(v, 'elr')],
];

function nonNegInt(v, what) {
  if (!/^\d{1,15}$/.test(v)) throw new Error(`${what}: expected a whole number ≥ 0, got "${v}"`);
  return Number(v);
}
function posInt(v, what) {
  const n = nonNegInt(v, what);
  if (n < 1) throw new Error(`${what}: expected a whole number ≥ 1, got "${v}"`);
  return n;
}
function oneOf(v, list, what) {
  if (!list.includes(v)) throw new Error(`${what}: expected one of ${list.join(', ')}, got "${v}"`);
  return v;
}
function bool(v, what) {
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new Error(`${what}: expected true or false, got "${v}"`);
}

const enc = (v) => encodeURIComponent(String(v));

/** One recorded action as `at:verb:args`. */
export function encodeAction({ at_ms: at, action }) {
  const keys = Object.keys(action);
  const verb = keys[0];
  const v = action[verb];
  if (keys.length === 1 && BROKER_VERBS.includes(verb) && Number.isInteger(v)) return `${at}:${verb}:${v}`;
  if (keys.length === 1 && verb === 'produce' && v && typeof v === 'object') {
    const extra = Object.keys(v).filter((k) => !['topic', 'partition', 'count', 'acks', 'producer'].includes(k));
    if (!extra.length && typeof v.topic === 'string' && Number.isInteger(v.partition) && Number.isInteger(v.count)) {
      const parts = [at, 'produce', enc(v.topic), v.partition, v.count];
      if (v.acks !== undefined || v.producer !== undefined) parts.push(v.acks === undefined ? '' : enc(v.acks));
      if (v.producer !== undefined) parts.push(enc(v.producer));
      return parts.join(':');
    }
  }
  return `${at}:json:${enc(JSON.stringify(action))}`;
}

/** Parse `at:verb:args`; throws Error naming the problem. */
export function decodeAction(text, i = 0) {
  const where = `actions[${i}]`;
  const parts = text.split(':').map((p) => decodeURIComponent(p));
  if (parts.length < 3) throw new Error(`${where}: expected at:action:argument, got "${text}"`);
  const at_ms = nonNegInt(parts[0], `${where} time`);
  const verb = parts[1];
  if (BROKER_VERBS.includes(verb)) return { at_ms, action: { [verb]: nonNegInt(parts[2], `${where} broker`) } };
  if (verb === 'produce') {
    if (parts.length < 5) throw new Error(`${where}: expected at:produce:topic:partition:count, got "${text}"`);
    const p = { topic: parts[2], partition: nonNegInt(parts[3], `${where} partition`), count: nonNegInt(parts[4], `${where} count`) };
    if (parts[5]) p.acks = parts[5];
    if (parts[6]) p.producer = parts[6];
    return { at_ms, action: { produce: p } };
  }
  if (verb === 'json') {
    let action;
    try {
      action = JSON.parse(parts.slice(2).join(':'));
    } catch {
      throw new Error(`${where}: the action is not valid JSON`);
    }
    if (!action || typeof action !== 'object' || Array.isArray(action)) throw new Error(`${where}: expected an action object`);
    return { at_ms, action };
  }
  throw new Error(`${where}: unknown action "${verb}"`);
}

const LANES = 'ABCD';

/** Fork lanes ({ parent, at_ms, action }) as `P~at:verb:args,…`. */
export function encodeForks(forks) {
  return forks.map((f) => `${LANES[f.parent]}~${encodeAction(f)}`).join(',');
}

/** Parse `P~at:verb:args,…`; throws Error naming the bad fork. */
export function decodeForks(text) {
  return text.split(',').map((item, i) => {
    const m = /^([A-D])~(.+)$/.exec(item);
    if (!m) throw new Error(`forks[${i}]: expected LANE~at:action:argument (LANE one of A–D), got "${item}"`);
    const { at_ms, action } = decodeAction(m[2], i);
    return { parent: LANES.indexOf(m[1]), at_ms, action };
  });
}

/** The hash (without '#') for a state. */
export function encodeHash({ scenario, scenarioData, overrides = {}, actions = [], t, play, compare, forks = [] }) {
  const out = [];
  if (scenarioData) out.push(`scenario-data=${scenarioData}`);
  else if (scenario) out.push(`scenario=${enc(scenario)}`);
  for (const [key, ov] of SWITCHES) {
    if (overrides[ov] !== undefined) out.push(`${key}=${enc(overrides[ov])}`);
  }
  if (compare) out.push(`compare=${enc(compare)}`);
  if (forks.length) out.push(`forks=${encodeForks(forks)}`);
  if (actions.length) out.push(`actions=${actions.map(encodeAction).join(',')}`);
  if (play) out.push('play=1');
  else if (t !== undefined) out.push(`t=${Math.floor(t)}`);
  return out.join('&');
}

/**
 * Parse a hash (with or without '#'). Returns null when it holds no lab state;
 * throws Error with a message naming the bad part.
 */
export function parseHash(hash) {
  const text = String(hash || '').replace(/^#/, '');
  if (!text) return null;
  const state = { scenario: null, scenarioData: null, overrides: {}, actions: [], t: undefined, play: false, compare: null, forks: [] };
  let any = false;
  for (const pair of text.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const key = eq < 0 ? pair : pair.slice(0, eq);
    const raw = eq < 0 ? '' : pair.slice(eq + 1);
    const val = () => {
      try {
        return decodeURIComponent(raw);
      } catch {
        throw new Error(`${key}: badly escaped value`);
      }
    };
    any = true;
    const sw = SWITCHES.find(([k]) => k === key);
    if (sw) state.overrides[sw[1]] = sw[2](val());
    else if (key === 'scenario') state.scenario = val();
    else if (key === 'scenario-data') state.scenarioData = raw;
    else if (key === 'compare') state.compare = val();
    else if (key === 'forks') state.forks = raw ? decodeForks(raw) : [];
    else if (key === 'actions') state.actions = raw ? raw.split(',').map((a, i) => decodeAction(a, i)) : [];
    else if (key === 't') state.t = nonNegInt(val(), 't');
    else if (key === 'play') state.play = bool(val() || '1', 'play');
    else throw new Error(`unknown key "${key}"`);
  }
  return any ? state : null;
}

// The scenario packing (packScenario, unpackScenario) is pack.js: only a link
// with an inline scenario or an imported file needs it, so the page fetches it
// then.
export { packScenario, unpackScenario } from './pack.js';
