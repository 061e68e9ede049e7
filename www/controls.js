// The toolbar (play/pause, step, speed, seed, reset, produce burst, config
// switches), the scenario picker and the timeline. It only calls back into the
// app; it holds no simulation state of its own.

import { h, fmtTime, setText } from './render/util.js';

const REPLAY_NOTE =
  'Changing this rebuilds the scenario with the new config and replays your recorded actions up to the current time (the core is deterministic, so the run is reproduced exactly).';

/** Speed slider position (log10 of sim ms per wall ms) ↔ speed. */
export const SPEED_MIN = -2; // 0.01×
export const SPEED_MAX = 2; // 100×

export function speedLabel(speed) {
  if (speed >= 10) return `${Math.round(speed)}×`;
  if (speed >= 1) return `${speed.toFixed(1).replace(/\.0$/, '')}×`;
  if (speed >= 0.1) return `${speed.toFixed(2).replace(/0$/, '')}×`;
  return `${speed.toFixed(3).replace(/0$/, '')}×`;
}

export class Controls {
  constructor({ toolbar, timeline, switches, picker, app }) {
    this.app = app;
    this.picker = picker;
    const btn = (label, title, onclick, extra = {}) => h('button', { type: 'button', title, onclick, ...extra }, label);

    this.playBtn = btn('▶ Play', 'Play / pause (Space)', () => app.togglePlay(), { class: 'primary', id: 'play' });
    this.stepBtn = btn('Step +100 ms', 'Advance simulated time by 100 ms (→)', () => app.stepBy(100), { id: 'step' });
    this.skipBtn = btn('» Next event', 'Skip the quiet stretch: run to the next thing that happens (a fault, an election, an ISR change, an error, a tour stop) and pause there (E)', () => app.skipToNext(), { id: 'skip' });
    this.speed = h('input', {
      type: 'range', id: 'speed', min: SPEED_MIN, max: SPEED_MAX, step: 0.05, value: 0,
      title: 'Speed (log scale): simulated ms per real ms. Slow it down to watch messages fly ( - / + )',
      oninput: () => app.setSpeed(10 ** Number(this.speed.value)),
    });
    this.speedOut = h('output.speedout', { for: 'speed' });
    this.clock = h('span.clock', { id: 'clock', title: 'simulated time' });
    this.seed = h('input', {
      type: 'number', id: 'seed', min: 0, step: 1, title: `Seed of the run. ${REPLAY_NOTE}`,
      onchange: () => {
        const t = this.seed.value.trim();
        if (/^\d+$/.test(t) && Number.isSafeInteger(Number(t))) app.setOption('seed', Number(t));
        else {
          app.showError(`seed: "${this.seed.value}" is not a whole number ≥ 0; the seed stays ${app.lab.settings().seed}.`);
          this.seed.value = app.lab.settings().seed;
        }
      },
    });
    this.burstPart = h('select', { id: 'burst-partition', title: 'Partition for the produce burst' });
    this.burstBtn = btn('Produce 10', 'Produce a burst of 10 records now with the selected acks (P)', () => app.produceBurst(), { id: 'burst' });
    this.acks = h('select', { id: 'acks', title: `Producer acks. ${REPLAY_NOTE}`, onchange: () => app.setOption('acks', this.acks.value) },
      ...['0', '1', 'all'].map((v) => h('option', { value: v, text: v })));
    this.minIsr = h('select', { id: 'min-isr', title: `min.insync.replicas. ${REPLAY_NOTE}`, onchange: () => app.setOption('min.insync.replicas', Number(this.minIsr.value)) });
    this.unclean = h('input', {
      type: 'checkbox', id: 'unclean', title: `unclean.leader.election.enable. ${REPLAY_NOTE}`,
      onchange: () => app.setOption('unclean.leader.election.enable', this.unclean.checked),
    });

    this.truncation = h('select', {
      id: 'truncation',
      title: `How a rejoining replica reconciles its log: by leader epoch (KIP-101/279, Kafka 0.11+) or, as before 0.11, by truncating to its own high watermark — which can lose committed records (see the tour "Why Kafka stopped truncating to the high watermark"). ${REPLAY_NOTE}`,
      onchange: () => app.setOption('sim.truncation', this.truncation.value),
    }, h('option', { value: 'leader_epoch', text: 'leader epoch' }), h('option', { value: 'high_watermark', text: 'high watermark (pre-0.11)' }));
    this.elr = h('input', {
      type: 'checkbox', id: 'elr',
      title: `eligible.leader.replicas.enable (KIP-966, Kafka 4.x): replicas that leave the ISR while it is below min.insync.replicas stay eligible to lead. ${REPLAY_NOTE}`,
      onchange: () => app.setOption('eligible.leader.replicas.enable', this.elr.checked),
    });

    toolbar.append(
      h('div.group', null, this.playBtn, this.stepBtn, this.skipBtn),
      h('div.group', null, h('label', { for: 'speed', text: 'speed' }), this.speed, this.speedOut),
      h('div.group', null, this.clock),
      h('div.group', null, this.burstBtn, h('label', { for: 'burst-partition', text: 'to' }), this.burstPart),
      h('div.group', null,
        btn('↺ Reset', 'Back to t = 0: forget your actions and put the switches back to the scenario\'s values (R)', () => app.reset(), { id: 'reset' })),
      timeline,
    );
    switches.append(
      h('label', { title: this.acks.title }, 'acks', this.acks),
      h('label', { title: this.minIsr.title }, 'min.insync.replicas', this.minIsr),
      h('label.check', { title: this.unclean.title }, this.unclean, 'unclean.leader.election.enable'),
      h('label.check', { title: this.elr.title }, this.elr, 'ELR'),
      h('label', { title: this.truncation.title }, 'truncation', this.truncation),
      h('label', { title: this.seed.title }, 'seed', this.seed),
    );

    this.range = h('input', {
      type: 'range', id: 'timeline', min: 0, max: 60000, step: 10, value: 0,
      'aria-label': 'Timeline: drag to travel in simulated time',
      title: 'Drag to travel in time: going back reloads the scenario and replays your recorded actions',
      oninput: () => app.scrub(Number(this.range.value)),
      onchange: () => app.endScrub(),
    });
    this.marks = h('div.marks');
    this.tStart = h('span.tl-label', { text: '0 s' });
    this.tEnd = h('span.tl-label');
    // A long seek says so while it runs (SeekSlicer, tour.js).
    // The bar (how far the replay got) is drawn, not read out: the status says the seek once.
    this.seekText = h('span');
    this.seekBar = h('span.tl-bar', { 'aria-hidden': 'true' }, h('span'));
    this.seekNote = h('span.tl-busy', { role: 'status', hidden: true }, this.seekText, this.seekBar);
    // What an action does here (issue 65): replace the future (lane A's run
    // goes on from the action) or fork a "what if" lane beside it.
    const mode = (fork, label, title) => h('button', { type: 'button', 'aria-pressed': String(!fork), dataset: { actMode: fork ? 'fork' : 'replace' }, title, onclick: () => app.setActMode(fork) }, label);
    this.actBtns = [
      mode(false, 'Replace the future', 'An action here becomes part of this run; what was played after it is recomputed (F toggles)'),
      mode(true, 'What if \u2026 here? (fork)', 'An action here makes a new lane: this run up to now, then the action, beside the original (F toggles)'),
    ];
    this.actMode = h('div.act-mode', { role: 'group', 'aria-label': 'What an action here does', hidden: true }, h('span.act-label', { text: 'Acting here:' }), ...this.actBtns);
    timeline.append(this.tStart, h('div.tl-track', null, this.range, this.marks), this.tEnd, this.seekNote, this.actMode);
    picker.addEventListener('change', () => app.loadScenarioFile(picker.value));
    this.marksKey = '';
  }

  /** Show which the act-mode choice is (true: fork). */
  setActMode(fork) {
    this.actBtns.forEach((b, i) => b.setAttribute('aria-pressed', String(!!i === fork)));
    document.body.classList.toggle('forking', fork);
  }

  /** Say that a long seek is under way (`text`), or that none is (null). */
  seekBusy(text) {
    this.seekNote.hidden = !text;
    setText(this.seekText, text || '');
    this.seekProgress(0);
  }

  /** How far the long seek under way has replayed (0 to 1). */
  seekProgress(f) {
    this.seekBar.firstChild.style.width = `${Math.round(100 * f)}%`;
  }

  setScenarioList(list, current) {
    const opt = (s) => h('option', { value: s.file, text: s.name });
    const tours = list.filter((s) => s.file.startsWith('tour-'));
    const rest = list.filter((s) => !s.file.startsWith('tour-'));
    this.picker.replaceChildren(
      ...(tours.length ? [h('optgroup', { label: 'Scenarios' }, ...rest.map(opt)), h('optgroup', { label: 'Guided tours' }, ...tours.map(opt))] : rest.map(opt)),
    );
    if (current) this.picker.value = current;
  }

  /** Refresh after a load or rebuild. */
  syncSettings(settings, view) {
    this.seed.value = settings.seed;
    this.acks.value = settings.acks === '-1' ? 'all' : settings.acks;
    const n = view.brokers.length;
    if (this.minIsr.options.length !== n) {
      this.minIsr.replaceChildren(...Array.from({ length: n }, (_, i) => h('option', { value: i + 1, text: i + 1 })));
    }
    this.minIsr.value = String(settings.minIsr);
    this.unclean.checked = settings.unclean;
    this.truncation.value = settings.truncation;
    this.elr.checked = settings.elr;
    const parts = view.partitions.map((p) => `${p.topic}-${p.partition}`);
    const key = parts.join(',');
    if (this.burstPart.dataset.key !== key) {
      this.burstPart.dataset.key = key;
      this.burstPart.replaceChildren(
        ...view.partitions.map((p) => h('option', { value: JSON.stringify([p.topic, p.partition]), text: `${p.topic}-${p.partition}` })),
      );
    }
  }

  burstTarget() {
    try {
      return JSON.parse(this.burstPart.value);
    } catch {
      return null;
    }
  }

  update({ now, end, playing, speed, reached = null, marks, past = false }) {
    this.actMode.hidden = !past;
    setText(this.playBtn, playing ? '❚❚ Pause' : '▶ Play');
    this.playBtn.classList.toggle('on', playing);
    // The asked speed, and what playing reaches when it falls short of it.
    const label = reached === null ? speedLabel(speed) : `${speedLabel(speed)} → ${speedLabel(reached)}`;
    if (label !== this.speedKey) {
      this.speedKey = label;
      setText(this.speedOut, label);
      this.speedOut.title =
        reached === null
          ? ''
          : `Asked ${speedLabel(speed)}; this machine's core runs this scenario at about ${speedLabel(reached)} real time, so it plays at that speed.`;
    }
    setText(this.clock, `t = ${fmtTime(now)}`);
    const max = Math.max(end, now);
    if (Number(this.range.max) !== max) this.range.max = max;
    if (document.activeElement !== this.range || playing) this.range.value = now;
    this.range.style.setProperty('--pct', `${(100 * now) / max}%`);
    setText(this.tEnd, `${(max / 1000).toFixed(0)} s`);
    const mkey = `${max}|${marks.map((m) => `${m.at}${m.kind}`).join(',')}`;
    if (mkey !== this.marksKey) {
      this.marksKey = mkey;
      this.marks.replaceChildren(
        ...marks.map((m) =>
          h(`span.tl-mark.${m.kind}`, { style: { left: `${(100 * m.at) / max}%` }, title: `${fmtTime(m.at)}: ${m.label}` }),
        ),
      );
    }
  }

  setSpeedSlider(speed) {
    this.speed.value = Math.log10(speed);
  }
}
