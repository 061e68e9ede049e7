// Keyboard shortcuts and the `?` help overlay (its words: glossary.js).

import { h } from './render/util.js';


export function installKeyboard(app, overlay) {
  const close = () => {
    overlay.hidden = true;
  };
  // The help's words (how to use it, these shortcuts, the glossary) come
  // with glossary.js, fetched the first time the help opens (app.js).
  overlay.replaceChildren(
    h('div.help-box', { role: 'dialog', 'aria-label': 'Keyboard shortcuts and help' },
      h('button', { type: 'button', onclick: close, text: 'Close' })),
  );
  overlay.addEventListener('click', (e) => {
    if (e.target === overlay) close();
  });

  document.addEventListener('keydown', (e) => {
    const tag = e.target?.tagName;
    if (tag === 'INPUT' && e.target.type !== 'range' && e.target.type !== 'checkbox') return;
    if (tag === 'SELECT' || tag === 'TEXTAREA') return;
    // A modal dialog (Import your cluster) keeps its keys: Space ticks its box.
    if (e.target?.closest?.('dialog')) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const k = e.key;
    // Space and Enter press the focused button (keyboard-only use), not play.
    if ((tag === 'BUTTON' || tag === 'SUMMARY' || tag === 'A') && (k === ' ' || k === 'Enter')) return;
    let handled = true;
    if (k === '?') overlay.hidden = !overlay.hidden;
    else if (k === 'Escape') {
      close();
      app.closeMenu();
    } else if (k === ' ') app.togglePlay();
    else if (k === 'ArrowRight') app.stepBy(e.shiftKey ? 1000 : 100);
    else if (k === 'ArrowLeft') app.jump(Math.max(0, (app.pendingSeek ?? app.lab.destination()) - 1000));
    else if (/^[1-9]$/.test(k)) app.toggleBroker(Number(k));
    else if (k === 'p' || k === 'P') app.produceBurst();
    else if (k === '+' || k === '=') app.nudgeSpeed(1);
    else if (k === '-' || k === '_') app.nudgeSpeed(-1);
    else if (k === 'r' || k === 'R') app.reset();
    else if (k === 'e' || k === 'E') app.skipToNext();
    else if (k === 'f' || k === 'F') app.setActMode(!app.forkMode);
    else if ((k === 'n' || k === 'N') && app.tour?.active) app.tour.step(app.tour.index + 1);
    else handled = false;
    if (handled) e.preventDefault();
  });
}
