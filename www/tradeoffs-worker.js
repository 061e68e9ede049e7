// A Web Worker of the trade-off explorer (tradeoffs.html): runs sweep runs with
// the core's own sweep code (`sweepShard` = src/sweep.rs's sweep_runs +
// shard_lines, in the explorer's wasm build) and answers with shard lines.
//
//   → { type: 'init', module }                 a compiled WebAssembly.Module
//   ← { type: 'ready' } | { type: 'failed', message }
//   → { type: 'run', job, sets, config, seed }  one run: configuration index, seed
//   ← { type: 'shard', job, text } | { type: 'failed', job, message }

import init, { sweepShard } from './pkg-explorer/failover_lab.js';

let ready = null;

const message = (e) => (e && e.message) || String(e);

self.onmessage = async ({ data }) => {
  if (data.type === 'init') {
    ready = init({ module_or_path: data.module });
    try {
      await ready;
      self.postMessage({ type: 'ready' });
    } catch (e) {
      self.postMessage({ type: 'failed', message: `the explorer's wasm did not start: ${message(e)}` });
    }
    return;
  }
  if (data.type === 'run') {
    try {
      await ready;
      const text = sweepShard(data.sets, data.config, data.seed, 1);
      self.postMessage({ type: 'shard', job: data.job, text });
    } catch (e) {
      self.postMessage({ type: 'failed', job: data.job, message: message(e) });
    }
  }
};
