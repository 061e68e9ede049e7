// Compare lanes on other cores (issue 63, item 3): the Workers that take a
// lane's world to a time (lane-worker.js) and the jobs the page gave them.
// compare.js decides which lane goes and reads each world back; this only
// carries the messages. Lane i goes to Worker i mod n, n being one less
// than the cores the browser reports (at most one per lane): the main
// thread keeps a core for drawing.

/** Whether lanes built from `W` can be replayed in Workers: it reads worlds back, and the browser has Workers and more than one core. */
export function lanesCanGoAway(W) {
  return typeof Worker === 'function' && typeof W?.fromSnapshot === 'function' && (globalThis.navigator?.hardwareConcurrency ?? 1) > 1;
}

export class LaneWorkers {
  /** `onLanded(job)` when a job's world is back (job.bytes), `onFailed(job)` when a Worker could not make it. */
  constructor({ onLanded, onFailed, lanes = 3 }) {
    const cores = globalThis.navigator?.hardwareConcurrency ?? 2;
    this.n = Math.max(1, Math.min(lanes, cores - 1));
    this.workers = [];
    this.jobs = new Map(); // id → job
    this.nextId = 0;
    this.onLanded = onLanded;
    this.onFailed = onFailed;
    this.broken = false;
  }

  worker(lane) {
    const k = lane % this.n;
    if (!this.workers[k]) {
      const w = new Worker(new URL('./lane-worker.js', import.meta.url), { type: 'module' });
      w.onmessage = (e) => this.message(e.data);
      // A Worker that cannot start (its module or the fast build missing):
      // every lane is made on the main thread from then on.
      w.onerror = (e) => {
        e.preventDefault?.();
        this.broken = true;
        for (const job of [...this.jobs.values()]) this.fail(job, 'the lanes\u2019 Worker did not start');
      };
      this.workers[k] = w;
    }
    return this.workers[k];
  }

  /**
   * Send a job: { lane, key, scenario, settings, actions, target, … (what
   * the caller keeps with it) }. Returns it with its id and `at` (how far
   * it got, from the Worker's messages), or null when no Worker can start
   * (the pool is then `broken`).
   */
  send(job) {
    job.id = ++this.nextId;
    job.at = 0;
    this.jobs.set(job.id, job);
    const { id, lane, key, scenario, settings, actions, target } = job;
    try {
      this.worker(lane).postMessage({ id, lane, key, scenario, settings, actions, target });
    } catch {
      // No Worker here (the element's module served from another origin, a
      // policy that forbids them): the lanes are made on the main thread.
      this.broken = true;
      this.jobs.delete(id);
      return null;
    }
    return job;
  }

  /** Forget a job (its answer is dropped) and stop its Worker's work on it. */
  cancel(job) {
    if (!job || !this.jobs.delete(job.id)) return;
    this.workers[job.lane % this.n]?.postMessage({ cancel: job.lane });
  }

  message(m) {
    // A job taken over (a newer one for the lane, same history) answers under the newer id.
    const job = this.jobs.get(m.id);
    if (!job) return;
    if (m.error) return this.fail(job, m.error);
    job.at = m.at;
    if (!m.bytes) return;
    this.jobs.delete(m.id);
    job.bytes = new Uint8Array(m.bytes);
    this.onLanded(job);
  }

  fail(job, why) {
    this.jobs.delete(job.id);
    job.error = why;
    this.onFailed(job);
  }

  dispose() {
    for (const w of this.workers) w?.terminate();
    this.workers = [];
    this.jobs.clear();
  }
}
