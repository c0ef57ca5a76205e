// The component transpiled by jco and run from Node.js: the same tenure.wasm as the wasmtime
// hosts, with no WASI and no other imports than tenure:election/host.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startNode } from '../host.mjs';

test('three component nodes elect one leader over an in-memory network', async () => {
  const ids = ['a', 'b', 'c'];
  const nodes = {};
  for (const [i, id] of ids.entries()) {
    nodes[id] = await startNode({ id, cluster: 'js-sim', bootstrap: ids, seed: BigInt(200 + i) }, 0n);
  }
  let now = 0n;
  const inFlight = [];
  const leadersByTerm = new Map();
  const collect = (id) => {
    for (const out of nodes[id].outputs.splice(0)) {
      if (out[0] === 'send') inFlight.push([now + 1n, id, out[1], out[2]]);
      if (out[0] === 'became_leader') {
        const other = leadersByTerm.get(out[1]);
        assert.ok(other === undefined || other === id, `two leaders in term ${out[1]}`);
        leadersByTerm.set(out[1], id);
      }
    }
  };
  ids.forEach(collect);
  while (now < 1000n) {
    const times = inFlight.map((m) => m[0]);
    for (const id of ids) if (nodes[id].wakeup() !== undefined) times.push(nodes[id].wakeup());
    const next = times.reduce((a, b) => (b < a ? b : a), 1000n);
    now = next > now ? next : now;
    const due = inFlight.filter((m) => m[0] <= now);
    inFlight.splice(0, inFlight.length, ...inFlight.filter((m) => m[0] > now));
    for (const [, from, to, bytes] of due) {
      nodes[to].node.handleMessage(now, from, bytes);
      collect(to);
    }
    for (const id of ids) {
      const w = nodes[id].wakeup();
      if (w !== undefined && w <= now) {
        nodes[id].node.handleTimeout(now);
        collect(id);
      }
    }
    if (next >= 1000n) break;
  }
  const leaders = ids.filter((id) => nodes[id].node.isLeader());
  assert.equal(leaders.length, 1);
  const term = nodes[leaders[0]].node.term();
  assert.equal(typeof term, 'bigint');
  for (const id of ids) {
    assert.equal(nodes[id].node.leader(), leaders[0]);
    assert.equal(nodes[id].node.term(), term);
    assert.equal(nodes[id].node.role(), id === leaders[0] ? 'leader' : 'follower');
  }
  const state = nodes[leaders[0]].node.inspect();
  assert.equal(state.state, 'leader');
  assert.equal(state.viewSize, 3);
  assert.equal(state.quorum, 2);
});

test('one node alone: leads after its election timeout, callbacks in order', async () => {
  const { node, outputs, wakeup } = await startNode(
    { id: 'solo', cluster: 'js', minClusterSize: 1, seed: 5n, durable: true },
    0n,
  );
  assert.deepEqual(outputs.splice(0).map((o) => o[0]), ['set_wakeup']);
  const at = wakeup();
  assert.ok(at >= 150n && at <= 300n, `deadline ${at}`);
  node.handleTimeout(at);
  const kinds = outputs.splice(0).map((o) => o[0]);
  assert.ok(kinds.indexOf('persist') < kinds.indexOf('became_leader'), kinds.join(','));
  assert.ok(kinds.indexOf('confirm_leader') < kinds.indexOf('became_leader'), kinds.join(','));
  assert.equal(node.isLeader(), true);
  assert.equal(node.fencingToken(), node.term());
});

// jco throws a WIT `result`'s error value itself: a record { code, message } or an enum string.
test('errors are thrown as the typed WIT error values', async () => {
  await assert.rejects(
    startNode({ id: 'a', cluster: '', seed: 1n }, 0n),
    (e) => e.code === 'empty-id' && /cluster/.test(e.message),
  );
  const { node } = await startNode({ id: 'a', cluster: 'c', bootstrap: ['b', 'c'], seed: 1n }, 0n);
  assert.throws(() => node.handleMessage(1n, 'b', new Uint8Array([1, 2, 3])), (e) => e === 'malformed');
  assert.throws(() => node.transferLeadership(2n, 'b'), (e) => e.code === 'not-leader');
});

test('leaseDuration and the refused reason reach the core', async () => {
  await assert.rejects(
    startNode({ id: 'a', cluster: 'c', bootstrap: ['b', 'c'], seed: 1n, leaseDuration: 151n }, 0n),
    (e) => e.code === 'lease-out-of-range' && /lease-duration \(151 ms\)/.test(e.message) && !e.message.includes('_'),
  );
  const { node } = await startNode({ id: 'a', cluster: 'c', bootstrap: ['b', 'c'], seed: 1n, leaseDuration: 120n }, 0n);
  node.peerDown(1n, 'b', 'refused'); // the process is gone, the member stays
  assert.deepEqual(node.view(), ['a', 'b', 'c']);
});

test('an error from becameLeader rolls leadership back', async () => {
  const { node, outputs, wakeup } = await startNode(
    { id: 'solo', cluster: 'js', minClusterSize: 1, seed: 5n },
    0n,
    { onBecameLeader: () => 'handler-failed' },
  );
  node.handleTimeout(wakeup());
  const kinds = outputs.splice(0).map((o) => o[0]);
  assert.ok(kinds.indexOf('became_leader') < kinds.lastIndexOf('became_follower'), kinds.join(','));
  assert.equal(node.isLeader(), false);
  assert.equal(node.inspect().confirmDenied, 1);
});

test('defaultConfig, enum codes and counts, and one node per instance', async () => {
  const { node, root } = await startNode({ id: 'a', cluster: 'c', bootstrap: ['b'], seed: 1n, minClusterSize: 2 }, 0n);
  const d = root.node.defaultConfig('x', 'y', 9n);
  assert.deepEqual([d.id, d.cluster, d.seed, d.minClusterSize, d.heartbeatInterval], ['x', 'y', 9n, 3, 50n]);
  assert.deepEqual(node.warnings().map((w) => w.code), ['small-min-cluster-size']);
  assert.match(node.warnings()[0].message, /^min-cluster-size is 2/);
  assert.throws(() => node.handleMessage(1n, 'b', new Uint8Array([1])), (e) => e === 'malformed');
  const dropped = node.inspect().droppedByReason;
  assert.equal(dropped.length, 13);
  assert.deepEqual(dropped.find(([reason]) => reason === 'malformed'), ['malformed', 1n]);
  // The host imports carry no node identity: a second node in this instance is refused.
  assert.throws(
    () => new root.node.Node(root.node.defaultConfig('b', 'c', 2n), 0n),
    (e) => e.code === 'instance-in-use',
  );
  assert.equal(node.id(), 'a');
});
