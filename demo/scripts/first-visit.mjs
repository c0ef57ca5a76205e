// Screenshots of a first visit (after `make web`): `node scripts/first-visit.mjs DIR` writes
// DIR/1280x900.png (the page as it opens on a laptop) and DIR/400px*.png (a phone: the whole page,
// its stage and its table, a leader elected and a partition), the views the first-visit tests in tests/ui.test.mjs check.
import { launch, serve, open, OUT } from '../tests/browser.mjs';

const dir = process.argv[2] ?? OUT;
const { server, url } = await serve(0);
const browser = await launch();
const context = await browser.newContext({ deviceScaleFactor: 1 });
const errors = [];
const page = await open(context, `${url}?seed=7&paused=1`, errors);
await page.setViewportSize({ width: 1280, height: 900 });
await page.evaluate(() => tenureDemo.advance(8000));
await page.evaluate(() => scrollTo(0, 0));
await page.screenshot({ path: `${dir}/1280x900.png` });
await page.setViewportSize({ width: 400, height: 900 });
await page.evaluate(() => tenureDemo.render());
await page.click('#split');
await page.screenshot({ path: `${dir}/400px.png`, fullPage: true });
await page.locator('#stage-panel').screenshot({ path: `${dir}/400px-stage.png` });
await page.locator('#table-panel').screenshot({ path: `${dir}/400px-table.png` });
await browser.close();
server.close();
if (errors.length) throw new Error(errors.join('\n'));
