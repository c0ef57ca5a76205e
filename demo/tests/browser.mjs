// Shared test helpers: the static server and headless Debian Chromium through playwright-core.
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { serve } from '../serve.mjs';

export const OUT = fileURLToPath(new URL('../../test-output/web/', import.meta.url));
mkdirSync(OUT, { recursive: true });

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
  // Several tabs of one test must all keep their timers running.
  '--disable-background-timer-throttling', '--disable-renderer-backgrounding', '--disable-backgrounding-occluded-windows',
];

export async function launch() {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
}

export { serve };

/** Opens `url` and records console errors and page errors into the returned list. */
export async function open(context, url, errors) {
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`${url}: console: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`${url}: pageerror: ${e.message}`));
  await page.setViewportSize({ width: 1400, height: 1200 });
  await page.goto(url);
  await page.waitForFunction(() => document.body.dataset.ready !== '0', null, { timeout: 15000 });
  return page;
}

/** Every node row of the table, as the DOM shows it. */
export async function rows(page) {
  return page.$$eval('#nodes tbody tr', (trs) =>
    trs.map((tr) => ({ id: tr.dataset.id, role: tr.dataset.role, term: Number(tr.dataset.term), leader: tr.dataset.leader, group: tr.dataset.group })),
  );
}

export const leadersOf = (rs) => rs.filter((r) => r.role === 'leader');

export async function advance(page, ms) {
  await page.evaluate((t) => window.tenureDemo.advance(t), ms);
}
