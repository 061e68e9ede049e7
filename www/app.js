// Failover Lab's page: boots the wasm core, wires the panels and controls,
// runs the animation clock and exposes window.failoverLab (the browser API of
// SCENARIO_FORMAT.md).

import { Lab, initWasm, initFastWasm, WasmLab, PlayMeter, lazyReport } from './lab.js';
import { h, fmtTime, loadOverview } from './render/util.js';
import { BrokerMap, MESSAGE_LEGEND, loadBrokerMenu } from './render/brokers.js';
import { PartitionsPanel, partitionLegend } from './render/partitions.js';
import { ClientsPanel } from './render/clients.js';
import { MetricsPanel, SAMPLE_MS } from './render/metrics.js';
import { Narration } from './render/narration.js';
import { DescribeTable } from './render/describe.js';
import { Controls, SPEED_MIN, SPEED_MAX } from './controls.js';
import { installKeyboard } from './keyboard.js';
import { SeekSlicer, highlightSelectors, inSlices } from './tour.js';
import { ShareBar } from './sharebar.js';
import { THEMES, parseTheme, followTheme } from './theme.js';
import { LabEvents } from './events.js';
import { AvailabilityPanel } from './render/availability.js';
import { wantWelcome, showWelcome, markFinished, tourOrder } from './welcome.js';

const $ = (id) => document.getElementById(id);
const DEFAULT_SCENARIO = 'leader-dies.json';
const MAX_PARTITIONS = 8;
/**
 * From this many partitions a landed seek's or a load's draw leaves the
 * panels below the broker map to a task of its own (draw's `split`): tour
 * 11's 600 drew them in the landing's task, 120 ms in all (issue 63).
 */
const SPLIT_PARTITIONS = 256;
// Seeks less than BURST_MS apart are a burst: panels off screen catch up
// CATCH_UP_MS after its last seek (App.draw).
const BURST_MS = 250;
const CATCH_UP_MS = 250;

/**
 * The tour card's stand-in until tour-guide.js has loaded (App.tourReady):
 * it holds the stops and the stop a caller asked for, and stops nothing.
 */
class TourPending {
  constructor(app) {
    this.app = app;
    this.stops = [];
    this.index = -1;
    this.intro = null;
    this.wanted = null;
  }

  get active() {
    return this.stops.length > 0;
  }

  load(stops, intro) {
    this.stops = Array.isArray(stops) ? stops : [];
    this.intro = intro;
    if (this.active) this.app.tourReady();
  }

  go(i) {
    this.wanted = i;
  }

  step(i) {
    this.wanted = i;
  }

  limit(t) {
    return { t, stop: -1 };
  }

  sync() {}
  arrive() {}
  renderQuestion() {}
  answer() {}
}

class App {
  constructor() {
    this.lab = new Lab();
    this.lab.sampleMs = SAMPLE_MS;
    this.playing = false;
    this.speed = 1;
    this.simTarget = 0;
    this.meter = new PlayMeter(); // the speed playing reaches (shown when short of the asked one)
    this.dirty = true;
    this.lastSeekAt = -Infinity;
    this.lastWall = performance.now();
    this.scenarioFile = null;
    // DOM events for docs pages: failoverlab:ready, :fault, :leaderchange,
    // :recordslost, :tourstop on document (events.js; failover-lab.d.ts).
    this.events = new LabEvents(document, 'failoverlab:');
    this.theme = 'auto';
    this.compare = null; // compare mode (compare.js + lanes.js, loaded when first used)
  }

  /** theme: light | dark | auto (follows prefers-color-scheme); also ?theme= and the header's switch. */
  setTheme(theme) {
    this.theme = parseTheme(theme, 'theme');
    this.themeWatch ??= followTheme(document.documentElement, () => this.theme, () => {
      this.dirty = true;
      this.overview?.resize?.();
    });
    this.themeWatch.apply();
    const sel = $('theme');
    if (sel && sel.value !== this.theme) sel.value = this.theme;
    const url = new URL(location.href);
    if (this.theme === 'auto') url.searchParams.delete('theme');
    else url.searchParams.set('theme', this.theme);
    if (url.href !== location.href) history.replaceState(history.state, '', url);
  }

  mount() {
    // fit: drawn at the panel's own width (a stacked layout on a phone: readable text, issue 16 point 10).
    this.map = new BrokerMap($('map'), { onBrokerClick: (id, anchor) => this.openMenu(id, anchor), fit: true });
    this.partitions = new PartitionsPanel($('partitions'), (action) => this.guard(() => this.act(action)));
    this.clients = new ClientsPanel($('clients'), {
      onAction: (action) => this.guard(() => this.act(action)),
      delivery: () => this.lab.delivery(),
      story: (id) => this.lab.story(id),
      endMs: () => this.lab.endMs(),
      onSeek: (t) => this.jump(t),
    });
    this.metrics = new MetricsPanel($('metrics'));
    this.narration = new Narration($('narration'), { onSeek: (t) => this.jump(t) });
    this.describe = new DescribeTable($('describe'));
    this.availability = new AvailabilityPanel($('availability'), { onSeek: (t) => this.jump(t) });
    this.focus = -1; // a partition picked in the overview gets a detailed card
    this.overview = null; // its module is fetched for the first scenario that needs it (syncOverview)
    this.controls = new Controls({ toolbar: $('toolbar'), timeline: $('timeline-bar'), switches: $('switches'), picker: $('scenario'), app: this });
    this.seeks = new SeekSlicer({
      lab: () => this.lab,
      attempt: (fn) => this.attempt(fn),
      say: (text) => this.controls.seekBusy(text),
      bar: (f) => this.controls.seekProgress(f),
      landed: () => this.shown(() => this.draw({ split: true })),
    });
    $('legend').append(partitionLegend());
    $('msg-legend').append(
      h('span.lg.muted', { text: 'Messages:' }),
      ...MESSAGE_LEGEND.map(([k, c]) => h('span.lg', null, h('i.dotk', { style: { background: c } }), k)),
      h('span.lg', { dataset: { legend: 'crown' } }, h('span.crownk', { text: '★', 'aria-hidden': 'true' }), 'leads a partition'),
    );
    // Collapsible panels (issue 16, point 12): the metrics start folded.
    for (const sec of document.querySelectorAll('section.panel[data-panel]')) {
      const h2 = sec.querySelector(':scope > h2');
      if (!h2) continue;
      const b = h('button.fold', { type: 'button', 'aria-expanded': 'true', 'aria-label': `fold the ${sec.dataset.panel} panel`, onclick: () => this.fold(sec, !sec.classList.contains('folded')) }, '▾');
      h2.prepend(b);
    }
    this.fold(document.querySelector('[data-panel="metrics"]'), true);
    // On a small screen the availability strip folds too (a stop that points into it unfolds it).
    if (innerWidth < 900 || innerHeight < 700) this.fold(document.querySelector('[data-panel="availability"]'), true);
    this.menu = $('broker-menu');
    document.addEventListener('click', (e) => {
      if (!this.menu.hidden && !this.menu.contains(e.target) && !e.target.closest?.('[data-broker]')) this.closeMenu();
    });
    $('help-btn').addEventListener('click', () => {
      $('help').hidden = !$('help').hidden;
    });
    // The help's glossary is fetched the first time the help opens (or a tour links its terms).
    new MutationObserver(() => $('help').hidden || this.glossary()).observe($('help'), { attributeFilter: ['hidden'] });
    $('banner-close').addEventListener('click', () => this.hideError());
    installKeyboard(this, $('help'));
    this.tour = new TourPending(this);
    this.tourHost = {
      now: () => this.lab.now(),
      report: () => lazyReport(this.lab),
      lanes: () => this.compare?.active && (this.settleSeek(), this.compare.sync(), this.compare.lanes()),
      // A stop reached in slices arrives where the page has drawn (seekInSlices): not drawn again.
      goTo: (t) => {
        this.pause();
        if (t !== this.lastView?.now_ms || t !== this.lab.now() || this.lab.seekJob || this.dirty || this.pendingSeek != null) this.seek(t);
      },
      big: () => this.big(),
      // A stop waits for the compare lanes too (compare.js estimateMs, landAt),
      // and for the draw its landing costs (seekCostMs).
      estimateMs: (t) => {
        const e = this.seekCostMs(t);
        return this.compare ? this.compare.estimateMs(t, e) : e;
      },
      seekInSlices: (t, progress) => this.seekInSlices(t, progress),
      paced: () => this.lab.msPerSimMs !== null,
      queryRoot: document,
      onStop: (i, stop) => {
        this.events.tourStop(i, this.tour.stops.length, stop);
        if (i === this.tour.stops.length - 1 && this.scenarioFile) markFinished(this.scenarioFile);
      },
      reveal: (names) => {
        for (const n of names) {
          const m = /^offset:(.+):(\d+)$/.exec(n);
          if (m) this.partitions.reveal(m[1], Number(m[2]));
        }
        for (const n of names) for (const sel of highlightSelectors(n)) document.querySelectorAll(sel).forEach((el) => this.fold(el.closest('section.panel.folded'), false));
        // The seek to the stop drew the page: drawn again (issue 63: not twice in one
        // task for nothing) only for a panel just unfolded or one a burst of seeks left stale.
        if (this.dirty || this.stale.size) this.draw();
      },
      offScript: () => offScript(this.lab),
      whatIf: () => {
        this.setActMode(true);
        document.querySelector('#map [data-broker]')?.focus();
      },
      terms: (el) => this.glossary().then((g) => g?.link(el)),
      nextTour: () => {
        const order = tourOrder(this.list || []);
        const next = order[order.findIndex((s) => s.file === this.scenarioFile) + 1];
        if (!next || !this.scenarioFile) return null;
        const url = new URL(location.href);
        url.search = `?scenario=${encodeURIComponent(next.file)}${this.theme === 'auto' ? '' : `&theme=${this.theme}`}`;
        url.hash = '';
        return { href: url.href, label: next.name.replace(/ · .*/, '').toLowerCase() };
      },
      resume: () => this.guard(() => {
        this.lab.restore({ overrides: {}, actions: [], t: this.lab.now() });
        this.controls.syncSettings(this.lab.settings(), this.lab.view(MAX_PARTITIONS));
      }),
    };
    const themeSel = $('theme');
    themeSel?.replaceChildren(...THEMES.map((t) => h('option', { value: t, text: t })));
    themeSel?.addEventListener('change', () => this.guard(() => this.setTheme(themeSel.value)));
    this.share = new ShareBar($('share-tools'), this);
    this.lab.onSample = (t, m) => this.metrics.sample(t, m);
    this.lab.onRebuild = () => this.metrics.clear();
    $('compare-btn')?.addEventListener('click', () => this.showLanes(true, true));
    // The widths the panels draw at, read where layout is clean (a resize
    // observer's callback) instead of in the frame, where after its writes
    // each read forced a layout (most of a seek's cost); a change redraws.
    this.measured = [this.availability, this.map]; // the overview joins once loaded
    this.widths = new ResizeObserver(() => {
      for (const p of this.measured) {
        const w = p.width;
        p.measure();
        if (w !== undefined && w !== p.width) this.dirty = true;
      }
    });
    for (const el of [$('availability'), $('map')]) this.widths.observe(el);
    // Which panels are on screen, told by an observer (no layout read in a
    // frame). In a burst of seeks (a drag, a key held down, a script seeking
    // again and again) a panel off screen keeps its DOM until the burst has
    // been over for CATCH_UP_MS or it scrolls into view: a seek pays for
    // what can be seen (issue 28), and at rest every panel shows the time.
    this.sec = {};
    for (const k of ['avail', 'map', 'overview', 'parts', 'metrics', 'clients', 'describe', 'narr']) this.sec[k] = document.querySelector(`.${k}-panel`);
    this.onScreen = new Map();
    this.stale = new Set();
    const seen = new IntersectionObserver((entries) => {
      for (const e of entries) {
        this.onScreen.set(e.target, e.isIntersecting);
        if (e.isIntersecting && this.stale.has(e.target)) this.dirty = true;
      }
    }, { rootMargin: '100px 0px' });
    for (const sec of Object.values(this.sec)) if (sec) seen.observe(sec);
    window.addEventListener('resize', () => {
      this.lanesView?.resize();
      this.partitions.resize();
      this.dirty = true;
    });
    this.controls.setSpeedSlider(this.speed);
  }

  /**
   * The tour's card (tour-guide.js) is fetched for the first scenario with a
   * tour: the stand-in (TourPending) it replaces hands it the stops and any
   * stop asked for meanwhile. Resolves once the card is in place.
   */
  tourReady() {
    this.tourLoad ??= import(new URL('./tour-guide.js', import.meta.url).href).then(({ TourGuide }) => {
      const waiting = this.tour;
      this.tour = new TourGuide($('tour'), this.tourHost);
      this.tour.load(waiting.stops, waiting.intro);
      // A stop asked for before the card loaded (?stop=K): reached as a
      // reader's Next is, announced and a slice per frame when it is long.
      // Its go drew the stop (issue 63: not twice in one task).
      if (waiting.wanted !== null) this.tour.step(waiting.wanted);
      else if (!this.lab.seekJob) this.draw();
    }).catch((e) => this.showError(`The tour did not load: ${e.message}`));
    return this.tourLoad;
  }

  // ---- loading -------------------------------------------------------------

  /** Load a scenario (object or JSON text). Throws the core's Error. */
  load(scenario) {
    this.lab.load(scenario);
    this.afterLoad();
  }

  afterLoad({ split = false } = {}) {
    this.focus = -1;
    this.simTarget = this.lab.now();
    this.closeMenu();
    this.hideError();
    const view = this.lab.view(MAX_PARTITIONS);
    this.controls.syncSettings(this.lab.settings(), view);
    $('scn-name').textContent = this.lab.name();
    $('scn-desc').textContent = this.lab.description();
    $('scn-desc').title = this.lab.description();
    document.title = `Failover Lab — ${this.lab.name()}`;
    this.tour.load(this.lab.tour(), { name: this.lab.name(), description: this.lab.description() });
    if (this.tour.active) this.pause();
    // A scenario may declare its compare lanes ("compare"); another one leaves them.
    const declared = this.lab.base.compare; // checked by the core
    if (declared || this.compare?.declared) this.guard(() => this.setCompare(declared || null, true).catch((e) => this.showError(e.message)));
    // Fork lanes belong to the run they forked: another scenario drops them.
    else if (this.compare?.forks.length) this.setForks([]);
    this.draw({ split });
  }

  // ---- compare mode (compare.js, lanes.js) -----------------------------------

  /**
   * Enter compare mode ("acks=1|acks=all") or leave it (null). A bad string
   * throws an Error naming the lane and key at once (the lab is kept); the
   * lanes appear when their module has loaded (the returned promise).
   */
  setCompare(text, declared = false) {
    const on = text != null && String(text).trim() !== '';
    if (on) this.lab.checkLanes(text);
    const want = (this.compareWant = {}); // the last call wins
    if (!on && !this.compare) return Promise.resolve();
    return this.showLanes(on).then(() => on && this.compare.prebuild(text)).then(() => {
      if (want !== this.compareWant) return;
      const t = this.lab.destination();
      this.compare.set(on ? text : null);
      this.compare.declared = declared && on;
      document.body.classList.toggle('comparing', on);
      $('compare').hidden = !on;
      this.simTarget = this.lab.now();
      // Lane A was rebuilt at 0: back to t as a reader's seek (a long way in slices), then drawn.
      if (t !== this.lab.now()) this.seekSoon(t);
      else this.draw();
      // A stop's answer that reads the lanes waited for them.
      this.tour.renderQuestion();
    });
  }

  /** The compare panel; its module (lanes.js with compare.js) is fetched the first time. */
  async showLanes(open = true, focus = false) {
    const box = $('compare');
    this.lanesLoad ??= import(new URL('./lanes.js', import.meta.url).href);
    const mod = await this.lanesLoad;
    if (!this.lanesView) {
      document.head.append(h('style', { text: mod.LANES_CSS }));
      this.compare = new mod.Compare(this);
      this.lanesView = new mod.LanesView(box, { h, fmtTime, BrokerMap, PartitionsPanel, AvailabilityPanel }, {
        onApply: async (text) => {
          try {
            await this.setCompare(text);
            return '';
          } catch (e) {
            return e.message;
          }
        },
        onBrokerClick: (id, anchor, lane) => this.openMenu(id, anchor, lane),
        onSeek: (t) => this.jump(t),
        onDropFork: (i) => this.guard(() => mod.pageForks.dropFork(this, i)),
      });
    }
    box.hidden = !open;
    if (focus) this.lanesView.focus();
  }

  // ---- forks: "what if … here?" (issue 65) -----------------------------------
  // A fork is a compare lane: the code (lanes.js, pageForks) comes with the lanes.

  forkCode() {
    return this.showLanes(!!this.compare?.active)
      .then(() => Promise.all([this.lanesLoad, initFastWasm()]))
      .then(([m, W]) => (m.setForkBuilder(W.fork ? W.fork.bind(W) : null), m.pageForks));
  }
  /** Fork lane `from` (0: A) at `at` with `action`; resolves to { lane, from, at_ms, action } (the `fork` event). */
  fork(at, action, from = 0) {
    return this.forkCode().then((f) => f.fork(this, at, action, from));
  }
  /** The fork lanes a link gives ([{ parent, at_ms, action }]). */
  setForks(list) {
    return this.forkCode().then((f) => f.setForks(this, list));
  }
  /** Whether an action forks a lane ("what if … here?") or replaces the future. */
  setActMode(fork) {
    this.forkMode = !!fork;
    this.controls.setActMode(this.forkMode);
    if (fork) this.forkCode();
    this.dirty = true;
  }

  /** After a shared link's switches and actions were replayed. */
  afterRestore() {
    this.simTarget = this.lab.now();
    this.controls.syncSettings(this.lab.settings(), this.lab.view(MAX_PARTITIONS));
    this.draw();
  }

  /** The scenario file shown in the picker (null: an imported scenario, `label`). */
  setScenarioFile(file, label) {
    this.scenarioFile = file;
    const picker = this.controls.picker;
    picker.querySelector('option[data-imported]')?.remove();
    if (file) picker.value = file;
    else if (label) {
      picker.prepend(h('option', { value: '', text: label, dataset: { imported: '1' } }));
      picker.value = '';
    }
  }

  /** glossary.js with glossary.json (fetched once): { link(el), show(id) }, or null if it did not load. */
  glossary() {
    this.glossLoad ??= import(new URL('./glossary.js', import.meta.url).href)
      .then((m) => m.init($('help'), 'glossary.json'))
      .catch((e) => this.showError(`The glossary did not load: ${e.message}`));
    return this.glossLoad;
  }

  /** Load scenarios/<file>; on failure shows and returns the reason (else null). */
  async loadScenarioFile(file) {
    try {
      const res = await fetch(`scenarios/${encodeURIComponent(file)}`);
      if (!res.ok) throw new Error(res.status === 404 ? `no scenario named "${file}" (scenarios/${file} was not found)` : `scenarios/${file}: HTTP ${res.status}`);
      const text = await res.text();
      // A big scenario runs on the fast build, fetched now (lab.prepare).
      await this.lab.prepare(text);
      // Built over several tasks (a big world's construction is hundreds of
      // ms), then drawn in a task of its own (issue 63); false: another
      // load took over.
      if (!(await this.lab.loadInParts(text))) return null;
      await new Promise((resolve) => setTimeout(resolve, 0));
      this.afterLoad({ split: true });
      this.setScenarioFile(file);
      if (this.tour.active) await this.tourReady();
      return null;
    } catch (e) {
      this.showError(`Could not load scenario ${file}: ${e.message}`);
      if (this.scenarioFile) this.controls.picker.value = this.scenarioFile;
      return e.message;
    }
  }

  async loadScenarioList() {
    try {
      const res = await fetch('scenarios/index.json');
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      return await res.json();
    } catch (e) {
      this.showError(`Could not read scenarios/index.json (${e.message}); run \`make build\`.`);
      return [];
    }
  }

  // ---- time ----------------------------------------------------------------

  play() {
    this.playing = true;
    this.simTarget = this.lab.now();
    this.lastWall = performance.now();
    this.meter.reset();
    this.dirty = true;
  }
  pause() {
    this.playing = false;
    this.meter.reset();
    this.dirty = true;
  }
  togglePlay() {
    if (this.playing) this.pause();
    else this.play();
  }
  setSpeed(speed) {
    this.speed = Math.min(10 ** SPEED_MAX, Math.max(10 ** SPEED_MIN, speed));
    this.simTarget = this.lab.now();
    this.meter.reset();
    this.dirty = true;
  }
  nudgeSpeed(dir) {
    this.setSpeed(this.speed * 10 ** (dir * 0.25));
    this.controls.setSpeedSlider(this.speed);
  }
  runFor(ms) {
    this.lab.runFor(ms);
    this.simTarget = this.lab.now();
    this.draw();
  }
  stepBy(ms) {
    this.guard(() => this.runFor(ms));
  }
  /**
   * The timeline being dragged: the seek waits for the next animation frame,
   * the latest position winning, so a drag costs one seek and one redraw per
   * frame (like playing), and the address bar is written a few times a
   * second (sharebar.js) until the drag ends (endScrub).
   */
  scrub(t) {
    this.scrubbing = true;
    this.pendingSeek = t;
  }
  endScrub() {
    const t = this.pendingSeek;
    this.pendingSeek = null;
    this.scrubbing = false;
    if (t != null) this.jump(t);
    // A long seek writes the address bar when it lands (draw).
    if (!this.lab.seekJob && this.pendingSeek == null) this.share.sync();
  }
  /**
   * A seek the reader asked for (a time clicked in the narration or the
   * availability strip, the ← key, the end of a drag): made at once, or,
   * when the core needs longer than SLICE_MS for it or a long seek is under
   * way, by the next frames (SeekSlicer.begin).
   */
  jump(t) {
    if (this.lab.seekJob) {
      this.pendingSeek = t;
      return;
    }
    this.attempt(() => {
      if (inSlices(this.seekCostMs(t), t, this.lab.now())) this.pendingSeek = t;
      else this.seek(t);
    });
  }
  /**
   * A seek made now when it is short, else begun now and made a slice per
   * frame (a shared link's time): a script asking the lab right away sees
   * it landed (the API settles a seek under way), the page meanwhile answers.
   */
  seekSoon(t) {
    if (t === this.lab.now()) return;
    this.attempt(() => {
      if (!this.seeks.begin(t)) this.seek(t);
    });
  }
  /**
   * The tour's long stop: the lab taken to t a slice per frame, as a long
   * seek of the timeline is (paused; the tour's card says it).
   */
  seekInSlices(t, progress) {
    this.pause();
    this.pendingSeek = null;
    // In compare mode lane A fills the bar's first half, the other lanes its second.
    const c = this.compare?.active && this.compare;
    return this.seeks.forTour(t, (f) => progress(c ? f / 2 : f)).then((there) => (there && c ? c.landAt(t, (f) => progress(0.5 + f / 2)) : there));
  }
  /** Finish a long seek under way at once (nothing to do when none is). */
  settleSeek() {
    this.seeks.settle();
  }
  seek(t) {
    this.pendingSeek = null;
    this.seeks.drop(t);
    this.attempt(() => {
      this.lab.seek(t);
      this.shown(() => this.draw());
    });
  }
  /** Draw the world a seek landed on. */
  shown(draw) {
    // A seek soon after the previous one is part of a burst (see `sec`).
    const wall = performance.now();
    this.inBurst = this.scrubbing || wall - this.lastSeekAt < BURST_MS;
    this.lastSeekAt = wall;
    this.simTarget = this.lab.now();
    this.seeking = true; // the address bar follows a burst of seeks a few times a second (sharebar.js)
    try {
      draw();
    } finally {
      this.seeking = false;
      this.landedDrawMs = performance.now() - wall;
    }
  }

  /**
   * What a seek to t costs the main thread: the core's replay (the lab's
   * estimate, null when not known) and the draw of the world it lands on
   * (the last landed draw's: tens of ms on 20,000 partitions). Over
   * SLICE_MS the seek is made in slices and its draw comes in a task of its
   * own (issue 63), so the two never add up in one task.
   */
  seekCostMs(t) {
    const est = this.lab.estimateSeekMs(t, { measure: true });
    return est == null ? null : est + (this.landedDrawMs || 0);
  }

  /** Fold (on) or unfold a panel section. */
  fold(sec, on) {
    const b = sec?.querySelector(':scope > h2 > .fold');
    if (!b) return;
    sec.classList.toggle('folded', on);
    b.setAttribute('aria-expanded', String(!on));
    b.textContent = on ? '▸' : '▾';
    this.dirty = true;
  }

  /**
   * Run on to the next event worth reading (a step, a fault, an election, an
   * ISR change, a truncation, an error …) or the next tour stop, and pause
   * there: the idle stretches (a session timeout running out) are skipped.
   */
  skipToNext() {
    this.guard(() => {
      this.pause();
      const lab = this.lab;
      const from = lab.now();
      const stop = this.tour.stops.find((st) => st.at_ms > from);
      const limit = Math.min(lab.endMs(), stop ? stop.at_ms : Infinity);
      let cur = lab.traceLength();
      let at = null;
      while (at === null && lab.now() < limit) {
        lab.runUntil(Math.min(limit, lab.now() + 250));
        at = lab.traceSince(cur).find((ev) => ev.at_ms > from && SKIP_TO.test(ev.event))?.at_ms ?? null;
        cur = lab.traceLength();
      }
      if (at !== null) lab.seek(at);
      this.simTarget = lab.now();
      this.draw();
    });
  }

  /** Back to the scenario as loaded: t = 0, no recorded actions, switches as the scenario sets them. */
  reset() {
    this.guard(() => {
      this.lab.restore({ overrides: {}, actions: [], t: 0 });
      this.controls.syncSettings(this.lab.settings(), this.lab.view(MAX_PARTITIONS));
      this.simTarget = 0;
      this.draw();
    });
  }
  setOption(key, value) {
    if (this.forkMode && key !== 'seed') return this.forkCode().then((f) => f.forkSetting(this, key, value));
    this.guard(() => {
      this.lab.setOverride(key, value);
      this.controls.syncSettings(this.lab.settings(), this.lab.view(MAX_PARTITIONS));
      this.draw();
    });
  }

  /** In compare mode each one-lab panel says it shows lane A, with lane A's settings. */
  laneBadges() {
    const a = this.compare?.active ? this.compare.settings[0] : '';
    if (a === this.laneA) return;
    this.laneA = a;
    for (const name of ['availability', 'metrics', 'clients', 'describe', 'narration']) {
      const h2 = document.querySelector(`[data-panel="${name}"] h2`);
      if (!h2) continue;
      h2.querySelector('.lane-of')?.remove();
      if (this.compare?.active) h2.append(h('span.lane-of', { text: `lane A · ${a || 'as the scenario is'}`, title: 'compare mode: this panel shows lane A; the lanes above show each lane' }));
    }
  }

  // ---- actions -------------------------------------------------------------

  /** Apply a user action now; throws Error (API) — UI callers use guard(). */
  act(action, lane = 0) {
    // "What if … here?": the action goes to a new lane (the run so far stays lane A).
    if (this.forkMode) {
      this.fork(this.lab.now(), action, lane).catch((e) => this.showError(e.message));
      return;
    }
    this.lab.act(action);
    this.draw();
  }
  /** Run a UI action with the world in place (a long seek under way lands first), showing its error. */
  guard(fn) {
    this.settleSeek();
    return this.attempt(fn);
  }
  /** Run `fn`, showing its error instead of throwing. */
  attempt(fn) {
    try {
      return fn();
    } catch (e) {
      this.showError(e instanceof Error ? e.message : String(e));
      this.dirty = true;
      return undefined;
    }
  }
  produceBurst() {
    const target = this.controls.burstTarget();
    if (!target) return;
    const acks = this.controls.acks.value;
    this.guard(() => this.act({ produce: { topic: target[0], partition: target[1], count: 10, acks } }));
  }
  toggleBroker(id) {
    const b = this.lastView?.brokers.find((x) => x.id === id);
    if (!b) return;
    const down = b.state === 'crashed' || b.state === 'shut_down';
    this.guard(() => this.act(down ? { restart: id } : { crash: id }));
  }

  async openMenu(id, anchor, lane = 0) {
    // The menu's code is fetched on first use (page budget).
    const { fillBrokerMenu } = await (this.menuLoad ??= loadBrokerMenu());
    if (lane) this.compare?.settle();
    const lab = (lane && this.compare?.labs()[lane]) || this.lab;
    const b = (lane ? lab.view(0) : this.lastView)?.brokers.find((x) => x.id === id);
    if (!b) return;
    const to = this.forkMode ? (this.compare?.active ? this.compare.labs().length : 1) : -1;
    fillBrokerMenu(this.menu, b, {
      healEnabled: b.state === 'isolated' || this.isolated(id),
      // Which of the two an item does: said in the menu (the act-mode choice).
      note: to < 0 ? null : `what if … here? → new lane ${'ABCD'[to] ?? '(none left)'} from lane ${'ABCD'[lane]} at ${fmtTime(this.lab.now())}`,
      onPick: (action) => {
        this.closeMenu();
        this.guard(() => this.act(action, lane));
      },
    });
    this.menu.hidden = false;
    this.menuAnchor = anchor;
    const r = anchor.getBoundingClientRect();
    const mw = this.menu.offsetWidth;
    const mh = this.menu.offsetHeight;
    let left = r.left + r.width / 2 - mw / 2 + window.scrollX;
    left = Math.max(8, Math.min(left, window.scrollX + document.documentElement.clientWidth - mw - 8));
    let top = r.bottom + 6 + window.scrollY;
    if (r.bottom + mh + 12 > window.innerHeight) top = Math.max(8 + window.scrollY, r.top - mh - 6 + window.scrollY);
    this.menu.style.left = `${left}px`;
    this.menu.style.top = `${top}px`;
    this.menu.querySelector('button:not([disabled])')?.focus({ preventScroll: true });
  }
  isolated(id) {
    // A crashed broker reports "crashed" even while isolated; heal stays possible.
    let iso = false;
    for (const a of this.lab.actions) {
      if (a.action.isolate === id) iso = true;
      if (a.action.heal === id) iso = false;
    }
    return iso;
  }
  closeMenu() {
    if (!this.menu || this.menu.hidden) return;
    // Keyboard users go back to the broker they opened the menu from.
    const hadFocus = this.menu.contains(document.activeElement);
    this.menu.hidden = true;
    if (hadFocus) this.menuAnchor?.focus({ preventScroll: true });
  }

  // ---- errors --------------------------------------------------------------

  showError(msg) {
    $('banner-text').textContent = msg;
    $('banner').hidden = false;
    clearTimeout(this.bannerTimer);
    this.bannerTimer = setTimeout(() => this.hideError(), 12000);
  }
  hideError() {
    $('banner').hidden = true;
  }

  // ---- drawing -------------------------------------------------------------

  marks() {
    // The same for every seek of one history (a tour, a compare divergence aside).
    const d = this.compare?.div;
    const key = `${this.lab.history}|${this.tour.stops.length}|${this.tour.stops[0]?.at_ms}|${d ? `${d.at_ms}|${d.lane}` : ''}|${this.compare?.key}`;
    if (key === this.marksKey) return this.marksCache;
    this.marksKey = key;
    const out = (this.marksCache = []);
    for (const st of this.lab.effectiveScenario().steps || []) {
      const [k, v] = Object.entries(st).find(([key]) => key !== 'at_ms') || ['step', ''];
      out.push({ at: st.at_ms, kind: 'scn', label: `scenario: ${k} ${typeof v === 'object' ? JSON.stringify(v) : v}` });
    }
    for (const st of this.tour.stops) out.push({ at: st.at_ms, kind: 'tourstop', label: `tour: ${st.title}` });
    for (const a of this.lab.actions) {
      const [k, v] = Object.entries(a.action)[0];
      out.push({ at: a.at_ms, kind: 'user', label: `you: ${k} ${typeof v === 'object' ? JSON.stringify(v) : v}` });
    }
    if (d) out.push({ at: d.at_ms, kind: 'diverge', label: `lanes ${'ABCD'[d.parent ?? 0]} and ${'ABCD'[d.lane]} diverge` });
    for (const [j, f] of (this.compare?.active ? this.compare.forks : []).entries()) out.push({ at: f.at_ms, kind: 'fork', label: `lane ${'ABCD'[this.compare.settingsLanes + j]}: what if, forked here` });
    return out;
  }

  /**
   * The overview: drawn once a scenario has more partitions than the
   * detailed view; its module is fetched the first time one does, and the
   * frame after it arrives draws it.
   */
  syncOverview(view) {
    const lab = this.lab;
    if (!this.overview) {
      if (lab.core.partitionCount() <= MAX_PARTITIONS) return;
      this.overviewLoad ??= loadOverview().then((m) => {
        this.overview = new m.OverviewPanel($('overview'), {
          describe: (i) => this.lab.core?.describePartition(i) ?? '',
          onPick: (i, name) => {
            this.focus = i;
            this.draw();
            document.querySelector(`.pcard[data-partition="${CSS.escape(name)}"]`)?.scrollIntoView({ block: 'nearest' });
          },
        });
        this.measured.push(this.overview);
        this.widths.observe(this.overview.wrap);
        this.dirty = true;
      }, (e) => this.showError(`The overview could not be loaded: ${e instanceof Error ? e.message : e}`));
      return;
    }
    this.overview.sync(lab.core, view, lab.generation, MAX_PARTITIONS);
  }

  /**
   * Draw the world. `split` (a big world's landed seek or load, from the
   * page's own frames and loads, and the page's first draw on any world):
   * the panels below the broker map (the
   * overview, partitions, narration, clients, availability, metrics,
   * describe) come in a task of their own just after (flushDraw), so that
   * no task grows long (issue 63); anything that reads the page through the
   * API, and the next frame, draws them first if they have not come yet.
   */
  draw({ split = false } = {}) {
    const lab = this.lab;
    if (lab.seekJob) {
      // A redraw asked for half-way through a long seek lands it first.
      this.settleSeek();
      return;
    }
    this.drawRest = null; // this draw draws them
    const view = this.focus >= 0 ? lab.core.viewFocus(MAX_PARTITIONS, [this.focus]) : lab.view(MAX_PARTITIONS);
    // The page's first draw is split too: its code is cold (109 ms in one task on tour 1).
    const apart = split && (!this.lastView || this.big());
    this.lastView = view;
    this.compare?.sync();
    this.lanesView?.update(this.compare, { speed: this.playing ? this.speed : 0.05, playing: this.playing });
    this.laneBadges();
    this.events.update(lab, view);
    // In a burst of seeks, panels off screen wait (`sec` in mount); `later`
    // says whether these (all off screen) wait, and marks them stale.
    const lazy = this.seeking && this.inBurst;
    const s = this.sec;
    // In compare mode the lanes show the cluster and the logs, and the page's
    // own (display: none, lanes.js) wait until it ends: the draw that ends it
    // draws them (issue 63: tour 21's landing drew them for nothing beside
    // the lanes' first draw).
    const held = this.compare?.active ? [s.map, s.overview, s.parts] : [];
    const later = (...secs) => {
      if (secs.some((sec) => held.includes(sec))) return true;
      if (!lazy || !secs.every((sec) => sec && this.onScreen.get(sec) === false)) return false;
      for (const sec of secs) this.stale.add(sec);
      return true;
    };
    // Built once per history (a seek keeps their DOM and updates it, as a frame does).
    if (!later(s.map)) this.map.update(view, this.playing ? this.speed : 0.05, lab.history, lab.generation);
    const rest = () => {
      if (!later(s.overview)) this.syncOverview(view);
      // The narration hands the partitions the trace events they show: the
      // two go together, but for partitions compare mode hides.
      const bare = held.includes(s.parts);
      if (!(bare ? later(s.narr) : later(s.parts, s.narr))) {
        const events = this.narration.update(lab, { brief: apart && this.big() });
        if (!bare) {
          this.partitions.update(view, lab.history);
          this.partitions.onTrace(events, this.narration.jumped);
        }
      }
      if (!later(s.clients)) this.clients.update(view);
      if (!later(s.avail, s.metrics)) {
        const avail = lab.core.availability(lab.endMs(), this.availability.buckets());
        this.availability.update(avail);
        this.metrics.update(avail, { t: view.now_ms, m: view.metrics }, !this.metrics.root.closest('.folded'));
      }
      if (!later(s.describe)) this.describe.update(lab.core.partitionCount() > 64 ? lab.core.describeHead(64) : lab.describe());
      clearTimeout(this.catchUp);
      if (!lazy) this.stale.clear();
      else if (this.stale.size) this.catchUp = setTimeout(() => (this.dirty = true), CATCH_UP_MS);
    };
    if (apart) {
      // Drawn from the world as it is then (the same, unless something
      // changed it meanwhile: that drew them itself).
      this.drawRest = () => {
        const g = lab.generation;
        rest();
        if (g === lab.generation) this.tour.decorate?.();
      };
      setTimeout(() => this.flushDraw(), 0);
    } else rest();
    this.controls.update({
      now: view.now_ms,
      end: lab.endMs(),
      playing: this.playing,
      speed: this.speed,
      reached: this.meter.shortOf(this.speed), // null when paused: pause() resets the meter
      marks: this.marks(),
      past: view.now_ms > 0 || !!this.compare?.forks.length || !!this.forkMode,
    });
    document.body.classList.toggle('has-loss', view.acked_records_lost > 0);
    this.tour.sync(view.now_ms);
    // A big world's landed seek writes the address bar in a task of its own:
    // with the page just redrawn, replaceState makes Chromium lay the page
    // out at once (45 ms of tour 11's landing task, issue 63). A write made
    // meanwhile wrote this address or a newer one: then it writes nothing.
    if (apart) setTimeout(() => this.share.sync(), 0);
    else this.share.sync();
    this.dirty = false;
  }

  /** The panels a split draw left for a task of their own (draw), drawn now if they have not been. */
  flushDraw() {
    const rest = this.drawRest;
    this.drawRest = null;
    rest?.();
  }

  /** A big world: its landed draws are split (draw), and a tour's stops reached in slices. */
  big() {
    return this.lab.fast || this.lab.core.partitionCount() >= SPLIT_PARTITIONS;
  }

  frame(wall) {
    const elapsed = Math.max(0, wall - this.lastWall);
    const dt = Math.min(100, elapsed);
    this.lastWall = wall;
    try {
      this.flushDraw();
      if (this.pendingSeek != null) {
        const t = this.pendingSeek;
        this.pendingSeek = null;
        // A long one is said and begun now, and replayed over the next
        // frames (SeekSlicer): the page keeps answering, a bar shows how far
        // the replay got, a new target takes over from where it is.
        if (!this.seeks.begin(t)) this.seek(t);
      } else if (this.lab.seekJob) this.seeks.step();
      else this.seeks.tidy();
      // Compare lanes on their way to lane A's time: a slice per frame (compare.js).
      const lanes = this.compare && this.attempt(() => this.compare.frame());
      if (lanes === 'landed') this.dirty = true;
      else if (lanes && !this.dirty) this.lanesView.progress(this.compare);
      if (this.playing && !this.lab.seekJob) {
        const before = this.lab.now();
        // As far as the asked speed goes, and no further than the core
        // runs in its share of a frame: a world too big for the asked
        // speed plays slower, the page still answers, and no debt of
        // simulated time builds up (lab.reach).
        this.simTarget = this.lab.reach(this.simTarget + dt * this.speed);
        // A guided tour stops the clock at each of its stops.
        const { t, stop } = this.tour.limit(Math.floor(this.simTarget));
        // A frame's share of the core's work at most (a burst of elections
        // on 20,000 partitions is seconds of it): the world is drawn where
        // it got, and the next frame goes on from there.
        let there = true;
        if (t > this.lab.now() || this.lab.partial !== null) {
          there = this.lab.playTo(t);
          this.dirty = true;
        }
        // Frames that stop at a tour stop or the run's end say nothing of the speed.
        if (stop < 0 && this.lab.core && this.lab.now() < this.lab.endMs()) this.meter.note(this.lab.now() - before, elapsed);
        if (stop >= 0 && there) {
          this.pause();
          this.tour.arrive(stop);
        }
      }
      // Nothing is drawn of a world half-way through a long seek.
      if (this.dirty && !this.lab.seekJob) this.draw();
      else {
        // In compare mode the page's own map is hidden, and waits (draw).
        if (!this.compare?.active) this.map.tick();
        this.overview?.tick();
        this.lanesView?.tick();
      }
    } catch (e) {
      this.pause();
      this.showError(`Simulation stopped: ${e instanceof Error ? e.message : e}`);
    }
    requestAnimationFrame((w) => this.frame(w));
  }
}

function api(app) {
  const act = (action) => app.act(action);
  const broker = (name) => (b) => act({ [name]: b });
  const calls = {
    load: (scenario) => app.load(scenario),
    crash: broker('crash'),
    powerLoss: broker('power_loss'),
    restart: broker('restart'),
    shutdown: broker('shutdown'),
    isolate: broker('isolate'),
    heal: broker('heal'),
    produce: (topic, partition, count, acks) =>
      act({ produce: acks === undefined ? { topic, partition, count } : { topic, partition, count, acks } }),
    apply: act,
    runFor: (ms) => app.runFor(ms),
    seek: (t) => app.seek(t),
    play: () => app.play(),
    pause: () => app.pause(),
    setSpeed: (x) => {
      app.setSpeed(x);
      app.controls.setSpeedSlider(app.speed);
    },
    report: () => app.lab.report(),
    delivery: () => app.lab.delivery(),
    story: (id) => app.lab.story(id),
    describe: () => app.lab.describe(),
    view: (n = MAX_PARTITIONS) => app.lab.view(n),
    trace: (cursor = 0) => app.lab.traceSince(cursor),
    now: () => app.lab.now(),
    actions: () => app.lab.actions.map(({ at_ms, action }) => ({ at_ms, action })),
    tour: () => ({ stops: app.lab.tour(), index: app.tour.index }),
    tourNext: () => app.tour.go(app.tour.index + 1),
    tourAnswer: (i) => app.tour.answer(i),
    tourBack: () => app.tour.go(app.tour.index - 1),
    compare: (text) => app.setCompare(text ?? null),
    fork: (atMs, action, from = 'A') => app.fork(atMs, action, 'ABCD'.indexOf(String(from))),
    forks: () => (app.compare?.forks ?? []).map((f, j) => ({ lane: 'ABCD'[app.compare.settingsLanes + j], from: 'ABCD'[f.parent], at_ms: f.at_ms, action: f.action })),
    lanes: () => {
      app.compare?.sync();
      return app.compare?.lanes() ?? [];
    },
    shareUrl: () => app.share.link(),
    exportScenario: () => app.share.scenarioWithActions(),
    setTheme: (t) => app.setTheme(t),
  };
  // A script sees the world where the reader asked it to be: a long seek
  // under way lands first (a new seek is planned from where its replay got).
  const out = {};
  for (const [k, f] of Object.entries(calls)) {
    out[k] = (...args) => {
      // (A new scenario drops it instead.)
      if (k !== 'seek' && k !== 'load') app.settleSeek();
      app.flushDraw();
      return f(...args);
    };
  }
  return Object.defineProperties(out, {
    playing: { get: () => app.playing, enumerable: true },
    theme: { get: () => app.theme, enumerable: true },
    /** Whether the run's cores come from the fast build (lab.js needsFullBuild). */
    fast: { get: () => app.lab.fast, enumerable: true },
    /** The long seek under way, replayed over the page's frames ({ target, progress } 0 to 1, and the compare `lanes` on their way), or null. */
    seeking: {
      get: () => (app.compare ? app.compare.seeking(app.lab.seekState()) : app.lab.seekState()),
      enumerable: true,
    },
  });
}

const SKIP_TO = /^(step|broker_(crashed|power_loss|fenced|isolated|shut_down|restarted|healed|unfenced)|leader_elected|isr_changed|truncated|acked_records_lost|produce_error|consumer_truncation_detected)$/;

/**
 * How the run differs from the scenario as loaded (null when it does not): the
 * core is deterministic, so a recorded action or a changed switch is exactly
 * what makes the trace diverge from the tour's recorded one.
 */
function offScript(lab) {
  const parts = [];
  const a = lab.actions[0];
  if (a) {
    const [k, v] = Object.entries(a.action)[0];
    const what = typeof v === 'object' ? k : `${k} broker ${v}`;
    parts.push(`you did ${what} at ${(a.at_ms / 1000).toFixed(3)} s${lab.actions.length > 1 ? ` and ${lab.actions.length - 1} more` : ''}`);
  }
  const keys = Object.keys(lab.overrides);
  if (keys.length) parts.push(`you changed ${keys.join(', ')}`);
  return parts.length ? parts.join('; ') : null;
}

/** A seed from user input: a whole number ≥ 0, else null. */
function parseSeed(v) {
  const t = String(v ?? '').trim();
  if (!/^\d+$/.test(t)) return null;
  const n = Number(t);
  return Number.isSafeInteger(n) ? n : null;
}

async function main() {
  const app = new App();
  app.mount();
  // ?theme=light|dark|auto before anything is drawn.
  try {
    app.setTheme(new URLSearchParams(location.search).get('theme'));
  } catch (e) {
    app.setTheme('auto');
    app.showError(`?${e.message}`);
  }
  try {
    await initWasm();
  } catch (e) {
    app.showError(`The WebAssembly core did not load (${e.message}). Run \`make build\` and serve www/.`);
    return;
  }
  window.failoverLab = api(app);
  const params = new URLSearchParams(location.search);
  const list = (app.list = await app.loadScenarioList());
  const welcome = wantWelcome(params, location.hash);
  const wanted = params.get('scenario') || DEFAULT_SCENARIO;
  app.controls.setScenarioList(list.length ? list : [{ file: DEFAULT_SCENARIO, name: DEFAULT_SCENARIO }], wanted);
  // A shared link (#scenario=…&actions=…&t=…) wins over the query parameters.
  const shared = app.share.readHash();
  const restored = shared && (await app.share.restore(shared, wanted));
  if (!restored) {
    const missing = await app.loadScenarioFile(wanted);
    if (!app.lab.core && wanted !== DEFAULT_SCENARIO) {
      await app.loadScenarioFile(DEFAULT_SCENARIO);
      // Say what was not found (the default's load cleared the banner).
      if (app.lab.core) app.showError(`?scenario=${wanted}: ${missing || 'could not be loaded'}; showing ${DEFAULT_SCENARIO} instead.`);
    }
    if (app.lab.core && params.has('seed')) {
      const seed = parseSeed(params.get('seed'));
      if (seed === null) app.showError(`?seed=${params.get('seed')}: the seed must be a whole number ≥ 0; the scenario's own seed is used.`);
      else app.setOption('seed', seed);
    }
  }
  if (params.has('speed')) app.setSpeed(Number(params.get('speed')) || 1);
  app.controls.setSpeedSlider(app.speed);
  if (app.lab.core) {
    // In a task of its own: the load drew the world already, and the tour's
    // card (fetched meanwhile) drew it again in the task this continues.
    await new Promise((resolve) => setTimeout(resolve, 0));
    // (Not over a long seek a link began: it lands, and is drawn, in slices.)
    if (!app.lab.seekJob) app.draw();
    const play = restored ? shared.play : params.get('paused') !== '1' && !app.tour.active && !welcome;
    if (play) app.play();
    if (welcome) {
      await showWelcome(document.getElementById('welcome'), list, async (file, fork) => {
        if (!file) return app.play();
        app.controls.picker.value = file;
        await app.loadScenarioFile(file);
        // The gallery's "What if…": paused, fork mode on (the next action makes a lane).
        if (fork) app.setActMode(1);
        app.draw();
        document.querySelector(fork ? '#map [data-broker]' : '#tour [data-tour="next"]')?.focus();
      }, params.get('check'), WasmLab);
    }
    // ?stop=K opens a tour at its stop K (Check yourself links there).
    if (params.has('stop') && app.tour.active) {
      app.tour.step(Number(params.get('stop')) - 1);
      if (!app.lab.seekJob) app.draw();
    }
  }
  app.share.enabled = true;
  app.share.sync();
  requestAnimationFrame((w) => {
    app.lastWall = w;
    app.frame(w);
    performance.mark('failover-lab:first-frame');
    document.body.dataset.ready = 'true';
    if (app.lab.core) app.events.ready(app.lab.now());
  });
}

main();
