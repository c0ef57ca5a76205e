// The browser build's API, run in Node on the very module the page loads (demo/pkg): errors carry
// codes, outputs are plain objects, and the shared wire vectors and scenario timelines replay
// byte for byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { initSync, Node, decodeMessage, version } from '../pkg/tenure_wasm.js';

initSync({ module: readFileSync(new URL('../pkg/tenure_wasm_bg.wasm', import.meta.url)) });

const SHARED = new URL('../../tests/', import.meta.url);
const hex = (b) => Buffer.from(b).toString('hex');
const unhex = (h) => new Uint8Array(Buffer.from(h, 'hex'));

function code(fn) {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof Error, 'thrown values are Errors');
    assert.equal(typeof e.message, 'string');
    return e.code;
  }
  assert.fail('expected a throw');
}

function trio() {
  const ids = ['a', 'b', 'c'];
  return ids.map((id, i) => new Node({ id, cluster: 'x', bootstrap: ids, durable: true }, { seed: i + 1 }));
}

/** Runs a tiny in-memory cluster until `until` ms and returns it. */
function elect(nodes, until = 2000) {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const queue = [];
  const events = [];
  const drain = (n, now) => {
    for (const o of n.drain()) {
      if (o.type === 'send') queue.push({ at: now + 2, from: n.id, to: o.to, bytes: o.bytes });
      else if (o.event === 'confirm_leader') {
        n.confirmLeader(now, o.term, true);
        drain(n, now);
      } else events.push({ id: n.id, ...o });
    }
  };
  for (let now = 0; now <= until; now++) {
    for (const m of queue.filter((q) => q.at <= now)) {
      queue.splice(queue.indexOf(m), 1);
      byId.get(m.to).handleMessage(now, m.from, m.bytes);
      drain(byId.get(m.to), now);
    }
    for (const n of nodes) {
      if ((n.pollTimeout() ?? Infinity) <= now) {
        n.handleTimeout(now);
        drain(n, now);
      }
    }
  }
  return events;
}

test('version and getters', () => {
  assert.match(version(), /^\d+\.\d+\.\d+/);
  const n = new Node({ id: 'a', cluster: 'x', bootstrap: ['a', 'b', 'c'] }, { seed: 5n });
  assert.equal(n.id, 'a');
  assert.equal(n.role, 'follower');
  assert.equal(n.term, 0);
  assert.equal(n.leader, undefined);
  assert.equal(n.isLeader, false);
  assert.deepEqual(n.view, ['a', 'b', 'c']);
  assert.equal(typeof n.pollTimeout(), 'number');
  assert.deepEqual(n.warnings, []);
  const w = new Node({ id: 'a', cluster: 'x', minClusterSize: 1 }, { seed: 1 });
  assert.deepEqual(w.warnings.map((x) => x.code), ['small_min_cluster_size']);
  assert.equal(new Node({ id: 'a', cluster: 'x', bootstrap: ['b', 'c'] }).role, 'follower', 'seeds itself from crypto');
});

test('constructor errors name what was wrong', () => {
  assert.equal(code(() => new Node()), 'invalid_argument');
  assert.equal(code(() => new Node({ id: 'a' })), 'invalid_argument');
  assert.equal(code(() => new Node({ id: 'a', cluster: 'x', bogus: 1 })), 'invalid_argument');
  assert.equal(code(() => new Node({ id: 'a', cluster: 'x', seed: 1 })), 'invalid_argument', 'seed belongs in the options');
  assert.equal(code(() => new Node({ id: 'a', cluster: 'x' }, { seed: -1 })), 'invalid_argument');
  assert.equal(code(() => new Node({ id: 'a', cluster: 'x' }, { seed: 2n ** 64n })), 'invalid_argument');
  assert.equal(code(() => new Node({ id: 'a', cluster: 'x' }, { restored: { votedFor: 'b' } })), 'invalid_argument');
  assert.equal(code(() => new Node({ id: 'a', cluster: 'x' }, 'now')), 'invalid_argument');
  assert.equal(code(() => new Node({ id: 'a', cluster: 'x' }, { restored: 5 })), 'invalid_argument');
  assert.equal(code(() => new Node({ id: 'a', cluster: 'x', bootstrap: 'b' })), 'invalid_argument');
  assert.equal(code(() => new Node({ id: 'a', cluster: 'x', heartbeatInterval: -1 })), 'invalid_argument');
  assert.equal(code(() => new Node({ id: 'a', cluster: 'x', key: 5 })), 'invalid_argument');
  // The message names the key, nested objects included; unknown keys are refused at every level.
  assert.throws(() => new Node({ id: 'a', cluster: 'x', heartbeatIntervl: 10 }), /^Error: config\.heartbeatIntervl: unknown field/);
  assert.throws(() => new Node({ id: 'a', cluster: 'x', heartbeatInterval: 'x' }), /^Error: config\.heartbeatInterval: invalid type/);
  assert.throws(() => new Node({ id: 'a', cluster: 'x' }, { restored: { term: 'q' } }), /^Error: options\.restored\.term: invalid type/);
  assert.throws(() => new Node({ id: 'a', cluster: 'x' }, { restored: { term: 1, bogus: 1 } }), /^Error: options\.restored\.bogus: unknown field/);
  // A list's item is named by its position.
  assert.throws(() => new Node({ id: 'a', cluster: 'x', bootstrap: ['b:1', 5] }), /^Error: config\.bootstrap\[1\]: invalid type/);
  assert.equal(code(() => new Node({ id: 'a', cluster: '' })), 'empty_id');
  assert.equal(code(() => new Node({ id: 'a', cluster: 'x', electionTimeoutMin: 500, electionTimeoutMax: 400 })), 'min_above_max');
  assert.equal(code(() => new Node({ id: 'a', cluster: 'x', heartbeatInterval: 150 })), 'heartbeat_not_below_election_timeout');
  assert.equal(code(() => new Node({ id: 'a', cluster: 'x', key: '' })), 'empty_key');
  assert.equal(code(() => new Node({ id: 'a', cluster: 'x', leaseDuration: 151 })), 'lease_out_of_range');
  assert.equal(code(() => new Node({ id: 'a', cluster: 'x', leaseDuration: 50 })), 'lease_out_of_range');
  assert.equal(code(() => new Node({ id: 'a', cluster: 'x', leaseDuration: -1 })), 'invalid_argument');
  assert.throws(() => new Node({ id: 'a', cluster: 'x', leaseDuration: 151 }), /lease_duration \(151 ms\)/);
  new Node({ id: 'a', cluster: 'x', leaseDuration: 120 });
  try {
    new Node({ id: 'a', cluster: 'x', electionTimeoutMin: 500, electionTimeoutMax: 400 });
  } catch (e) {
    assert.match(e.message, /election_timeout_min \(500 ms\)/);
  }
});

test('an election through the JS API: plain-object outputs, inspect, decodeMessage', () => {
  const nodes = trio();
  const events = elect(nodes);
  const leaders = nodes.filter((n) => n.isLeader);
  assert.equal(leaders.length, 1);
  const L = leaders[0];
  assert.equal(L.role, 'leader');
  assert.equal(L.fencingToken, L.term);
  assert.equal(typeof L.leaseDeadline, 'number');
  for (const n of nodes) assert.equal(n.leader, L.id);
  assert.ok(events.some((e) => e.id === L.id && e.event === 'became_leader' && e.term === L.term));
  // The SPEC's fields, camelCase as the npm package's Node#inspect() spells them.
  const spec = ['state', 'isLeader', 'leader', 'term', 'votedFor', 'termChangedAt', 'cluster', 'viewSize', 'quorum',
    'minClusterSize', 'peers', 'declared', 'bootstrap', 'unreachable', 'ghostTtl', 'votesGranted', 'votesCount',
    'electionTimerArmed', 'heartbeatTimerArmed', 'heartbeatInLast', 'heartbeatOutLast', 'electionTimeoutMin',
    'electionTimeoutMax', 'heartbeatInterval', 'droppedByReason', 'sendFailingPeers', 'confirmDenied', 'lastDeniedAt',
    'leaseDeadline'];
  const ins = L.inspect();
  for (const k of spec) assert.ok(k in ins, `inspect() has ${k}`);
  for (const k of Object.keys(ins)) assert.ok(!k.includes('_'), `inspect() key ${k} is camelCase`);
  assert.equal(ins.state, 'leader');
  assert.equal(ins.isLeader, true);
  assert.equal(ins.viewSize, 3);
  // A heartbeat, decoded.
  L.handleTimeout(L.pollTimeout());
  const out = L.drain();
  const send = out.find((o) => o.type === 'send');
  assert.ok(send.bytes instanceof Uint8Array);
  const d = L.decodeMessage(send.bytes);
  assert.equal(d.kind, 'heartbeat');
  assert.equal(d.from, L.id);
  assert.equal(typeof d.sentAt, 'number');
  assert.deepEqual(decodeMessage(send.bytes), d);
  // Broadcast reaches the others as a `message` event.
  L.broadcast(3000, new TextEncoder().encode('hi'));
  const app = L.drain().find((o) => o.type === 'send');
  const other = nodes.find((n) => n.id === app.to);
  other.handleMessage(3000, L.id, app.bytes);
  const ev = other.drain().find((o) => o.type === 'event');
  assert.equal(ev.event, 'message');
  assert.equal(ev.sender, L.id, 'the sender, as the npm package names it');
  assert.ok(!('from' in ev));
  assert.equal(new TextDecoder().decode(ev.payload), 'hi');
  // Transfer.
  L.transferLeadership(3000, other.id);
  assert.equal(L.isLeader, false);
  assert.equal(L.drain().find((o) => o.type === 'send').to, other.id);
});

test('method errors carry the core codes; dropped input throws its drop reason', () => {
  const [a] = trio();
  assert.equal(code(() => a.transferLeadership(0, 'b')), 'not_leader');
  assert.equal(code(() => a.leave(0, 'zz')), 'unknown_peer');
  assert.equal(code(() => a.leave(0, 'a')), 'self_peer');
  assert.equal(code(() => a.join(0, '')), 'invalid_peer');
  assert.equal(code(() => a.confirmLeader(0, 1, true)), 'no_pending_confirm');
  assert.equal(code(() => a.leaderHandlerFailed(0, 1)), 'not_leader_in_term');
  assert.equal(code(() => a.broadcast(0, new Uint8Array(70000))), 'payload_too_large');
  assert.equal(code(() => a.peerDown(0, 'b', 'asleep')), 'invalid_argument');
  assert.equal(code(() => a.handleTimeout(-1)), 'invalid_argument');
  assert.equal(code(() => a.handleTimeout(NaN)), 'invalid_argument');
  assert.equal(code(() => a.handleTimeout(2 ** 60)), 'invalid_argument');
  assert.equal(code(() => a.handleMessage(0, 'b', new Uint8Array([1, 2, 3]))), 'malformed');
  assert.equal(code(() => decodeMessage(new Uint8Array())), 'malformed');
  assert.equal(a.inspect().droppedByReason.malformed, 1, 'map keys are codes, not renamed');
  a.peerDown(0, 'c', 'refused'); // the process is gone, the member stays
  assert.deepEqual(a.view, ['a', 'b', 'c']);
  assert.deepEqual(a.inspect().unreachable, {});
  a.peerDown(0, 'b', 'no_connection');
  assert.deepEqual(a.inspect().sendFailingPeers, ['b']);
  assert.equal(a.drain().length >= 0, true);
  assert.equal(a.pollOutput(), null, 'drained: null, as in the npm package');
  a.peerDown(0, 'c', 'terminated');
  assert.deepEqual(a.view, ['a', 'b']);
  // Authenticated: a node with another key drops as bad_mac.
  const k1 = new Node({ id: 'p', cluster: 'x', bootstrap: ['p', 'q', 'r'], key: 'one' }, { seed: 1 });
  const k2 = new Node({ id: 'q', cluster: 'x', bootstrap: ['p', 'q', 'r'], key: new TextEncoder().encode('two') }, { seed: 2 });
  k1.handleTimeout(k1.pollTimeout());
  const pv = k1.drain().find((o) => o.type === 'send' && o.to === 'q');
  assert.equal(code(() => k2.handleMessage(5000, 'p', pv.bytes)), 'bad_mac');
  assert.equal(code(() => k2.decodeMessage(pv.bytes)), 'bad_mac');
  // The tag covers the receiver: q decodes what p sent it (with p's key), p itself does not.
  const q1 = new Node({ id: 'q', cluster: 'x', bootstrap: ['p', 'q', 'r'], key: 'one' }, { seed: 3 });
  assert.equal(q1.decodeMessage(pv.bytes).kind, 'pre_vote');
  assert.equal(code(() => k1.decodeMessage(pv.bytes)), 'bad_mac');
  assert.equal(decodeMessage(pv.bytes, new TextEncoder().encode('one'), 'q').kind, 'pre_vote');
  assert.equal(code(() => decodeMessage(pv.bytes, new TextEncoder().encode('one'), 'r')), 'bad_mac');
});

test('shared wire vectors decode as documented and invalid ones drop with their reason', () => {
  const vectors = JSON.parse(readFileSync(new URL('vectors/messages.json', SHARED), 'utf8'));
  assert.ok(vectors.length > 0);
  for (const v of vectors) {
    const key = v.key_hex === null ? undefined : unhex(v.key_hex);
    const d = decodeMessage(unhex(v.hex), key, v.receiver);
    const e = v.envelope;
    assert.equal(d.cluster, e.cluster, v.name);
    assert.equal(d.from, e.from, v.name);
    assert.equal(d.term, e.term, v.name);
    assert.equal(d.kind, e.message.kind, v.name);
    if ('granted' in e.message) assert.equal(d.granted, e.message.granted, v.name);
    if ('transfer' in e.message) assert.equal(d.transfer, e.message.transfer, v.name);
    if ('sent_at' in e.message) assert.equal(d.sentAt, e.message.sent_at, v.name);
    if ('echo' in e.message) assert.equal(d.echo, e.message.echo, v.name);
    if ('payload_hex' in e.message) assert.equal(hex(d.payload), e.message.payload_hex, v.name);
  }
  const invalid = JSON.parse(readFileSync(new URL('vectors/invalid.json', SHARED), 'utf8'));
  for (const v of invalid) {
    const options = { id: v.node_id, cluster: v.cluster, bootstrap: [v.node_id, v.from].filter((p) => p && p.length <= 255) };
    if (v.key_hex !== null) options.key = unhex(v.key_hex);
    const n = new Node(options, { seed: 1 });
    assert.equal(code(() => n.handleMessage(0, v.from, unhex(v.hex))), v.reason, v.name);
    assert.equal(n.inspect().droppedByReason[v.reason], 1, v.name);
  }
});

/** The scenario output format, from a JS output object. */
function scenarioOutput(o) {
  if (o.type === 'send') return { type: 'send', to: o.to, hex: hex(o.bytes) };
  if (o.type === 'persist') return { type: 'persist', term: o.term, voted_for: o.votedFor };
  const e = { type: 'event', event: o.event };
  if (o.event === 'message') return { ...e, from: o.sender, hex: hex(o.payload) };
  if ('peer' in o) return { ...e, peer: o.peer };
  if ('leader' in o) return { ...e, term: o.term, leader: o.leader };
  return { ...e, term: o.term };
}

function apply(node, at, input) {
  switch (input.kind) {
    case 'timeout': return node.handleTimeout(at);
    case 'message': return node.handleMessage(at, input.from, unhex(input.hex));
    case 'join': return node.join(at, input.peer);
    case 'leave': return node.leave(at, input.peer);
    case 'peer_down': return node.peerDown(at, input.peer, input.reason);
    case 'confirm': return node.confirmLeader(at, input.term, input.granted);
    case 'leader_failed': return node.leaderHandlerFailed(at, input.term);
    case 'transfer': return node.transferLeadership(at, input.peer);
    case 'broadcast': return node.broadcast(at, unhex(input.hex));
    case 'proclaim': return node.proclaim(at, input.value);
    default: throw new Error(`unknown input ${input.kind}`);
  }
}

const dir = new URL('scenarios/', SHARED);
const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

test('the shared scenarios exist', () => assert.ok(files.length > 0));

for (const file of files) {
  test(`scenario ${file} replays byte for byte`, () => {
    const text = readFileSync(new URL(file, dir), 'utf8');
    const s = JSON.parse(text);
    const seed = BigInt(text.match(/"seed":\s*(\d+)/)[1]); // beyond 2^53: read it exactly
    const c = s.config;
    const options = {
      id: c.id, cluster: c.cluster, bootstrap: c.bootstrap, minClusterSize: c.min_cluster_size,
      electionTimeoutMin: c.election_timeout_min, electionTimeoutMax: c.election_timeout_max,
      heartbeatInterval: c.heartbeat_interval, ghostTtl: c.ghost_ttl, preVote: c.pre_vote,
      confirmLeader: c.confirm_leader, durable: c.durable,
    };
    if (c.key_hex !== null) options.key = unhex(c.key_hex);
    // Fields added after the first files; absent (or null) ones keep the defaults.
    const later = {
      admit_unknown_peers: 'admitUnknownPeers', max_peers: 'maxPeers', max_clock_drift_ppm: 'maxClockDriftPpm',
      incarnation: 'incarnation', value: 'value', priority: 'priority', never_lead: 'neverLead',
      preempt_after: 'preemptAfter', observer: 'observer', observer_peers: 'observerPeers',
    };
    for (const [file, js] of Object.entries(later)) if (c[file] !== undefined && c[file] !== null) options[js] = c[file];
    const node = new Node(options, {
      seed, now: s.start_ms, restored: s.restored ? { term: s.restored.term, votedFor: s.restored.voted_for } : null,
    });
    for (const [i, step] of s.steps.entries()) {
      let result = 'ok';
      try {
        apply(node, step.at, step.input);
      } catch (e) {
        result = e.code;
      }
      assert.equal(result, step.result, `${file} step ${i} (${step.input.kind}) result`);
      assert.deepEqual(node.drain().map(scenarioOutput), step.outputs, `${file} step ${i} outputs`);
      assert.equal(node.pollTimeout() ?? null, step.next_deadline, `${file} step ${i} deadline`);
    }
    if (s.final) {
      assert.equal(node.role, s.final.role);
      assert.equal(node.term, s.final.term);
      assert.equal(node.leader ?? null, s.final.leader);
      assert.equal(node.votedFor ?? null, s.final.voted_for);
      assert.equal(node.leaderValue ?? null, s.final.value ?? null);
    }
  });
}
