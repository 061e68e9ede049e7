// Compare mode: the same scenario, seed and recorded actions under 2–4 sets
// of settings ("acks=1|acks=all,min.insync.replicas=2"), one lab per lane, on
// one clock. Lane A is the host's own lab (its core built with lane A's
// settings); the other lanes follow it: after every frame each follower takes
// the lead lab's scenario, switches and actions and travels to its time
// (Lab.seek: checkpoints, rebuild + replay), so every fault, API action, seek
// and tour step applies to all lanes. The core applies the settings
// (WasmLab.withSettings), by the same rules as `failover-lab run FILE --set`,
// so each lane's report is the CLI's. Bundled with lanes.js (the drawing)
// and loaded on demand; it imports nothing: the lanes' Lab class is the
// host's own (no second copy of the wasm glue).

const sameAction = (a, b) => a.at_ms === b.at_ms && JSON.stringify(a.action) === JSON.stringify(b.action);
const copyActions = (actions) => actions.map(({ at_ms, action }) => ({ at_ms, action }));
export const LANE_NAMES = ['A', 'B', 'C', 'D'];

export class Compare {
  /** `host.lab` is the lead lab (lane A). */
  constructor(host) {
    this.host = host;
    this.text = null; // the compare string as given (canonical lanes joined by |)
    this.settings = []; // each lane's settings text
    this.followers = []; // Labs of lanes B…
    this.div = null; // the first divergence: { at_ms, lane, a, b }
    this.divKey = '';
    this.checked = 0;
  }

  get active() {
    return this.settings.length > 0;
  }

  /** Every lane's Lab, lane A first. */
  labs() {
    return this.active ? [this.host.lab, ...this.followers] : [];
  }

  /**
   * Enter compare mode with a compare string, or leave it (null or ''). A bad
   * string throws an Error naming the lane and the key; the running lab is kept.
   */
  set(text) {
    const lead = this.host.lab;
    if (text === null || text === undefined || String(text).trim() === '') {
      if (!this.active) return;
      this.dispose();
      lead.laneSettings = null;
      lead.rebuild(lead.now());
      return;
    }
    // Every lane must build from this scenario before anything changes.
    const lanes = lead.checkLanes(text);
    this.dispose();
    const t = lead.now();
    lead.laneSettings = lanes[0];
    lead.rebuild(t);
    this.settings = lanes;
    this.text = lanes.join('|');
    this.followers = lanes.slice(1).map((l) => {
      const f = new lead.constructor();
      // The lead's build (the fast one for subscribing consumers, which the
      // page's first-load wasm cannot run: lab.js needsFullBuild).
      f.W = lead.W;
      f.laneSettings = l;
      f.base = lead.base;
      f.restore({ overrides: lead.overrides, actions: copyActions(lead.actions), t });
      return f;
    });
  }

  dispose() {
    for (const f of this.followers) {
      f.dropCheckpoints();
      f.core?.free();
    }
    this.followers = [];
    this.settings = [];
    this.text = null;
    this.div = null;
    this.divKey = '';
    this.histKey = '';
  }

  /** Bring every follower to the lead lab's scenario, switches, actions and time. */
  sync() {
    if (!this.active) return;
    const lead = this.host.lab;
    const t = lead.now();
    for (const f of this.followers) {
      const same = f.base === lead.base && f.W === lead.W && JSON.stringify(f.overrides) === JSON.stringify(lead.overrides);
      const n = f.actions.length;
      const prefix = n <= lead.actions.length && f.actions.every((a, i) => sameAction(a, lead.actions[i]));
      if (!same) {
        f.base = lead.base;
        // The rebuild frees the old world (each core frees itself) and builds
        // the new one from the lead's build.
        f.W = lead.W;
        f.restore({ overrides: lead.overrides, actions: copyActions(lead.actions), t });
        continue;
      }
      if (!prefix || lead.actions.slice(n).some((a) => a.at_ms < f.now())) {
        // History forked (an action in the past): replay from the start.
        f.restore({ overrides: lead.overrides, actions: copyActions(lead.actions), t });
        continue;
      }
      // New actions at or after the follower's time are applied on the way.
      for (const a of lead.actions.slice(n)) f.actions.push({ at_ms: a.at_ms, action: a.action });
      f.seek(t);
    }
    this.findDivergence();
  }

  /**
   * The first trace event where a lane differs from lane A (so far): compared
   * incrementally while the run goes on, from the start after any rebuild.
   */
  findDivergence() {
    const labs = this.labs();
    // Event i is the same at any time of one history (the core is
    // deterministic), so the lanes' equal prefix, once compared, holds for
    // every seek: only the events after it are compared again.
    const hist = labs.map((l) => l.history).join(',');
    if (hist !== this.histKey) {
      this.histKey = hist;
      this.equal = 0;
    }
    // An action forks every lane's trace where lane A's forked.
    this.equal = Math.min(this.equal, labs[0].forkedAt(this.fork));
    this.fork = labs[0].fork?.n;
    const key = labs.map((l) => l.generation).join(',');
    if (key !== this.divKey) {
      this.divKey = key;
      this.div = null;
      this.checked = Math.min(this.equal, ...labs.map((l) => l.traceLength()));
    }
    if (this.div) return;
    const len = Math.min(...labs.map((l) => l.traceLength()));
    const longest = Math.max(...labs.map((l) => l.traceLength()));
    if (this.checked >= longest) return;
    const a = labs[0].traceSince(this.checked);
    labs.slice(1).forEach((lab, j) => {
      const b = lab.traceSince(this.checked);
      for (let i = 0; i < Math.max(a.length, b.length); i++) {
        const x = a[i];
        const y = b[i];
        if (x && y && JSON.stringify(x) === JSON.stringify(y)) continue;
        // Both lanes ran to the same time, so an event only one of them has is a difference too.
        const at = Math.min(x?.at_ms ?? Infinity, y?.at_ms ?? Infinity);
        if (!this.div || at < this.div.at_ms) this.div = { at_ms: at, lane: j + 1, a: x ?? null, b: y ?? null };
        break;
      }
    });
    this.checked = len;
    if (!this.div) this.equal = Math.max(this.equal, len);
  }

  /**
   * `failoverLab.lanes()`: each lane's settings and report at the current
   * time; `events`, the lane's trace so far (as `failoverLab.trace()`), is
   * read when asked for (not enumerable: it stays out of JSON and copies).
   */
  lanes() {
    return this.labs().map((l, i) =>
      Object.defineProperty({ settings: this.settings[i], report: l.report() }, 'events', { get: () => l.traceSince(0) }),
    );
  }
}
