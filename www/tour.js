// Guided tours: a scenario's narrated stops ({at_ms, title, text, highlight})
// shown one at a time. "Next" runs the simulation to the next stop's time and
// pauses there; playing stops at every stop. Highlights name what to look at
// (`broker:2`, `hw:orders-0`, `error:NOT_ENOUGH_REPLICAS` …) and are drawn by
// adding the class `tour-hl` to the matching elements after every frame, so
// they survive the panels redrawing themselves. Used by the full page and by
// the <failover-lab> element; `root` is the document or a shadow root. The
// card itself (TourGuide) is tour-guide.js, fetched only for a tour.

import { fmtTime } from './render/util.js';

const cssId = (v) => String(v).replace(/["\\]/g, '\\$&');

/** CSS selectors for one highlight name; unknown names select nothing. */
export function highlightSelectors(name) {
  const [kind, ...rest] = String(name).split(':');
  const arg = cssId(rest.join(':'));
  const part = (p) => `.pcard[data-partition="${p}"]`;
  switch (kind) {
    case 'broker':
      return [`svg [data-broker="${arg}"]`];
    case 'controller':
      return ['svg .node.controller'];
    case 'partition':
      return [part(arg), `.dtable tr[data-partition="${arg}"]`];
    case 'replica': {
      const [b, ...tp] = rest;
      return [`${part(cssId(tp.join(':')))} .rrow[data-broker="${cssId(b)}"]`];
    }
    case 'hw':
      return [`${part(arg)} .marker.hw`];
    case 'offset': {
      // offset:orders-0:67 — that record on every replica's row (the stop also brings it into view).
      const off = rest.pop();
      return [`${part(cssId(rest.join(':')))} .cell[data-off="${cssId(off)}"]`];
    }
    case 'leo':
      return [`${part(arg)} .marker.leo`];
    case 'epoch':
      return [`${part(arg)} [data-k="epoch"]`];
    case 'leader':
    case 'isr': {
      const col = kind === 'isr' ? 'Isr' : 'Leader';
      return [`${part(arg)} [data-k="${kind}"]`, `.dtable tr[data-partition="${arg}"] td[data-col="${col}"]`];
    }
    case 'producer':
      return [`.client[data-producer="${arg}"]`];
    case 'consumer':
      return [`.client[data-consumer="${arg}"]`];
    case 'error':
      return [`.err[data-error="${arg}"]`];
    case 'metric':
      return [`.metric[data-metric="${arg}"]`];
    case 'lost':
      return ['[data-testid="acked-lost"]'];
    case 'summary':
      // summary:KEY — that pill of every compare lane's summary row (lost, hw, committed-c1, never, …).
      return [`.lane-sum [data-k="${arg}"]`];
    case 'availability':
      return ['[data-panel="availability"]'];
    case 'phase':
      return [`.rb-phase[data-phase="${arg}"]`];
    case 'describe':
    case 'narration':
    case 'metrics':
    case 'clients':
      return [`[data-panel="${kind}"]`];
    default:
      return [];
  }
}

/** Put `tour-hl` on exactly the elements named by `names` under `root`. */
export function applyHighlights(root, names) {
  const want = new Set();
  for (const n of names || []) {
    for (const sel of highlightSelectors(n)) {
      try {
        root.querySelectorAll(sel).forEach((el) => want.add(el));
      } catch {
        // A malformed name in a hand-written tour selects nothing.
      }
    }
  }
  root.querySelectorAll('.tour-hl').forEach((el) => {
    if (!want.has(el)) el.classList.remove('tour-hl');
  });
  for (const el of want) if (!el.classList.contains('tour-hl')) el.classList.add('tour-hl');
}

/**
 * The tour strip. `host` is the player it drives:
 *   { now(), goTo(t) — seek to t and pause, queryRoot — document or shadow root,
 *     offScript() — optional: null while the run is the tour's own, else a
 *       short description of how it differs (a user action or a changed switch
 *       makes the deterministic trace diverge from the tour's recorded one),
 *     resume() — optional: drop those changes (back to the tour's run),
 *     terms(el) — optional: link the glossary's terms in the text element el,
 *     nextTour() — optional: {href, label} of the tour to offer after the last stop, or null,
 *     estimateMs(t) — optional: about how many wall ms goTo(t) will compute, or null,
 *     seekInSlices(t, progress) — optional: take the lab to t a slice of work per
 *       frame, the page answering meanwhile, calling progress(0..1); a promise of
 *       true once there, false when another seek took over,
 *     reveal(names) — optional: unfold and draw what a stop names before the
 *       card scrolls it into view beside itself (TourGuide.place),
 *     placeForReader — optional: scroll only for the reader's own steps, not
 *       a script's go() (the element: its host page stays still) }
 */

/**
 * A stop or a seek the core needs longer than this to reach (the
 * 20,000-partition tour: seconds) is announced — "Running the cluster to
 * 11.209 s…", the card marked busy, a bar filling — while it is made in
 * slices (SLICE_MS).
 */
export const BUSY_MS = 300;

/**
 * A seek the core needs longer than this for is made a slice of work per
 * animation frame (Lab.seekSlice), so no task on the page's main thread
 * grows long (issue 63); a shorter one is made at once, as before.
 */
export const SLICE_MS = 50;

/**
 * Whether a seek from `now` to `t` that the lab estimates at `est` wall ms
 * (null: not known yet, the core has not run past its start) is made in
 * slices: a long one, or an unknown one ahead (the 20,000-partition tour's
 * start alone is seconds of work).
 */
export function inSlices(est, t, now) {
  return est > SLICE_MS || (est == null && t > now);
}

/** Whether a wait the lab estimates at `est` ms (null: not known) is announced. */
export const announced = (est) => est == null || est > BUSY_MS;

/** "Seeking to 12.000 s (about 3 s)…", the estimate left out while none is known. */
const seekingText = (t, est) => `Seeking to ${fmtTime(t)}${est > 0 ? ` (about ${fmtWait(est)})` : ''}…`;

/** A wait of `ms` as a reader says it: "0.8 s", "3 s". */
export function fmtWait(ms) {
  return ms < 950 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

/**
 * Long seeks made a slice of the core's work per animation frame, for the
 * page and the element alike: a reader's (the timeline, a time clicked, ←),
 * said in the timeline's note with a bar, and a tour's long stop (`forTour`,
 * said on the tour's card). Nothing is drawn from a world half-way there:
 * the host's frame calls `step()` while `lab.seekJob` is set and draws once
 * it lands; anything else that reads or changes the world calls `settle()`
 * first; a new seek takes over from where the replay got.
 *   host: { lab() — the Lab, attempt(fn) — run fn, showing its error,
 *     say(text) — the timeline note's text (null hides it),
 *     bar(f) — its bar, 0 to 1, landed() — draw the world the seek reached }
 */
export class SeekSlicer {
  constructor(host) {
    this.host = host;
    this.saying = false; // the timeline's note is up
    this.tour = null; // a tour's long stop under way: { resolve, progress }
  }

  /** A reader's seek to t: said and begun when long (over BUSY_MS) or when one is under way (true); else false. */
  begin(t) {
    const lab = this.host.lab();
    const est = lab.estimateSeekMs(t, { measure: true });
    if (!lab.seekJob && !inSlices(est, t, lab.now())) return false;
    // Said at once when long or not known (its estimate added once the
    // replay has timed a step: step), else only if it lasts (BUSY_MS).
    this.began = performance.now();
    this.sayTarget = t;
    this.guessed = est > 0;
    if (lab.seekJob || announced(est)) this.say(seekingText(t, est));
    // It takes over from a tour's long stop, unless it goes where the stop is
    // (a scenario's compare lanes rebuilding lane A under a deep link's stop).
    if (this.tour?.t !== t) this.release(false);
    this.host.attempt(() => lab.seekBegin(t));
    this.host.bar(lab.seekProgress());
    return true;
  }

  /** A tour's long stop at t: a promise of true once there, false when another seek took over. */
  forTour(t, progress) {
    this.drop();
    this.sayTarget = null;
    return new Promise((resolve) => {
      this.tour = { resolve, progress, t };
      const lab = this.host.lab();
      this.host.attempt(() => lab.seekBegin(t));
      if (!lab.seekJob) this.land();
    });
  }

  /** One frame of the seek under way (SEEK_SLICE_MS of the core's work); drawn once it lands. */
  step() {
    const lab = this.host.lab();
    if (this.host.attempt(() => lab.seekSlice()) ?? true) {
      this.land(true);
      return;
    }
    // A reader's seek that lasts is said (a short estimate missed it); one
    // said without an estimate gets one once the replay has timed a step.
    if (!this.tour && this.sayTarget != null) {
      if (!this.saying && performance.now() - this.began > BUSY_MS) this.say(seekingText(this.sayTarget, this.guessed ? lab.estimateSeekMs(this.sayTarget) : null));
      if (this.saying && !this.guessed && lab.msPerSimMs !== null) {
        this.guessed = true;
        this.say(seekingText(this.sayTarget, lab.estimateSeekMs(this.sayTarget)));
      }
    }
    const f = lab.seekProgress();
    this.host.bar(f);
    this.tour?.progress(f);
  }

  /** Finish the seek under way at once (nothing to do when none is). */
  settle() {
    const lab = this.host.lab();
    if (!lab?.seekJob) return;
    this.host.attempt(() => lab.settle());
    this.land();
  }

  /** A frame with no seek under way: one the lab ended on its own (a new scenario, a link, a rebuilt world) leaves nothing said. */
  tidy() {
    if (this.saying || this.tour) this.drop();
  }

  /**
   * The seek's note goes, and a tour's stop it ran to is not reached, unless
   * the seek made in its place (to `t`, in one go) goes there.
   */
  drop(t) {
    this.sayTarget = null;
    if (this.saying) this.say(null);
    this.release(t != null && this.tour?.t === t);
  }

  /**
   * The seek has landed: the world it reached is drawn. `apart` (a frame's
   * landing): a tour's stop that waited for it arrives in a task of its own
   * (its card, its question's answer, its evidence scrolled into view), not
   * added to the draw's (issue 63), unless another seek began meanwhile.
   */
  land(apart = false) {
    this.sayTarget = null;
    this.host.lab().endSeek();
    this.say(null);
    const tour = this.tour;
    if (apart && tour) {
      this.tour = null;
      this.host.landed();
      setTimeout(() => {
        const job = this.host.lab().seekJob;
        // A seek begun meanwhile to the stop's own time (a compare tour's
        // lanes module arriving just then rebuilds lane A and takes it back
        // there) reaches the stop when it lands; any other took over.
        if (job && job.target === tour.t && !this.tour) this.tour = tour;
        else tour.resolve(!job);
      });
      return;
    }
    this.release(true);
    this.host.landed();
  }

  say(text) {
    this.saying = text != null;
    this.host.say(text);
  }

  release(there) {
    const tour = this.tour;
    this.tour = null;
    tour?.resolve(there);
  }
}
