'use strict'
// Unit tests of the sans-IO layer: the Node class, its outputs and errors, the fence checker,
// the wire helpers and the durable-state text. No sockets, no sleeps: a simulated clock.

const test = require('node:test')
const assert = require('node:assert/strict')
const tenure = require('..')
const { Node, FenceChecker, wire, durableState, osSeed, ConfigError, NodeError, DroppedError, TenureError } = tenure
const { SimCluster } = require('./helpers')

const SPEC_INSPECT_KEYS = [
  'state',
  'is_leader',
  'leader',
  'term',
  'voted_for',
  'term_changed_at',
  'cluster',
  'view_size',
  'quorum',
  'min_cluster_size',
  'peers',
  'declared',
  'bootstrap',
  'unreachable',
  'ghost_ttl',
  'votes_granted',
  'votes_count',
  'election_timer_armed',
  'heartbeat_timer_armed',
  'heartbeat_in_last',
  'heartbeat_out_last',
  'election_timeout_min',
  'election_timeout_max',
  'heartbeat_interval',
  'dropped_by_reason',
  'send_failing_peers',
  'confirm_denied',
  'last_denied_at',
]

test('a new node follows, with a deadline inside the election timeout', () => {
  const n = new Node({ id: 'a', cluster: 'c', bootstrap: ['a', 'b', 'c'] }, { now: 1000, seed: 7 })
  assert.equal(n.role, 'follower')
  assert.equal(n.term, 0)
  assert.equal(n.isLeader, false)
  assert.equal(n.leader, null)
  assert.deepEqual(n.view, ['a', 'b', 'c'])
  assert.equal(n.quorum, 2)
  const t = n.pollTimeout()
  assert.equal(typeof t, 'number')
  assert.ok(t >= 1150 && t <= 1300, `deadline ${t}`)
  assert.deepEqual(n.drain(), [])
  assert.equal(n.pollOutput(), null)
  assert.deepEqual(n.config, {
    electionTimeoutMin: 150,
    electionTimeoutMax: 300,
    heartbeatInterval: 50,
    ghostTtl: 5000,
    minClusterSize: 3,
    maxPeers: 64,
    maxClockDriftPpm: 10000,
    leaseSpan: 146,
    leaseDuration: 150,
  })
})

test('a node below min_cluster_size is unclustered and never campaigns', () => {
  const n = new Node({ id: 'a', cluster: 'c', bootstrap: ['b'] })
  assert.equal(n.role, 'unclustered')
  assert.equal(n.pollTimeout(), null)
  n.handleTimeout(100000)
  assert.deepEqual(n.drain(), [])
})

test('three simulated nodes elect exactly one leader and everyone learns it', () => {
  const sim = new SimCluster(3)
  sim.runUntil(1000)
  const leaders = sim.leaders()
  assert.equal(leaders.length, 1)
  const leader = leaders[0]
  for (const [id, node] of sim.nodes) {
    assert.equal(node.leader, leader, `${id} knows the leader`)
    assert.equal(node.term, sim.nodes.get(leader).term)
  }
  for (const [, ids] of sim.leadersByTerm()) assert.equal(ids.size, 1)
  const l = sim.nodes.get(leader)
  assert.equal(l.fencingToken, l.term)
  assert.equal(typeof l.leaseDeadline, 'number')
  assert.ok(l.leaseDeadline > sim.now - 200)
})

test('outputs have the documented shapes', () => {
  const sim = new SimCluster(3, { durable: true })
  sim.runUntil(1000)
  const kinds = new Set()
  for (const { out } of sim.log) {
    if (out.type === 'send') {
      assert.equal(typeof out.to, 'string')
      assert.ok(Buffer.isBuffer(out.bytes))
      assert.deepEqual(Object.keys(out).sort(), ['bytes', 'to', 'type'])
    } else if (out.type === 'persist') {
      assert.equal(typeof out.term, 'number')
      assert.ok(out.votedFor === null || typeof out.votedFor === 'string')
      assert.deepEqual(Object.keys(out).sort(), ['term', 'type', 'votedFor'])
    } else {
      assert.equal(out.type, 'event')
      kinds.add(out.event)
      if (out.event === 'became_leader' || out.event === 'confirm_leader') assert.deepEqual(Object.keys(out).sort(), ['event', 'term', 'type'])
      if (out.event === 'became_follower') assert.deepEqual(Object.keys(out).sort(), ['event', 'leader', 'term', 'type'])
    }
  }
  assert.ok(kinds.has('became_leader'))
  assert.ok(kinds.has('became_follower'))
  assert.ok(kinds.has('confirm_leader'))
})

test('persist comes before the sends that depend on it (durable mode)', () => {
  const n = new Node({ id: 'a', cluster: 'c', bootstrap: ['a', 'b', 'c'], durable: true, preVote: false }, { now: 0, seed: 1 })
  n.handleTimeout(n.pollTimeout())
  const outs = n.drain()
  assert.equal(outs[0].type, 'persist')
  assert.deepEqual(outs[0], { type: 'persist', term: 1, votedFor: 'a' })
  assert.ok(outs.slice(1).every((o) => o.type === 'send'))
  assert.equal(outs.length, 3)
})

test('restored durable state is honoured, and terms above 2^53 cross as bigint', () => {
  const n = new Node({ id: 'a', cluster: 'c', bootstrap: ['a', 'b', 'c'], durable: true }, { restored: { term: 41, votedFor: 'b' } })
  assert.equal(n.term, 41)
  assert.equal(n.votedFor, 'b')
  const big = 2n ** 60n
  const m = new Node({ id: 'a', cluster: 'c', bootstrap: ['a', 'b', 'c'] }, { restored: { term: big, votedFor: null } })
  assert.equal(m.term, big)
  assert.equal(typeof m.term, 'bigint')
  const safe = new Node({ id: 'a', cluster: 'c', bootstrap: ['a'] }, { restored: { term: 2n ** 53n - 1n, votedFor: null } })
  assert.equal(safe.term, Number.MAX_SAFE_INTEGER)
})

test('confirm_leader: denial withholds leadership, late answers are no_pending_confirm', () => {
  const n = new Node({ id: 'a', cluster: 'c', bootstrap: ['a', 'b', 'c'], preVote: false }, { now: 0, seed: 3 })
  n.handleTimeout(n.pollTimeout())
  n.drain()
  const vote = wire.encode({ cluster: 'c', from: 'b', term: 1, message: { kind: 'vote_reply', granted: true } })
  n.handleMessage(400, 'b', vote)
  const outs = n.drain()
  // (after it, the greeting of b, heard from for the first time: a Hello)
  assert.deepEqual(outs.filter((o) => o.type === 'event').at(-1), { type: 'event', event: 'confirm_leader', term: 1 })
  assert.equal(n.isLeader, false)
  n.confirmLeader(401, 1, false)
  assert.equal(n.isLeader, false)
  assert.equal(n.inspect().confirmDenied, 1)
  assert.throws(() => n.confirmLeader(402, 1, true), (e) => e instanceof NodeError && e.code === 'no_pending_confirm')
})

test('leaderHandlerFailed rolls leadership back; transfer hands it over', () => {
  const sim = new SimCluster(3)
  sim.runUntil(1000)
  const [leader] = sim.leaders()
  const node = sim.nodes.get(leader)
  const term = node.term
  node.leaderHandlerFailed(sim.now, term)
  sim.drain(leader)
  assert.equal(node.isLeader, false)
  assert.throws(() => node.leaderHandlerFailed(sim.now, term), { code: 'not_leader_in_term' })
  sim.runUntil(sim.now + 10000)
  const [second] = sim.leaders()
  assert.ok(second)
  const other = sim.ids.find((id) => id !== second)
  sim.nodes.get(second).transferLeadership(sim.now, other)
  sim.drain(second)
  sim.runUntil(sim.now + 50)
  assert.deepEqual(sim.leaders(), [other])
  assert.throws(() => sim.nodes.get(second).transferLeadership(sim.now, other), { code: 'not_leader' })
})

test('transferTarget is the core choice: an answered peer that is not unreachable', () => {
  assert.equal(new Node({ id: 'a', cluster: 'c', bootstrap: ['a', 'b', 'c'] }).transferTarget(), null)
  const sim = new SimCluster(3)
  sim.runUntil(1000)
  const [leader] = sim.leaders()
  const node = sim.nodes.get(leader)
  const others = sim.ids.filter((id) => id !== leader)
  const target = node.transferTarget()
  assert.ok(others.includes(target))
  node.peerDown(sim.now, target, 'no_connection')
  sim.drain(leader)
  const rest = others.find((id) => id !== target)
  assert.equal(node.transferTarget(), rest)
  node.peerDown(sim.now, rest, 'no_connection')
  sim.drain(leader)
  assert.equal(node.transferTarget(), null)
})

test('broadcast reaches every member as a message event', () => {
  const sim = new SimCluster(3)
  sim.runUntil(500)
  sim.nodes.get('n1').broadcast(sim.now, Buffer.from('hello'))
  sim.drain('n1')
  sim.runUntil(sim.now + 5)
  const got = sim.log.filter(({ out }) => out.type === 'event' && out.event === 'message')
  assert.deepEqual(got.map((g) => g.id).sort(), ['n2', 'n3'])
  for (const g of got) {
    assert.equal(g.out.sender, 'n1')
    assert.equal(Buffer.from(g.out.payload).toString(), 'hello')
  }
  assert.throws(() => sim.nodes.get('n1').broadcast(sim.now, new Uint8Array(70000)), { code: 'payload_too_large' })
})

test("the leader's value reaches every member and proclaim changes it", () => {
  const sim = new SimCluster(3, { value: 'http://first' })
  sim.runUntil(1000)
  const leader = [...sim.nodes.values()].find((n) => n.isLeader)
  assert.ok(leader)
  assert.deepEqual([...sim.nodes.values()].map((n) => n.leaderValue), ['http://first', 'http://first', 'http://first'])
  assert.equal(leader.inspect().leaderValue, 'http://first')
  leader.proclaim(sim.now, 'http://second')
  sim.drain(leader.id)
  sim.runUntil(sim.now + 5)
  assert.ok([...sim.nodes.values()].every((n) => n.leaderValue === 'http://second'))
  const follower = [...sim.nodes.values()].find((n) => !n.isLeader)
  assert.throws(() => follower.proclaim(sim.now, 'x'), { code: 'not_leader' })
  assert.throws(() => new Node({ id: 'a', cluster: 'c', value: 'v'.repeat(257) }), { code: 'value_too_long' })
})

test('membership calls: join, leave, peerDown, and their errors', () => {
  const n = new Node({ id: 'a', cluster: 'c', bootstrap: ['a', 'b', 'c'] })
  n.join(1, 'd')
  assert.deepEqual(n.drain(), [{ type: 'event', event: 'peer_joined', peer: 'd' }])
  n.join(2, 'd')
  assert.deepEqual(n.drain(), [])
  n.leave(3, 'd')
  assert.deepEqual(n.drain(), [{ type: 'event', event: 'peer_left', peer: 'd' }])
  // A refused port: the process is gone, the member stays (not a ghost).
  n.peerDown(4, 'c', 'refused')
  assert.deepEqual(n.view, ['a', 'b', 'c'])
  assert.deepEqual(n.inspect().unreachable, {})
  n.peerDown(4, 'b', 'no_connection')
  assert.deepEqual(n.inspect().sendFailingPeers, ['b'])
  assert.equal(n.inspect().unreachable.b, 5004)
  assert.throws(() => n.leave(5, 'zz'), (e) => e instanceof NodeError && e.code === 'unknown_peer' && /zz/.test(e.message))
  assert.throws(() => n.leave(5, 'a'), { code: 'self_peer' })
  assert.throws(() => n.join(5, ''), { code: 'invalid_peer' })
  assert.throws(() => n.join(5, 'x'.repeat(256)), { code: 'invalid_peer' })
  assert.throws(() => n.peerDown(5, 'b', 'gone'), TypeError)
})

test('dropped messages throw DroppedError with the reason and are counted', () => {
  const n = new Node({ id: 'a', cluster: 'c', bootstrap: ['a', 'b', 'c'] })
  assert.throws(
    () => n.handleMessage(1, 'b', Buffer.from('nonsense')),
    (e) => e instanceof DroppedError && e instanceof TenureError && e.code === 'malformed' && e.reason === 'malformed'
  )
  const other = wire.encode({ cluster: 'other', from: 'b', term: 1, message: { kind: 'pre_vote' } })
  assert.throws(() => n.handleMessage(1, 'b', other), { code: 'wrong_cluster' })
  const spoof = wire.encode({ cluster: 'c', from: 'c', term: 1, message: { kind: 'pre_vote' } })
  assert.throws(() => n.handleMessage(1, 'b', spoof), { code: 'sender_mismatch' })
  const counts = n.inspect().droppedByReason
  assert.equal(counts.malformed, 1)
  assert.equal(counts.wrong_cluster, 1)
  assert.equal(counts.sender_mismatch, 1)
  assert.deepEqual(Object.keys(counts).sort(), [...tenure.DROP_REASONS].sort())
})

test('authenticated mode: a message without the key is bad_mac', () => {
  const key = Buffer.from('s3cret')
  const n = new Node({ id: 'a', cluster: 'c', bootstrap: ['a', 'b', 'c'], key })
  const plain = wire.encode({ cluster: 'c', from: 'b', term: 1, message: { kind: 'pre_vote' } })
  assert.throws(() => n.handleMessage(1, 'b', plain), { code: 'bad_mac' })
  const forC = wire.encode({ cluster: 'c', from: 'b', term: 1, message: { kind: 'pre_vote' } }, key, 'c')
  assert.throws(() => n.handleMessage(1, 'b', forC), { code: 'bad_mac' }, 'a message made for another node')
  assert.throws(() => wire.encode({ cluster: 'c', from: 'b', term: 1, message: { kind: 'pre_vote' } }, key), TypeError)
  const signed = wire.encode({ cluster: 'c', from: 'b', term: 1, message: { kind: 'pre_vote' } }, key, 'a')
  // After the boot promise (a node grants nothing for electionTimeoutMin after it starts).
  n.handleMessage(200, 'b', signed)
  const reply = n.drain().find((o) => o.type === 'send')
  assert.ok(reply)
  assert.deepEqual(wire.decode(reply.bytes, 's3cret', 'b').message, { kind: 'pre_vote_reply', granted: true })
  assert.throws(() => wire.decode(reply.bytes, 'wrong', 'b'), (e) => e instanceof DroppedError && e.code === 'bad_mac')
  assert.throws(() => wire.decode(reply.bytes, 's3cret', 'c'), (e) => e instanceof DroppedError && e.code === 'bad_mac')
})

test('configuration errors are ConfigError with the core codes', () => {
  const cases = [
    [{ id: '', cluster: 'c' }, 'empty_id'],
    [{ id: 'a', cluster: '' }, 'empty_id'],
    [{ id: 'a'.repeat(256), cluster: 'c' }, 'id_too_long'],
    [{ id: 'a', cluster: 'c', electionTimeoutMin: 0 }, 'zero_timeout'],
    [{ id: 'a', cluster: 'c', electionTimeoutMin: 500, electionTimeoutMax: 400 }, 'min_above_max'],
    [{ id: 'a', cluster: 'c', heartbeatInterval: 150 }, 'heartbeat_not_below_election_timeout'],
    [{ id: 'a', cluster: 'c', minClusterSize: 0 }, 'zero_min_cluster_size'],
    [{ id: 'a', cluster: 'c', key: '' }, 'empty_key'],
    [{ id: 'a', cluster: 'c', leaseDuration: 151 }, 'lease_out_of_range', /leaseDuration \(151 ms\)/],
    [{ id: 'a', cluster: 'c', leaseDuration: 50 }, 'lease_out_of_range', /leaseDuration \(50 ms\)/],
    [{ id: 'a', cluster: 'c', leaseDuration: 0 }, 'zero_timeout', /leaseDuration/],
  ]
  for (const [config, code, message] of cases) {
    assert.throws(
      () => new Node(config),
      (e) =>
        e instanceof ConfigError &&
        e.code === code &&
        e.name === 'ConfigError' &&
        e.message.length > 0 &&
        (!message || message.test(e.message)),
      code
    )
  }
  assert.equal(new Node({ id: 'a', cluster: 'c', leaseDuration: 120 }).config.leaseDuration, 120)
  assert.throws(() => new Node({ id: 'a', cluster: 'c', leaseDuration: -1 }), /config\.leaseDuration/)
})

test('configuration warnings and derived bounds', () => {
  const n = new Node({ id: 'a', cluster: 'c', minClusterSize: 2, heartbeatInterval: 60 })
  assert.deepEqual(
    n.warnings.map((w) => w.code),
    ['small_min_cluster_size', 'slow_heartbeat']
  )
  assert.ok(n.warnings.every((w) => typeof w.message === 'string' && w.message.length > 0))
  // Messages name the options as this API spells them.
  assert.match(n.warnings[0].message, /^minClusterSize is 2/)
  assert.match(n.warnings[1].message, /^heartbeatInterval 60 ms is not below a third of electionTimeoutMin/)
  const m = new Node({ id: 'a', cluster: 'c', electionTimeoutMin: 200 })
  assert.equal(m.config.electionTimeoutMax, 400)
})

test('wrong argument types are TypeError, bad numbers RangeError', () => {
  const n = new Node({ id: 'a', cluster: 'c', bootstrap: ['a', 'b', 'c'] })
  const typeErrors = [
    () => new Node(null),
    () => new Node('a'),
    () => new Node([]),
    () => new Node({ id: 1, cluster: 'c' }),
    () => new Node({ id: 'a' }),
    () => new Node({ id: 'a', cluster: 'c', electionTimeout: 5 }),
    () => new Node({ id: 'a', cluster: 'c', bootstrap: 'b' }),
    () => new Node({ id: 'a', cluster: 'c', bootstrap: [1] }),
    () => new Node({ id: 'a', cluster: 'c', preVote: 'yes' }),
    () => new Node({ id: 'a', cluster: 'c', key: 5 }),
    () => new Node({ id: 'a', cluster: 'c' }, { restored: { term: 'x' } }),
    () => new Node({ id: 'a', cluster: 'c' }, { bogus: 1 }),
    () => n.handleTimeout('1'),
    () => n.handleTimeout(),
    () => n.handleMessage(1, 2, Buffer.alloc(1)),
    () => n.handleMessage(1, 'b', 'bytes'),
    () => n.handleMessage(1, 'b', [1, 2]),
    () => n.handleMessage(1, 'b', new Uint16Array(2)),
    () => n.join(1, null),
    () => n.confirmLeader(1, 1, 1),
    () => n.broadcast(1, 'text'),
  ]
  for (const f of typeErrors) {
    assert.throws(f, (e) => e instanceof TypeError && typeof e.code === 'string', f.toString())
  }
  const rangeErrors = [
    () => n.handleTimeout(-1),
    () => n.handleTimeout(1.5),
    () => n.handleTimeout(NaN),
    () => n.handleTimeout(Infinity),
    () => n.handleTimeout(2 ** 53),
    () => n.handleTimeout(-1n),
    () => n.handleTimeout(2n ** 64n),
    () => new Node({ id: 'a', cluster: 'c', minClusterSize: 2 ** 32 }),
  ]
  for (const f of rangeErrors) {
    assert.throws(f, (e) => e instanceof RangeError && e.code === 'ERR_OUT_OF_RANGE', f.toString())
  }
  n.handleTimeout(2n ** 63n) // a bigint in range is fine
})

test('inspect() has every field listed in the SPEC, in camelCase; drop reasons stay codes', () => {
  const n = new Node({ id: 'a', cluster: 'c', bootstrap: ['a', 'b', 'c'] }, { now: 5 })
  const s = n.inspect()
  const camel = (/** @type {string} */ k) => k.replace(/_([a-z])/g, (_, c) => c.toUpperCase())
  for (const k of SPEC_INSPECT_KEYS) assert.ok(camel(k) in s, `missing ${camel(k)}`)
  assert.ok(!Object.keys(s).some((k) => k.includes('_')), `camelCase fields: ${Object.keys(s)}`)
  assert.equal(s.state, 'follower')
  assert.equal(s.termChangedAt, 5)
  assert.deepEqual(s.bootstrap, ['a', 'b', 'c'])
  assert.equal(s.viewSize, 3)
  assert.equal(s.droppedByReason.bad_mac, 0)
})

test('FenceChecker accepts newer terms and refuses stale or fenced ones', () => {
  const f = new FenceChecker()
  assert.equal(f.highest, null)
  assert.equal(f.check(4, 'a'), 'accepted')
  assert.equal(f.check(3, 'b'), 'stale')
  assert.equal(f.check(4, 'b'), 'already_fenced')
  assert.equal(f.check(4, 'a'), 'accepted')
  assert.equal(f.check(5, 'b'), 'accepted')
  assert.deepEqual(f.highest, { term: 5, leader: 'b' })
  const g = new FenceChecker({ term: 9, leader: 'x' })
  assert.equal(g.check(8, 'x'), 'stale')
  assert.throws(() => new FenceChecker({ term: 1 }), TypeError)
  assert.throws(() => f.check(-1, 'a'), RangeError)
})

test('wire: every message kind round-trips, with and without a key', () => {
  const messages = [
    { kind: 'pre_vote' },
    { kind: 'pre_vote_reply', granted: true },
    { kind: 'vote', transfer: true },
    { kind: 'vote_reply', granted: false },
    { kind: 'heartbeat', sentAt: 123456 },
    { kind: 'heartbeat_ack', echo: 99 },
    { kind: 'timeout_now' },
    { kind: 'app', seq: 300, payload: Buffer.from([1, 2, 3]) },
  ]
  for (const message of messages) {
    for (const key of [null, Buffer.from('k')]) {
      const env = { cluster: 'c', from: 'a', term: 7, incarnation: 5, message }
      const bytes = wire.encode(env, key, 'b')
      assert.deepEqual(wire.decode(bytes, key, 'b'), env)
    }
  }
  const huge = { cluster: 'c', from: 'a', term: 2 ** 53 - 1, incarnation: 2n ** 64n - 1n, message: { kind: 'heartbeat', sentAt: 2n ** 63n } }
  assert.deepEqual(wire.decode(wire.encode(huge)), huge)
  // Terms above MAX_TERM (2^53 - 1) would be dropped as malformed by every receiver.
  assert.throws(() => wire.encode({ ...huge, term: 2n ** 53n }), { code: 'malformed' })
  assert.throws(() => wire.decode(Buffer.alloc(0)), { code: 'malformed' })
  assert.throws(() => wire.encode({ cluster: 'c', from: 'a', term: 1, message: { kind: 'nope' } }), TypeError)
  assert.throws(() => wire.encode({ cluster: 'c', from: 'a', term: 1, message: { kind: 'app', payload: Buffer.alloc(70000) } }), {
    code: 'oversized',
  })
})

test('durableState text is the runtime state file format', () => {
  assert.equal(durableState.encode({ term: 42, votedFor: '127.0.0.1:7001' }), '{"term":42,"voted_for":"127.0.0.1:7001"}\n')
  assert.equal(durableState.encode({ term: 0, votedFor: null }), '{"term":0,"voted_for":null}\n')
  // An id of "-" is a vote, not "no vote" (the old one-line format lost it).
  assert.deepEqual(durableState.decode(durableState.encode({ term: 5, votedFor: '-' })), { term: 5, votedFor: '-' })
  assert.deepEqual(durableState.decode('42 127.0.0.1:7001\n'), { term: 42, votedFor: '127.0.0.1:7001' })
  assert.equal(durableState.decode('garbage'), null)
})

test('osSeed gives varying seeds; VERSION matches package.json', () => {
  const a = osSeed()
  const b = osSeed()
  assert.ok(['number', 'bigint'].includes(typeof a))
  assert.notEqual(a, b)
  assert.equal(tenure.VERSION, require('../package.json').version)
})

test('a Rust panic inside the addon becomes an InternalError; the process survives', () => {
  const native = require('../lib/native')
  const { wrapError, InternalError } = require('../lib/errors')
  let caught
  try {
    native.__panicForTests()
  } catch (e) {
    caught = wrapError(e)
  }
  assert.ok(caught instanceof InternalError)
  assert.equal(caught.code, 'internal')
  assert.match(caught.message, /deliberate panic/)
  // The addon keeps working afterwards.
  assert.equal(new Node({ id: 'a', cluster: 'c', bootstrap: ['a', 'b', 'c'] }).role, 'follower')
})

test('priorities and witnesses reach the core and the wire', () => {
  const sim = new SimCluster(3)
  const ranks = { n1: { neverLead: true }, n3: { priority: 7 } }
  sim.ids.forEach((id, i) => {
    sim.nodes.set(id, new Node({ id, cluster: 'sim', bootstrap: sim.ids, ...ranks[id] }, { now: 0, seed: 1000 + i }))
  })
  sim.runUntil(5000)
  const leader = [...sim.nodes.values()].find((n) => n.isLeader)
  assert.equal(leader?.id, 'n3')
  // The leader hears every member, so it knows every rank (a follower knows those it talks to).
  const state = leader.inspect()
  assert.equal(state.priority, 7)
  assert.equal(state.neverLead, false)
  assert.deepEqual(Object.keys(state.peerPriorities), ['n1'])
  const message = { kind: 'priority', priority: 7, neverLead: true, reply: false }
  const bytes = wire.encode({ cluster: 'sim', from: 'n3', term: 2, incarnation: 5n, message })
  assert.deepEqual(wire.decode(bytes).message, message)
  assert.throws(() => new Node({ id: 'a', cluster: 'c', priority: -1 }), { name: 'RangeError', message: /config.priority.*got -1/ })
})
