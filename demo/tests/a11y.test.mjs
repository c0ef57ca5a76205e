// axe-core (npm, pinned in package.json) injected into the page: no serious or critical
// violation, in the states a person sees: wide and narrow, a leader, a partition, the tour open,
// the past replayed with a decoded message shown, and multi-tab mode.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { launch, serve, open, advance } from './browser.mjs';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

let server;
let url;
let browser;
const errors = [];

before(async () => {
  ({ server, url } = await serve(0));
  browser = await launch();
});

after(async () => {
  await browser?.close();
  server?.close();
});

/** Runs axe on the page; returns the serious and critical violations, one line each. */
async function audit(page, what) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ path: AXE });
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${what}: ${v.id} (${v.impact}) ${v.help}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

test('axe-core finds no serious or critical violation', async () => {
  const context = await browser.newContext();
  const found = [];
  const page = await open(context, `${url}?seed=7&paused=1`, errors);
  found.push(...(await audit(page, 'start')));
  await advance(page, 8000);
  await page.click('#nodes tr[data-id="n2"]');
  found.push(...(await audit(page, 'leader')));
  await page.click('#split');
  await page.click('#tour-start');
  found.push(...(await audit(page, 'partition + tour')));
  await page.click('#tour-close');
  await page.fill('#scrub', '5000');
  await page.keyboard.press('m');
  found.push(...(await audit(page, 'history + message')));
  await page.setViewportSize({ width: 400, height: 900 });
  found.push(...(await audit(page, '400 px')));
  const tabs = await open(context, `${url}?mode=tabs&cluster=axe${Date.now()}&id=tab-axe`, errors);
  found.push(...(await audit(tabs, 'multi-tab')));
  assert.deepEqual(found, []);
  assert.deepEqual(errors, []);
  await context.close();
});
