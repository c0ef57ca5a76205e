// Runs bench/index.html in headless Chromium and prints the per-call costs. `make bench-web`.
import { launch, serve } from '../tests/browser.mjs';
import { readFileSync } from 'node:fs';

const { server, url } = await serve(0);
const browser = await launch();
try {
  const page = await browser.newPage();
  page.on('pageerror', (e) => console.error('pageerror:', e.message));
  await page.goto(`${url}bench/`);
  const results = await page.waitForFunction(() => window.benchResult, null, { timeout: 120000 }).then((h) => h.jsonValue());
  console.log(`chromium ${browser.version()}`);
  for (const r of results) {
    console.log(r.us_per_call !== undefined ? `${r.us_per_call.toFixed(3).padStart(9)} µs  ${r.label}` : `${r.ms_real.toFixed(1).padStart(9)} ms  ${r.label}`);
  }
  console.log(readFileSync(new URL('../pkg/SIZES.txt', import.meta.url), 'utf8').trim());
} finally {
  await browser.close();
  server.close();
}
