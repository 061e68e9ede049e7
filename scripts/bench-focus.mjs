#!/usr/bin/env node
// What a reader's seeks cost on a big world, with the focus's rungs
// (www/lab.js FOCUS_RUNGS_MS: checkpoints kept behind the moment a reader
// jumped to, once they scrub around it) and without them (the lab's
// focusRungs answering none). In headless Chromium (playwright-core +
// /usr/bin/chromium), a Lab of its own in a fresh page per round, run to
// --run-for ms; then two cases, each timed seek by seek with Lab.seek:
//   scrub:  a jump to --jump ms, then steps around it (--steps, ms from it);
//   random: --random targets spread over the run (a small LCG, the same
//           every run), as bench-browser.mjs's seek cases use.
// Rounds alternate the two builds (--rounds each). Reported, never
// asserted: this is a benchmark.
//
//   node scripts/bench-focus.mjs [--scenario bench/large.json] [--run-for 60000]
//        [--jump 20000] [--steps -300,-800,-1400,300,-100,-2500,1000,-600,-3500,600]
//        [--random 20] [--rounds 2]
//
// Needs `make build`.
import { startServer, launchBrowser, scriptArg, WWW } from '../tests/e2e/helpers.mjs';

const arg = scriptArg;
const scenario = arg('scenario', 'bench/large.json');
const runFor = Number(arg('run-for', '60000'));
const jump = Number(arg('jump', '20000'));
const steps = arg('steps', '-300,-800,-1400,300,-100,-2500,1000,-600,-3500,600').split(',').map(Number);
const random = Number(arg('random', '20'));
const rounds = Number(arg('rounds', '2'));
if (![runFor, jump, random, rounds, ...steps].every(Number.isFinite) || jump + Math.min(...steps) < 0) {
  console.error('bench-focus: --run-for, --jump, --random and --rounds take numbers; --steps, ms from the jump (it and they ≥ 0)');
  process.exit(2);
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const fmt = (x) => String(Math.round(x)).padStart(6);

const srv = await startServer(WWW);
const browser = await launchBrowser();
const results = { on: { scrub: [], random: [], memory: 0 }, off: { scrub: [], random: [], memory: 0 } };
try {
  for (let r = 0; r < rounds; r++) {
    for (const mode of r % 2 ? ['off', 'on'] : ['on', 'off']) {
      const page = await (await browser.newContext()).newPage();
      const errors = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${srv.baseUrl}/bench.html?auto=0`);
      const out = await page.evaluate(
        async ({ scenario, runFor, jump, steps, random, mode }) => {
          const { Lab, initWasm } = await import('./lab.js');
          const wasm = await initWasm();
          const text = await (await fetch(`scenarios/${scenario}`)).text();
          const fresh = () => {
            const lab = new Lab();
            lab.load(text);
            if (mode === 'off') lab.focusRungs = () => new Set();
            lab.runFor(runFor);
            return lab;
          };
          const time = (lab, ts) =>
            ts.map((t) => {
              const plan = lab.seekPlan(t);
              const from = plan.onward ? lab.now() : (plan.cp?.t ?? 0);
              const t0 = performance.now();
              lab.seek(t);
              return { t, ms: performance.now() - t0, replayed: t - from };
            });
          let lab = fresh();
          const scrub = time(lab, [jump, ...steps.map((d) => jump + d)]);
          lab.core.free();
          lab.dropCheckpoints();
          lab = fresh();
          let x = 14;
          const ts = [];
          for (let i = 0; i < random; i++) {
            x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
            ts.push(Math.floor((x / 2 ** 32) * runFor));
          }
          const rand = time(lab, ts);
          lab.core.free();
          lab.dropCheckpoints();
          // Wasm memory never shrinks: this is the most either case took.
          return { scrub, random: rand, memory: wasm.memory.buffer.byteLength };
        },
        { scenario, runFor, jump, steps, random, mode },
      );
      if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
      results[mode].scrub.push(...out.scrub);
      results[mode].random.push(...out.random);
      results[mode].memory = Math.max(results[mode].memory, out.memory);
      const s = out.scrub;
      console.log(`round ${r + 1}, rungs ${mode}: jump ${Math.round(s[0].ms)} ms; steps ${s.slice(1).map((x) => Math.round(x.ms)).join(', ')} ms`);
      await page.context().close();
    }
  }
  console.log(`\n${scenario} after runFor(${runFor}); ms per seek (Lab.seek); replay: the mean simulated ms a seek replayed`);
  console.log(['rungs', 'case', 'seeks', 'p50', 'p95', 'max', 'replay'].map((h) => h.padStart(8)).join(''));
  for (const mode of ['on', 'off']) {
    for (const c of ['scrub', 'random']) {
      // The scrub case's jump is a far seek like the random ones: its steps are what the rungs are for.
      const rows = c === 'scrub' ? results[mode][c].filter((x) => x.t !== jump) : results[mode][c];
      const ms = rows.map((x) => x.ms);
      const replayed = rows.reduce((a, x) => a + x.replayed, 0) / rows.length;
      console.log(`${mode.padStart(8)}${c.padStart(8)}${String(rows.length).padStart(8)}  ${fmt(pct(ms, 50))}  ${fmt(pct(ms, 95))}  ${fmt(Math.max(...ms))}  ${fmt(replayed)}`);
    }
  }
  for (const mode of ['on', 'off']) console.log(`wasm memory, rungs ${mode}: at most ${Math.round(results[mode].memory / 2 ** 20)} MiB`);
} finally {
  await browser.close();
  await srv.close();
}
