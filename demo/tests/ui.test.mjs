// The demo's controls for a person: keyboard operation, the live summary's mutation rate, the
// partition buttons' state, the narrow layout, the header, labels at 9 nodes and in multi-tab mode,
// and each of its controls (time out now, vote tally, history slider, decoded messages,
// the tour), and an axe-core audit (npm, pinned in package.json) with no serious or critical
// violation in the states a person sees. Simulated time is driven through window.tenureDemo (no sleeping) except where the
// test is about what happens frame by frame.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { launch, serve, open, OUT, rows, leadersOf, advance } from './browser.mjs';

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

const focusedId = (page) => page.evaluate(() => document.activeElement?.closest('[data-id]')?.dataset.id ?? null);

test('keyboard: Tab reaches the nodes, Enter selects, arrows move, and the node actions apply to the selection', async () => {
  const context = await browser.newContext();
  const page = await open(context, `${url}?seed=7&paused=1`, errors);
  await advance(page, 8000);
  const leader = leadersOf(await rows(page))[0].id;

  // Tab from the start of the page until a node of the stage has the focus.
  await page.evaluate(() => document.activeElement?.blur());
  let id = null;
  for (let i = 0; i < 20 && !id; i++) {
    await page.keyboard.press('Tab');
    id = await page.evaluate(() => (document.activeElement?.closest('#stage') ? document.activeElement.closest('[data-id]').dataset.id : null));
  }
  assert.equal(id, 'n1', 'Tab reaches the first node of the stage');
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('role')), 'button');

  // Arrows move the focus and the selection round the ring; Enter selects the focused node.
  await page.keyboard.press('ArrowRight');
  assert.equal(await focusedId(page), 'n2');
  assert.equal(await page.textContent('#sel-id'), 'n2');
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await focusedId(page), 'n5', 'ArrowLeft wraps round');
  // Walk to the leader and select it with Enter.
  const order = ['n1', 'n2', 'n3', 'n4', 'n5'];
  for (let i = 0; i < (order.indexOf(leader) - order.indexOf('n5') + 5) % 5; i++) await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Enter');
  assert.equal(await page.textContent('#sel-id'), leader);
  assert.equal(await page.getAttribute(`#stage .node[data-id="${leader}"] [role="button"]`, 'aria-pressed'), 'true');

  // The focus survives the animation (node elements persist between frames).
  await page.evaluate(() => tenureDemo.resume());
  await page.waitForTimeout(400);
  await page.evaluate(() => tenureDemo.pause());
  assert.equal(await focusedId(page), leader, 'the focused node keeps the focus while frames render');

  // Crash through the keyboard: focus the Crash button and press Enter.
  await page.focus('#crash');
  await page.keyboard.press('Enter');
  assert.equal((await rows(page)).find((r) => r.id === leader).role, 'crashed', 'Crash applied to the selected node, not n1');

  // Table rows are focusable too: Space selects, and Restart acts on that row's node.
  await page.focus(`#nodes tr[data-id="n1"]`);
  await page.keyboard.press(' ');
  assert.equal(await page.textContent('#sel-id'), 'n1');
  assert.equal(await page.getAttribute('#nodes tr[data-id="n1"]', 'aria-current'), 'true');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.evaluate(() => document.activeElement.tagName + ':' + document.activeElement.dataset.id), 'TR:n2');
  await page.focus(`#nodes tr[data-id="${leader}"]`);
  await page.keyboard.press('Enter');
  await page.focus('#restart-durable');
  await page.keyboard.press('Enter');
  assert.notEqual((await rows(page)).find((r) => r.id === leader).role, 'crashed', 'Restart applied to the row selected by keyboard');
  assert.equal(await page.evaluate(() => document.body.dataset.ready), '1');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the aria-live summary changes only when its text changes', async () => {
  const context = await browser.newContext();
  const page = await open(context, `${url}?seed=7&paused=1&speed=10`, errors);
  await advance(page, 8000);
  assert.notEqual(await page.getAttribute('#summary', 'data-leaders'), '');
  await page.evaluate(() => tenureDemo.resume());
  // Count every mutation of the live region over 2 s of frames (at 10×: 20 s of simulated time,
  // with heartbeats and timers moving on every frame).
  const texts = await page.evaluate(
    () =>
      new Promise((resolve) => {
        const el = document.querySelector('#summary');
        const seen = [];
        const obs = new MutationObserver(() => seen.push(el.textContent));
        obs.observe(el, { childList: true, subtree: true, characterData: true, attributes: true });
        setTimeout(() => {
          obs.disconnect();
          resolve({ seen });
        }, 2000);
      }),
  );
  for (let i = 1; i < texts.seen.length; i++) assert.notEqual(texts.seen[i], texts.seen[i - 1], 'no mutation repeats the text');
  assert.ok(texts.seen.length <= 2, `a steady leader: at most a couple of changes in 2 s, got ${texts.seen.length}: ${JSON.stringify(texts.seen)}`);
  // A crash changes it, once per distinct text.
  await page.evaluate(() => tenureDemo.pause());
  const before = await page.textContent('#summary');
  const n = await page.evaluate(() => {
    const el = document.querySelector('#summary');
    let count = 0;
    const obs = new MutationObserver((recs) => (count += recs.length));
    obs.observe(el, { childList: true, subtree: true, characterData: true, attributes: true });
    tenureDemo.render();
    tenureDemo.render();
    return new Promise((r) => setTimeout(() => (obs.disconnect(), r(count)), 50));
  });
  assert.equal(n, 0, 'rendering the same state again writes nothing');
  await page.keyboard.press('c');
  assert.notEqual(await page.textContent('#summary'), before);
  assert.match(await page.textContent('#summary'), /no leader · 5 nodes, 1 down/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('layout: 400 px wide has no horizontal overflow, the controls come before the inspect panel; the header never moves', async () => {
  const context = await browser.newContext();
  for (const width of [400, 1400]) {
    const page = await open(context, `${url}?seed=7&paused=1`, errors);
    await page.setViewportSize({ width, height: 900 });
    const geometry = () =>
      page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        header: document.querySelector('header').getBoundingClientRect().height,
        main: document.querySelector('main').getBoundingClientRect().top + scrollY,
      }));
    const g0 = await geometry(); // no leader yet
    await advance(page, 8000);
    const g1 = await geometry(); // a leader
    await page.keyboard.press('c');
    await page.click('#split');
    const g2 = await geometry(); // crashed and partitioned
    assert.ok(g0.scroll <= width && g1.scroll <= width && g2.scroll <= width, `no horizontal overflow at ${width}: ${JSON.stringify([g0, g1, g2])}`);
    assert.equal(g1.header, g0.header, `the header keeps its height when a leader appears (${width} px)`);
    assert.equal(g2.header, g0.header);
    assert.equal(g1.main, g0.main, 'the page does not shift');
    const top = (sel) => page.$eval(sel, (el) => el.getBoundingClientRect().top);
    assert.ok((await top('#controls')) < (await top('#inspect-panel')), `controls before inspect at ${width} px`);
    if (width === 400) {
      assert.ok((await top('#stage-panel')) < (await top('#controls')), 'the cluster first');
      await page.screenshot({ path: `${OUT}ui-400px.png`, fullPage: true });
    }
    await page.close();
  }
  assert.deepEqual(errors, []);
  await context.close();
});

/** Screen rectangles of every label of every node, with the node they belong to. */
async function labelBoxes(page) {
  return page.$$eval('#stage .node', (gs) =>
    gs.flatMap((g) =>
      [...g.querySelectorAll('text')].map((t) => {
        const r = t.getBoundingClientRect();
        return { id: g.dataset.id, cls: t.getAttribute('class'), text: t.textContent, x: r.x, y: r.y, w: r.width, h: r.height };
      }),
    ),
  );
}

const overlap = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

test('labels stay apart and readable with 8 and 9 nodes', async () => {
  const context = await browser.newContext();
  const page = await open(context, `${url}?seed=5&paused=1&n=9`, errors);
  await page.setViewportSize({ width: 1400, height: 1000 });
  for (const n of [9, 8]) {
    if (n === 8) await page.selectOption('#size', '8');
    assert.equal((await rows(page)).length, n);
    await advance(page, 10000);
    // Make every node show its longest labels: a vote, a heartbeat age, a group badge, flags.
    await page.click('#split');
    const boxes = (await labelBoxes(page)).filter((b) => b.w > 0);
    assert.ok(boxes.length >= n * 4);
    for (const a of boxes) {
      for (const b of boxes) {
        if (a.id < b.id) assert.ok(!overlap(a, b), `${n} nodes: ${a.id} "${a.text}" overlaps ${b.id} "${b.text}"`);
      }
    }
    const smallest = Math.min(...boxes.filter((b) => b.cls !== 'ngroup').map((b) => b.h));
    assert.ok(smallest >= 10, `labels at least 10 px tall on a 1400 px page (${smallest})`);
    if (n === 9) await page.screenshot({ path: `${OUT}ui-9-nodes.png` });
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('multi-tab ids fit inside their circles', async () => {
  const context = await browser.newContext();
  const cluster = `fit${Date.now()}`;
  const page = await open(context, `${url}?mode=tabs&cluster=${cluster}&id=tab-wwm`, errors);
  const fit = await page.$eval('#stage .node[data-id="tab-wwm"]', (g) => ({
    id: g.querySelector('.nid').getBoundingClientRect().width,
    circle: g.querySelector('.node-circle').getBoundingClientRect().width,
  }));
  assert.ok(fit.id < fit.circle - 6, `the id (${fit.id} px) fits in the circle (${fit.circle} px)`);
  assert.deepEqual(errors, []);
  await context.close();
});

test('partition buttons name their node and expose aria-pressed; "Transfer to" never offers the selected node', async () => {
  const context = await browser.newContext();
  const page = await open(context, `${url}?seed=7&paused=1`, errors);
  const b = '#groups [data-part="n3:B"]';
  assert.equal(await page.getAttribute(b, 'aria-label'), 'n3 in group B');
  assert.equal(await page.getAttribute(b, 'aria-pressed'), 'false');
  assert.equal(await page.getAttribute('#groups [data-part="n3:A"]', 'aria-pressed'), 'true');
  assert.equal(await page.$eval(b, (el) => el.closest('[role="group"]').getAttribute('aria-labelledby')), 'grp-n3');
  await page.click(b);
  assert.equal(await page.getAttribute(b, 'aria-pressed'), 'true');
  assert.equal(await page.getAttribute('#groups [data-part="n3:A"]', 'aria-pressed'), 'false');
  await page.click('#heal');
  assert.equal(await page.getAttribute(b, 'aria-pressed'), 'false');
  await advance(page, 8000);
  const leader = leadersOf(await rows(page))[0].id;
  await page.click(`#nodes tr[data-id="${leader}"]`);
  const opts = await page.$$eval('#transfer-to option', (os) => os.map((o) => o.value));
  assert.equal(opts.length, 4);
  assert.ok(!opts.includes(leader), `the leader is not a target: ${opts}`);
  assert.notEqual(await page.inputValue('#transfer-to'), leader);
  await page.click('#transfer');
  await advance(page, 3000);
  const now = leadersOf(await rows(page));
  assert.equal(now.length, 1);
  assert.equal(now[0].id, opts[0], 'the default target leads');
  assert.deepEqual(errors, []);
  await context.close();
});

test('time out now: a follower campaigns at once; with a healthy leader its pre-vote fails', async () => {
  const context = await browser.newContext();
  const page = await open(context, `${url}?seed=7&paused=1`, errors);
  await advance(page, 8000);
  let rs = await rows(page);
  const leader = leadersOf(rs)[0];
  await page.click(`#nodes tr[data-id="${leader.id}"]`);
  assert.ok(await page.isDisabled('#timeout-now'), 'a leader has no election timer');
  const f = rs.find((r) => r.id !== leader.id).id;
  await page.click(`#nodes tr[data-id="${f}"]`);
  assert.ok(await page.isEnabled('#timeout-now'));
  await page.click('#timeout-now');
  const flying = await page.evaluate((id) => tenureDemo.source.view().messages.filter((m) => m.from === id && m.fate === 'flying').map((m) => m.kind), f);
  assert.deepEqual([...new Set(flying)], ['pre_vote'], `${f} asks for pre-votes at once`);
  assert.match(await page.textContent('#log'), new RegExp(`${f}'s election timer fires now`));
  await advance(page, 3000);
  rs = await rows(page);
  assert.equal(leadersOf(rs).map((r) => r.id).join(), leader.id, 'the healthy leader stays');
  assert.equal(rs.find((r) => r.id === leader.id).term, leader.term, 'and no term was spent');

  // With the leader crashed, time out now elects the chosen follower straight away.
  await page.click(`#nodes tr[data-id="${leader.id}"]`);
  await page.click('#crash');
  // The others refuse pre-votes while they have heard from a leader within the minimum election
  // timeout (1.5 s here): wait that long, then time the follower out before anyone else does.
  await advance(page, 1500);
  await page.click(`#nodes tr[data-id="${f}"]`);
  await page.click('#timeout-now');
  await advance(page, 800);
  assert.deepEqual(leadersOf(await rows(page)).map((r) => r.id), [f], `${f} won the election it started`);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a candidate shows its vote tally; the history slider replays recorded snapshots, read-only, and returns to live', async () => {
  const context = await browser.newContext();
  const page = await open(context, `${url}?seed=7&paused=1`, errors);
  await advance(page, 8000);
  const first = leadersOf(await rows(page))[0];
  await page.keyboard.press('c');
  // Step event by event until some node is a candidate.
  const tally = await page.evaluate(() => {
    for (let i = 0; i < 5000; i++) {
      tenureDemo.source.step();
      const c = tenureDemo.source.view().nodes.find((n) => n.role === 'candidate');
      if (c) {
        tenureDemo.render();
        return { id: c.id, ...c.votes };
      }
    }
    return null;
  });
  assert.ok(tally, 'an election happens');
  assert.equal(tally.needed, 3, 'five members: three votes win');
  assert.ok(tally.count >= 1 && tally.count < 3);
  assert.equal(await page.textContent(`#stage .node[data-id="${tally.id}"] .tally text`), `votes ${tally.count}/3`);
  assert.match(await page.textContent(`#nodes tr[data-id="${tally.id}"]`), new RegExp(`votes ${tally.count}/3`));
  assert.match(await page.getAttribute(`#stage .node[data-id="${tally.id}"] [role="button"]`, 'aria-label'), new RegExp(`${tally.count} of 3 votes`));
  await page.screenshot({ path: `${OUT}ui-tally.png` });
  await page.evaluate(() => tenureDemo.advance(16000 - tenureDemo.source.now));
  const second = leadersOf(await rows(page))[0];
  assert.notEqual(second.id, first.id);
  assert.equal(await page.getAttribute('#scrub', 'max'), '16000');

  // Back to 7 s: the first leader leads again on the stage, in the table and in inspect().
  await page.fill('#scrub', '7000');
  assert.equal(await page.textContent('#scrub-label'), '7.0 s (past)');
  assert.equal(await page.getAttribute('#scrub', 'aria-valuetext'), '7.0 s (past)');
  let rs = await rows(page);
  assert.deepEqual(leadersOf(rs).map((r) => r.id), [first.id]);
  assert.equal(await page.getAttribute(`#stage .node[data-id="${first.id}"]`, 'data-role'), 'leader');
  assert.ok(await page.isDisabled('#crash-leader'), 'the past is read-only');
  assert.ok(await page.isEnabled('#live'));
  await page.click(`#nodes tr[data-id="${first.id}"]`);
  assert.equal(JSON.parse(await page.textContent('#inspect')).state, 'leader', 'inspect() as recorded then');
  assert.match(await page.textContent('#clock'), /^7\.0\d\d s$/);
  assert.ok(!(await page.textContent('#log')).includes('crashed'), 'the log stops at the replayed instant');
  await page.screenshot({ path: `${OUT}ui-history.png` });

  await page.click('#live');
  rs = await rows(page);
  assert.deepEqual(leadersOf(rs).map((r) => r.id), [second.id]);
  assert.equal(await page.textContent('#scrub-label'), 'live');
  assert.equal(rs.find((r) => r.id === first.id).role, 'crashed');
  assert.deepEqual(errors, []);
  await context.close();
});

test('clicking a message in flight shows it decoded by the core; m picks one from the keyboard', async () => {
  const context = await browser.newContext();
  const page = await open(context, `${url}?seed=7&paused=1`, errors);
  await advance(page, 8000);
  await page.waitForSelector('#stage .msg[data-seq]');
  assert.ok(await page.isHidden('#message-panel'));
  const el = page.locator('#stage .msg[data-seq]').first();
  const kind = await el.getAttribute('data-kind');
  const seq = await el.getAttribute('data-seq');
  await el.click();
  assert.ok(await page.isVisible('#message-panel'));
  const shown = JSON.parse(await page.textContent('#message'));
  assert.equal(shown.decoded.kind, kind, 'the kind the core decodes');
  assert.equal(shown.decoded.cluster, 'demo');
  assert.equal(typeof shown.decoded.term, 'number');
  assert.ok(shown.bytes > 0);
  assert.equal(await page.getAttribute(`#stage .msg[data-seq="${seq}"]`, 'class').then((c) => c.includes('selected')), true);
  const head = await page.textContent('#message-head');
  assert.match(head, / → /);

  // Keyboard: m selects the next message in flight.
  await page.focus('#pause');
  await page.keyboard.press('m');
  assert.notEqual(JSON.parse(await page.textContent('#message')).decoded, null);
  assert.notEqual(await page.evaluate(() => tenureDemo.message.seq), Number(seq));
  await page.click('#message-close');
  assert.ok(await page.isHidden('#message-panel'));

  // Authenticated mode: a message from a node with a wrong key fails the MAC check when decoded.
  await page.check('#auth');
  await page.click('#nodes tr[data-id="n2"]');
  await page.check('#wrong-key');
  await advance(page, 3000);
  const bad = await page.evaluate(() => {
    const m = tenureDemo.source.view().messages.find((x) => x.from === 'n2' && x.fate === 'flying');
    if (!m) return null;
    tenureDemo.pickMessage(m.seq);
    return m.seq;
  });
  if (bad !== null) assert.equal(JSON.parse(await page.textContent('#message')).decoded.error, 'bad_mac');
  // A message with the right key decodes as its receiver reads it (the tag covers the receiver).
  const good = await page.evaluate(() => {
    const m = tenureDemo.source.view().messages.find((x) => x.from !== 'n2' && x.to !== 'n2' && x.fate === 'flying');
    if (!m) return null;
    tenureDemo.pickMessage(m.seq);
    return m.seq;
  });
  if (good !== null) {
    const decoded = JSON.parse(await page.textContent('#message')).decoded;
    assert.equal(decoded.error, undefined, JSON.stringify(decoded));
    assert.ok(decoded.kind, JSON.stringify(decoded));
    await page.screenshot({ path: `${OUT}ui-auth-message.png` });
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('the tour: five steps, each pointing at its control, each with a working "do it for me"', async () => {
  const context = await browser.newContext();
  const page = await open(context, `${url}?seed=7&paused=1`, errors);
  await advance(page, 8000);
  await page.click('#tour-start');
  const heads = [];
  for (let i = 1; i <= 5; i++) {
    assert.equal(await page.getAttribute('#tour', 'data-step'), String(i));
    assert.equal(await page.textContent('#tour-count'), `${i} of 5`);
    heads.push(await page.textContent('#tour-head'));
    assert.equal(await page.$$eval('.tour-target', (t) => t.length), 1, 'one control is pointed at');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'tour-title', 'the focus moves to the step');
    const before = await page.evaluate(() => tenureDemo.source.log.length);
    await page.click('#tour-do');
    await advance(page, i === 5 ? 0 : 4000);
    if (i < 5) assert.ok((await page.evaluate(() => tenureDemo.source.log.length)) > before, `step ${i} did something`);
    if (i === 2) await page.click('#heal');
    await page.click('#tour-next');
  }
  assert.deepEqual(heads, ['Crash the leader', 'Cut the cluster in two', 'Time a follower out now', 'Hand leadership over', 'Rewind and look closer']);
  assert.ok(await page.isHidden('#tour'), 'Finish closes the tour');
  assert.equal(await page.$$eval('.tour-target', (t) => t.length), 0);
  assert.deepEqual(errors, []);
  await context.close();
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
  // Each audit takes a second or two on a loaded machine: three audits cover every panel.
  const page = await open(context, `${url}?seed=7&paused=1`, errors);
  await advance(page, 8000);
  await page.click('#nodes tr[data-id="n2"]');
  await page.click('#split');
  await page.click('#tour-start');
  await page.keyboard.press('m'); // a decoded message shown
  found.push(...(await audit(page, 'leader, partition, tour, message')));
  await page.click('#tour-close');
  await page.fill('#scrub', '5000');
  await page.setViewportSize({ width: 400, height: 900 });
  found.push(...(await audit(page, 'history at 400 px')));
  const tabs = await open(context, `${url}?mode=tabs&cluster=axe${Date.now()}&id=tab-axe`, errors);
  found.push(...(await audit(tabs, 'multi-tab')));
  assert.deepEqual(found, []);
  assert.deepEqual(errors, []);
  await context.close();
});

// ----- a first visit (issue: the first hour without surprises) -----------------------------------

test('transfer: the target list offers running nodes only, never one that has just crashed', async () => {
  const context = await browser.newContext();
  const page = await open(context, `${url}?seed=7&paused=1`, errors);
  await advance(page, 8000);
  const all = await rows(page);
  const leader = leadersOf(all)[0].id;
  const victim = all.find((r) => r.role !== 'leader').id;
  await page.evaluate((id) => tenureDemo.select(id), leader);
  const offered = () => page.$$eval('#transfer-to option', (os) => os.map((o) => o.value));
  assert.ok((await offered()).includes(victim));
  // The leader stays selected while a follower crashes (the keyboard's c, a click elsewhere...).
  await page.evaluate((id) => {
    tenureDemo.source.crash(id);
    tenureDemo.render();
  }, victim);
  assert.equal((await rows(page)).find((r) => r.id === victim).role, 'crashed');
  assert.ok(!(await offered()).includes(victim), `${victim} crashed but is still offered: ${await offered()}`);
  assert.equal((await offered()).length, all.length - 2, 'every other running node is offered');
  await page.evaluate((id) => {
    tenureDemo.source.restart(id, true);
    tenureDemo.render();
  }, victim);
  assert.ok((await offered()).includes(victim), 'offered again once restarted');
  assert.deepEqual(errors, []);
  await context.close();
});

/** Key presses from the focused element until `target` has the focus: Tab, or Enter on a link. */
async function pressesTo(page, target, limit = 40) {
  for (let n = 1; n <= limit; n++) {
    const onLink = await page.evaluate(() => document.activeElement?.tagName === 'A' && document.activeElement.classList.contains('skip'));
    await page.keyboard.press(onLink ? 'Enter' : 'Tab');
    if (await page.evaluate((sel) => document.activeElement === document.querySelector(sel), target)) return n;
  }
  return Infinity;
}

test('keyboard: from a node to its transfer control in a few key presses', async () => {
  const context = await browser.newContext();
  const page = await open(context, `${url}?seed=7&paused=1`, errors);
  await advance(page, 8000);
  const leader = leadersOf(await rows(page))[0].id;
  await page.evaluate((id) => tenureDemo.select(id), leader);
  await page.focus(`#stage .node[data-id="${leader}"] [role="button"]`);
  await page.keyboard.press('Enter');
  const presses = await pressesTo(page, '#transfer');
  assert.ok(presses <= 5, `${presses} key presses from the selected node to Transfer`);
  // And back: the nodes are one Tab stop (arrows move between them), so Shift+Tab from the stage's
  // end does not wade through every node.
  const stops = await page.$$eval('#stage [role="button"]', (bs) => bs.filter((b) => b.tabIndex >= 0).length);
  assert.equal(stops, 1, 'one Tab stop for the whole ring');
  const rowStops = await page.$$eval('#nodes tbody tr', (trs) => trs.filter((t) => t.tabIndex >= 0).length);
  assert.equal(rowStops, 1, 'one Tab stop for the table (arrows move)');
  assert.deepEqual(errors, []);
  await context.close();
});

test('400 px wide: the node table fits its panel and the diagram labels stay readable', async () => {
  const context = await browser.newContext();
  const page = await open(context, `${url}?seed=7&paused=1`, errors);
  await page.setViewportSize({ width: 400, height: 900 });
  await advance(page, 8000);
  await page.click('#split');
  const fit = await page.evaluate(() => {
    const panel = document.querySelector('#table-panel');
    const table = document.querySelector('#nodes');
    const pad = parseFloat(getComputedStyle(panel).paddingLeft) + parseFloat(getComputedStyle(panel).paddingRight);
    return { table: table.getBoundingClientRect().width, inner: panel.clientWidth - pad };
  });
  assert.ok(fit.table <= fit.inner + 0.5, `table ${fit.table} px in a panel ${fit.inner} px wide`);
  const boxes = (await labelBoxes(page)).filter((b) => b.w > 0 && b.cls !== 'ngroup');
  const smallest = Math.min(...boxes.map((b) => b.h));
  assert.ok(smallest >= 11, `node labels at least 11 px tall at 400 px (${smallest.toFixed(1)})`);
  for (const a of boxes) for (const b of boxes) if (a.id < b.id) assert.ok(!overlap(a, b), `${a.id} "${a.text}" overlaps ${b.id} "${b.text}"`);
  const lanes = await page.$$eval('#timeline text', (ts) => ts.map((t) => t.getBoundingClientRect().height).filter((h) => h > 0));
  assert.ok(Math.min(...lanes) >= 10, `timeline labels at least 10 px (${Math.min(...lanes).toFixed(1)})`);
  const letters = await page.$$eval('#stage .msg text', (ts) => ts.map((t) => t.getBoundingClientRect().height).filter((h) => h > 0));
  assert.ok(letters.length > 0 && Math.min(...letters) >= 10, `message letters at least 10 px (${Math.min(...letters)})`);
  await page.screenshot({ path: `${OUT}first-visit-400px.png`, fullPage: true });
  assert.deepEqual(errors, []);
  await context.close();
});

test('1280×900: "How it works" is in view on arrival, or a visible link leads to it', async () => {
  const context = await browser.newContext();
  const page = await open(context, `${url}?seed=7&paused=1`, errors);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.evaluate(() => scrollTo(0, 0));
  const inView = (sel) =>
    page.$eval(sel, (el) => {
      const r = el.getBoundingClientRect();
      return r.width > 0 && r.height > 0 && r.top >= 0 && r.bottom <= innerHeight && getComputedStyle(el).visibility !== 'hidden';
    });
  const summary = await inView('#explainer summary');
  const link = (await page.$('a[href="#explainer"]')) !== null && (await inView('a[href="#explainer"]'));
  assert.ok(summary || link, 'the explainer (or a link to it) is above the fold');
  if (link) {
    await page.click('a[href="#explainer"]');
    assert.ok(await page.$eval('#explainer', (d) => d.open), 'following the link opens the explainer');
    assert.ok(await inView('#explainer summary'), 'and scrolls it into view');
  }
  await page.evaluate(() => scrollTo(0, 0));
  await page.screenshot({ path: `${OUT}first-visit-1280.png` });
  assert.deepEqual(errors, []);
  await context.close();
});
