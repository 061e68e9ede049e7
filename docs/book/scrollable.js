// Wide tables and code blocks scroll sideways; make each one that does a
// keyboard stop with a name, so it can be scrolled without a mouse
// (WCAG 2.1.1; axe's scrollable-region-focusable).
function markScrollable() {
  document.querySelectorAll('main .table-wrapper, main pre, main pre > code').forEach((el, i) => {
    if (el.scrollWidth > el.clientWidth + 1) {
      el.tabIndex = 0;
      el.setAttribute('role', 'region');
      el.setAttribute('aria-label', el.matches('pre, code') ? `code block ${i + 1}` : `table ${i + 1} (scrolls sideways)`);
    }
  });
}
// Again once fonts and styles are in (widths change), and on resize.
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', markScrollable);
else markScrollable();
window.addEventListener('load', markScrollable);
window.addEventListener('resize', markScrollable);
