// Issue 16, point 8: every number a tour stop states must be one the screen
// shows at that stop. `statedNumbers(text)` lists the numbers a stop's text
// states, leaving out what is not a reading of the simulation:
//   - a setting's value written as `name.with.dots=N` or `name.with.dots (N)`
//     (or `scenario_field=N`)
//     (a config the scenario sets or Kafka's default, not a measurement);
//   - versions (`Kafka 3.7`) and names with digits (`KIP-966`, `KAFKA-10554`,
//     `orders-0`, `p1`).
// `screenNumbers(page)` reads the numbers in the visible text of the page
// outside the tour card (select options, closed dialogs and tooltips are not
// "shown"). Numbers compare by value, so 4.1 s matches "4.100 s".

// 1,200 is one number (a thousands separator), 1.5 is one number.
const NUM = /(?<![A-Za-z_\-.,\d])\d{1,3}(?:,\d{3})+(?![\d])|(?<![A-Za-z_\-.\d])\d+(?:\.\d+)?(?![\d])/g;

const toNumber = (s) => Number(String(s).replace(/,/g, ''));

export function statedNumbers(text) {
  const t = String(text)
    .replace(/[a-z][a-z0-9]*(?:[._][a-z0-9]+)+(?:=|\s\()\d+\)?/g, ' ')
    .replace(/Kafka \d+(?:\.\d+)*/g, ' ')
    .replace(/\b[A-Za-z]+-\d+\b/g, ' ');
  return [...new Set(t.match(NUM) || [])];
}

/** The numbers in the visible text of the page outside #tour (runs in the page). */
export async function screenNumbers(page) {
  // After a big world's jump the narration lists its newest events first and
  // the older ones a moment later (aria-busy meanwhile): read it whole.
  await page.waitForFunction(() => !document.querySelector('#narration [aria-busy="true"]'), null, { timeout: 10000 });
  const text = await page.evaluate(() => {
    const tour = document.getElementById('tour');
    const out = [];
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const el = n.parentElement;
      if (!el || tour?.contains(el) || el.closest('select, option, dialog:not([open]), [hidden], .sr-only')) continue;
      if (!el.checkVisibility({ visibilityProperty: true, opacityProperty: true })) continue;
      out.push(n.textContent);
    }
    return out.join('\n');
  });
  return new Set((text.match(NUM) || []).map(toNumber));
}

/** The numbers a stop states that the screen does not show, each with its context. */
export function missingNumbers(text, shown) {
  return statedNumbers(text)
    .filter((n) => !shown.has(toNumber(n)))
    .map((n) => {
      const i = text.indexOf(n);
      return `${n} in «…${text.slice(Math.max(0, i - 40), i + n.length + 15)}…»`;
    });
}
