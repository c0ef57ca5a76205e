// Renders the screenshots in docs/ (after `make web`): `node scripts/screenshot.mjs ../docs`.
//   demo.png         a 5-node cluster whose leader just crashed: a candidate with its vote tally,
//                    vote requests in flight, the tour open at its last step
//   demo-message.png the same moment replayed from the history slider, a vote message selected
//                    and decoded by the core
//   demo-narrow.png  the page 400 px wide: the cluster, then the controls
import { launch, serve, open, OUT } from '../tests/browser.mjs';

const dir = process.argv[2] ?? OUT;
const { server, url } = await serve(0);
const browser = await launch();
const context = await browser.newContext({ deviceScaleFactor: 1 });
const errors = [];
const page = await open(context, `${url}?seed=7&paused=1`, errors);
await page.setViewportSize({ width: 1400, height: 1080 });
await page.evaluate(() => tenureDemo.advance(12000));
const leader = await page.evaluate(() => tenureDemo.source.leaders()[0]);
await page.click(`#stage .node[data-id="${leader}"] .node-circle`);
await page.click('#crash');
// Run until a candidate's vote requests are half-way.
const candidate = await page.evaluate(() => {
  const c = tenureDemo.source;
  for (let i = 0; i < 20000; i++) {
    c.advance(5);
    const v = c.view();
    const cand = v.nodes.find((n) => n.role === 'candidate');
    const votes = v.messages.filter((m) => m.fate === 'flying' && m.kind === 'vote');
    if (cand && votes.length >= 3 && votes.every((m) => m.progress > 0.35 && m.progress < 0.65)) return cand.id;
  }
  return null;
});
if (!candidate) throw new Error('no election in flight');
await page.evaluate((id) => tenureDemo.select(id), candidate);
await page.click('#tour-start');
for (let i = 0; i < 4; i++) await page.click('#tour-next'); // the last step: the history slider
await page.evaluate(() => {
  document.activeElement.blur();
  scrollTo(0, 0);
});
await page.screenshot({ path: `${dir}/demo.png` });

// Let the election finish, then scrub back to that instant and open a vote request.
await page.click('#tour-close');
const then = await page.evaluate(() => tenureDemo.source.now);
await page.evaluate(() => tenureDemo.advance(3000));
await page.fill('#scrub', String(Math.ceil(then / 100) * 100));
await page.evaluate(() => {
  const flying = tenureDemo.replay.messages.filter((x) => x.fate === 'flying');
  const m = flying.find((x) => x.kind === 'vote') ?? flying.find((x) => x.kind === 'vote_reply') ?? flying[0];
  tenureDemo.pickMessage(m.seq);
});
await page.evaluate(() => document.activeElement.blur());
const stage = await page.locator('#stage-panel').boundingBox();
const inspect = await page.locator('#inspect-panel').boundingBox();
const controls = await page.locator('#controls').boundingBox();
await page.screenshot({
  path: `${dir}/demo-message.png`,
  fullPage: true,
  clip: { x: 0, y: 0, width: controls.x + controls.width + 12, height: Math.min(inspect.y + 330, stage.y + 1400) },
});

await page.click('#live');
await page.setViewportSize({ width: 400, height: 1300 });
await page.evaluate(() => scrollTo(0, 0));
await page.screenshot({ path: `${dir}/demo-narrow.png` });

if (errors.length) throw new Error(errors.join('\n'));
await browser.close();
server.close();
