// Renders the README screenshot: a 5-node cluster whose leader just crashed, votes in flight.
// `node scripts/screenshot.mjs ../docs/demo.png` (after `make web`).
import { launch, serve, open, OUT } from '../tests/browser.mjs';
const { server, url } = await serve(0);
const b = await launch(); const ctx = await b.newContext({ deviceScaleFactor: 1 }); const errors = [];
const page = await open(ctx, url + '?seed=7&paused=1', errors);
await page.setViewportSize({ width: 1400, height: 1080 });
await page.evaluate(() => tenureDemo.advance(12000));
const leader = await page.evaluate(() => tenureDemo.source.leaders()[0]);
await page.click(`#stage .node[data-id="${leader}"]`);
await page.click('#crash');
// run until vote requests are in flight
const got = await page.evaluate(() => {
  const c = tenureDemo.source;
  for (let i = 0; i < 20000; i++) {
    c.advance(5);
    const kinds = c.view().messages.filter((m) => m.fate === 'flying').map((m) => m.kind);
    if (kinds.filter((k) => k === 'vote' || k === 'vote_reply').length >= 3 && c.view().messages.some(m => m.fate==='flying' && m.progress > 0.3 && m.progress < 0.7)) { tenureDemo.render(); return kinds; }
  }
  return null;
});
if (!got) throw new Error("no election in flight");
await page.evaluate(() => tenureDemo.select(tenureDemo.source.alive().find(s => s.node.role === 'candidate')?.id ?? 'n1'));
await page.screenshot({ path: process.argv[2] ?? OUT + 'demo.png' });
if (errors.length) throw new Error(errors.join("\n"));
await b.close(); server.close();
