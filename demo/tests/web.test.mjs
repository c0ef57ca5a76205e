// The demo page in headless Chromium: elections, failover, partitions and multi-tab mode.
// Simulated time is driven through window.tenureDemo.advance(ms) (no sleeping); the multi-tab test
// runs on real timers at 5× speed. Screenshots of every state go to test-output/web/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, serve, open, OUT, rows, leadersOf, advance } from './browser.mjs';

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

async function shot(page, name) {
  await page.screenshot({ path: `${OUT}${name}.png`, fullPage: true });
}

test('one page: a leader appears, fails over on a crash, and a partition leaves only the majority led', async () => {
  const context = await browser.newContext();
  const page = await open(context, `${url}?seed=7&paused=1`, errors);
  assert.deepEqual(errors, [], 'the page loads with no console errors');
  assert.equal((await rows(page)).length, 5, 'five nodes by default');

  // A leader appears.
  await advance(page, 8000);
  let rs = await rows(page);
  assert.equal(leadersOf(rs).length, 1, `exactly one leader: ${JSON.stringify(rs)}`);
  const first = leadersOf(rs)[0];
  for (const r of rs) assert.equal(r.leader, first.id, `${r.id} follows the leader`);
  assert.match(await page.textContent('#summary'), new RegExp(`leader ${first.id} \\(term ${first.term}\\)`));
  assert.ok((await page.$$('#timeline .seg')).length >= 1, 'the timeline shows the term led');
  assert.ok((await page.$$('#stage .msg')).length >= 0);
  await shot(page, '1-leader');

  // Crashing the leader yields a new leader with a higher term.
  await page.click(`#stage .node[data-id="${first.id}"]`);
  assert.equal(await page.textContent('#sel-id'), first.id);
  assert.match(await page.textContent('#inspect'), new RegExp(`"id": "${first.id}"`));
  await page.click('#crash');
  await advance(page, 8000);
  rs = await rows(page);
  assert.equal(rs.find((r) => r.id === first.id).role, 'crashed');
  assert.equal(leadersOf(rs).length, 1, `one new leader: ${JSON.stringify(rs)}`);
  const second = leadersOf(rs)[0];
  assert.notEqual(second.id, first.id);
  assert.ok(second.term > first.term, `term ${second.term} > ${first.term}`);
  await shot(page, '2-leader-crashed');

  // It comes back with its durable state and follows.
  await page.click('#restart-durable');
  await advance(page, 6000);
  rs = await rows(page);
  assert.equal(rs.find((r) => r.id === first.id).leader, second.id, 'the restarted node follows the new leader');
  assert.equal(leadersOf(rs).length, 1);

  // Partition 2 | 3, with the leader on the 2-side: that side ends up without a leader.
  const minority = [second.id, rs.find((r) => r.id !== second.id).id];
  for (const id of minority) await page.click(`#groups [data-part="${id}:B"]`);
  await advance(page, 10000);
  rs = await rows(page);
  const small = rs.filter((r) => minority.includes(r.id));
  const big = rs.filter((r) => !minority.includes(r.id));
  assert.ok(small.every((r) => r.group === 'B') && big.every((r) => r.group === 'A'));
  assert.equal(leadersOf(small).length, 0, `the 2-side has no leader: ${JSON.stringify(small)}`);
  assert.equal(leadersOf(big).length, 1, `the 3-side has one: ${JSON.stringify(big)}`);
  const third = leadersOf(big)[0];
  assert.ok(third.term > second.term);
  assert.ok((await page.$$('#stage .link.cut')).length === 6, 'the cut links are drawn');
  await shot(page, '3-partition-2-3');

  // Heal: one leader, everyone agrees.
  await page.click('#heal');
  await advance(page, 10000);
  rs = await rows(page);
  assert.equal(leadersOf(rs).length, 1, `one leader after healing: ${JSON.stringify(rs)}`);
  const healed = leadersOf(rs)[0];
  for (const r of rs) {
    assert.equal(r.leader, healed.id, `${r.id} follows ${healed.id}`);
    assert.equal(r.term, healed.term, `${r.id} is in term ${healed.term}`);
  }
  assert.equal(await page.getAttribute('#summary', 'data-leaders'), healed.id);
  await shot(page, '4-healed');
  assert.deepEqual(errors, []);
  await context.close();
});

test('one page: transfer, deny, wrong key, join and leave through the controls', async () => {
  const context = await browser.newContext();
  const page = await open(context, `${url}?seed=11&paused=1&n=3`, errors);
  await advance(page, 8000);
  let rs = await rows(page);
  assert.equal(rs.length, 3);
  const leader = leadersOf(rs)[0];
  const target = rs.find((r) => r.id !== leader.id).id;

  // Transfer leadership to a chosen node.
  await page.click(`#nodes tr[data-id="${leader.id}"]`);
  await page.selectOption('#transfer-to', target);
  await page.click('#transfer');
  await advance(page, 3000);
  rs = await rows(page);
  assert.deepEqual(leadersOf(rs).map((r) => r.id), [target], 'the chosen node leads');

  // Its host denies leadership: handed leadership, it wins the vote but never leads.
  const denier = rs.find((r) => r.id !== target && r.id !== leader.id).id;
  await page.click(`#nodes tr[data-id="${denier}"]`);
  await page.check('#deny');
  await page.click(`#nodes tr[data-id="${target}"]`);
  await page.selectOption('#transfer-to', denier);
  await page.click('#transfer');
  await advance(page, 10000);
  rs = await rows(page);
  assert.ok((await page.textContent('#log')).includes(`${denier} won term`), 'the log shows the denial');
  assert.notEqual(rs.find((r) => r.id === denier).role, 'leader', 'a denied node does not lead');
  assert.equal(leadersOf(rs).length, 1, `another node leads: ${JSON.stringify(rs)}`);
  await page.click(`#nodes tr[data-id="${denier}"]`);
  await page.uncheck('#deny');

  // Authenticated mode, one node with a wrong key: its messages are dropped as bad_mac.
  await page.check('#auth');
  await advance(page, 8000);
  assert.equal(leadersOf(await rows(page)).length, 1);
  await page.click(`#nodes tr[data-id="${denier}"]`);
  await page.check('#wrong-key');
  await advance(page, 8000);
  rs = await rows(page);
  assert.notEqual(rs.find((r) => r.id === denier).role, 'leader');
  assert.equal(leadersOf(rs).length, 1, 'the two nodes with the right key keep a leader');
  await page.click(`#nodes tr[data-id="${leadersOf(rs)[0].id}"]`);
  const inspect = JSON.parse(await page.textContent('#inspect'));
  assert.ok(inspect.droppedByReason.bad_mac > 0, 'wrong-key messages are counted as bad_mac');
  await shot(page, '5-wrong-key');

  // Dragging a node to empty space cuts it off; dragging it onto another node puts it back.
  const box = async (id) => page.locator(`#stage .node[data-id="${id}"] .node-circle`).boundingBox();
  const drag = async (id, x, y) => {
    const b = await box(id);
    await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2);
    await page.mouse.down();
    await page.mouse.move(x, y, { steps: 8 });
    await page.mouse.up();
  };
  const stage = await page.locator('#stage').boundingBox();
  await drag(denier, stage.x + 30, stage.y + stage.height / 2);
  rs = await rows(page);
  assert.notEqual(rs.find((r) => r.id === denier).group, rs.find((r) => r.id !== denier).group, 'dragged away: cut off');
  const mate = rs.find((r) => r.id !== denier).id;
  const mb = await box(mate);
  await drag(denier, mb.x + mb.width / 2, mb.y + mb.height / 2);
  rs = await rows(page);
  assert.equal(rs.find((r) => r.id === denier).group, rs.find((r) => r.id === mate).group, 'dropped on a node: same group');
  await page.click('#heal');

  // Join a fourth node, then remove it.
  await page.click('#join');
  await advance(page, 5000);
  rs = await rows(page);
  assert.equal(rs.length, 4);
  const added = rs[rs.length - 1].id;
  assert.equal(JSON.parse(await page.textContent('#inspect')).viewSize, 4, 'the new node joined the view');
  await page.click('#leave');
  await advance(page, 3000);
  assert.ok(!(await rows(page)).some((r) => r.id === added));
  assert.deepEqual(errors, []);
  await context.close();
});

test('real-time clock: at 10× a leader appears by itself; pause freezes the clock; step moves one event', async () => {
  const context = await browser.newContext();
  const page = await open(context, `${url}?seed=3&speed=10`, errors);
  assert.equal(await page.textContent('#speed-label'), '10.0×');
  await page.waitForFunction(() => document.querySelectorAll('#nodes tr[data-role="leader"]').length === 1, null, { timeout: 15000 });
  await page.waitForFunction(() => document.querySelectorAll('#stage .msg').length > 0, null, { timeout: 5000 });
  await page.click('#pause');
  const clock = async () => Number((await page.textContent('#clock')).replace(' s', ''));
  const frozen = await clock();
  await page.waitForTimeout(300);
  assert.equal(await clock(), frozen, 'paused: the simulated clock stands still');
  await page.click('#step');
  await page.click('#step');
  const stepped = await clock();
  assert.ok(stepped >= frozen && stepped - frozen < 1.0, `two steps move to the next events (${frozen} -> ${stepped})`);
  await page.keyboard.press('c'); // keyboard: crash the leader
  assert.equal(await page.$$eval('#nodes tr[data-role="crashed"]', (t) => t.length), 1);
  await page.click('#restart-all');
  assert.equal(await page.$$eval('#nodes tr[data-role="crashed"]', (t) => t.length), 0);
  await page.fill('#speed', '-1');
  assert.equal(await page.textContent('#speed-label'), '0.10×');
  await shot(page, '0-realtime');
  assert.deepEqual(errors, []);
  await context.close();
});

test('multi-tab: three tabs elect exactly one leader, and closing it elects another', async () => {
  const context = await browser.newContext();
  const cluster = `t${Date.now()}`;
  const pages = [];
  for (let i = 1; i <= 3; i++) pages.push(await open(context, `${url}?mode=tabs&cluster=${cluster}&speed=5&id=tab-${i}`, errors));

  const selves = () => Promise.all(pages.map((p) => p.evaluate(() => ({ ...document.body.dataset }))));
  async function until(pred, what, ms = 20000) {
    const end = Date.now() + ms;
    for (;;) {
      const s = await selves();
      if (pred(s)) return s;
      if (Date.now() > end) assert.fail(`${what}: ${JSON.stringify(s)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const agreed = (s) => {
    const leaders = s.filter((x) => x.selfRole === 'leader');
    return leaders.length === 1 && s.every((x) => x.selfLeader === leaders[0].selfId);
  };
  let s = await until(agreed, 'three tabs agree on one leader');
  const leader = s.find((x) => x.selfRole === 'leader');
  const other = pages[s.findIndex((x) => x.selfRole !== 'leader')];
  // The other tabs learn roles from status lines (every 250 ms, on real timers that Chromium may
  // throttle in background tabs): wait until this one shows the leader, then take the screenshot.
  await other.waitForFunction(
    (id) => document.querySelector(`#nodes tr[data-id="${id}"]`)?.dataset.role === 'leader',
    leader.selfId,
    { timeout: 10000 },
  );
  assert.equal(await other.$$eval('#nodes tbody tr', (t) => t.length), 3, 'every tab shows all three nodes');
  assert.equal(await other.getAttribute(`#nodes tr[data-id="${leader.selfId}"]`, 'data-role'), 'leader');
  await shot(other, '6-tabs-leader');

  const idx = s.indexOf(leader);
  await pages[idx].close({ runBeforeUnload: true });
  pages.splice(idx, 1);
  s = await until(
    (x) => agreed(x) && x.some((y) => y.selfRole === 'leader' && Number(y.selfTerm) > Number(leader.selfTerm)),
    'the two remaining tabs elect a new leader in a higher term',
  );
  assert.notEqual(s.find((x) => x.selfRole === 'leader').selfId, leader.selfId);
  await new Promise((r) => setTimeout(r, 600));
  await shot(pages[0], '7-tabs-failover');
  assert.deepEqual(errors, []);
  await context.close();
});
