// The full page's sharing tools: the URL hash that always holds the run
// (share.js), "Copy link", export of the scenario with your actions folded in
// and of the trace, and import of a scenario file by file picker or by
// dropping it on the page.

import { h } from './render/util.js';
import { encodeHash, parseHash } from './share.js';

// An inline scenario in a link: pack.js, fetched when one is needed.
const pack = () => import(new URL('./pack.js', import.meta.url).href);

/** The scenario with the user's actions appended as steps (stable by time). */
export function foldActions(scenario, actions, now = 0) {
  const s = structuredClone(scenario);
  const steps = (s.steps || []).map((st, i) => ({ st, i, user: 0 }));
  actions.forEach(({ at_ms, action }, i) => steps.push({ st: { at_ms, ...structuredClone(action) }, i, user: 1 }));
  // Scenario steps keep file order; at equal times the scenario's own steps
  // come first (in the live run they were applied before your action).
  steps.sort((a, b) => a.st.at_ms - b.st.at_ms || a.user - b.user || a.i - b.i);
  s.steps = steps.map((x) => x.st);
  const last = Math.max(0, now, ...actions.map((a) => a.at_ms));
  if (!(s.run_until_ms >= last)) s.run_until_ms = last;
  if (actions.length) {
    const note = `Exported from Failover Lab with ${actions.length} recorded action${actions.length === 1 ? '' : 's'} folded in as steps.`;
    s.description = s.description ? `${s.description}\n\n${note}` : note;
  }
  return s;
}

const SCRUB_URL_MS = 250;

// The query beside a hash that names the scenario: without `scenario` and
// `stop` (the hash wins over both, and the link holds the scenario once).
const searchBeside = (hash) => {
  const q = new URLSearchParams(location.search);
  if (/(^|&)scenario(-data)?=/.test(hash ?? '')) {
    q.delete('scenario');
    q.delete('stop');
  }
  const s = q.toString();
  return s ? `?${s}` : '';
};

export class ShareBar {
  constructor(container, app) {
    this.app = app;
    this.enabled = false; // the URL is written only once the boot state is restored
    this.last = null;
    this.packed = new WeakMap();
    this.file = h('input', {
      type: 'file', accept: '.json,application/json', hidden: true, id: 'import-file',
      onchange: () => {
        const f = this.file.files?.[0];
        if (f) this.importFile(f);
        this.file.value = '';
      },
    });
    this.copyBtn = h('button', { type: 'button', id: 'copy-link', title: 'Copy a link that reproduces this run exactly: scenario, seed, switches, your actions and the current time', onclick: () => (this.app.settleSeek(), this.copyLink()) }, 'Copy link');
    const item = (id, label, hint, fn) => h('button', { type: 'button', id, onclick: () => { this.menu.open = false; this.app.settleSeek(); fn(); } }, h('span', { text: label }), h('small', { text: hint }));
    this.menu = h('details.export', null,
      h('summary', { title: 'Export the scenario or the trace as a file' }, 'Export ▾'),
      h('div.export-menu', null,
        item('export-scenario', 'Scenario (.json)', 'with your actions as steps', () => this.exportScenario()),
        item('export-trace', 'Trace (.txt)', 'as the CLI prints it', () => this.exportTrace('txt')),
        item('export-trace-jsonl', 'Trace (.jsonl)', 'one event per line', () => this.exportTrace('jsonl')),
      ),
    );
    container.append(
      h('button', { type: 'button', id: 'import', title: 'Open a scenario file (or drop one on the page)', onclick: () => this.file.click() }, 'Open…'),
      // Import your cluster (import-view.js, fetched on the first click).
      h('button', { type: 'button', id: 'import-cluster', title: 'Paste kafka-topics.sh --describe output and run that cluster', onclick: () => import(new URL('./import-view.js', import.meta.url).href).then((m) => m.showImport(this.app)).catch((e) => this.app.showError(`The importer did not load: ${e.message}`)) }, 'Import cluster…'),
      this.menu, this.copyBtn, this.file,
    );
    document.addEventListener('click', (e) => {
      if (this.menu.open && !this.menu.contains(e.target)) this.menu.open = false;
    });
    this.installDrop();
    window.addEventListener('hashchange', () => this.onHashChange());
  }

  // ---- URL state -------------------------------------------------------------

  /** The state in the current URL hash (null when none); a bad hash shows a message. */
  readHash() {
    try {
      return parseHash(location.hash);
    } catch (e) {
      this.app.showError(`The link's state could not be read (${e.message}); the default scenario is shown instead.`);
      return null;
    }
  }

  /** Rebuild the run a link describes. Returns true when it worked. */
  async restore(state, fallbackFile) {
    const app = this.app;
    try {
      if (state.scenarioData) {
        const scenario = await (await pack()).unpackScenario(state.scenarioData);
        await app.lab.prepare(scenario);
        app.load(scenario);
        app.setScenarioFile(null);
      } else {
        await app.loadScenarioFile(state.scenario || fallbackFile);
        if (!app.lab.core) return false;
      }
      const actions = [...state.actions].sort((a, b) => a.at_ms - b.at_ms);
      // Built at 0, then taken to the link's time as a reader's seek is: a
      // long way (the 20,000-partition tour: seconds) is made a slice per
      // frame with its progress shown, the page answering (issue 63).
      app.lab.restore({ overrides: state.overrides, actions, t: 0 });
      await app.setCompare(state.compare);
      if (state.forks?.length) await app.setForks(state.forks);
      app.afterRestore();
      app.seekSoon(Math.max(0, Math.floor(state.t ?? 0)));
      return true;
    } catch (e) {
      app.showError(`The link's run could not be rebuilt: ${e.message}`);
      return false;
    }
  }

  async onHashChange() {
    if (!this.enabled) return;
    const hash = location.hash.replace(/^#/, '');
    if (hash === this.last) return;
    const state = this.readHash();
    if (!state) return;
    this.enabled = false;
    this.app.pause();
    await this.restore(state, this.app.scenarioFile);
    if (state.play) this.app.play();
    this.enabled = true;
    this.sync();
  }

  /** The hash for the current run, or null while an inline scenario is being packed. */
  currentHash({ forcePaused = false } = {}) {
    const app = this.app;
    const lab = app.lab;
    if (!lab.core) return null;
    let scenarioData = null;
    if (!app.scenarioFile) {
      scenarioData = this.packed.get(lab.base);
      if (scenarioData === undefined) {
        this.packed.set(lab.base, null);
        const base = lab.base;
        pack().then((m) => m.packScenario(base)).then((s) => {
          this.packed.set(base, s);
          this.sync();
        });
        return null;
      }
      if (scenarioData === null) return null;
    }
    return encodeHash({
      scenario: app.scenarioFile,
      scenarioData,
      overrides: lab.overrides,
      actions: lab.actions,
      t: lab.now(),
      play: app.playing && !forcePaused,
      compare: app.compare?.text,
      forks: app.compare?.forks ?? [],
    });
  }

  /** Keep the URL in step with the run (called after every drawn frame). */
  sync() {
    if (!this.enabled) return;
    // While the timeline is dragged, or seeks come one after another: at most
    // every SCRUB_URL_MS (the last position once the wait is over), and at
    // once when the drag ends or anything else is drawn. A lone seek writes
    // at once; a seek in a burst leaves its write to a task of its own, so
    // replaceState (a millisecond or more) is not paid inside the frame.
    clearTimeout(this.timer);
    if (this.app.scrubbing || this.app.seeking) {
      const since = performance.now() - (this.written ?? -Infinity);
      if (since < 4 * SCRUB_URL_MS) {
        this.timer = setTimeout(() => this.write(), Math.max(0, SCRUB_URL_MS - since));
        return;
      }
    }
    this.write();
  }

  write() {
    this.written = performance.now();
    const hash = this.currentHash();
    if (hash === null || hash === this.last) return;
    this.last = hash;
    history.replaceState(history.state, '', `${location.pathname}${searchBeside(hash)}#${hash}`);
  }

  /** A link to this exact frame (paused at the current time). */
  link() {
    const hash = this.currentHash({ forcePaused: true });
    return `${location.origin}${location.pathname}${searchBeside(hash)}#${hash ?? ''}`;
  }

  async copyLink() {
    const url = this.link();
    let ok = false;
    try {
      await navigator.clipboard.writeText(url);
      ok = true;
    } catch {
      ok = false;
    }
    this.copyBtn.textContent = ok ? '✓ Link copied' : 'Copy link';
    if (!ok) window.prompt('Copy this link:', url);
    clearTimeout(this.copyTimer);
    this.copyTimer = setTimeout(() => {
      this.copyBtn.textContent = 'Copy link';
    }, 2000);
  }

  // ---- export ----------------------------------------------------------------

  scenarioWithActions() {
    const lab = this.app.lab;
    const s = foldActions(lab.effectiveScenario(), lab.actions.map(({ at_ms, action }) => ({ at_ms, action })), lab.now());
    // In compare mode the file keeps its lanes (the scenario's "compare" field).
    if (this.app.compare?.text) s.compare = this.app.compare.text;
    else delete s.compare;
    return s;
  }

  // Export and import run on a click, so their code (exporter.js) is fetched then.
  exporter() {
    this.exp ??= import(new URL('./exporter.js', import.meta.url).href);
    return this.exp;
  }

  exportScenario() {
    const s = this.scenarioWithActions();
    return this.exporter().then((m) => m.exportScenario(s));
  }

  exportTrace(kind) {
    return this.exporter().then((m) => m.exportTrace(this.app.lab, kind));
  }

  // ---- import ----------------------------------------------------------------

  importFile(file) {
    return this.exporter().then((m) => m.importFile(this.app, file));
  }

  installDrop() {
    const overlay = h('div.dropzone', { hidden: true }, h('div', null, h('b', { text: 'Drop a scenario file' }), h('span', { text: 'it replaces the running scenario' })));
    document.body.append(overlay);
    let depth = 0;
    const hasFiles = (e) => [...(e.dataTransfer?.types || [])].includes('Files');
    document.addEventListener('dragenter', (e) => {
      if (!hasFiles(e)) return;
      depth++;
      overlay.hidden = false;
    });
    document.addEventListener('dragleave', (e) => {
      if (!hasFiles(e)) return;
      depth = Math.max(0, depth - 1);
      if (!depth) overlay.hidden = true;
    });
    document.addEventListener('dragover', (e) => {
      if (hasFiles(e)) e.preventDefault();
    });
    document.addEventListener('drop', (e) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      depth = 0;
      overlay.hidden = true;
      const f = e.dataTransfer.files?.[0];
      if (f) this.importFile(f);
    });
  }
}
