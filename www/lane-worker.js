// A Worker of compare mode (issue 63, item 3): takes a lane's world to a
// time on a core of its own, and sends it back as bytes (the fast build's
// WasmLab.snapshotBytes), which the page reads back a few parts a task
// (WasmLab.worldReader, compare.js) instead of replaying the way on its
// main thread. The replay is the page's own (lab.js's Lab: the recorded
// actions at their times, by the same rules), without checkpoints: this
// world is sent, not sought in.
//
// Messages in: a job { id, lane, key, scenario (JSON text), settings (a
// lane's KEY=VALUE,… or null), actions ([{at_ms, action}]), target (ms) };
// { cancel: lane }. Messages out: { id, lane, at } while on the way, then
// { id, lane, at, bytes } (an ArrayBuffer, transferred) or { id, lane, error }.
// One job runs at a time; a newer job for a lane replaces the one waiting
// or running, and one of the same history (`key`) takes over from where
// the running one got, never finishing the old target first.

import { Lab } from './lab.js';
import initFast, { WasmLab } from './fast-wasm.js';

/** Wall ms of replay between two looks at the messages (and a progress message). */
const SLICE_MS = 25;

const ready = initFast().then(() => WasmLab);
const waiting = new Map(); // lane → its newest job not yet started
let running = null; // { job, lab, stop }
let kept = null; // { key, lab }: the last job's world, for a job that goes on from it

const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

function newLab(W, job) {
  const lab = new Lab();
  lab.W = W;
  lab.laneSettings = job.settings;
  lab.base = JSON.parse(job.scenario);
  // Nothing seeks in this world: it is sent.
  lab.maybeCheckpoint = () => {};
  lab.restore({ overrides: {}, actions: job.actions, t: 0 });
  return lab;
}

self.onmessage = (e) => {
  const m = e.data;
  if (m.cancel !== undefined) {
    waiting.delete(m.cancel);
    if (running?.job.lane === m.cancel) running.stop = true;
    return;
  }
  if (running?.job.lane === m.lane) {
    if (running.job.key === m.key) {
      // The same history, another time: taken over from where it got.
      running.job = m;
      running.stop = false; // a cancel just before (the page's old job) is overtaken
      running.lab.seekBegin(m.target);
      return;
    }
    running.stop = true;
  }
  waiting.set(m.lane, m);
  pump();
};

async function pump() {
  if (running) return;
  let W;
  try {
    W = await ready;
  } catch (e) {
    for (const job of waiting.values()) postMessage({ id: job.id, lane: job.lane, error: `the fast build did not load: ${e?.message ?? e}` });
    waiting.clear();
    return;
  }
  while (waiting.size && !running) {
    const [lane, job] = waiting.entries().next().value;
    waiting.delete(lane);
    const reuse = kept && kept.key === job.key;
    if (kept && !reuse) kept.lab.core?.free();
    running = { job, lab: null, stop: false };
    try {
      running.lab = reuse ? kept.lab : newLab(W, job);
      kept = null;
      running.lab.seekBegin(job.target);
      for (;;) {
        const done = running.lab.seekSlice(SLICE_MS);
        if (done || running.stop) break;
        postMessage({ id: running.job.id, lane, at: running.lab.now() });
        await nextTask();
        if (running.stop) break;
      }
      const { lab } = running;
      if (!running.stop) {
        const bytes = lab.core.snapshotBytes();
        postMessage({ id: running.job.id, lane, at: lab.now(), bytes: bytes.buffer }, [bytes.buffer]);
        kept = { key: running.job.key, lab };
      } else lab.core?.free();
    } catch (err) {
      postMessage({ id: running.job.id, lane, error: err?.message ?? String(err) });
      running.lab?.core?.free();
    }
    running = null;
  }
}
