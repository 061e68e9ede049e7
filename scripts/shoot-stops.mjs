// Screenshots of tours at each of their stops, for checking that a change to
// how the page draws leaves what it shows at rest unchanged (issue 28): run
// it before and after into two directories and compare the files (cmp).
//
//   node scripts/shoot-stops.mjs OUT_DIR [tour-1-leader-dies,tour-8-...,...]
//
// Each stop is opened by its link (index.html?scenario=FILE&stop=K, as
// Check yourself links), left to settle, and shot in headless Chromium at
// 1280x800, dark, with reduced motion (the page then moves nothing by the
// wall clock: no message dots in flight, no flashes), so two runs of one
// build give the same bytes. Needs `make build`.
import fs from 'node:fs';
import path from 'node:path';
import { startApp } from '../tests/e2e/helpers.mjs';

const [out, list = 'tour-1-leader-dies,tour-8-min-insync-replicas,tour-13-acks1-vs-acks-all'] = process.argv.slice(2);
if (!out) {
  console.error('usage: node scripts/shoot-stops.mjs OUT_DIR [tour,...]');
  process.exit(2);
}
fs.mkdirSync(out, { recursive: true });
const app = await startApp({ viewport: { width: 1280, height: 800 }, colorScheme: 'dark' });
let shots = 0;
try {
  const { page } = app;
  await page.emulateMedia({ reducedMotion: 'reduce' });
  for (const name of list.split(',')) {
    const file = path.join('scenarios', `${name}.json`);
    if (!fs.existsSync(file)) throw new Error(`${file} does not exist`);
    const stops = JSON.parse(fs.readFileSync(file, 'utf8')).tour?.length ?? 0;
    for (let k = 1; k <= stops; k++) {
      await page.goto(`${app.baseUrl}/index.html?scenario=${name}.json&stop=${k}&welcome=0`);
      await page.waitForSelector('body[data-ready="true"]');
      await page.waitForTimeout(1500);
      await page.screenshot({ path: path.join(out, `${name}-stop-${k}.png`), animations: 'disabled' });
      shots++;
    }
  }
} finally {
  await app.close();
}
console.log(`shoot-stops: ${shots} screenshots in ${out}`);
