// Light and dark themes, shared by the page, embed.html and <failover-lab>.
// A theme is "light", "dark" or "auto" (the default: follow the reader's
// prefers-color-scheme, and change when it changes). The effective theme is
// drawn by adding class "light" to a root (style.css's .light block); dark is
// the stylesheet's default.

export const THEMES = ['auto', 'light', 'dark'];

/** Check a theme value; throws an Error naming `what` when it is not one. */
export function parseTheme(value, what = 'theme') {
  if (value === null || value === undefined) return 'auto';
  const v = String(value).trim().toLowerCase();
  if (v === '') return 'auto';
  if (!THEMES.includes(v)) throw new Error(`${what}="${value}": expected light, dark or auto`);
  return v;
}

let schemeQuery = null;
function lightQuery() {
  schemeQuery ??= typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: light)') : null;
  return schemeQuery;
}

/** "light" or "dark" for a theme setting (auto follows prefers-color-scheme). */
export function effectiveTheme(theme) {
  if (theme === 'light' || theme === 'dark') return theme;
  return lightQuery()?.matches ? 'light' : 'dark';
}

/**
 * Keep `root`'s class in step with `getTheme()` (re-read whenever the system
 * scheme changes). Returns { apply, stop }: call apply() after the setting
 * changes; stop() removes the listener.
 */
export function followTheme(root, getTheme, onChange) {
  const apply = () => {
    const eff = effectiveTheme(getTheme());
    const was = root.classList.contains('light') ? 'light' : 'dark';
    root.classList.toggle('light', eff === 'light');
    root.dataset.theme = eff;
    if (eff !== was) onChange?.(eff);
    return eff;
  };
  const q = lightQuery();
  q?.addEventListener('change', apply);
  return { apply, stop: () => q?.removeEventListener('change', apply) };
}
