import { startApp } from './helpers.mjs';
const app = await startApp({ viewport: { width: 1440, height: 900 } });
const { page } = app;
await page.goto(app.baseUrl + '/?scenario=tour-13-acks1-vs-acks-all.json');
await page.waitForSelector('body[data-ready="true"]');
for (let i = 0; i < 4; i++) { await page.locator('#tour [data-tour="next"]').click(); await page.waitForTimeout(400); }
await page.waitForTimeout(800);
await page.screenshot({ path: '/tmp/t13.png' });
await page.evaluate(() => window.scrollBy(0, 700));
await page.screenshot({ path: '/tmp/t13b.png' });
console.log('errors', app.errors);
await app.close();
