// The book's glue for the live labs (loaded on every page, after mdBook's own
// scripts). Two jobs, both through the element's public API only:
//
// 1. Theme. mdBook's theme is a class on <html> (light, rust, coal, navy,
//    ayu), not prefers-color-scheme, so every <failover-lab> on the page is
//    told light or dark whenever the reader picks a theme.
// 2. "Try this" buttons. <button data-try='{"crash": 2}' data-lab="ID">
//    drives the element with that id (default: the page's first one). The
//    actions are the element's methods (crash, restart, shutdown, isolate,
//    heal, powerLoss, produce, apply, runFor, seek, compare, fork, tourNext, reset,
//    play, pause); {"acks": "1"} reloads the scenario with every producer's acks
//    set to that value (an edit of the scenario's input, as a reader would
//    make it in the file). The outcome goes to the group's <output>, which
//    is a polite live region, so it is read out.
(function () {
  'use strict';
  const DARK = ['coal', 'navy', 'ayu'];
  function syncTheme() {
    const dark = DARK.some((t) => document.documentElement.classList.contains(t));
    document.querySelectorAll('failover-lab').forEach((lab) => lab.setAttribute('theme', dark ? 'dark' : 'light'));
  }
  syncTheme();
  new MutationObserver(syncTheme).observe(document.documentElement, { attributes: true, attributeFilter: ['class'] });

  const FAULTS = ['crash', 'restart', 'shutdown', 'isolate', 'heal', 'powerLoss'];
  const secs = (ms) => `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 3)} s`;

  function labFor(button) {
    const id = button.dataset.lab;
    return id ? document.getElementById(id) : document.querySelector('main failover-lab');
  }

  function say(button, text) {
    const out = button.closest('.try')?.querySelector('output');
    if (out) out.textContent = text;
  }

  async function run(lab, a) {
    const key = Object.keys(a)[0];
    const v = a[key];
    if (FAULTS.includes(key)) {
      lab[key](v);
      return `${key === 'powerLoss' ? 'power loss of' : key} broker ${v} at ${secs(lab.now())}`;
    }
    switch (key) {
      case 'runFor':
        lab.pause();
        lab.runFor(v);
        return `ran to ${secs(lab.now())}`;
      case 'seek':
        lab.pause();
        lab.seek(v);
        return `at ${secs(lab.now())}`;
      case 'compare':
        await lab.compare(v);
        return v === null ? 'compare lanes closed' : `lanes: ${v.split('|').map((l) => l || 'as the scenario says').join(' · ')}`;
      case 'acks': {
        const s = lab.scenario();
        for (const c of s.clients || []) if (c.type === 'producer') c.acks = v;
        lab.load(s);
        return `reloaded with acks=${v} on every producer`;
      }
      case 'produce':
        lab.produce(v.topic, v.partition ?? 0, v.count, v.acks);
        return `produced ${v.count} record${v.count === 1 ? '' : 's'} to ${v.topic}-${v.partition ?? 0} at ${secs(lab.now())}`;
      case 'apply':
        lab.apply(v);
        return `${Object.keys(v)[0]} at ${secs(lab.now())}`;
      case 'fork': {
        // {"fork": {"at": 12000, "action": {"crash": 2}, "from": "A"}}: "what if … here?"
        lab.pause();
        const d = await lab.fork(v.at, v.action, v.from || 'A');
        const [k, b] = Object.entries(d.action)[0];
        return `lane ${d.lane}: lane ${d.from} up to ${secs(d.at_ms)}, then ${k.replace('_', ' ')}${typeof b === 'number' ? ` broker ${b}` : ''}`;
      }
      case 'tourNext':
        lab.tourNext();
        return 'next stop';
      case 'reset':
        lab.reset();
        return 'back to the start';
      case 'play':
        lab.play();
        return 'playing';
      case 'pause':
        lab.pause();
        return `paused at ${secs(lab.now())}`;
      default:
        throw new Error(`unknown action "${key}"`);
    }
  }

  // A button far below its lab (a tour stop's "Go to this stop") would change
  // nothing the reader can see: bring the lab's top into view. Focus stays on
  // the button, so Tab and the reading position are kept.
  function showLab(lab) {
    const r = lab.getBoundingClientRect();
    if (r.top >= 0 && r.top < window.innerHeight * 0.5) return;
    const smooth = !window.matchMedia('(prefers-reduced-motion: reduce)').matches;
    lab.scrollIntoView({ block: 'start', behavior: smooth ? 'smooth' : 'auto' });
  }

  document.addEventListener('click', async (e) => {
    const button = e.target.closest && e.target.closest('button[data-try]');
    if (!button) return;
    const lab = labFor(button);
    if (!lab) return say(button, 'no lab on this page');
    await customElements.whenDefined('failover-lab');
    if (!(await lab.ready)) return say(button, 'the lab did not load');
    try {
      say(button, await run(lab, JSON.parse(button.dataset.try)));
      button.dataset.done = String(Number(button.dataset.done || 0) + 1);
      showLab(lab);
    } catch (err) {
      say(button, `refused: ${err && err.message ? err.message : err}`);
    }
  });
})();
