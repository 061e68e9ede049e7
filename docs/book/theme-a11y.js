// Accessibility mends for mdBook's own page chrome (issue 62, item 7), made
// at load rather than by copying mdBook's theme into the repository:
// - the sidebar toggle is a <label> carrying aria-label, aria-controls and
//   aria-expanded, which a label may not have (axe: aria-allowed-attr,
//   aria-prohibited-attr), and no keyboard stop: a button takes its place;
// - the search box is named by its placeholder only (axe: label-title-only);
// - the menu bar and the search results sit outside every landmark (axe:
//   region): the bar is the banner, the search box and its results a search.
(function () {
  'use strict';
  function mend() {
    const label = document.getElementById('mdbook-sidebar-toggle');
    if (label && label.tagName === 'LABEL' && !label.dataset.mended) {
      // A real button in the label's place, with its icon and name; it clicks
      // the label (which toggles mdBook's checkbox and runs mdBook's own
      // handler) and mirrors the aria-expanded mdBook keeps on the label,
      // which is taken out of the accessibility tree.
      label.dataset.mended = 'true';
      const button = document.createElement('button');
      button.type = 'button';
      button.className = label.className;
      button.title = label.title;
      button.setAttribute('aria-label', label.getAttribute('aria-label') || 'Toggle Table of Contents');
      button.setAttribute('aria-controls', label.getAttribute('aria-controls') || 'mdbook-sidebar');
      for (const child of [...label.childNodes]) button.append(child);
      const sync = () => button.setAttribute('aria-expanded', label.getAttribute('aria-expanded') ?? String(document.getElementById('mdbook-sidebar-toggle-anchor')?.checked ?? false));
      sync();
      new MutationObserver(sync).observe(label, { attributes: true, attributeFilter: ['aria-expanded'] });
      button.addEventListener('click', () => label.click());
      for (const a of ['aria-label', 'aria-controls', 'aria-expanded', 'title']) label.removeAttribute(a);
      label.setAttribute('aria-hidden', 'true');
      label.hidden = true;
      label.after(button);
    }
    const search = document.getElementById('mdbook-searchbar');
    if (search && !search.hasAttribute('aria-label')) search.setAttribute('aria-label', 'Search this book');
    const wrapper = document.getElementById('mdbook-search-wrapper');
    if (wrapper && !wrapper.hasAttribute('role')) wrapper.setAttribute('role', 'search');
    const bar = document.getElementById('mdbook-menu-bar');
    if (bar && !bar.hasAttribute('role')) bar.setAttribute('role', 'banner');
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', mend);
  else mend();
})();
