// The book's tour chapters tell each guided tour as prose: this script turns
// scenarios/tour-*.json into docs/book/src/generated/tour-N.md (one file per
// tour, not committed), which the chapters {{#include}}. Run by
// scripts/build-book.sh before `mdbook build`, so a tour's text in the book is
// always the text the page shows: nothing to keep in step by hand.
//
// Each stop becomes a heading with its time, its text, its question (the
// choices, never the answer: the lab computes that from the run), and a
// "Go to this stop" button the book's labs.js turns into lab.seek(at_ms)
// (tour-N-text.md: the same without the buttons).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'docs', 'book', 'src', 'generated');

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const attr = (s) => esc(s).replace(/'/g, '&#39;');
const secs = (ms) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(3)} s`);

export function tourMarkdown(s, { buttons = true } = {}) {
  const out = [];
  s.tour.forEach((stop, i) => {
    out.push(`### ${i + 1}. ${esc(stop.title)} <small>(${secs(stop.at_ms)})</small>`, '');
    out.push(esc(stop.text), '');
    if (stop.question) {
      out.push(`> **Predict.** ${esc(stop.question.text)}`, '>');
      for (const c of stop.question.choices) out.push(`> - ${esc(c.text)}`);
      out.push('>', '> The lab answers from the run itself: pick a choice in its tour strip, or press **Next**.', '');
    }
    if (!buttons) return;
    out.push(
      `<div class="try" role="group" aria-label="Stop ${i + 1}">` +
        `<button type="button" data-try='${attr(JSON.stringify({ seek: stop.at_ms }))}'>Go to this stop (${secs(stop.at_ms)})</button>` +
        `<output aria-live="polite"></output></div>`,
      '',
    );
  });
  return out.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  fs.rmSync(OUT, { recursive: true, force: true });
  fs.mkdirSync(OUT, { recursive: true });
  const files = fs.readdirSync(path.join(ROOT, 'scenarios')).filter((f) => /^tour-\d+-.*\.json$/.test(f));
  for (const f of files) {
    const s = JSON.parse(fs.readFileSync(path.join(ROOT, 'scenarios', f), 'utf8'));
    const n = f.match(/^tour-(\d+)-/)[1];
    fs.writeFileSync(path.join(OUT, `tour-${n}.md`), tourMarkdown(s));
    // The text alone, for a chapter that tells a tour it does not embed.
    fs.writeFileSync(path.join(OUT, `tour-${n}-text.md`), tourMarkdown(s, { buttons: false }));
  }
  console.log(`book-tours: ${files.length} tours → docs/book/src/generated/`);
}
