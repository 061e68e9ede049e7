// The lab: a thin wrapper around the wasm core. It owns the scenario being run,
// the user's recorded actions ({at_ms, action}) and time travel: going back in
// time (or changing a config switch, or the seed) rebuilds the lab from the
// scenario and replays the recorded actions, which the deterministic core turns
// into exactly the same run. No Kafka rule lives here.

import init, { WasmLab } from './pkg/failover_lab.js';
export { WasmLab };

let ready = null;
/** Load and instantiate the wasm module once. */
export function initWasm() {
  ready ??= init();
  return ready;
}

/**
 * A scenario with at least this many partitions runs on the fast build
 * (issue 63): tour 18 and the medium bench (3,000), the 20,000-partition
 * tour and benches; the other tours (600 at most) run on the page's own.
 */
export const FAST_PARTITIONS = 2000;

let fast = null;
/**
 * The speed-optimised build of the same core (www/pkg-explorer: opt-level 3,
 * the explorer's sweeps included), loaded on demand by a lab that runs a big
 * scenario and by the trade-off explorer; no first load fetches it. Resolves
 * to its WasmLab, or to the page's own when it cannot be loaded (the
 * element's package without it, a server that lacks it): the same runs,
 * only slower.
 */
export function initFastWasm() {
  fast ??= import(new URL('./fast-wasm.js', import.meta.url).href)
    .then(async (m) => {
      await m.default();
      return m.WasmLab;
    })
    .catch(() => initWasm().then(() => WasmLab));
  return fast;
}

/** How many partitions a scenario (object or JSON text) asks for; 0 when it cannot tell. */
export function partitionsOf(scenario) {
  try {
    const s = typeof scenario === 'string' ? JSON.parse(scenario) : scenario;
    return (s?.topics || []).reduce((n, t) => n + (Number(t?.partitions) || 1), 0);
  } catch {
    return 0;
  }
}

/**
 * Whether a scenario needs the full build: FAST_PARTITIONS partitions or
 * more, or consumers that subscribe (several members per group, issue 64:
 * the classic protocol is left out of the page's first-load wasm).
 */
export function needsFullBuild(scenario) {
  if (partitionsOf(scenario) >= FAST_PARTITIONS) return true;
  try {
    const s = typeof scenario === 'string' ? JSON.parse(scenario) : scenario;
    // Consumer groups, and an imported cluster as it stands (topic_id, initial_state).
    return (s?.clients || []).some((c) => c?.subscribe === true) || (s?.topics || []).some((t) => t?.initial_state || t?.topic_id);
  } catch {
    return false;
  }
}

function errorMessage(e) {
  if (e instanceof Error) return e.message;
  return String(e);
}

/** Parse a scenario given as an object or JSON text; throws Error on bad JSON. */
function toObject(scenario) {
  if (typeof scenario === 'string') {
    try {
      return JSON.parse(scenario);
    } catch (e) {
      throw new Error(`scenario is not valid JSON: ${errorMessage(e)}`);
    }
  }
  if (scenario && typeof scenario === 'object') return structuredClone(scenario);
  throw new Error('expected a scenario as a JSON string or an object');
}

function producerAcks(scenario) {
  const p = (scenario.clients || []).find((c) => c && c.type === 'producer');
  return p && p.acks !== undefined ? String(p.acks) : 'all';
}

function topicOrCluster(scenario, key, fallback) {
  const t = (scenario.topics || [])[0];
  if (t && t.config && t.config[key] !== undefined) return t.config[key];
  if (scenario.config && scenario.config[key] !== undefined) return scenario.config[key];
  return fallback;
}

// A seek replaces the world it leaves; dropping it (freeing what it alone
// holds, a few MB in tour 11) waits for a task of its own instead of delaying
// the seek's frame. At most one world per lab waits (compare lanes seek
// together): a lab's second seek in the same task frees its first at once.
// The heap budget counts a waiting world as gone, by what freeing one
// released lately (pendingBytes).
const waiting = new Set(); // labs with a world waiting (lab.doomed)
let released = 0;
let flushQueued = false;
function flushDoomed() {
  flushQueued = false;
  for (const lab of waiting) lab.freeDoomed();
  waiting.clear();
}
const pendingBytes = () => {
  let n = 0;
  for (const lab of waiting) if (lab.doomed) n++;
  return n * released;
};

/**
 * The wall ms a playing page lets the core run in one animation frame; the
 * rest of the frame draws. A world the core cannot run at the asked speed
 * (the 20,000-partition cluster runs at ~5x real time in Chromium) then plays
 * as fast as the core goes while the page keeps answering, instead of
 * computing seconds of simulated time in one frame and freezing for them.
 */
export const FRAME_WORK_MS = 50;

/**
 * The wall ms of the core's work a long seek does per animation frame
 * (Lab.seekSlice, driven by the page's and the element's frames): the
 * replay of the 20,000-partition bench goes at about the core's own pace,
 * and the page still paints and answers ~15 times a second.
 */
export const SEEK_SLICE_MS = 40;

/**
 * A slice of the core's work (Lab.bounded) runs in chunks of this many
 * events, the clock read between them: most events cost a few µs, but one
 * can cost tens of ms on the 20,000-partition tour (a metadata update that
 * touches every partition), so a chunk sized by the average pace ran 60-70
 * ms over its slice there; a chunk of 256 is at most a few ms of ordinary
 * events, and reading the clock that often costs nothing measurable.
 */
const CHUNK_EVENTS = 256;

/**
 * The events of the cluster's start (the step from 0) a fresh lab's first
 * estimate may run, for a world under FAST_PARTITIONS (tour 11's 600
 * partitions fit); a bigger world's start (tour 18's 6,867 events, the
 * 20,000-partition tour's 11,662) is left to the seek's slices.
 */
const START_EVENTS = 8000;


/**
 * The wall ms of the cluster's start a load in parts (Lab.loadInParts) runs
 * per task: the 20,000-partition tour's 60 brokers bootstrap over about a
 * dozen tasks.
 */
export const START_PART_MS = 30;

/** A task of its own: what a load in parts awaits between its parts. */
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

/** The core's work (wall ms) a fresh lab's first estimate is measured over (Lab.estimateSeekMs). */
const MEASURE_MS = 60;

/**
 * Where the lab keeps checkpoints for a reader who scrubs around a moment
 * (the focus: Lab.moveFocus): the grid steps these distances behind the
 * moment a long seek went to (its rungs). The even spacing of a full heap
 * leaves seconds between checkpoints on the 20,000-partition bench, so
 * a step back of a few hundred ms from where a reader jumped replays those
 * seconds; from the rung behind it, at most about the gap between rungs.
 * The rungs are taken by the replays of the seeks that follow the jump near
 * it (a reader scrubbing there), not by the jump itself: seeks from one far
 * moment to another take none. Where play (or runFor) stopped is a moment
 * too: the first seek near it takes them. 0 is the step at the moment itself.
 */
export const FOCUS_RUNGS_MS = [0, 500, 1000, 2000, 4000];
/** The focus's window: its moment and this far behind it (to the farthest rung); a seek this close stays in the focus. */
const FOCUS_SPAN_MS = FOCUS_RUNGS_MS.at(-1);

/**
 * The speed a playing page reaches, in simulated ms per wall ms: running
 * averages of both over the last frames (each frame weighs what it cost).
 * null until ten frames have played.
 */
export class PlayMeter {
  constructor() {
    this.reset();
  }

  reset() {
    this.sim = 0;
    this.wall = 0;
    this.frames = 0;
  }

  /** One frame: `simMs` simulated in the `wallMs` since the frame before. */
  note(simMs, wallMs) {
    if (!(wallMs > 0) || !(simMs >= 0)) return;
    this.sim = 0.9 * this.sim + 0.1 * simMs;
    this.wall = 0.9 * this.wall + 0.1 * wallMs;
    this.frames += 1;
  }

  get speed() {
    return this.frames >= 10 && this.wall > 0 ? this.sim / this.wall : null;
  }

  /** The reached speed when it falls clearly short (below 80 %) of `asked`, else null. */
  shortOf(asked) {
    const v = this.speed;
    return v !== null && v < 0.8 * asked ? v : null;
  }
}

/**
 * The lab's report as a tour question reads it (tour-guide.js answer): each
 * field fetched when first read, built alone by the core where it can be
 * (WasmLab.reportPart: the small fields and `availability`), and the whole
 * report built only when a field it cannot build alone is read
 * (`partitions`, `delivery`, …). On 20,000 partitions a question on
 * `availability` cost the whole report, ~0.2 s (issue 63). The values are
 * the report's own (tests/staged_start.rs); the page's own build has no
 * reportPart, and gets the whole report at once.
 */
export function lazyReport(lab) {
  const core = lab.core;
  if (typeof core?.reportPart !== 'function') return lab.report();
  // The fields read are kept while the world stays as it is (the same core,
  // time, events and trace): a stop's card drawn again (the landed draw,
  // then the stop's arrival) reads them once.
  const at = `${core.nowMs()}:${core.eventsProcessed()}:${core.traceLength()}`;
  if (lab.reportFields?.core !== core || lab.reportFields.at !== at) lab.reportFields = { core, at, got: new Map(), whole: null };
  const c = lab.reportFields;
  const field = (key) => {
    if (c.got.has(key)) return c.got.get(key);
    if (!c.whole) {
      const v = core.reportPart(key);
      if (v !== undefined) {
        c.got.set(key, v);
        return v;
      }
      c.whole = lab.report();
    }
    return c.whole[key];
  };
  return new Proxy({}, {
    get: (own, key) => (Object.hasOwn(own, key) ? own[key] : typeof key === 'string' ? field(key) : undefined),
    has: (own, key) => Object.hasOwn(own, key) || (typeof key === 'string' && field(key) !== undefined),
    set: (own, key, v) => {
      own[key] = v; // the compare tour's `lanes`, set beside the report
      return true;
    },
  });
}

export class Lab {
  constructor() {
    // The build this lab's cores come from: the page's own, or the fast one
    // for a big scenario (prepare).
    this.W = WasmLab;
    this.nextW = null; // the build prepare chose for the next load
    this.loading = null; // a load in parts under way (loadInParts), superseded by the next load
    this.base = null; // the scenario as loaded (object)
    this.overrides = {}; // seed / acks / min.insync.replicas / unclean switches
    this.actions = []; // [{at_ms, action}] recorded user actions
    this.core = null;
    this.generation = 0; // bumps on every rebuild and seek (renderers reset what is tied to a moment)
    // Bumps only when the run itself changes (load, switch, link), not on a
    // seek: the core is deterministic, so trace event i and the panels' DOM
    // stay valid across seeks of one history (what they cache by). An action
    // (act) keeps the history but forks the trace after `fork.len` events.
    this.history = 0;
    this.fork = null;
    this.sampleMs = 500;
    this.onSample = null; // (t, metrics) at every multiple of sampleMs
    this.onRebuild = null; // () before a rebuilt core replays
    // Time travel (issue 14): checkpoints belong to the lab's clock, not to
    // the animation. Whenever the core runs (play, runFor, a seek's replay, a
    // rebuild after a switch change or a shared link), a checkpoint of the
    // world is taken at a multiple of gridMs once replaying from the previous
    // one would cost more than replayBudgetMs of wall time (and at least
    // twice what a snapshot costs); a built world always keeps one at 0. A
    // seek restores the nearest checkpoint at or before the target (also
    // ahead of now) and replays the recorded actions after it. A checkpoint
    // shares what is unchanged with the world (copy-on-write in the core), and
    // keeps the replicas the checkpoint before it has as that one's copies
    // plus what moved (src/checkpoint.rs), so it costs little more than what
    // the world changes after it: the wasm heap (every lane's
    // world and checkpoints, WasmLab.heapBytes) is kept under heapBudgetBytes
    // by dropping checkpoints (trim, maybeCheckpoint).
    this.checkpoints = []; // [{t, core, deltas (replicas kept against the one before)}] by t
    // How far this history has been run (checkpoints ahead of now stay
    // valid after a seek back; an action or a rebuild cuts it).
    this.horizon = 0;
    this.replayBudgetMs = 1.5;
    this.gridMs = 100; // checkpoints fall on multiples of it (sampleMs is one)
    // 464 MiB, less on a device with under 8 GB (navigator.deviceMemory).
    // The heap is counted as the allocator holds it (headers and rounding
    // included); what it cannot reuse of freed blocks comes on top, so wasm
    // memory stays near 512 MiB at most on the 20,000-partition bench.
    this.heapBudgetBytes = Math.min(464, 58 * (globalThis.navigator?.deviceMemory || 8)) * 2 ** 20;
    this.sinceCheckpointMs = 0; // wall ms of core work since the last checkpoint passed
    this.msPerSimMs = null; // the core's recent pace: wall ms per simulated ms (estimateSeekMs)
    this.snapshotCost = { ms: 0, bytes: 0 }; // the last snapshot's
    this.samples = new Map(); // t -> metrics, re-emitted after a restore
    // A seek under way, replayed a slice at a time ({target, from}: seekBegin).
    this.seekJob = null;
    this.seeking = false;
    // The moment the last long seek went to, or where the world stopped
    // when it ran on since (ranOn): {t, low (its window's start), near (a
    // seek near it since: its rungs are taken and kept), rungs
    // (focusRungs)}; null before the first seek (moveFocus, seekBegin).
    this.focus = null;
    this.ranOn = false; // the core ran on, not in a seek, since the last seek
    // Slices of work (issue 63): while `budget` is set ({left, out}), the
    // core runs at most `left` more events (WasmLab.runUntilBounded) and a
    // run cut short leaves the world between two events of one step:
    // `partial` is the time that step runs to (null: none is cut). Whatever
    // runs on finishes it first, before any recorded action is applied and
    // before a checkpoint or a sample is taken, so slices build the world
    // one run builds (tests/determinism.rs).
    this.budget = null;
    this.partial = null;
    this.partialWallMs = 0; // the cut step's wall ms so far (its checkpoint budget)
    // A slice that ended at a grid step with too little time left for its
    // checkpoint leaves it here ({nb, wallMs, generation}): whatever runs on
    // or reads a settled world does it first (flushBoundary).
    this.atBoundary = null;
    this.msPerEvent = 0; // wall ms per event of the core's last chunk (runStep)
    // At most this many events in a slice besides its wall budget (tests set
    // it to make any seek take several frames, whatever the machine's pace).
    this.sliceEvents = Infinity;
  }

  /**
   * Run `fn` with about `workMs` of the core's work and `events` events at
   * most: the core runs in chunks of CHUNK_EVENTS, and the clock is read
   * between them; true when it was cut short.
   */
  bounded(workMs, fn, events = this.sliceEvents) {
    this.budget = { deadline: performance.now() + workMs, chunk: CHUNK_EVENTS, left: events, out: false };
    try {
      fn();
      return this.budget.out;
    } finally {
      this.budget = null;
    }
  }

  /** Run the core to `nb` (a step's end), within the budget if one is set; false when cut short. */
  runStep(nb) {
    const b = this.budget;
    if (!b) {
      this.core.runUntil(nb);
      this.partial = null;
      return true;
    }
    for (;;) {
      const e0 = this.core.eventsProcessed();
      const t0 = performance.now();
      // As many events as fit in what is left of the slice at the pace of
      // the chunk before, in this slice or the last (at most CHUNK_EVENTS):
      // after a chunk of expensive events (a fault's metadata updates on
      // 20,000 partitions: ms each) the next is small, so a slice overruns
      // by one event, not by 256.
      const fit = this.msPerEvent > 0 ? Math.floor((b.deadline - t0) / this.msPerEvent) : b.chunk;
      const done = this.core.runUntilBounded(nb, Math.max(1, Math.min(b.chunk, b.left, fit)));
      const ran = this.core.eventsProcessed() - e0;
      b.left -= ran;
      const t1 = performance.now();
      if (ran > 0) this.msPerEvent = (t1 - t0) / ran;
      const late = t1 >= b.deadline || b.left <= 0;
      if (late) b.out = true;
      if (done) {
        this.partial = null;
        return true;
      }
      if (late) {
        this.partial = nb;
        return false;
      }
    }
  }

  /**
   * The grid steps at FOCUS_RUNGS_MS behind `t`, after 0 (which always has
   * a checkpoint).
   */
  focusRungs(t) {
    const G = this.gridMs;
    return new Set(FOCUS_RUNGS_MS.map((d) => Math.floor((t - d) / G) * G).filter((r) => r > 0));
  }

  /**
   * A seek to t: within FOCUS_SPAN_MS of the focus's moment, the reader is
   * scrubbing around it, and from now on its rungs are taken and kept;
   * farther, the focus moves to t (and the old rungs are checkpoints like
   * any other).
   */
  moveFocus(t) {
    if (this.focus && Math.abs(t - this.focus.t) <= FOCUS_SPAN_MS) this.focus.near = true;
    else this.focus = { t, low: Math.floor((t - FOCUS_SPAN_MS) / this.gridMs) * this.gridMs, near: false, rungs: this.focusRungs(t) };
  }

  /** Whether t is one of the rungs taken and kept for the focus. */
  onRung(t) {
    return this.focus?.near === true && this.focus.rungs.has(t);
  }

  /** Whether t is in the window of a focus whose rungs are taken (a full heap takes checkpoints there on the rungs only). */
  inFocus(t) {
    const f = this.focus;
    return f != null && f.near && t <= f.t && t >= f.low;
  }

  /**
   * Which checkpoints trim keeps for the focus, as a test of their time: its
   * rungs, and the first checkpoint in its window (the replays that took
   * the rungs began there when it lies after the farthest rung, and a step
   * back past the rungs they passed replays from it).
   */
  keptForFocus() {
    const first = this.checkpoints.find((c) => this.inFocus(c.t))?.t;
    return (t) => t === first || this.onRung(t);
  }

  /** Whether the heap is near its budget: the rules for a full heap apply (maybeCheckpoint). */
  full() {
    return Math.max(this.W.heapBytes(), this.seeking ? this.seekHeap : 0) > 0.9 * this.heapBudgetBytes;
  }

  dropCheckpoints(after = -1) {
    this.horizon = Math.min(this.horizon, Math.max(0, after));
    this.checkpoints = this.checkpoints.filter((c) => {
      if (c.t > after) {
        c.core.free();
        return false;
      }
      return true;
    });
    for (const t of this.samples.keys()) if (t > after) this.samples.delete(t);
  }

  /** Over the heap budget, less twice the most the heap grew between two
   * checks lately (so wasm memory, which never shrinks, stays near the
   * budget): drop the checkpoint whose removal leaves the smallest gap
   * (never the one at 0, never `keep`) until under it. The last one's gap
   * runs to the end of what has been played, not to now: after a seek back,
   * the checkpoints ahead of now are the ones a seek forward needs. */
  trim(keep) {
    const heap = this.W.heapBytes();
    this.growth = Math.max(0.9 * (this.growth || 0), heap - (this.lastHeap ?? heap));
    while (this.W.heapBytes() - pendingBytes() > this.heapBudgetBytes - 2 * this.growth) {
      const { k: worst } = this.cheapest(keep);
      if (worst < 0) {
        // Nothing left to drop: the waiting worlds go now if they are what keeps the heap over.
        if (![...waiting].some((l) => l.doomed)) break;
        flushDoomed();
        continue;
      }
      this.checkpoints[worst].core.free();
      this.checkpoints.splice(worst, 1);
    }
    this.lastHeap = this.W.heapBytes();
  }

  /** Free `core` from a task of its own (see flushDoomed). */
  freeLater(core) {
    this.freeDoomed();
    this.doomed = core;
    waiting.add(this);
    if (!flushQueued) {
      flushQueued = true;
      setTimeout(flushDoomed, 0);
    }
  }

  freeDoomed() {
    if (!this.doomed) return;
    const before = this.W.heapBytes();
    this.doomed.free();
    this.doomed = null;
    released = Math.max(0.8 * released, before - this.W.heapBytes());
  }

  takeCheckpoint(t) {
    const b0 = this.W.heapBytes();
    const t0 = performance.now();
    const cp = { t, core: this.core.checkpoint() };
    const i = this.checkpoints.findIndex((c) => c.t > t);
    const at = i < 0 ? this.checkpoints.length : i;
    // Written against the checkpoint before it: the replicas that one has
    // are kept as its copies plus what moved since, so this one holds little
    // of its own once the world runs on (src/checkpoint.rs).
    cp.deltas = at > 0 ? cp.core.compactAgainst(this.checkpoints[at - 1].core) : 0;
    // What taking it cost (its bytes grow later, as the world diverges).
    this.snapshotCost = { ms: performance.now() - t0, bytes: Math.max(0, this.W.heapBytes() - b0) };
    this.checkpoints.splice(at, 0, cp);
    this.trim(cp);
    this.sinceCheckpointMs = 0;
  }

  /** The checkpoint whose removal leaves the smallest gap (index `k`, -1 if
   * none may go: never the one at 0, never `keep`, never one kept for the
   * focus) and that `gap`. */
  cheapest(keep) {
    const end = Math.max(this.now(), this.horizon);
    const kept = this.keptForFocus();
    let k = -1;
    let gap = Infinity;
    for (let i = 1; i < this.checkpoints.length; i++) {
      if (this.checkpoints[i] === keep || kept(this.checkpoints[i].t)) continue;
      const g = (this.checkpoints[i + 1]?.t ?? end) - this.checkpoints[i - 1].t;
      if (g < gap) [gap, k] = [g, i];
    }
    return { k, gap };
  }

  /** After `ms` of core work up to t: a checkpoint at t when it pays. */
  maybeCheckpoint(t, ms) {
    if (this.checkpoints.some((c) => c.t === t)) {
      this.sinceCheckpointMs = 0;
      return;
    }
    this.sinceCheckpointMs += ms;
    this.trim(); // the world's copy-on-write copies grow the checkpoints
    // A reader scrubbing around the focus: a checkpoint on each of its rungs,
    // and in a full heap none elsewhere in its window.
    if (this.onRung(t)) {
      this.takeCheckpoint(t);
      return;
    }
    if (this.inFocus(t) && this.full()) return;
    if (this.sinceCheckpointMs < Math.max(this.replayBudgetMs, 2 * this.snapshotCost.ms)) return;
    // A big world (the heap is near its budget): a new checkpoint costs one
    // that trim drops, so it is taken only at least as far from the previous
    // one as the gap that drop leaves (but no more than four times the
    // narrowest gap: with one checkpoint beyond 0, dropping it leaves a gap
    // as long as the run, and it would never move on). Spacing then grows
    // as a long run fills the budget, instead of each snapshot evicting one
    // taken a moment before (on large that churn was an eighth of a run's
    // time, and left the widest gap 1.7x the even spacing). A seek's replay also asks
    // for room to the next one: there a snapshot (and the eviction it
    // causes) is paid inside the seek, so it is taken only where it splits a
    // wide gap. The heap a seek goes by is the one it started with: the
    // world it freed before its replay leaves room that the replayed world
    // takes back. The spacing it aims at is that of the checkpoints not kept
    // for the focus: the rungs' narrow gaps are on purpose.
    if (this.full()) {
      const kept = this.keptForFocus();
      const spaced = this.checkpoints.filter((c) => !kept(c.t));
      let narrowest = Infinity;
      for (let k = 1; k < spaced.length; k++) narrowest = Math.min(narrowest, spaced[k].t - spaced[k - 1].t);
      const gap = Math.min(this.cheapest().gap, 4 * narrowest);
      const prev = this.checkpoints.filter((c) => c.t < t).pop();
      const next = this.checkpoints.find((c) => c.t > t);
      if (!prev || t - prev.t < gap) return;
      if (this.seeking && next && next.t - t < gap / 2) return;
    }
    this.takeCheckpoint(t);
  }

  /** A freshly built core: time travel starts from its own copy at 0. */
  installCore(core) {
    this.core?.free();
    this.dropCheckpoints();
    this.focus = null;
    this.core = core;
    this.partial = null;
    this.partialWallMs = 0;
    this.snapshotCost = { ms: 0, bytes: 0 };
    this.takeCheckpoint(this.now());
  }

  /**
   * A core for scenario text. A compare lane's settings (`laneSettings`,
   * "acks=1,min.insync.replicas=2") are applied by the core, by the rules of
   * the CLI's `run --set` (compare.js).
   */
  newCore(text, settings = this.laneSettings) {
    return settings == null ? new this.W(text) : this.W.withSettings(text, settings);
  }

  /**
   * Whether scenario text (with a lane's settings) loads, without building
   * it: throws the core's message as newCore would (WasmLab.check).
   */
  checkCore(text, settings = this.laneSettings) {
    this.W.check(text, settings ?? undefined);
  }

  /**
   * Make a core built from `text` the world. The text is checked first
   * (unless `checked`), so a bad scenario throws and leaves everything as it
   * was; then the world it replaces, its checkpoints and a world a seek left
   * waiting go before the new one is built, so the two are never in memory
   * together (wasm memory never shrinks: on the 20,000-partition bench a
   * second world built beside the first left it 60 MiB higher for good,
   * over 512 MiB).
   */
  replaceCore(text, { checked = false } = {}) {
    if (!checked) this.checkCore(text);
    this.freeDoomed();
    this.core?.free();
    this.core = null;
    this.dropCheckpoints();
    this.installCore(this.newCore(text));
  }

  /**
   * Check a compare string ("acks=1|acks=all,min.insync.replicas=2") against
   * this scenario: every lane must build. Returns the lanes' canonical
   * settings; throws an Error naming the lane and the key.
   */
  checkLanes(text) {
    // The syntax (scenario.rs's "compare" uses settings::parse_compare, the
    // same): lanes split by |, settings by ","; the core checks each lane.
    const lanes = String(text).split('|').map((l) => l.split(',').map((x) => x.trim()).filter(Boolean).join(','));
    if (lanes.length < 2 || lanes.length > 4) throw new Error(`compare: expected 2 to 4 lanes separated by |, got ${lanes.length} in "${text}"`);
    const scenario = JSON.stringify(this.effectiveScenario());
    lanes.forEach((l, i) => {
      try {
        this.checkCore(scenario, l);
      } catch (e) {
        throw new Error(`compare: lane ${'ABCD'[i]} (${l || 'as is'}): ${errorMessage(e)}`);
      }
    });
    return lanes;
  }

  /**
   * Choose the build the next load() runs `scenario` on: the fast one
   * (initFastWasm) for FAST_PARTITIONS partitions and more or subscribing
   * consumers (needsFullBuild), else the page's own. Both compute the same runs (tests/e2e/scale.test.mjs compares
   * them); a load without prepare stays on the build it has.
   */
  async prepare(scenario) {
    this.nextW = needsFullBuild(scenario) ? await initFastWasm() : WasmLab;
  }

  /** Whether this lab's cores come from the fast build. */
  get fast() {
    return this.W !== WasmLab;
  }

  /**
   * load(scenario), its world built over several tasks (issue 63): the
   * check, the unstarted cluster (WasmLab.unstarted) and its start a few
   * parts at a time (startParts), about START_PART_MS each, awaiting
   * `pause()` between them; the world it replaces stays, and answers,
   * until the new one is whole (they are in memory together, so this is for
   * a first load or one after a small world: a big world is replaced by
   * load, freed first). The same world as load's (tests/staged_start.rs).
   * A later load (or loadInParts) takes over: this one then resolves false
   * and leaves the lab as that one made it. Throws the core's Error.
   */
  async loadInParts(scenario, pause = nextTask) {
    const W = this.nextW ?? this.W;
    if (typeof W.unstarted !== 'function' || (this.core && this.fast)) {
      this.load(scenario);
      return true;
    }
    const given = typeof scenario === 'string' ? null : toObject(scenario);
    const text = given ? JSON.stringify(given) : scenario;
    const mine = (this.loading = {});
    let core = null;
    const gone = () => mine !== this.loading;
    try {
      W.check(text, this.laneSettings ?? undefined); // the core's own message on bad input
      await pause();
      if (gone()) return false;
      core = W.unstarted(text, this.laneSettings ?? undefined);
      // Parts one at a time, as many as START_PART_MS holds: they differ
      // (a broker's bootstrap on 20,000 partitions is ms, the controller's
      // registration of it µs, the checks after them all the most).
      for (let started = false; !started; ) {
        await pause();
        if (gone()) return false;
        const t0 = performance.now();
        while (!(started = core.startParts(1)) && performance.now() - t0 < START_PART_MS);
      }
      await pause();
      if (gone()) return false;
    } catch (e) {
      core?.free();
      core = null;
      throw e;
    } finally {
      if (core && gone()) core.free();
      if (!gone()) this.loading = null;
    }
    const obj = given ?? JSON.parse(text);
    this.W = W;
    this.nextW = null;
    this.endSeek();
    this.freeDoomed();
    this.core?.free();
    this.core = null;
    this.dropCheckpoints();
    this.installCore(core);
    this.adopt(obj);
    return true;
  }

  /** A new scenario's world is in place: it becomes the base, with no switches or actions, at 0. */
  adopt(obj) {
    this.base = obj;
    this.overrides = {};
    this.actions = [];
    this.generation++;
    this.history++;
    this.onRebuild?.();
    this.advance(0);
  }

  /** Replace the lab with a scenario. Throws Error with the core's message. */
  load(scenario) {
    this.loading = null; // a load in parts under way is superseded
    const given = typeof scenario === 'string' ? null : toObject(scenario);
    const text = given ? JSON.stringify(given) : scenario;
    const was = this.W;
    this.W = this.nextW ?? this.W;
    this.nextW = null;
    try {
      this.checkCore(text); // the core's own message on bad input
    } catch (e) {
      this.W = was;
      throw e;
    }
    const obj = given ?? JSON.parse(text);
    this.endSeek();
    this.replaceCore(text, { checked: true });
    this.adopt(obj);
  }

  /** The scenario with the user's switches applied (what the core runs). */
  effectiveScenario() {
    const s = structuredClone(this.base);
    const o = this.overrides;
    if (o.seed !== undefined) s.seed = o.seed;
    for (const key of ['min.insync.replicas', 'unclean.leader.election.enable']) {
      if (o[key] === undefined) continue;
      s.config = { ...(s.config || {}), [key]: o[key] };
      for (const t of s.topics || []) {
        if (t.config && key in t.config) t.config[key] = o[key];
      }
    }
    // Cluster-level switches (the pre-KIP-101 mode and KIP-966 ELR).
    for (const key of ['sim.truncation', 'eligible.leader.replicas.enable']) {
      if (o[key] !== undefined) s.config = { ...(s.config || {}), [key]: o[key] };
    }
    if (o.acks !== undefined) {
      for (const c of s.clients || []) if (c.type === 'producer') c.acks = o.acks;
      for (const st of s.steps || []) if (st.produce && 'acks' in st.produce) st.produce.acks = o.acks;
    }
    return s;
  }

  /** Current values of the switches (for the controls). */
  settings() {
    const s = this.effectiveScenario();
    return {
      seed: s.seed ?? 0,
      acks: producerAcks(s),
      minIsr: Number(topicOrCluster(s, 'min.insync.replicas', 1)),
      unclean: Boolean(topicOrCluster(s, 'unclean.leader.election.enable', false)),
      truncation: String((s.config || {})['sim.truncation'] ?? 'leader_epoch'),
      elr: Boolean((s.config || {})['eligible.leader.replicas.enable'] ?? true), // on by default (Kafka 4.1+), as in the core
    };
  }

  /** Change a switch: rebuild from the scenario and replay up to the current time. */
  setOverride(key, value) {
    this.settle();
    const prev = this.overrides[key];
    const t = this.now();
    this.overrides[key] = value;
    try {
      this.rebuild(t);
    } catch (e) {
      if (prev === undefined) delete this.overrides[key];
      else this.overrides[key] = prev;
      this.rebuild(t);
      throw e;
    }
  }

  /**
   * Set switches and recorded actions at once (a shared link), rebuild and
   * replay up to t. On a bad switch the previous state comes back and the
   * core's Error is thrown.
   */
  restore({ overrides = {}, actions = [], t = 0 }) {
    this.settle();
    const prev = { overrides: this.overrides, actions: this.actions, t: this.now() };
    const same = JSON.stringify(this.overrides) === JSON.stringify(overrides) && this.actions.length === 0;
    this.overrides = { ...overrides };
    this.actions = actions.map(({ at_ms, action }) => ({ at_ms, action }));
    // A world at 0 with these switches and no action (a link's scenario just
    // loaded) is the one a rebuild would build: its actions are replayed from
    // it (building 20,000 partitions again cost 0.3 s).
    if (same && this.core && this.now() === 0 && this.partial === null && this.checkpoints.length === 1) {
      this.generation++;
      this.history++;
      this.onRebuild?.();
      this.replayTo(Math.max(0, Math.floor(t)));
      return;
    }
    try {
      this.rebuild(Math.max(0, Math.floor(t)));
    } catch (e) {
      this.overrides = prev.overrides;
      this.actions = prev.actions;
      this.rebuild(prev.t);
      throw e;
    }
  }

  /** Rebuild the core from the effective scenario and replay actions up to t. */
  rebuild(t) {
    this.replaceCore(JSON.stringify(this.effectiveScenario()));
    this.generation++;
    this.history++;
    this.onRebuild?.();
    this.replayTo(t);
  }

  /** Run forward to t, applying recorded actions on the way. */
  replayTo(t) {
    for (const a of this.actions) {
      const now = this.now();
      if (a.at_ms < now || a.at_ms > t) continue;
      if (a.applied === this.generation) continue;
      this.advance(a.at_ms);
      if (this.budget?.out) return;
      this.applyNow(a);
    }
    this.advance(t);
  }

  /** Advance the core to t, stopping at every sampling boundary for onSample. */
  advance(t) {
    this.flushBoundary();
    if (this.now() === 0 && this.sampledGeneration !== this.generation) {
      this.sampledGeneration = this.generation;
      const m = this.core.view(0).metrics;
      this.samples.set(0, m);
      this.onSample?.(0, m);
    }
    // The core runs from one checkpoint boundary (every gridMs) to the next,
    // so a checkpoint can be taken as soon as replay would cost too much.
    const G = this.gridMs;
    // A step cut short (partial) is finished first, up to t at most.
    while (this.now() < t || (this.partial !== null && t >= this.now())) {
      if (this.budget?.out) return;
      const from = this.now();
      const resumed = this.partial !== null;
      const nb = resumed ? Math.min(this.partial, t) : this.nextStep(from, t);
      const t0 = performance.now();
      if (!this.runStep(nb)) {
        this.partialWallMs += performance.now() - t0;
        return;
      }
      if (this.now() < nb) break; // the core could not advance
      const wallMs = performance.now() - t0 + this.partialWallMs;
      this.partialWallMs = 0;
      this.horizon = Math.max(this.horizon, nb);
      if (!this.seeking) this.ranOn = true;
      // The step from 0 carries the cluster's start (registrations, the
      // first elections: a fixed cost, 27x the pace on tour 4), which says
      // nothing of how fast the core runs on. A step finished in slices is
      // not timed either.
      if (from > 0 && !resumed) {
        const pace = (performance.now() - t0) / (nb - from);
        this.msPerSimMs = this.msPerSimMs === null ? pace : 0.8 * this.msPerSimMs + 0.2 * pace;
      }
      if (nb % G !== 0) continue;
      // Too little of the slice left for a checkpoint (the last one's cost):
      // the grid step's checkpoint and sample open the next slice instead.
      const b = this.budget;
      if (b && b.deadline - performance.now() < this.snapshotCost.ms) {
        this.atBoundary = { nb, wallMs, generation: this.generation };
        b.out = true;
        return;
      }
      this.boundary(nb, wallMs);
    }
  }

  /** At grid step nb, reached after `wallMs` of work: a checkpoint when it pays, and a sample. */
  boundary(nb, wallMs) {
    this.maybeCheckpoint(nb, wallMs);
    if (!this.onSample || nb % this.sampleMs !== 0) return;
    const m = this.core.view(0).metrics;
    this.samples.set(nb, m);
    this.onSample(nb, m);
  }

  /** What a slice left at the grid step it ended on (atBoundary), done now: before the world runs on or changes. */
  flushBoundary() {
    const a = this.atBoundary;
    this.atBoundary = null;
    if (a && a.generation === this.generation && this.now() === a.nb && this.partial === null) this.boundary(a.nb, a.wallMs);
  }

  /**
   * How far toward `t` one frame of play may run the core: as far as
   * `workMs` reaches at the pace the core kept lately (at least 1 ms on), or
   * `t` itself while that pace is unknown or `t` is within reach.
   */
  reach(t, workMs = FRAME_WORK_MS) {
    const now = this.now();
    if (!(this.msPerSimMs > 0) || t <= now) return t;
    return Math.min(t, now + Math.max(1, Math.floor(workMs / this.msPerSimMs)));
  }

  /** Where a run from `from` toward `t` stops next: the next grid boundary, or t. */
  nextStep(from, t) {
    return Math.min(t, (Math.floor(from / this.gridMs) + 1) * this.gridMs);
  }

  applyNow(a) {
    try {
      this.core.apply(a.action);
    } catch {
      // A recorded action was accepted once; replay keeps going regardless.
    }
    a.applied = this.generation;
  }

  /**
   * About how many wall ms seek(t) will spend in the core: the simulated
   * time it replays (from now, or from the checkpoint it restores) at the
   * pace the core kept lately. null before the core has run past its start,
   * unless `measure` is set: then, when seek(t) would run on from now, the
   * first steps of that way (to the next grid boundaries, as seek(t) itself
   * would run them) are taken now, until MEASURE_MS of the core's work
   * after the step from 0 (the cluster's start, a fixed cost) give the pace
   * — a fresh page's first long seek is announced too.
   */
  estimateSeekMs(t, { measure = false } = {}) {
    if (this.msPerSimMs === null && measure && t > this.now() && this.seekPlan(t).onward) {
      // Measured on the way, over MEASURE_MS of the core's work after the
      // step from 0: one step just after the start still runs the first
      // elections' aftermath (8x the pace on tour 11, whose 0.34 s seek was
      // announced as "about 3 s"). The step from 0 carries the cluster's
      // start, and at most START_EVENTS of it are run here (a count, so
      // what is measured does not depend on the machine); on the
      // 20,000-partition tour the start is more, and is left to the seek's
      // slices (no pace yet: the estimate is null, the seek is made in
      // slices and said without an estimate).
      let wall = 0;
      let sim = 0;
      // A big world's start is not measured here: the 20,000-partition
      // tour's is longer than START_EVENTS (11,662 events: part of it would
      // measure nothing, in a task of 0.1 s), and tour 18's 6,867 with the
      // steps after them were 80 ms of a shared link's task, which drew
      // compare mode's lanes as well (146-163 ms). Its seek's slices time it.
      const huge = this.core.partitionCount() >= FAST_PARTITIONS;
      if (huge && this.now() < this.gridMs) return null;
      if (this.now() < this.gridMs || this.partial !== null) this.bounded(Infinity, () => this.replayTo(this.nextStep(this.now(), t)), START_EVENTS);
      while (this.partial === null && this.now() < t && wall < MEASURE_MS) {
        const was = this.now();
        const t0 = performance.now();
        this.replayTo(this.nextStep(was, t));
        if (this.now() === was) break;
        wall += performance.now() - t0;
        sim += this.now() - was;
      }
      if (sim > 0) this.msPerSimMs = wall / sim;
    }
    if (this.msPerSimMs === null) return null;
    const { onward, cp } = this.seekPlan(t);
    const from = onward ? this.now() : (cp?.t ?? 0);
    return Math.max(0, t - from) * this.msPerSimMs;
  }

  /**
   * How seek(t) gets there: `onward` from now (t is ahead and no checkpoint
   * lies between), else from `cp`, the checkpoint at or before t (none: a
   * rebuild from 0).
   */
  seekPlan(t) {
    const now = this.now();
    const cp = this.checkpoints.filter((c) => c.t <= t).pop();
    return { onward: t >= now && !(cp && cp.t > now), cp };
  }

  /**
   * Time travel to t (ms): restore the nearest checkpoint at or before t when
   * it is behind now or ahead of it, then replay the recorded actions up to t.
   */
  seek(t) {
    try {
      this.seekBegin(t);
      this.settle();
    } finally {
      this.endSeek();
    }
  }

  /**
   * Begin a seek to t that the page carries out a slice at a time
   * (seekSlice), so a seek of seconds (the 20,000-partition bench) leaves the
   * page answering, and a new target can take over half-way: the checkpoint
   * it replays from is restored now (none when it runs on from now). A seek
   * already under way stops where its replay got, a moment of this history
   * like any other, and the new one is planned from there (on from it when
   * no checkpoint lies between).
   */
  seekBegin(t) {
    const to = Math.max(0, Math.floor(t));
    // The heap a seek goes by is the one it started with (maybeCheckpoint).
    this.seekHeap = Math.max(this.seeking ? this.seekHeap : 0, this.W.heapBytes());
    this.seeking = true;
    this.seekJob = null;
    // The world ran on since the last seek (play, runFor): where it stopped
    // is where the reader is looking, and a seek near it scrubs there.
    if (this.ranOn) {
      this.focus = null;
      this.moveFocus(this.now());
      this.ranOn = false;
    }
    this.moveFocus(to);
    const { onward, cp } = this.seekPlan(to);
    if (!onward && !cp) this.rebuild(0);
    else if (!onward) this.restoreCheckpoint(cp);
    this.seekJob = { target: to, from: this.now() };
  }

  /** Replay the seek under way for about `workMs` of the core's work; true once it has landed (or none is under way). */
  seekSlice(workMs = SEEK_SLICE_MS) {
    const job = this.seekJob;
    if (!job) return true;
    // Reached by the slice before: it lands now, so that drawing the world
    // it reached is a task of its own, not added to that slice's work.
    if (job.there) {
      // A grid step's checkpoint the last slice left: a frame of its own too.
      if (this.atBoundary) {
        this.flushBoundary();
        return false;
      }
      this.endSeek();
      return true;
    }
    const was = this.now();
    const e0 = this.core.eventsProcessed();
    try {
      this.bounded(workMs, () => this.replayTo(job.target));
    } catch (e) {
      this.endSeek();
      throw e;
    }
    const worked = this.now() !== was || this.core.eventsProcessed() !== e0;
    // Landed, or the core could not advance (its run ended).
    const landed = this.now() >= job.target && this.partial === null;
    if (landed && worked) job.there = true;
    else if (landed || !worked) this.endSeek();
    return !this.seekJob;
  }

  /** Finish the seek under way now, in one go (nothing to do when none is). */
  settle() {
    const job = this.seekJob;
    if (!job) {
      // A step a slice cut short is finished (its events at now run), and
      // what a slice left at a grid step done.
      if (this.partial !== null || this.atBoundary) this.advance(this.now());
      return;
    }
    try {
      this.replayTo(job.target);
    } finally {
      this.endSeek();
    }
  }

  endSeek() {
    this.seekJob = null;
    this.seeking = false;
  }

  /** Where the world is, or where the seek under way takes it. */
  destination() {
    return this.seekJob ? this.seekJob.target : this.now();
  }

  /** The seek under way, as the APIs' `seeking` says it: { target, progress }, or null. */
  seekState() {
    return this.seekJob ? { target: this.seekJob.target, progress: this.seekProgress() } : null;
  }

  /** How far the seek under way has replayed, 0 to 1 (1 when none is). */
  seekProgress() {
    const job = this.seekJob;
    if (!job || job.target <= job.from) return 1;
    return Math.min(1, Math.max(0, (this.now() - job.from) / (job.target - job.from)));
  }

  /**
   * Make a copy of checkpoint `cp` (it stays pristine) the world, to replay
   * on from. A big world is freed now: kept through the replay, two of them
   * would outgrow the heap budget. Big: a snapshot of it costs over a 64th
   * of the budget (the large bench's 10 MB, tour 11's 1 MB).
   */
  restoreCheckpoint(cp) {
    if (this.core) this.snapshotCost.bytes > this.heapBudgetBytes / 64 ? this.core.free() : this.freeLater(this.core);
    this.core = cp.core.restore();
    this.partial = null;
    this.partialWallMs = 0;
    this.sinceCheckpointMs = 0;
    this.generation++;
    this.onRebuild?.();
    this.sampledGeneration = this.generation;
    if (this.onSample) {
      const ts = [...this.samples.keys()].filter((s) => s <= cp.t).sort((a, b) => a - b);
      for (const s of ts) this.onSample(s, this.samples.get(s));
    }
  }

  /**
   * How many trace events a cache taken at fork `n` (null: none yet) may keep:
   * all (Infinity) when no action forked the trace since, else the length
   * the trace had when it forked (0 when more than one did).
   */
  forkedAt(n) {
    const f = this.fork;
    if (!f || f.n === n) return Infinity;
    return f.n === (n ?? 0) + 1 ? f.len : 0;
  }

  /** Reset to time 0 with no recorded actions (switches kept). */
  reset() {
    this.endSeek();
    this.actions = [];
    this.rebuild(0);
  }

  /** Apply a user action now and record it. Throws Error on bad input. */
  act(action) {
    this.settle();
    const at = this.now();
    // Acting in the past forks history: later recorded actions are dropped.
    this.actions = this.actions.filter((a) => a.at_ms <= at);
    const len = this.core.traceLength();
    this.core.apply(action); // throws the core's message
    this.dropCheckpoints(at); // later checkpoints lack this action
    // The trace after its first `len` events is another one (caches drop it: forkedAt).
    this.fork = { n: (this.fork?.n ?? 0) + 1, len };
    this.actions.push({ at_ms: at, action, applied: this.generation });
  }

  runFor(ms) {
    const n = Number(ms);
    if (!Number.isFinite(n) || n < 0) throw new Error(`runFor: expected a number of ms, got ${ms}`);
    this.settle();
    this.replayTo(this.now() + Math.floor(n));
  }

  runUntil(t) {
    this.settle();
    if (t > this.now()) this.replayTo(Math.floor(t));
  }

  /**
   * Play's frame: run on toward t with about `workMs` of the core's work
   * (a burst of elections on 20,000 partitions takes seconds of it); true
   * once at t, false when the frame's work ran out first (the world is
   * drawn where it got, and the next frame goes on).
   */
  playTo(t, workMs = FRAME_WORK_MS) {
    if (this.seekJob) this.settle();
    const target = Math.floor(t);
    if (target > this.now() || this.partial !== null) this.bounded(workMs, () => this.replayTo(Math.max(target, this.now())));
    return this.now() >= target && this.partial === null;
  }

  now() {
    return this.core ? this.core.nowMs() : 0;
  }
  /** The guided-tour stops of the scenario ([] when it has none). */
  tour() {
    return this.core ? this.core.tour() : [];
  }
  endMs() {
    return this.core.runUntilMs();
  }
  name() {
    return this.core.scenarioName();
  }
  description() {
    return this.base?.description || '';
  }
  view(maxPartitions = 8) {
    return this.core.view(maxPartitions);
  }
  report() {
    return this.core.report();
  }
  describe() {
    return this.core.describe();
  }
  /** The report's `delivery` section alone. */
  delivery() {
    return this.core.delivery();
  }
  /** What became of record `id`, or null. */
  story(id) {
    return this.core.story(id);
  }
  traceLength() {
    return this.core.traceLength();
  }
  traceSince(cursor) {
    return this.core.traceSince(cursor);
  }
  traceHash() {
    return this.core.traceHash();
  }
}
