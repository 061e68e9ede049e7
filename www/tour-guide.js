// The guided tour's card (issue 63's first-load budget: fetched only for a
// scenario with a tour; app.js and the <failover-lab> element load it on
// demand). The stops, highlights and long-stop helpers it uses are tour.js's.

import { h, fmtTime, setText } from './render/util.js';
import { applyHighlights, highlightSelectors, announced as isAnnounced, fmtWait, inSlices, BUSY_MS } from './tour.js';

const MARGIN = 8;

/** The first element `name` rings that is laid out (a hidden panel's copy is not) and not in the card. */
function firstShown(root, card, name) {
  for (const sel of highlightSelectors(name)) {
    let els = [];
    try {
      els = root.querySelectorAll(sel);
    } catch {
      // A malformed name selects nothing.
    }
    for (const el of els) if (!card.contains(el) && el.getClientRects().length) return el;
  }
  return null;
}

/** a precedes b in the document. */
const before = (a, b) => Boolean(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING);

/** What names the place of `el`: its compare lane's head, its table's column heads, or its panel's title. */
const heading = (el) =>
  el.closest('.lane')?.querySelector('.lane-head') ?? el.closest('table')?.querySelector('caption, thead') ?? el.closest('.panel')?.querySelector('h2');

// The reader's own scrolling or clicking since the page last placed a stop:
// from then on the page is theirs (see TourGuide.show).
let moves = 0;
for (const type of ['wheel', 'touchstart', 'pointerdown', 'keydown']) addEventListener(type, () => moves++, { capture: true, passive: true });

export class TourGuide {
  constructor(container, host) {
    this.container = container;
    // Whether the reader scrolled the card (a long one): a new stop puts it
    // back at its top. Kept here so render never writes scrollTop for
    // nothing: the write forces a layout of the page the landing just drew
    // (57 ms of tour 11's landing task, issue 63).
    this.scrolled = false;
    container.addEventListener('scroll', () => (this.scrolled = container.scrollTop > 0), { passive: true });
    this.host = host;
    this.stops = [];
    this.index = -1; // -1: the intro card, before the first stop
    this.intro = { name: '', description: '' };
    this.counter = h('span.tour-count');
    this.title = h('b.tour-title');
    this.text = h('p.tour-text', { 'aria-live': 'polite' });
    this.time = h('span.tour-time.muted');
    this.back = h('button', { type: 'button', 'data-tour': 'back', title: 'Previous stop', onclick: () => this.step(this.index - 1) }, '◀ Back');
    this.next = h('button.primary', { type: 'button', 'data-tour': 'next', title: 'Run the simulation to the next stop and pause there (N)', onclick: () => this.step(this.index + 1) }, 'Next ▶');
    this.restart = h('button', { type: 'button', 'data-tour': 'restart', title: 'Back to the start of the tour', onclick: () => this.step(-1) }, '↺');
    // Issue 65: at a stop, "what if … here?" switches the page's actions to forking a lane.
    this.whatIf = host.whatIf ? h('button', { type: 'button', 'data-tour': 'what-if', title: 'What if you acted here? Your next action (a broker\u2019s menu, a digit key) makes a new lane beside the tour\u2019s run instead of changing it (F)', onclick: () => host.whatIf() }, 'What if \u2026 here?') : null;
    if (this.whatIf && globalThis.matchMedia) {
      // Only where the card's row has room for it (a small screen's card keeps Next in sight; F does the same).
      const wide = matchMedia('(min-width: 1000px)');
      const fit = () => (this.whatIf.hidden = !wide.matches);
      wide.addEventListener?.('change', fit);
      fit();
    }
    this.dots = h('span.tour-dots');
    // Issue 25: after "End of tour", the next tour in the welcome's order (host.nextTour(), optional).
    this.nextTour = h('a.tour-next', { 'data-tour': 'next-tour', hidden: true });
    // Issue 16, point 7: when the run leaves the tour's script, say so and offer the way back.
    this.offText = h('span.tour-off-text');
    this.resumeBtn = h('button', { type: 'button', 'data-tour': 'resume', title: "Undo your actions and switches and return to this stop of the tour's own run", onclick: () => this.resume() }, 'Resume the tour');
    this.off = h('div.tour-off', { role: 'status', hidden: true }, this.offText, ' ', this.resumeBtn);
    this.offKey = null;
    // Issue 30: a stop's question (asked before the lab plays on) and, at the
    // next stop, what the run proved.
    this.picks = [];
    this.qBox = h('div.tour-q', { hidden: true });
    this.aBox = h('div.tour-a', { role: 'status', hidden: true });
    // While a slow stop computes (BUSY_MS): what the lab is doing, announced.
    this.busy = false;
    // The bar (how far the core got, when the host replays in slices) is drawn, not read out.
    this.busyText = h('span');
    this.busyBar = h('span.tl-bar', { 'aria-hidden': 'true' }, h('span'));
    this.busyBox = h('p.tour-busy', { role: 'status', hidden: true }, this.busyText, this.busyBar);
    // Issue 62, item 1: a card taller than it may be (45% of the window) says
    // so: a fade over its last line and a button that pages its text (then
    // goes back to the top), reached by Tab like the rest of the card.
    // Styled here, not in style.css: only a tour's page loads this module (the first-load budget).
    this.moreBtn = h('button', { type: 'button', 'data-tour': 'more', title: "Scroll the card to the rest of this stop's text", style: { pointerEvents: 'auto' }, onclick: () => this.page() });
    this.more = h('div.tour-more', {
      style: {
        display: 'none', gridColumn: '1 / -1', position: 'sticky', bottom: '-8px', margin: '-16px -12px -8px', padding: '16px 12px 6px',
        textAlign: 'right', pointerEvents: 'none',
      },
    }, this.moreBtn);
    container.addEventListener('scroll', () => this.cue(), { passive: true });
    container.classList.add('tour');
    container.replaceChildren(
      h('div.tour-head', null, h('span.tour-badge', { text: 'Guided tour' }), this.counter, this.title, this.time,
        h('span.tour-key.muted', { title: 'what the current stop talks about is ringed like this' }, h('i.hlk', { 'aria-hidden': 'true' }), 'look here'),
        // A long stop's progress, in sight above a text the card may scroll.
        this.busyBox),
      this.text,
      this.aBox,
      this.qBox,
      this.off,
      h('div.tour-nav', null, this.dots, this.restart, this.back, this.next, this.whatIf, this.nextTour),
      this.more,
    );
    container.hidden = true;
    // Read where layout is clean: the card or any of its parts changing size.
    this.sizes = new ResizeObserver(() => this.cue());
    for (const el of [container, ...container.children]) this.sizes.observe(el);
  }

  /** Show or hide the "more" cue: the card's content overflows it. */
  cue() {
    const c = this.container;
    const over = c.scrollHeight - c.clientHeight;
    const long = !c.hidden && over > 4;
    this.more.style.display = long ? '' : 'none';
    if (!long) return;
    const end = c.scrollTop >= over - 4;
    // A fade over the last lines while there is more below them.
    this.more.style.background = end ? 'none' : 'linear-gradient(transparent, var(--tour-bg) 55%)';
    setText(this.moreBtn, end ? 'top ▴' : 'more ▾');
    this.moreBtn.setAttribute('aria-label', end ? "Back to the top of this stop's text" : "More of this stop's text");
  }

  /** The "more" button: the card's next page of text, or back to its top from the end. */
  page() {
    const c = this.container;
    const end = c.scrollTop >= c.scrollHeight - c.clientHeight - 4;
    c.scrollTo({ top: end ? 0 : c.scrollTop + c.clientHeight - 48, behavior: 'instant' });
    this.cue();
  }

  get active() {
    return this.stops.length > 0;
  }

  /** A new scenario: its stops (possibly none) and intro text. */
  load(stops, intro) {
    this.stops = Array.isArray(stops) ? stops : [];
    this.intro = intro || { name: '', description: '' };
    this.index = -1;
    this.picks = [];
    // The answers' evaluator (question.js) is fetched only for a tour that asks.
    if (this.stops.some((st) => st.question)) {
      this.qLoad ??= import(new URL('./question.js', import.meta.url).href).then((m) => {
        this.q = m;
        this.render();
        return m;
      });
    }
    this.container.hidden = !this.active;
    this.dots.replaceChildren(
      ...this.stops.map((st, i) =>
        h('button.tour-dot', { type: 'button', title: `${i + 1}. ${st.title || fmtTime(st.at_ms)}`, 'aria-label': `stop ${i + 1}`, onclick: () => this.step(i) }),
      ),
    );
    this.render();
  }

  /** Go to stop i (-1 = intro): run or rewind the simulation there and pause. */
  go(i, user = false) {
    if (!this.active || this.busy) return;
    i = Math.max(-1, Math.min(this.stops.length - 1, i));
    this.index = i;
    this.host.goTo(i < 0 ? 0 : this.stops[i].at_ms);
    this.render();
    if (i >= 0) this.host.onStop?.(i, this.stops[i]);
    this.show(user);
  }

  /**
   * Go to stop i as the reader asked (a button, a choice, the N key): a stop
   * the core needs longer than BUSY_MS to reach is announced first; the host
   * takes the lab there a slice per frame with a bar filling (seekInSlices),
   * or, without that, in one go once the announcement has been painted.
   * Meanwhile the card is `aria-busy` and its buttons wait (another go is
   * ignored); a seek the reader makes meanwhile (the timeline) takes over,
   * and the tour stays where it was. A script's go (`failoverLab.tourNext`)
   * stays synchronous.
   */
  step(i) {
    if (!this.active || this.busy) return;
    // The stop being left places its evidence no more (show's observer): a
    // reader's click stops it by its pointerdown, a script's click() did
    // not, and a resize while the next stop was on its way (its landed
    // draw) scrolled to the old stop's evidence (CI: tour-first-step's
    // "scrolled into view in the frame after", 976 px at the arrival).
    moves++;
    i = Math.max(-1, Math.min(this.stops.length - 1, i));
    const t = i < 0 ? 0 : this.stops[i].at_ms;
    // A fresh lab's first estimate runs the core to time it (Lab.estimateSeekMs):
    // then the stop is reached by the frames after this task (issue 63),
    // never with the measuring, the seek and the draw in one task.
    // Not asked then: the estimate would run the core (up to MEASURE_MS and
    // the start's events) in this very task, then the slices would too (a
    // 146 ms task on tour 11's link to stop 6); the slices measure the pace.
    const fresh = this.host.paced?.() === false && t !== this.host.now();
    const unpaced = fresh && !!this.host.seekInSlices;
    const est = unpaced ? null : this.host.estimateMs?.(t);
    const now = this.host.now();
    // A big world's stop is always reached in slices: its pace swings (tour
    // 18's rack loss ran a stop estimated under SLICE_MS for 126 ms), and
    // its landed draw and the stop's arrival are then tasks of their own.
    const sliced = unpaced || (t !== now && !!this.host.seekInSlices && !!this.host.big?.());
    if (!sliced && (!inSlices(est, t, now) || !(this.host.seekInSlices || isAnnounced(est)))) {
      this.go(i, true);
      return;
    }
    this.busy = true;
    this.container.setAttribute('aria-busy', 'true');
    // A long stop (over BUSY_MS, or not known yet) is announced, its bar
    // filling; a short one (a few frames) only keeps the card from a second
    // go meanwhile. The buttons stay enabled (and focused): a click waits.
    // A fresh lab's stop (not timed: no estimate) is announced once it has
    // taken BUSY_MS, so a stop a few frames away never flashes the box.
    const controls = [];
    const bar = this.busyBar.firstChild;
    bar.style.width = '0%';
    const announce = () => {
      if (!this.busy || this.busyJob !== job) return;
      controls.push(this.back, this.next, this.restart, ...this.dots.children);
      for (const b of controls) b.disabled = true;
      this.busyBox.hidden = false;
      setText(this.busyText, `Running the cluster to ${fmtTime(t)}${est > 0 ? ` (about ${fmtWait(est)})` : ''}…`);
      bar.style.width = `${Math.round(100 * done)}%`;
      this.busyBar.hidden = !this.host.seekInSlices;
    };
    const job = (this.busyJob = (this.busyJob ?? 0) + 1);
    let done = 0;
    if (fresh && est == null) setTimeout(announce, BUSY_MS);
    else if (isAnnounced(est)) announce();
    // There: go's render then disables Back or Next where the stop reached needs it.
    const arrived = (there) => {
      this.busy = false;
      this.container.removeAttribute('aria-busy');
      this.busyBox.hidden = true;
      setText(this.busyText, '');
      for (const b of controls) b.disabled = false;
      if (there) this.go(i, true);
    };
    if (this.host.seekInSlices) {
      this.host.seekInSlices(t, (f) => (bar.style.width = `${Math.round(100 * (done = f))}%`)).then(arrived);
      return;
    }
    // requestAnimationFrame runs before the next paint, the timeout after it.
    requestAnimationFrame(() => setTimeout(() => arrived(true), 0));
  }

  /**
   * Highlight what the current stop talks about and bring it into view
   * (host.reveal unfolds and draws; place scrolls): always (the page: a link
   * to a stop too), or on a host that says `placeForReader` only when the
   * reader asked (the element: a script's tourNext() leaves its host page still).
   */
  show(user = true) {
    const st = this.stops[this.index];
    if (!st) return;
    const names = st.highlight || [];
    this.host.reveal?.(names);
    this.decorate();
    if (!user && this.host.placeForReader) return;
    // Placed by the observer below: its first call comes in the next frame,
    // after that frame's layout and before its paint. Placing reads the
    // layout, and the stop's draw has just changed the page, so placing now
    // would lay the page out in this task (a tour 19 stop's arrival: 50 of
    // its 109 ms). And again whenever the page or the card changes size (a
    // panel that grew, a module that loaded and drew above, a question that
    // loaded), until the reader scrolls, clicks or types.
    const at = ++moves;
    this.shifts?.disconnect();
    this.shifts = new ResizeObserver(() => {
      if (moves === at && st === this.stops[this.index]) this.place(names);
      else this.shifts.disconnect();
    });
    this.shifts.observe(document.body);
    this.shifts.observe(this.container);
  }

  /**
   * Scroll the stop's first evidence (its first highlight name that shows)
   * into view beside the sticky card, never under it (issue 62, item 1).
   * Below the card in the page, its top goes just under the card, with the
   * rings just above it that fit beside it (a compare lane's pills above its
   * partition), so none of them is under the card, and the heading that
   * names where it is, if it fits too (`heading`). Above the card (the
   * availability panel, the controls) the card is not stuck to the top yet:
   * it follows the evidence, so both show if they fit: the card's bottom
   * goes to the window's bottom, unless that would lift the evidence's top
   * out of the window, and then the evidence's top goes to the window's top.
   * Nothing moves when all already shows.
   */
  place(names) {
    const card = this.container;
    const root = this.host.queryRoot;
    let first = null;
    for (const n of names) if ((first = firstShown(root, card, n))) break;
    if (!first || card.hidden) return;
    const vh = innerHeight;
    const e = first.getBoundingClientRect();
    if (before(first, card)) {
      const c = card.getBoundingClientRect();
      if (e.top >= 0 && e.bottom <= vh && c.top >= e.bottom && c.bottom <= vh) return;
      scrollBy({ top: e.top - MARGIN, behavior: 'instant' });
      const below = vh - MARGIN - card.getBoundingClientRect().bottom;
      if (below > 0) scrollBy({ top: -Math.min(below, scrollY), behavior: 'instant' });
      return;
    }
    // Where the card, stuck to the top, ends.
    const under = card.offsetHeight + MARGIN;
    const room = vh - under - MARGIN;
    let top = e.top;
    let lead = first;
    for (const el of root.querySelectorAll('.tour-hl')) {
      if (card.contains(el) || before(el, card)) continue;
      const b = el.getBoundingClientRect();
      if (b.height && b.top < top && b.top >= e.bottom - room) {
        top = b.top;
        lead = el;
      }
    }
    // And the heading that says where the evidence is (its lane's name and
    // settings, the table's column names, its panel's title), if it fits:
    // a ringed row under the card's edge with its lane's head above the
    // window reads as a row of no lane.
    const head = heading(lead);
    if (head && !card.contains(head)) {
      const h = head.getBoundingClientRect().top;
      if (h < top && h >= e.bottom - room) {
        top = h;
        lead = head;
      }
    }
    if (top < under || e.bottom > vh - MARGIN) {
      // scrollIntoView, not scrollBy: the element may sit in a scrolled box of its host page.
      const was = lead.style.scrollMarginTop;
      lead.style.scrollMarginTop = `${under}px`;
      lead.scrollIntoView({ block: 'start', behavior: 'instant' });
      lead.style.scrollMarginTop = was;
    }
    // A ring the card's edge cuts reads as a stray dash under the card: show
    // it whole, or tuck it under the card, as far as the evidence stays in view.
    const edge = card.getBoundingClientRect().bottom;
    for (const el of root.querySelectorAll('.tour-hl')) {
      if (card.contains(el) || before(el, card) || el.contains(first)) continue;
      const b = el.getBoundingClientRect();
      if (!(b.top < edge && b.bottom > edge)) continue;
      const f = first.getBoundingClientRect();
      const up = edge + MARGIN - b.top;
      const down = b.bottom - edge;
      if (f.bottom + up <= vh) scrollBy({ top: -up, behavior: 'instant' });
      else if (f.top - down >= edge) scrollBy({ top: down, behavior: 'instant' });
      return;
    }
  }

  /**
   * While playing: the time the clock may advance to without passing the next
   * stop. `t` is where the clock wants to go.
   */
  limit(t) {
    if (!this.active) return { t, stop: -1 };
    const next = this.stops[this.index + 1];
    if (next && t >= next.at_ms && this.host.now() <= next.at_ms) return { t: next.at_ms, stop: this.index + 1 };
    return { t, stop: -1 };
  }

  /** The clock reached stop i while playing: show it. */
  arrive(i) {
    this.index = i;
    this.render();
    this.host.onStop?.(i, this.stops[i]);
    this.show(true);
  }

  /** After any time change: keep the card in step with the clock. */
  sync(now) {
    if (!this.active) return;
    this.checkScript();
    const cur = this.stops[this.index];
    const next = this.stops[this.index + 1];
    const inWindow = (this.index < 0 || now >= cur.at_ms) && (!next || now < next.at_ms);
    const atStop = cur && now === cur.at_ms;
    if (!inWindow && !atStop) {
      let i = -1;
      this.stops.forEach((st, j) => {
        if (st.at_ms <= now) i = j;
      });
      if (i !== this.index) {
        this.index = i;
        this.render();
      }
    }
    this.decorate();
  }

  /** Show or hide the "you left the script" notice. */
  checkScript() {
    const off = this.active && this.host.offScript ? this.host.offScript() : null;
    if (off === this.offKey) return;
    this.offKey = off;
    this.off.hidden = !off;
    this.container.classList.toggle('off-script', Boolean(off));
    if (off) setText(this.offText, `You have left the tour's script (${off}): this run no longer follows the tour, whose text describes the original run.`);
  }

  /** Back to the tour's own run, at the current stop. */
  resume() {
    this.host.resume?.();
    this.go(this.index);
  }

  /** Draw the current stop's highlights (call after every frame). */
  decorate() {
    const st = this.active ? this.stops[this.index] : null;
    const asked = this.active ? this.stops[this.index - 1]?.question : null;
    applyHighlights(this.host.queryRoot, st ? [...st.highlight, ...(asked?.evidence || [])] : []);
  }

  /** What the run answers to stop i's question now ({value, right}), or null before question.js is loaded. */
  answer(i) {
    const q = this.stops[i]?.question;
    if (!q || !this.q) return null;
    // A compare tour's answer reads every lane ("lanes[acks=1].report…"):
    // lane A's report with `lanes` beside it, once the lanes have loaded.
    const r = this.host.report();
    if (/\blanes\b/.test(q.answer)) {
      const lanes = this.host.lanes?.();
      if (!lanes?.length) return null;
      r.lanes = lanes;
    }
    return this.q.rightChoices(q, r);
  }

  /** The question of stop i and what the run answered, drawn at stops i and i + 1. */
  renderQuestion() {
    const i = this.index;
    const q = this.stops[i]?.question;
    this.qBox.hidden = !q;
    if (q) {
      this.qBox.replaceChildren(
        h('p.q-text', null, h('b', { text: 'Predict: ' }), q.text),
        h('div.q-choices', { role: 'group', 'aria-label': 'your prediction' },
          ...q.choices.map((c, j) => h('button.q-choice', {
            type: 'button', text: c.text, 'aria-pressed': String(this.picks[i] === j), dataset: { choice: j },
            onclick: () => {
              this.picks[i] = j;
              this.step(i + 1);
            },
          }))),
        h('p.muted.q-skip', { text: 'Pick one and the lab plays on to show what happens; Next skips the question.' }),
      );
    }
    const asked = this.stops[i - 1]?.question;
    this.aBox.hidden = !asked;
    if (!asked) return;
    let res;
    try {
      res = this.answer(this.index - 1);
      if (!res) {
        this.aBox.replaceChildren(h('p.muted', { text: 'Working out the answer…' }));
        return;
      }
    } catch (e) {
      this.aBox.replaceChildren(h('p', { text: `This question's answer cannot be computed: ${e.message}` }));
      return;
    }
    const pick = this.picks[i - 1];
    const right = res.right.map((j) => asked.choices[j].text);
    const hit = pick != null && res.right.includes(pick);
    // Issue 62, item 4: the verdict first, then the answer, then what in the
    // run decided it (the question's expression and the value it had here).
    const verdict = pick == null ? null : hit ? 'Right. ' : 'Not this time. ';
    const said = pick == null ? '' : hit ? 'You predicted it. ' : `You predicted “${asked.choices[pick].text}”. `;
    this.aBox.dataset.right = res.right.join(',');
    this.aBox.dataset.picked = pick == null ? '' : String(pick);
    this.aBox.classList.toggle('q-hit', hit);
    this.aBox.replaceChildren(
      h('p', null, verdict && h('b.q-verdict', { text: verdict }), said, h('b', { text: 'The run answers: ' }), `${right.length ? right.join(' / ') : 'none of the choices'} — “${asked.text}”`),
      h('p.muted.q-why', { text: `Decided by the run at t = ${fmtTime(this.stops[i]?.at_ms ?? this.host.now())}: ${asked.answer} = ${JSON.stringify(res.value)}.` }),
    );
  }

  render() {
    if (!this.active) return;
    const n = this.stops.length;
    const i = this.index;
    // A new stop opens at the top of the card, whatever the reader scrolled the last one to.
    if (this.container.dataset.stop !== String(i + 1) && this.scrolled) {
      this.container.scrollTop = 0;
      this.scrolled = false;
    }
    this.container.dataset.stop = String(i + 1);
    if (i < 0) {
      setText(this.counter, `${n} stops`);
      setText(this.title, this.intro.name);
      setText(this.time, '');
      setText(this.text, this.intro.description || 'Press Next to run the simulation to the first moment worth explaining.');
      setText(this.next, 'Start ▶');
    } else {
      const st = this.stops[i];
      setText(this.counter, `${i + 1} / ${n}`);
      setText(this.title, st.title || '');
      setText(this.time, `t = ${fmtTime(st.at_ms)}`);
      setText(this.text, st.text);
      setText(this.next, i === n - 1 ? 'End of tour' : 'Next ▶');
    }
    // Issue 25: the host may link the glossary's terms in the text (host.terms(el), optional).
    this.host.terms?.(this.text);
    const nt = i === n - 1 && this.host.nextTour?.();
    this.nextTour.hidden = !nt;
    if (nt) {
      this.nextTour.href = nt.href;
      setText(this.nextTour, `Next: ${nt.label} ▶`);
    }
    this.renderQuestion();
    this.next.disabled = i >= n - 1;
    this.back.disabled = i < 0;
    [...this.dots.children].forEach((d, j) => {
      d.classList.toggle('done', j < i);
      d.classList.toggle('on', j === i);
    });
    this.decorate();
  }
}
