// Compare mode: the same scenario, seed and recorded actions under 2–4 sets
// of settings ("acks=1|acks=all,min.insync.replicas=2"), one lab per lane, on
// one clock. Lane A is the host's own lab (its core built with lane A's
// settings); the other lanes follow it: after every frame each follower takes
// the lead lab's scenario, switches and actions and travels to its time
// (Lab.seek: checkpoints, rebuild + replay), so every fault, API action, seek
// and tour step applies to all lanes. A long way (issue 63: a fork lane of
// 3,000 partitions, a link's lanes at 30 s) is a seek of the lane's own
// (Lab.seekBegin) that the host's frames replay a slice at a time (step),
// the lane shown as computing meanwhile; a newer target takes over from
// where it got, and whatever reads a lane's world lands it first (settle).
// Entering compare mode builds lane A's world only: the other lanes' worlds
// are built one per frame after it (step), each a task of its own, so that
// three or four worlds and their replays never make one long task; a lane
// not built yet shows as computing, from 0, like one on its way.
// The core applies the settings (WasmLab.withSettings), by the same rules as `failover-lab run FILE --set`,
// so each lane's report is the CLI's. Bundled with lanes.js (the drawing)
// and loaded on demand; it imports nothing: the lanes' Lab class is the
// host's own (no second copy of the wasm glue).
//
// Forks (issue 65, "what if … here?"): a lane may also be a fork of an
// earlier lane, { parent, at_ms, action }: its scenario is the parent's with
// the steps (and recorded actions) taken by at_ms and the new action at
// at_ms, built by the core (WasmLab.fork, src/fork.rs). A fork lane has no
// actions of its own; it is derived again whenever its parent's past
// changes (a switch, an action before at_ms), so it always shares that past.
// Where two lanes part is computed by the core too (WasmLab.divergence): a
// fork against its parent, any other lane against lane A. WasmLab.fork is
// in the full build only (www/pkg-explorer, so the first load stays within
// its budget): the host loads that build before its first fork and hands
// its builder over (setForkBuilder); the lanes themselves run on the lead's.
//
// Other cores (issue 63, item 3): when the lanes run on the fast build
// (lab.fast: a big world, subscribing consumers), which can write a world
// as bytes and read it back, a lane with a long way goes to a Worker
// (lane-workers.js, lane-worker.js) instead of the main thread's slices:
// the Worker replays it from 0 and sends the world back, which the page
// reads back a few parts a task (WasmLab.worldReader, readAway) and makes
// the lane's (adoptWorld). Meanwhile the lane shows how far the Worker got; a newer
// target takes over; whatever reads the lane lands it on the main thread
// as before, and the Worker's answer is then dropped. The same runs either
// way (the core is deterministic, tests/snapshot.rs).

import { LaneWorkers, lanesCanGoAway } from './lane-workers.js';
import { FAST_PARTITIONS, START_PART_MS, partitionsOf } from './lab.js';

const sameAction = (a, b) => a.at_ms === b.at_ms && JSON.stringify(a.action) === JSON.stringify(b.action);
const copyActions = (actions) => actions.map(({ at_ms, action }) => ({ at_ms, action }));
export const LANE_NAMES = ['A', 'B', 'C', 'D'];

// A scenario object's identity, for the key a fork lane is derived by.
const ids = new WeakMap();
let nextId = 0;
const idOf = (o) => {
  if (!o || typeof o !== 'object') return 'none';
  if (!ids.has(o)) ids.set(o, ++nextId);
  return ids.get(o);
};


/**
 * A lane the core needs longer than this (wall ms, estimated) to bring to
 * the lead's time catches up a slice per frame instead of in one go (as a
 * long seek of lane A does: tour.js's SLICE_MS).
 */
export const LANE_SLICE_MS = 50;

/** The wall ms of the core's work the behind lanes share per frame (as Lab's SEEK_SLICE_MS). */
export const LANE_FRAME_MS = 40;

/**
 * Begin taking lab `f` to t: at once when short, else a seek the frames
 * replay (Compare.step). A lane already on its way takes the new target
 * over from where it got (Lab.seekBegin), never finishing the old one first.
 * `pace`: the lead's wall ms per simulated ms, for a lane that has not run
 * yet (the same scenario on the same build runs at about its pace).
 */
function travel(f, t, pace) {
  if (f.seekJob) {
    if (f.seekJob.target !== t) f.seekBegin(t);
    return;
  }
  if (f.msPerSimMs === null && pace > 0) f.msPerSimMs = pace;
  const est = f.estimateSeekMs(t);
  // Short, or back with no pace known yet: landed now, as before (Lab.seek).
  const now = est == null ? t <= f.now() : est <= LANE_SLICE_MS;
  try {
    f.seekBegin(t);
    if (now) f.settle();
  } catch (e) {
    f.endSeek();
    throw e;
  }
}

/**
 * Make `f`'s world ready for a rebuild: a catch-up under way is dropped
 * (restore would finish it first), and so is a world cut in the middle of a
 * step (its rest is never run: the rebuild replaces it).
 */
function drop(f) {
  f.endSeek();
  if (f.partial !== null) {
    f.core?.free();
    f.core = null;
    f.partial = null;
    f.partialWallMs = 0;
  }
}

/** A task of its own (coreInParts' and readAway's pause). */
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

/** The wall ms of a world's reading back (Compare.readAway) per task. */
const READ_PART_MS = 30;

/**
 * A world's bytes (WasmLab.snapshotBytes) cut into the parts
 * WasmLab.worldReader and readPart take: src/snapshot.rs's layout, 4 bytes
 * of magic, the format's version, the count of parts and each part's
 * length (little-endian u32s), then the parts. The first holds everything
 * up to the end of the first part (the header, the table, the world's
 * shell); the others are a broker or a run of the trace each.
 */
function worldParts(bytes) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = dv.getUint32(8, true);
  let at = 12 + 4 * n;
  const parts = [];
  for (let k = 0; k < n; k++) {
    const end = at + dv.getUint32(12 + 4 * k, true);
    parts.push(bytes.subarray(k ? at : 0, end));
    at = end;
  }
  return parts;
}

/**
 * A started core of build W for scenario text (checked) with a lane's
 * settings, built over several tasks as Lab.loadInParts builds one: the
 * unstarted cluster (WasmLab.unstarted), then its start as many parts at a
 * time as START_PART_MS holds, a task each. Null once `gone()` says it is
 * no longer wanted (what was built is freed). The world `W.withSettings`
 * builds (tests/staged_start.rs).
 */
async function coreInParts(W, text, settings, gone) {
  const core = W.unstarted(text, settings ?? undefined);
  try {
    for (let started = false; !started; ) {
      await nextTask();
      if (gone()) {
        core.free();
        return null;
      }
      const t0 = performance.now();
      while (!(started = core.startParts(1)) && performance.now() - t0 < START_PART_MS);
    }
  } catch (e) {
    core.free();
    throw e;
  }
  return core;
}

/**
 * Free `lab`'s checkpoints but its first, the latest first, as many as
 * START_PART_MS holds a task, until `gone()`. The lab is left as its heap's
 * trim leaves it (lab.js cheapest): a seek replays from a checkpoint it
 * still has.
 */
async function dropCheckpointsInParts(lab, gone) {
  while (lab.checkpoints.length > 1) {
    await nextTask();
    if (gone()) return;
    const t0 = performance.now();
    while (lab.checkpoints.length > 1 && performance.now() - t0 < START_PART_MS) lab.checkpoints.pop().core.free();
  }
}

/**
 * Run `fn`, a rebuild of `lab`, on `built` ({ core, text, settings, W }: a
 * world coreInParts made for it) instead of a world built at once: the
 * lab's newCore answers that world, once, for that scenario text, settings
 * and build (anything else is built as before). Freed if `fn` did not take
 * it. (lab.js carries nothing for this: the page's first load has no bytes
 * to spare.)
 */
function withCore(lab, built, fn) {
  let left = built?.core ?? null;
  if (left) {
    lab.newCore = (text, settings = lab.laneSettings) => {
      if (!left || text !== built.text || settings !== built.settings || lab.W !== built.W) return Object.getPrototypeOf(lab).newCore.call(lab, text, settings);
      const core = left;
      left = null;
      return core;
    };
  }
  try {
    return fn();
  } finally {
    delete lab.newCore;
    left?.free();
  }
}

/**
 * Where lane `f` is on its way to the lead's time, as its bar says it: {
 * target, at (the simulated ms reached) }, or null once it has landed. A
 * lane whose world is not built yet (Compare.set) is at 0 on its way to
 * where the lead is going.
 */
export function laneWay(f, lead) {
  const away = f.away?.at ?? 0;
  if (f.unbuilt) return { target: lead.destination(), at: Math.min(away, lead.destination()) };
  return f.seekJob ? { target: f.seekJob.target, at: Math.min(Math.max(f.now(), away), f.seekJob.target) } : null;
}

/** The lead's switches and actions, as a lane not built yet takes them (Compare.sendAway). */
const leadState = (lead) => JSON.stringify([lead.overrides, copyActions(lead.actions)]);

/**
 * Whether compare lanes may go to Workers: `window.failoverLabLaneWorkers =
 * false`, set before the page loads, keeps them on the main thread (to
 * compare both ways: tests, benchmarks); setLaneWorkers changes it later.
 */
let workersAllowed = globalThis.failoverLabLaneWorkers !== false;
export function setLaneWorkers(on) {
  workersAllowed = !!on;
}

/**
 * Make `core`, a world another thread took to t (readAway),
 * lane `f`'s, as if the seek under way had landed at t: its recorded
 * actions up to t are in it. A lane not built yet (`fresh`) starts a
 * history of its own, with a checkpoint at t (as a rebuild has one at 0).
 */
function adoptWorld(f, core, t, fresh) {
  f.endSeek();
  f.freeDoomed();
  f.core?.free();
  f.core = core;
  f.partial = null;
  f.partialWallMs = 0;
  f.atBoundary = null;
  f.sinceCheckpointMs = 0;
  if (fresh) {
    f.dropCheckpoints();
    f.history++;
  }
  f.generation++;
  f.onRebuild?.();
  f.sampledGeneration = f.generation;
  for (const a of f.actions) if (a.at_ms <= t) a.applied = f.generation;
  f.horizon = Math.max(f.horizon, t);
  f.takeCheckpoint(t);
}

/** Rebuild lane `f` at 0 with these switches and actions, then take it to t (travel). */
function rebuildLane(f, { overrides, actions }, t, pace) {
  drop(f);
  f.restore({ overrides, actions, t: 0 });
  travel(f, t, pace);
}

/** WasmLab.fork of the full build, when the lead's own build lacks it. */
let forkBuilder = null;
export function setForkBuilder(build) {
  forkBuilder = build;
}

export class Compare {
  /** `host.lab` is the lead lab (lane A). */
  constructor(host) {
    this.host = host;
    this.text = null; // the compare string as given (canonical lanes joined by |)
    this.settings = []; // each lane's settings text
    this.followers = []; // Labs of lanes B…
    this.forks = []; // fork lanes, after the settings lanes: { parent (lane index), at_ms, action }
    this.pairs = []; // per lane (1…): the comparison with the lane it parts from
    this.div = null; // the first divergence: { at_ms, lane, parent, a, b }
  }

  get active() {
    return this.settings.length > 0;
  }

  /** What the lanes are: settings and forks (LanesView rebuilds when it changes). */
  get key() {
    return `${this.text ?? ''}|${JSON.stringify(this.forks)}`;
  }

  /** How many lanes are settings lanes (the fork lanes come after them). */
  get settingsLanes() {
    return this.settings.length - this.forks.length;
  }

  /** Lane i's fork ({ parent, at_ms, action }), or null for a settings lane. */
  forkOf(i) {
    return this.forks[i - this.settingsLanes] ?? null;
  }

  /** The lane lane i is compared with: a fork's parent, else lane A. */
  parentOf(i) {
    return this.forkOf(i)?.parent ?? 0;
  }

  /** Every lane's Lab, lane A first. */
  labs() {
    return this.active ? [this.host.lab, ...this.followers] : [];
  }

  /**
   * Lane A's world for compare string `text`, built over several tasks
   * before set(text) takes it (issue 63: on tour 19, lane A rebuilt with
   * its settings in set's task was 110 ms of a 209 ms task). Only a big
   * world on a build that starts worlds in parts gets one; a later
   * prebuild or set takes over one under way. Resolves once built (or not
   * wanted); a bad string is left for set to throw.
   */
  async prebuild(text) {
    this.dropBuilt();
    const mine = (this.building = {});
    const lead = this.host.lab;
    if (typeof lead.W.unstarted !== 'function') return;
    let lanes;
    try {
      lanes = lead.checkLanes(text);
    } catch {
      return; // set throws it, naming the lane and the key
    }
    const scenario = JSON.stringify(lead.effectiveScenario());
    if (partitionsOf(scenario) < FAST_PARTITIONS) return;
    const gone = () => mine !== this.building;
    const core = await coreInParts(lead.W, scenario, lanes[0], gone);
    if (!core) return;
    this.built = { core, lab: lead, W: lead.W, text: scenario, settings: lanes[0] };
    // The lab's checkpoints go with its world in set's rebuild: freed here
    // first, a task's worth at a time (on tour 18 at 30 s, set's task freed
    // 48 at once). The first stays, so the lab can still
    // seek back meanwhile (from it, as after its heap trimmed the others).
    await dropCheckpointsInParts(lead, gone);
    // set, and the draw after it, in a task of their own: not after the
    // last part, in the same task.
    await nextTask();
  }

  /** Free a world prebuild made that no set took (and stop one under way). */
  dropBuilt() {
    this.building = null;
    this.built?.core.free();
    this.built = null;
  }

  /** The world prebuild made for this lab, taken (withCore checks it is for its scenario and settings); null when there is none. */
  takeBuilt() {
    const b = this.built?.lab === this.host.lab ? this.built : null;
    if (b) this.built = null;
    this.dropBuilt();
    return b;
  }

  /**
   * Enter compare mode with a compare string, or leave it (null or ''). A bad
   * string throws an Error naming the lane and the key; the running lab is kept.
   * Lane A, rebuilt with its settings, is left at 0: the host takes it back
   * to its time as a reader's seek goes (a long way in slices); the other
   * lanes follow it there, their worlds built one per frame (step) once it
   * has landed. Lane A's world is the one prebuild made, if it fits.
   */
  set(text) {
    const lead = this.host.lab;
    if (text === null || text === undefined || String(text).trim() === '') {
      this.dropBuilt();
      if (!this.active) return;
      this.dispose();
      if (lead.laneSettings == null) return;
      lead.laneSettings = null;
      lead.rebuild(0);
      return;
    }
    // Every lane must build from this scenario before anything changes.
    const lanes = lead.checkLanes(text);
    const built = this.takeBuilt();
    this.dispose();
    lead.laneSettings = lanes[0];
    lead.endSeek();
    // Lane A is rebuilt on the world prebuild made, if it is this one's.
    withCore(lead, built, () => lead.rebuild(0));
    this.settings = lanes;
    this.text = lanes.join('|');
    this.followers = lanes.slice(1).map((l) => {
      const f = new lead.constructor();
      // The lead's build (the fast one for subscribing consumers, which the
      // page's first-load wasm cannot run: lab.js needsFullBuild); one build
      // for every lane, so the core can compare their traces.
      f.W = lead.W;
      f.laneSettings = l;
      f.base = lead.base;
      // Built by a frame of its own (step), or at once by whatever reads it (settle).
      f.unbuilt = true;
      return f;
    });
  }

  dispose() {
    this.dropBuilt();
    this.endWait(false);
    this.pool?.dispose();
    this.pool = null;
    for (const f of this.followers) {
      f.dropCheckpoints();
      f.core?.free();
      f.built?.core.free();
      f.built = null;
    }
    this.followers = [];
    this.settings = [];
    this.forks = [];
    this.pairs = [];
    this.text = null;
    this.div = null;
  }

  /**
   * Build follower `f`'s world, which set left for later: the lead's
   * switches and actions at 0, then on its way to the lead's time (travel;
   * a long way is made by the frames after this one).
   */
  build(f) {
    const lead = this.host.lab;
    const built = f.built;
    f.built = null;
    f.building = null; // a build in parts under way stops
    f.unbuilt = false;
    withCore(f, built, () => rebuildLane(f, { overrides: lead.overrides, actions: copyActions(lead.actions) }, lead.destination(), lead.msPerSimMs));
  }

  /**
   * Whether lane `f`, not built yet, is first built in parts (buildInParts):
   * a big world on a build that starts worlds in parts (on the
   * 20,000-partition tour a lane's world built at once was a task of
   * 125-130 ms).
   */
  inParts(f) {
    const lead = this.host.lab;
    return typeof f.W.unstarted === 'function' && lead.core?.partitionCount() >= FAST_PARTITIONS;
  }

  /**
   * Build lane `f`'s world at 0 over several tasks (coreInParts) for the
   * lead's switches as they are; build(f) then takes it (a frame's step,
   * once it is there). A lane built meanwhile by other means (buildAll,
   * a Worker) or gone stops it.
   */
  async buildInParts(f) {
    const lead = this.host.lab;
    const job = (f.building = {});
    f.overrides = { ...lead.overrides };
    const text = JSON.stringify(f.effectiveScenario());
    const settings = f.laneSettings;
    const W = f.W;
    try {
      const core = await coreInParts(W, text, settings, () => f.building !== job || !this.followers.includes(f));
      if (!core) return;
      f.building = null;
      f.built = { core, text, settings, W };
    } catch {
      // Not built in parts (it cannot happen with a scenario that loads): build(f) makes it at once.
      if (f.building === job) f.building = null;
      f.partsFailed = true;
    }
  }

  /** Build every lane set left unbuilt, now. */
  buildAll() {
    for (const f of this.followers) if (f.unbuilt) this.build(f);
  }

  /**
   * Fork lane `parent` at `at_ms` with `action` (issue 65): a new lane whose
   * run is the parent's up to at_ms, then the action. Throws an Error (the
   * core's message for a bad action; the lane limit) and changes nothing.
   */
  addFork(parent, at_ms, action) {
    this.setForks([...this.forks, { parent, at_ms, action }]);
  }

  /**
   * The fork lanes, as a link gives them (after the settings lanes, if any):
   * each { parent, at_ms, action } forks an earlier lane. [] drops them
   * (and leaves compare mode when no settings lanes are left).
   */
  setForks(list) {
    const lead = this.host.lab;
    const keep = this.text ? this.settings.length - this.forks.length : 1;
    if (!list.length) {
      if (!this.text) return this.set(null);
      for (const f of this.followers.splice(keep - 1)) {
        f.dropCheckpoints();
        f.core?.free();
      }
      this.settings.length = keep;
      this.forks = [];
      this.pairs.length = keep;
      this.div = null;
      return;
    }
    if (keep + list.length > LANE_NAMES.length) throw new Error(`fork: at most ${LANE_NAMES.length} lanes (A to ${LANE_NAMES.at(-1)}); remove a lane first`);
    // A fork is derived from its parent's switches and actions: a parent's world is built first.
    this.buildAll();
    const t = lead.now();
    const settings = this.settings.slice(0, keep);
    if (!settings.length) settings.push(lead.laneSettings ?? '');
    const labs = [lead, ...this.followers.slice(0, keep - 1)];
    const made = [];
    try {
      list.forEach((fk, k) => {
        const i = keep + k;
        const { parent, at_ms: at, action } = fk;
        if (!(Number.isInteger(parent) && parent >= 0 && parent < i)) throw new Error(`fork: lane ${LANE_NAMES[i]} must fork an earlier lane, got ${parent}`);
        if (!(Number.isInteger(at) && at >= 0)) throw new Error(`fork: expected a time in ms ≥ 0, got ${at}`);
        const f = new lead.constructor();
        f.W = lead.W;
        f.laneSettings = labs[parent].laneSettings;
        made.push(f);
        this.derive(f, labs[parent], { parent, at_ms: at, action }, t, true);
        labs.push(f);
        settings.push(settings[parent]);
      });
    } catch (e) {
      for (const f of made) {
        f.dropCheckpoints();
        f.core?.free();
      }
      throw e;
    }
    for (const f of this.followers.splice(keep - 1)) {
      f.dropCheckpoints();
      f.core?.free();
    }
    this.followers.push(...made);
    this.settings = settings;
    this.forks = list.map(({ parent, at_ms, action }) => ({ parent, at_ms, action }));
    this.pairs = [];
    this.div = null;
  }

  /**
   * Make `f` the fork `fk` of lane `p` (at time t): the core builds its
   * scenario from the parent's (WasmLab.fork); nothing is rebuilt while
   * the parent's past up to the fork is unchanged (`force`: build anyway).
   */
  derive(f, p, fk, t, force = false) {
    const acts = p.actions.filter((a) => a.at_ms <= fk.at_ms).map(({ at_ms, action }) => ({ at_ms, action }));
    const key = [idOf(p.base), JSON.stringify(p.overrides), JSON.stringify(acts), p.laneSettings ?? '', JSON.stringify(fk)].join('|');
    if (!force && key === f.forkKey) return false;
    // The recorded actions go as the scenario steps they are replayed as.
    const steps = acts.map((a) => ({ at_ms: a.at_ms, ...a.action }));
    const build = p.W.fork ? p.W.fork.bind(p.W) : forkBuilder;
    if (!build) throw new Error('fork: the core that builds forks (the full build, pkg-explorer) is not loaded');
    const text = build(JSON.stringify(p.effectiveScenario()), JSON.stringify(steps), fk.at_ms, JSON.stringify(fk.action));
    if (!force && f.base && JSON.stringify(f.base) === text) {
      f.forkKey = key;
      return false;
    }
    f.base = JSON.parse(text);
    f.W = p.W;
    rebuildLane(f, { overrides: {}, actions: [] }, t, this.host.lab.msPerSimMs ?? p.msPerSimMs);
    f.forkKey = key;
    return true;
  }

  /**
   * Bring every follower to the lead lab's scenario, switches, actions and
   * time: a long way is begun here and made by the frames (step), a short
   * one now.
   */
  sync() {
    if (!this.active) return;
    const lead = this.host.lab;
    const t = lead.now();
    const pace = lead.msPerSimMs;
    const labs = this.labs();
    for (const [j, f] of this.followers.entries()) {
      // Built later from the lead as it is then (build): nothing to follow yet.
      if (f.unbuilt) continue;
      const fk = this.forkOf(j + 1);
      if (fk) {
        // A fork shares its parent's past: derived again when that changed.
        if (!this.derive(f, labs[fk.parent], fk, t) && f.destination() !== t) travel(f, t, pace);
        continue;
      }
      const same = f.base === lead.base && f.W === lead.W && JSON.stringify(f.overrides) === JSON.stringify(lead.overrides);
      const n = f.actions.length;
      const prefix = n <= lead.actions.length && f.actions.every((a, i) => sameAction(a, lead.actions[i]));
      if (!same) {
        f.base = lead.base;
        // The rebuild frees the old world (each core frees itself) and builds
        // the new one from the lead's build.
        f.W = lead.W;
        rebuildLane(f, { overrides: lead.overrides, actions: copyActions(lead.actions) }, t, pace);
        continue;
      }
      if (!prefix || lead.actions.slice(n).some((a) => a.at_ms < f.now())) {
        // History forked (an action in the past): replay from the start.
        rebuildLane(f, { overrides: lead.overrides, actions: copyActions(lead.actions) }, t, pace);
        continue;
      }
      // New actions at or after the follower's time are applied on the way;
      // the checkpoints after the first of them lack it (a lane that went
      // further before a seek back took them).
      if (lead.actions.length > n) f.dropCheckpoints(lead.actions[n].at_ms);
      for (const a of lead.actions.slice(n)) f.actions.push({ at_ms: a.at_ms, action: a.action });
      travel(f, t, pace);
    }
    if (!this.behind().length) this.findDivergence();
  }

  /**
   * The lanes still on their way to the lead's time: [{ i (lane index), lab }].
   * A lane not built yet counts once the lead has landed: it is built for
   * the time the lead lands on (step), and said so from then on; or at
   * once when a Worker makes its way meanwhile.
   */
  behind() {
    const lead = this.host.lab;
    const out = [];
    this.followers.forEach((f, j) => {
      if (f.seekJob || (f.unbuilt && (!lead.seekJob || f.away))) out.push({ i: j + 1, lab: f });
    });
    return out;
  }

  /**
   * One frame of the lanes' catch-up: a lane not built yet is built (one
   * world is this frame's work), else the lanes behind share `workMs` of
   * the core's work (Lab.seekSlice). True once every lane has landed (the
   * divergences are then found again).
   */
  step(workMs = LANE_FRAME_MS) {
    let late = this.behind();
    if (!late.length) return true;
    if (this.lanePool()) {
      for (const { i, lab } of late) if (!this.isAway(lab) && this.worthSending(lab)) this.sendAway(i, lab);
      late = late.filter(({ lab }) => !this.isAway(lab));
      if (!late.length) return false;
    }
    const next = late.find(({ lab }) => lab.unbuilt);
    // A big world's lane: its world is made over the tasks between the
    // frames (buildInParts), and taken by a frame once it is there; the
    // lanes already built make their way meanwhile.
    const parts = next && !next.lab.built && !next.lab.partsFailed && this.inParts(next.lab);
    if (parts && !next.lab.building) this.buildInParts(next.lab);
    if (next && !parts) this.build(next.lab);
    else {
      const going = late.filter(({ lab }) => !lab.unbuilt);
      const each = Math.max(1, workMs / Math.max(1, going.length));
      for (const { lab } of going) lab.seekSlice(each);
    }
    if (this.behind().length) return false;
    this.findDivergence();
    return true;
  }

  // ---- lanes on other cores (issue 63, item 3) ------------------------------

  /** The lanes' Workers, when lanes can go away (the lead's build reads worlds back), else null. */
  lanePool() {
    if (!workersAllowed) return null;
    if (this.pool) return this.pool.broken ? null : this.pool;
    if (!this.host.lab.fast || !lanesCanGoAway(this.host.lab.W)) return null;
    this.pool = new LaneWorkers({
      lanes: LANE_NAMES.length - 1,
      onLanded: (job) => this.landAway(job),
      onFailed: (job) => {
        // Made on the main thread instead (the frames' slices), from where its own copy got.
        if (job.lab.away === job) job.lab.away = null;
      },
    });
    return this.pool;
  }

  /**
   * Whether `job` is still the way lane `f` is going: the seek it was sent
   * for, or for a lane not built yet, the lead's time, scenario, switches
   * and actions as they were.
   */
  stillGoing(f, job) {
    if (!job.unbuilt) return f.seekJob === job.seekJob;
    const lead = this.host.lab;
    return f.unbuilt && lead.destination() === job.target && lead.base === job.base && leadState(lead) === job.lead;
  }

  /** Whether lane `f`'s way is being made by a Worker (the job still its own). */
  isAway(f) {
    if (!f.away) return false;
    if (this.stillGoing(f, f.away)) return true;
    this.callBack(f);
    return false;
  }

  /** Forget lane `f`'s Worker job: the lane is made here (settle) or took another way. */
  callBack(f) {
    if (!f.away) return;
    this.pool?.cancel(f.away);
    f.away = null;
  }

  /**
   * Send lane i (`f`) away: its scenario with its switches, settings and
   * recorded actions, to the time it is going to. A lane not built yet
   * takes the lead's switches and actions first, as its build would.
   */
  sendAway(i, f) {
    const lead = this.host.lab;
    const unbuilt = !!f.unbuilt;
    if (unbuilt) {
      f.overrides = { ...lead.overrides };
      f.actions = copyActions(lead.actions);
    }
    const target = unbuilt ? lead.destination() : f.seekJob.target;
    const scenario = JSON.stringify(f.effectiveScenario());
    const settings = f.laneSettings ?? null;
    const actions = copyActions(f.actions.filter((a) => a.at_ms <= target));
    f.away = this.pool.send({
      lane: i,
      key: JSON.stringify([scenario, settings, actions]),
      scenario,
      settings,
      actions,
      target,
      lab: f,
      unbuilt,
      seekJob: f.seekJob,
      base: lead.base,
      lead: unbuilt ? leadState(lead) : null,
    });
  }

  /** Every lane on its way to lane A's time (or not built yet) that no Worker has yet: sent. */
  sendLanesAway() {
    const t = this.host.lab.destination();
    this.followers.forEach((f, j) => {
      // A lane going elsewhere is taken to lane A's new time once it lands (sync).
      const going = f.unbuilt || f.seekJob?.target === t;
      if (going && !this.isAway(f) && this.worthSending(f)) this.sendAway(j + 1, f);
    });
  }

  /**
   * Whether lane `f`'s way is worth a Worker, which replays it from 0 and
   * sends the whole world back (reading it back costs about a world's
   * build): a way the lead's pace says is long (LANE_SLICE_MS) from 0,
   * and, for a lane already on its way here, more than half of it still
   * ahead (nearly there, it finishes faster where it is).
   */
  worthSending(f) {
    const lead = this.host.lab;
    const pace = lead.msPerSimMs ?? f.msPerSimMs;
    const target = f.unbuilt ? lead.destination() : f.seekJob.target;
    if (!(pace > 0) || target * pace <= LANE_SLICE_MS) return false;
    return f.unbuilt || f.now() <= target / 2;
  }

  /**
   * A Worker's world is back: lane f's, if it is still the way f is going,
   * read back over several tasks (readAway), the lane still away meanwhile.
   */
  landAway(job) {
    const f = job.lab;
    if (f.away !== job || !this.followers.includes(f)) return;
    if (!this.stillGoing(f, job)) {
      f.away = null;
      return;
    }
    this.readAway(job);
  }

  /**
   * Read `job`'s world back a few parts a task (WasmLab.worldReader, about
   * READ_PART_MS a task: tour 19's world in one call was a task of 160-200
   * ms), then make it the lane's in a task of its own. A lane called back
   * or gone elsewhere meanwhile (settle, a newer seek) stops the reading.
   */
  async readAway(job) {
    const f = job.lab;
    const wanted = () => f.away === job && this.followers.includes(f) && this.stillGoing(f, job);
    let reader = null;
    let core = null;
    try {
      const parts = worldParts(job.bytes);
      reader = f.W.worldReader(job.scenario, job.settings ?? undefined, parts[0]);
      for (let i = 1; i < parts.length; ) {
        await nextTask();
        if (!wanted()) return;
        const t0 = performance.now();
        do reader.readPart(parts[i++]);
        while (i < parts.length && performance.now() - t0 < READ_PART_MS);
      }
      core = reader.finish(); // the reader is used up
      reader = null;
      await nextTask();
    } catch {
      // Not read back (it cannot happen with one build): made here instead.
      if (f.away === job) f.away = null;
      return;
    } finally {
      reader?.free();
    }
    if (!wanted()) {
      core.free();
      return;
    }
    f.away = null;
    if (job.unbuilt) {
      f.unbuilt = false;
      f.building = null;
      f.built?.core.free();
      f.built = null;
    }
    adoptWorld(f, core, job.target, job.unbuilt);
    // Landed here, not by a frame's step (the next frame finds none behind):
    // the divergences are found once every lane is in, and the host is told
    // to draw (the lane was left drawn as computing, lanes-workers.test).
    if (!this.behind().length) this.findDivergence();
    this.host.dirty = true;
  }

  /** Land every lane now, in one go (whatever reads a lane's world does first). */
  settle() {
    for (const f of this.followers) this.callBack(f);
    this.buildAll();
    if (!this.behind().length) return;
    for (const { lab } of this.behind()) lab.settle();
    this.findDivergence();
    // Landed here (a script's lanes()), not by the host's frame: its next
    // frame finds none behind, so it is told to draw them (fork.test.mjs
    // read a link's lanes still drawn as computing).
    this.host.dirty = true;
  }

  /**
   * The host's frame (lane A's own seek goes first: the lanes wait while
   * it is under way, then take its target): the lanes behind make a slice of
   * their way, and a tour's wait (landAt) ends or shows how far they got.
   * 'landed' when the last lane just landed (the host draws everything),
   * 'behind' while some are on their way (the host draws the lanes), else ''.
   */
  frame(workMs = LANE_FRAME_MS) {
    const lead = this.host.lab;
    // With Workers, the lanes need not wait for lane A's own seek: they go
    // to where it is going, on other cores, while it replays here.
    if (lead.seekJob && this.lanePool()) this.sendLanesAway();
    const out = lead.seekJob || !this.behind().length ? '' : this.step(workMs) ? 'landed' : 'behind';
    const w = this.waiting;
    if (w) {
      if (lead.seekJob || lead.now() !== w.t) this.endWait(false);
      else if (!this.behind().length) this.endWait(true);
      else w.progress(this.landedShare());
    }
    return out;
  }

  /**
   * A tour's stop that reads the lanes: a promise of true once every lane
   * has reached lane A's time t (the frames make their way), false when
   * lane A moved elsewhere meanwhile or a newer wait took over;
   * `progress(f)`, 0 to 1, on the way.
   */
  landAt(t, progress) {
    this.endWait(false);
    if (!this.behind().length) return Promise.resolve(true);
    return new Promise((resolve) => (this.waiting = { t, resolve, progress }));
  }

  endWait(there) {
    const w = this.waiting;
    this.waiting = null;
    w?.resolve(there);
  }

  /** How far the lanes have come, 0 to 1 (each lane weighs the same, a landed one 1). */
  landedShare() {
    const n = this.followers.length;
    const late = this.progress();
    return n ? (n - late.length + late.reduce((a, p) => a + p.progress, 0)) / n : 1;
  }

  /**
   * The APIs' `seeking` in compare mode: lane A's (`s`: its seek, or null)
   * with `lanes` (progress) beside it while lanes are on their way.
   */
  seeking(s) {
    const lanes = this.active ? this.progress() : [];
    return lanes.length ? { target: s?.target ?? this.host.lab.now(), progress: s?.progress ?? 1, lanes } : s;
  }

  /**
   * The lanes on their way, as the APIs' `seeking` says them: [{ lane
   * ('B'…), target (ms), at (the simulated ms reached), progress (0 to 1) }].
   */
  progress() {
    return this.behind().map(({ i, lab }) => {
      const { target, at } = laneWay(lab, this.host.lab);
      return { lane: LANE_NAMES[i], target, at, progress: target > 0 ? Math.min(1, at / target) : 1 };
    });
  }

  /**
   * About how many wall ms a seek to t costs with the lanes, for a tour's
   * stop that reads them: lane A's (`lead`, null: not known) while every
   * lane would follow it at once (travel: under LANE_SLICE_MS, as before),
   * else the most any lane needs, so that the stop waits for them (null
   * while one cannot tell).
   */
  estimateMs(t, lead) {
    if (lead == null || !this.active) return lead;
    const pace = this.host.lab.msPerSimMs;
    let most = 0;
    for (const f of this.followers) {
      if (f.msPerSimMs === null && pace > 0) f.msPerSimMs = pace;
      const est = f.core ? f.estimateSeekMs(t) : null;
      if (est == null) return null;
      most = Math.max(most, est);
    }
    return most > LANE_SLICE_MS ? Math.max(lead, most) : lead;
  }

  /**
   * Where each lane first differs from the lane it is compared with (a
   * fork's parent, else lane A), so far: the core compares the traces
   * (WasmLab.divergence), incrementally while the run goes on. `div` is the
   * earliest of them.
   */
  findDivergence() {
    const labs = this.labs();
    let first = null;
    for (let j = 1; j < labs.length; j++) {
      const pi = this.parentOf(j);
      const [p, l] = [labs[pi], labs[j]];
      const c = (this.pairs[j] ??= { equal: 0, checked: 0, div: null, hist: '', gen: '', fork: [] });
      // Event i is the same at any time of one history (the core is
      // deterministic), so the equal prefix, once compared, holds for every
      // seek: only the events after it are compared again. An action forks
      // a lane's trace after the events it had (Lab.forkedAt).
      const hist = `${p.history},${l.history}`;
      if (hist !== c.hist) {
        c.hist = hist;
        c.equal = 0;
      }
      c.equal = Math.min(c.equal, p.forkedAt(c.fork[0]), l.forkedAt(c.fork[1]));
      c.fork = [p.fork?.n, l.fork?.n];
      const gen = `${p.generation},${l.generation}`;
      if (gen !== c.gen) {
        c.gen = gen;
        c.div = null;
        c.checked = Math.min(c.equal, p.traceLength(), l.traceLength());
      }
      if (!c.div) {
        const i = p.core.divergence(l.core, c.checked);
        if (i >= 0) {
          // The two events there (an event only one lane has is a difference too).
          const a = p.core.traceRange(i, 1)[0] ?? null;
          const b = l.core.traceRange(i, 1)[0] ?? null;
          c.div = { at_ms: Math.min(a?.at_ms ?? Infinity, b?.at_ms ?? Infinity), index: i, lane: j, parent: pi, a, b };
        } else {
          c.checked = Math.min(p.traceLength(), l.traceLength());
          c.equal = Math.max(c.equal, c.checked);
        }
      }
      if (c.div && (!first || c.div.at_ms < first.at_ms)) first = c.div;
    }
    this.div = first;
  }

  /** Lane i's divergence from the lane it is compared with (null: none so far). */
  divOf(i) {
    return this.pairs[i]?.div ?? null;
  }

  /**
   * `failoverLab.lanes()`: each lane's settings and report at the current
   * time; `events`, the lane's trace so far (as `failoverLab.trace()`), is
   * read when asked for (not enumerable: it stays out of JSON and copies).
   */
  lanes() {
    this.settle();
    return this.labs().map((l, i) => {
      const lane = { settings: this.settings[i], report: l.report() };
      // A fork lane: what it forked ({ from, at_ms, action }) and where it parts from that lane.
      const fk = this.forkOf(i);
      if (fk) lane.fork = { from: LANE_NAMES[fk.parent], at_ms: fk.at_ms, action: fk.action };
      const d = this.divOf(i);
      if (i > 0) lane.divergence = d && { from: LANE_NAMES[d.parent], at_ms: d.at_ms, index: d.index };
      return Object.defineProperty(lane, 'events', { get: () => l.traceSince(0) });
    });
  }
}
