'use strict'
// The dgram runtime, in-process, over real UDP on 127.0.0.1: events, the leadership signal,
// confirmLeader, durable state, listener failures, graceful stop. Bounded waits only.

const test = require('node:test')
const assert = require('node:assert/strict')
const dgram = require('node:dgram')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { Elector, StateFileError, durableState } = require('..')
const { freePorts } = require('./helpers')


/** Polls `pred` every 5 ms until it holds or `ms` pass. @param {() => any} pred @param {number} ms */
async function waitFor(pred, ms, what = 'condition') {
  const end = Date.now() + ms
  for (;;) {
    const v = pred()
    if (v) return v
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 5))
  }
}

/**
 * @param {number} n
 * @param {(id: string, i: number) => object} [extra]
 */
async function cluster(n, extra = () => ({})) {
  const ids = (await freePorts(n)).map((p) => `127.0.0.1:${p}`)
  const electors = ids.map((id, i) => new Elector({ id, peers: ids.filter((p) => p !== id), cluster: 'test', ...extra(id, i) }))
  return { ids, electors }
}

/** @param {Elector[]} electors */
async function stopAll(electors) {
  await Promise.all(electors.map((e) => e.stop({ transfer: false })))
}

test('three electors elect one leader; the leader event carries term and a live signal', async () => {
  const { electors } = await cluster(3)
  /** @type {Array<{ id: string, term: any, signal: AbortSignal }>} */
  const leaderEvents = []
  /** @type {Array<{ id: string, term: any, leader: string | null }>} */
  const followerEvents = []
  for (const e of electors) {
    e.on('leader', ({ term, signal }) => leaderEvents.push({ id: e.id, term, signal }))
    e.on('follower', ({ term, leader }) => followerEvents.push({ id: e.id, term, leader }))
  }
  try {
    await Promise.all(electors.map((e) => e.start()))
    const leader = await waitFor(() => electors.find((e) => e.isLeader), 3000, 'a leader')
    await waitFor(() => leaderEvents.length === 1 && electors.every((e) => e.leader === leader.id), 2000, 'everyone to know the leader')
    assert.equal(electors.filter((e) => e.isLeader).length, 1)
    const [ev] = leaderEvents
    assert.equal(ev.id, leader.id)
    assert.equal(ev.term, leader.term)
    assert.ok(ev.signal instanceof AbortSignal)
    assert.equal(ev.signal.aborted, false)
    assert.equal(leader.leaderSignal, ev.signal)
    assert.equal(leader.fencingToken, leader.term)
    await waitFor(() => followerEvents.filter((f) => f.leader === leader.id).length >= 2, 2000, 'follower events')
    const s = leader.inspect()
    assert.equal(s.state, 'leader')
    assert.equal(s.leader_id, leader.id)
    await waitFor(() => leader.leaseDeadline !== null, 1000, 'a lease')
    assert.ok(Number(leader.leaseDeadline) > leader.now())

    // Graceful stop: the signal aborts, leadership moves to another node within a round trip.
    const t0 = Date.now()
    await leader.stop()
    assert.equal(ev.signal.aborted, true)
    assert.equal(ev.signal.reason.code, 'not_leader')
    const rest = electors.filter((e) => e !== leader)
    const next = await waitFor(() => rest.find((e) => e.isLeader), 1000, 'a new leader after the handover')
    assert.ok(Date.now() - t0 < 1000)
    assert.ok(Number(next.term) > Number(ev.term))
  } finally {
    await stopAll(electors)
  }
})

test('events are emitted after the datagrams of the same step were sent', async () => {
  const { electors } = await cluster(3)
  const orig = dgram.Socket.prototype.send
  /** @type {string[]} */
  const log = []
  dgram.Socket.prototype.send = function (/** @type {any[]} */ ...args) {
    log.push('send')
    // @ts-ignore
    return orig.apply(this, args)
  }
  /** @type {number[]} */
  const emitAt = []
  try {
    for (const e of electors) {
      e.on('leader', () => emitAt.push(log.length))
    }
    await Promise.all(electors.map((e) => e.start()))
    await waitFor(() => emitAt.length > 0, 3000, 'a leader')
    // A new leader sends its first heartbeats in the step that elected it: they were handed to
    // the socket before the listener ran.
    assert.ok(emitAt[0] > 0)
    const leader = /** @type {Elector} */ (electors.find((e) => e.isLeader))
    const beforeLeader = log.length
    let inListener = -1
    leader.once('follower', () => {
      inListener = log.length
    })
    leader.transferLeadership(/** @type {string} */ (electors.find((e) => e !== leader)?.id))
    // transferLeadership's TimeoutNow went out synchronously, before any listener ran.
    assert.ok(log.length > beforeLeader)
    await waitFor(() => inListener >= 0, 1000, 'the follower event')
    assert.ok(inListener > beforeLeader)
  } finally {
    dgram.Socket.prototype.send = orig
    await stopAll(electors)
  }
})

test('a slow follower listener does not stall the protocol (no extra elections)', async () => {
  const { electors } = await cluster(3)
  try {
    await Promise.all(electors.map((e) => e.start()))
    const leader = await waitFor(() => electors.find((e) => e.isLeader), 3000, 'a leader')
    const term = leader.term
    // Async work in listeners of every node, 2 s long each time: never awaited by the runtime.
    for (const e of electors) e.on('message', async () => new Promise((r) => setTimeout(r, 2000)))
    for (let i = 0; i < 10; i++) {
      leader.broadcast(`tick ${i}`)
      await new Promise((r) => setTimeout(r, 50))
    }
    await new Promise((r) => setTimeout(r, 300))
    assert.equal(leader.isLeader, true)
    assert.equal(leader.term, term)
  } finally {
    await stopAll(electors)
  }
})

test('broadcast reaches every other member as a message event', async () => {
  const { electors } = await cluster(3)
  /** @type {Array<{ to: string, from: string, text: string }>} */
  const got = []
  for (const e of electors) e.on('message', ({ from, payload }) => got.push({ to: e.id, from, text: payload.toString() }))
  try {
    await Promise.all(electors.map((e) => e.start()))
    await waitFor(() => electors.some((e) => e.isLeader), 3000, 'a leader')
    electors[0].broadcast('hello')
    await waitFor(() => got.length === 2, 2000, 'two messages')
    assert.deepEqual(got.map((g) => g.to).sort(), [electors[1].id, electors[2].id].sort())
    assert.ok(got.every((g) => g.from === electors[0].id && g.text === 'hello'))
  } finally {
    await stopAll(electors)
  }
})

test('confirmLeader: a denial, a throw and a timeout each withhold leadership', async () => {
  /** @type {Record<number, any>} */
  const behaviours = {
    0: () => false,
    1: () => {
      throw new Error('not healthy')
    },
    2: () => new Promise(() => {}), // never answers: the timeout is a denial
  }
  const { electors } = await cluster(5, (_id, i) => ({
    confirmLeader: behaviours[i] ?? (async () => true),
    confirmTimeout: 50,
  }))
  const errors = []
  for (const e of electors) e.on('error', (err) => errors.push(err))
  try {
    await Promise.all(electors.map((e) => e.start()))
    const leader = await waitFor(() => electors.find((e) => e.isLeader), 5000, 'a leader')
    assert.ok([3, 4].includes(electors.indexOf(leader)), 'only a node that confirms can lead')
    // Make the refusing nodes campaign: hand leadership to each of them in turn.
    for (const i of [0, 1, 2]) {
      const cur = await waitFor(() => electors.find((e) => e.isLeader), 5000, 'a leader')
      if (cur === electors[i]) assert.fail('a refusing node leads')
      cur.transferLeadership(electors[i].id)
      await waitFor(() => electors[i].inspect().confirm_denied > 0, 3000, `node ${i} to be denied`)
      assert.equal(electors[i].isLeader, false)
    }
    assert.ok(errors.some((e) => e.message === 'not healthy'), 'the throw is reported as an error event')
  } finally {
    await stopAll(electors)
  }
})

test('a throwing leader listener rolls leadership back and reports the error', async () => {
  let failures = 0
  const { electors } = await cluster(3)
  const errors = []
  for (const e of electors) {
    e.on('error', (err) => errors.push(err))
    e.on('leader', ({ signal }) => {
      if (failures === 0) {
        failures++
        setImmediate(() => assert.equal(signal.aborted, true))
        throw new Error('cannot start the scheduler')
      }
    })
  }
  try {
    await Promise.all(electors.map((e) => e.start()))
    await waitFor(() => errors.length === 1, 3000, 'the error event')
    assert.equal(errors[0].message, 'cannot start the scheduler')
    const denied = electors.find((e) => e.inspect().confirm_denied > 0)
    assert.ok(denied, 'the failed leader backed off as after a denial')
    await waitFor(() => electors.some((e) => e.isLeader && e !== denied), 3000, 'another leader')
  } finally {
    await stopAll(electors)
  }
})

test('stateFile: term and vote are written durably and restored', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenure-node-'))
  try {
    const { electors, ids } = await cluster(3, (id) => ({ stateFile: path.join(dir, id.replace(':', '_')) }))
    try {
      await Promise.all(electors.map((e) => e.start()))
      await waitFor(() => electors.some((e) => e.isLeader), 3000, 'a leader')
    } finally {
      await stopAll(electors)
    }
    const leaderTerm = Math.max(...electors.map((e) => Number(e.term)))
    for (const id of ids) {
      const file = path.join(dir, id.replace(':', '_'))
      const state = durableState.decode(fs.readFileSync(file, 'utf8'))
      assert.ok(state, `${file} holds a durable state`)
      assert.ok(Number(state.term) >= 1)
      const again = new Elector({ id, peers: ids.filter((p) => p !== id), cluster: 'test', stateFile: file })
      assert.equal(again.term, state.term)
      assert.equal(again.inspect().voted_for, state.votedFor)
    }
    assert.ok(leaderTerm >= 1)
    const bad = path.join(dir, 'bad')
    fs.writeFileSync(bad, 'not a state file')
    assert.throws(
      () => new Elector({ id: ids[0], peers: ids.slice(1), cluster: 'test', stateFile: bad }),
      (e) => e instanceof StateFileError && e.code === 'state_file_corrupt'
    )
    const unwritable = new Elector({ id: ids[0], peers: ids.slice(1), cluster: 'test', stateFile: path.join(dir, 'missing-dir', 'state') })
    await assert.rejects(unwritable.start(), (e) => e instanceof StateFileError && e.code === 'state_file_write_failed')
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('authenticated electors ignore an outsider without the key', async () => {
  const { electors, ids } = await cluster(4, (_id, i) => ({ key: i < 3 ? 'cluster-key' : 'wrong-key' }))
  try {
    // The outsider (index 3) lists the others; they list it too, so only the key keeps it out.
    await Promise.all(electors.map((e) => e.start()))
    const leader = await waitFor(() => electors.find((e) => e.isLeader), 5000, 'a leader')
    assert.notEqual(leader, electors[3])
    await waitFor(() => electors[0].inspect().dropped_by_reason.bad_mac > 0, 3000, 'bad_mac drops')
    assert.equal(electors[3].leader, null)
    void ids
  } finally {
    await stopAll(electors)
  }
})

test('start twice rejects; stop is idempotent; bad options throw synchronously', async () => {
  const { electors } = await cluster(3)
  const [e] = electors
  await e.start()
  await assert.rejects(e.start(), { code: 'already_started' })
  await Promise.all([e.stop(), e.stop()])
  await e.stop()
  assert.throws(() => new Elector({ id: 'nope', peers: [], cluster: 'c' }), TypeError)
  assert.throws(() => new Elector({ id: '127.0.0.1:1', peers: 'x', cluster: 'c' }), TypeError)
  assert.throws(() => new Elector({ id: '127.0.0.1:1', peers: [], cluster: '' }), { code: 'empty_id' })
  assert.throws(() => new Elector({ id: '127.0.0.1:1', peers: [], cluster: 'c', confirmTimeout: -1 }), RangeError)
  // Binding an address in use rejects start().
  const { electors: pair } = await cluster(1)
  await pair[0].start()
  const clash = new Elector({ id: pair[0].id, peers: ['127.0.0.1:9'], cluster: 'c' })
  await assert.rejects(clash.start(), { code: 'EADDRINUSE' })
  await pair[0].stop()
})

test('stateFile: the vote is on disk before the datagram that depends on it leaves', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenure-order-'))
  const { wire } = require('..')
  const origSend = dgram.Socket.prototype.send
  const origRename = fs.renameSync
  /** @type {Map<string, { term: number, votedFor: string | null }>} */
  const onDisk = new Map()
  /** @type {string[]} */
  const violations = []
  let checked = 0
  fs.renameSync = function (/** @type {any} */ from, /** @type {any} */ to) {
    const state = durableState.decode(fs.readFileSync(from, 'utf8'))
    origRename(from, to)
    if (state) onDisk.set(path.basename(String(to)), { term: Number(state.term), votedFor: state.votedFor })
  }
  try {
    const { electors } = await cluster(3, (id) => ({ stateFile: path.join(dir, id.replace(':', '_')) }))
    const fileOf = new Map(electors.map((e) => [e.id, e.id.replace(':', '_')]))
    const portOf = new Map(electors.map((e) => [Number(e.id.split(':')[1]), e.id]))
    dgram.Socket.prototype.send = function (/** @type {any[]} */ ...args) {
      const [bytes, port] = args
      const env = wire.decode(bytes)
      const sender = env.from
      const disk = onDisk.get(/** @type {string} */ (fileOf.get(sender)))
      const m = env.message
      if (m.kind === 'vote' || (m.kind === 'vote_reply' && m.granted)) {
        checked++
        const votedFor = m.kind === 'vote' ? sender : portOf.get(port)
        if (!disk || disk.term < Number(env.term) || (disk.term === Number(env.term) && disk.votedFor !== votedFor)) {
          violations.push(`${sender} sent ${m.kind} in term ${env.term} with ${JSON.stringify(disk)} on disk`)
        }
      }
      // @ts-ignore
      return origSend.apply(this, args)
    }
    try {
      await Promise.all(electors.map((e) => e.start()))
      const leader = await waitFor(() => electors.find((e) => e.isLeader), 3000, 'a leader')
      leader.transferLeadership(/** @type {string} */ (electors.find((e) => e !== leader)?.id))
      await waitFor(() => electors.some((e) => e.isLeader && e !== leader), 3000, 'a second leader')
    } finally {
      dgram.Socket.prototype.send = origSend
      await stopAll(electors)
    }
    assert.ok(checked >= 4, `checked ${checked} vote datagrams`)
    assert.deepEqual(violations, [])
  } finally {
    dgram.Socket.prototype.send = origSend
    fs.renameSync = origRename
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('join and leave emit peerJoined and peerLeft; bad peers throw NodeError', async () => {
  const { electors } = await cluster(3)
  const [e] = electors
  /** @type {string[]} */
  const seen = []
  e.on('peerJoined', ({ peer }) => seen.push(`+${peer}`))
  e.on('peerLeft', ({ peer }) => seen.push(`-${peer}`))
  try {
    await e.start()
    e.join('127.0.0.1:9')
    e.leave('127.0.0.1:9')
    await waitFor(() => seen.length === 2, 1000, 'two membership events')
    assert.deepEqual(seen, ['+127.0.0.1:9', '-127.0.0.1:9'])
    assert.throws(() => e.leave('127.0.0.1:9'), { name: 'NodeError', code: 'unknown_peer' })
    assert.throws(() => e.transferLeadership(electors[1].id), { code: 'not_leader' })
    assert.throws(() => e.join(''), { code: 'invalid_peer' })
  } finally {
    await stopAll(electors)
  }
})

test('bind: a node can listen on 0.0.0.0 while its id is the address peers see', async () => {
  const { electors } = await cluster(3, (id, i) => (i === 0 ? { bind: `0.0.0.0:${id.split(':')[1]}` } : {}))
  try {
    await Promise.all(electors.map((e) => e.start()))
    await waitFor(() => electors.some((e) => e.isLeader), 3000, 'a leader')
    await waitFor(() => electors[0].leader !== null, 3000, 'node 0 to know the leader')
    assert.equal(electors[0].inspect().dropped_by_reason.sender_mismatch, 0)
    assert.throws(() => new Elector({ id: '127.0.0.1:1', peers: [], cluster: 'c', bind: 'localhost' }), { code: 'ERR_INVALID_ARG_VALUE' })
  } finally {
    await stopAll(electors)
  }
})
