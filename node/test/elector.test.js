'use strict'
// The Elector on the native runtime, in-process, over real UDP on 127.0.0.1: events, the
// leadership signal, whileLeader, confirmLeader, typed errors, stop/close/dispose/signal, and
// the leader-work failure policy. Bounded waits only.

const test = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const timers = require('node:timers/promises')
const tenure = require('..')
const { Elector, ConfigError, BindError, StateFileError, StoppedError, LeaderWorkError, TenureError } = tenure
const { freePorts } = require('./helpers')

const FAST = { electionTimeoutMin: 150, electionTimeoutMax: 300, heartbeatInterval: 30 }

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
  const electors = ids.map((id, i) => new Elector({ id, peers: ids.filter((p) => p !== id), cluster: 'test', ...FAST, ...extra(id, i) }))
  return { ids, electors }
}

/** @param {Elector[]} electors */
async function stopAll(electors) {
  await Promise.all(electors.map((e) => e.stop({ transfer: false })))
}

test('three electors elect one leader; signal, lease, camelCase inspect, graceful stop, close', async () => {
  const { electors } = await cluster(3)
  /** @type {Array<{ id: string, term: any, signal: AbortSignal }>} */
  const leaderEvents = []
  for (const e of electors) e.on('leader', ({ term, signal }) => leaderEvents.push({ id: e.id, term, signal }))
  try {
    assert.equal(electors[0].state, 'new')
    await Promise.all(electors.map((e) => e.start()))
    assert.ok(electors.every((e) => e.state === 'running'))
    const leader = await waitFor(() => electors.find((e) => e.isLeader), 3000, 'a leader')
    await waitFor(() => leaderEvents.length === 1 && electors.every((e) => e.leader === leader.id), 2000, 'everyone to know the leader')
    const [ev] = leaderEvents
    assert.equal(ev.id, leader.id)
    assert.equal(ev.term, leader.term)
    assert.equal(leader.leaderSignal, ev.signal)
    assert.equal(leader.fencingToken, leader.term)
    const s = leader.inspect()
    assert.equal(s.isLeader, true)
    assert.equal(s.leader, leader.id)
    assert.equal(typeof s.droppedByReason, 'object')
    assert.ok(!Object.keys(s).some((k) => k.includes('_')), `camelCase keys: ${Object.keys(s)}`)
    await waitFor(() => (leader.leaseRemainingMs ?? 0) > 0, 1000, 'a lease')

    let closed = 0
    leader.on('close', () => closed++)
    await leader.stop()
    assert.equal(leader.state, 'closed')
    assert.equal(closed, 1)
    assert.equal(ev.signal.aborted, true)
    assert.equal(ev.signal.reason.code, 'not_leader')
    const rest = electors.filter((e) => e !== leader)
    const next = await waitFor(() => rest.find((e) => e.isLeader), 1500, 'a new leader after the handover')
    assert.ok(Number(next.term) > Number(ev.term))
    assert.throws(() => leader.broadcast('x'), StoppedError)
  } finally {
    await stopAll(electors)
  }
})

test('broadcast reaches every other member as a message event', async () => {
  const { electors } = await cluster(3)
  /** @type {Array<{ to: string, sender: string, text: string }>} */
  const got = []
  for (const e of electors) e.on('message', ({ sender, payload }) => got.push({ to: e.id, sender, text: payload.toString() }))
  try {
    await Promise.all(electors.map((e) => e.start()))
    await waitFor(() => electors.some((e) => e.isLeader), 3000, 'a leader')
    electors[0].broadcast('hello')
    await waitFor(() => got.length === 2, 2000, 'two messages')
    assert.ok(got.every((g) => g.sender === electors[0].id && g.text === 'hello'))
  } finally {
    await stopAll(electors)
  }
})

test("every elector reports the leader's value; proclaim changes it; follower events carry it", async () => {
  const { electors } = await cluster(3, (id) => ({ value: `http://${id}/svc` }))
  /** @type {Array<{ id: string, value: string | null }>} */
  const follows = []
  for (const e of electors) e.on('follower', ({ value }) => follows.push({ id: e.id, value }))
  try {
    await Promise.all(electors.map((e) => e.start()))
    const leader = await waitFor(() => electors.find((e) => e.isLeader), 3000, 'a leader')
    const want = `http://${leader.id}/svc`
    await waitFor(() => electors.every((e) => e.leaderValue === want), 2000, "everyone to know the leader's value")
    assert.equal(leader.metrics().leaderValue, want)
    assert.equal(leader.inspect().leaderValue, want)
    leader.proclaim('http://moved')
    await waitFor(() => electors.every((e) => e.leaderValue === 'http://moved'), 2000, 'the proclaimed value')
    const others = electors.filter((e) => e !== leader)
    await waitFor(() => others.every((o) => follows.some((f) => f.id === o.id && f.value === 'http://moved')), 2000, 'follower events with the value')
    assert.throws(() => others[0].proclaim('nope'), (e) => /** @type {any} */ (e).code === 'not_leader')
    assert.throws(() => leader.proclaim('v'.repeat(257)), (e) => /** @type {any} */ (e).code === 'value_too_long')
  } finally {
    await stopAll(electors)
  }
})

test('an observer elector reports the leader and its value and never leads', async () => {
  const [a, b, c, o] = (await freePorts(4)).map((p) => `127.0.0.1:${p}`)
  const ids = [a, b, c]
  const electors = ids.map(
    (id) => new Elector({ id, peers: ids.filter((p) => p !== id), cluster: 'test', ...FAST, value: `http://${id}/svc`, observerPeers: [o] }),
  )
  const observer = new Elector({ id: o, peers: ids, cluster: 'test', ...FAST, observer: true })
  /** @type {Array<string | null>} */
  const followed = []
  observer.on('follower', ({ leader }) => followed.push(leader))
  observer.on('leader', () => assert.fail('an observer led'))
  try {
    await Promise.all([...electors, observer].map((e) => e.start()))
    const leader = await waitFor(() => electors.find((e) => e.isLeader), 3000, 'a leader')
    await waitFor(() => observer.leaderValue === `http://${leader.id}/svc`, 2000, "the observer to know the leader's value")
    assert.equal(observer.leader, leader.id)
    assert.equal(observer.role, 'observer')
    assert.equal(observer.inspect().state, 'observer')
    assert.equal(leader.inspect().viewSize, 3)
    // Properties read the native state at once; events reach JavaScript through the event
    // loop a little later, so the event is waited for rather than assumed delivered.
    await waitFor(() => followed.includes(leader.id), 2000, 'a follower event naming the leader')
    leader.proclaim('http://moved')
    await waitFor(() => observer.leaderValue === 'http://moved', 2000, 'the proclaimed value')
  } finally {
    await stopAll([...electors, observer])
  }
  assert.throws(() => new Elector({ id: a, peers: [b, c], cluster: 'test', observerPeers: ['nope'] }), (e) => /** @type {any} */ (e).code === 'invalid_peer')
})

test('confirmLeader: a denial, a throw and a timeout each withhold leadership', async () => {
  /** @type {Record<number, any>} */
  const behaviours = {
    0: () => false,
    1: () => {
      throw new Error('not healthy')
    },
    2: () => new Promise(() => {}), // never answers: the runtime's confirm timeout denies
  }
  const { electors } = await cluster(5, (_id, i) => ({ confirmLeader: behaviours[i] ?? (async () => true), confirmTimeout: 50 }))
  /** @type {Error[]} */
  const errors = []
  for (const e of electors) e.on('error', (err) => errors.push(err))
  try {
    await Promise.all(electors.map((e) => e.start()))
    for (const i of [0, 1, 2]) {
      const cur = await waitFor(() => electors.find((e) => e.isLeader), 5000, 'a leader')
      assert.ok(![0, 1, 2].includes(electors.indexOf(cur)), 'a refusing node leads')
      cur.transferLeadership(electors[i].id)
      await waitFor(() => electors[i].inspect().confirmDenied > 0, 3000, `node ${i} to be denied`)
    }
    assert.ok(errors.some((e) => e.message === 'not healthy'), 'the throw is reported as an error event')
  } finally {
    await stopAll(electors)
  }
})

test('every bad input is a typed error naming the value, at construction', () => {
  const ok = { id: '127.0.0.1:7001', peers: ['127.0.0.1:7002'], cluster: 'c' }
  /** @type {Array<[object, any, RegExp | null]>} */
  const cases = [
    [{ id: 'nope' }, { name: 'InvalidIdError', code: 'invalid_id' }, /nope/],
    [{ id: '127.0.0.1:0' }, { code: 'invalid_id' }, /port 0/],
    [{ id: '127.0.0.1:70000' }, { code: 'invalid_id' }, /65535/],
    [{ id: '0.0.0.0:7001' }, { code: 'invalid_id' }, /use bind 0\.0\.0\.0/],
    [{ peers: ['127.0.0.1'] }, { name: 'InvalidPeerError', code: 'invalid_peer' }, /127\.0\.0\.1/],
    [{ bind: 'not an ip' }, { code: 'invalid_bind' }, /not an ip/],
    [{ cluster: '' }, { code: 'empty_id' }, null],
    [{ electionTimeoutMin: 500, electionTimeoutMax: 400 }, { code: 'min_above_max' }, null],
    [{ leaseDuration: 40 }, { code: 'lease_out_of_range' }, /leaseDuration \(40 ms\)/],
    [{ key: 'k', keyFile: '/nonexistent' }, { code: 'invalid_option' }, /key file/],
    [{ confirmTimeout: 0 }, { code: 'invalid_option' }, /confirmTimeout/],
    [{ failurePolicy: { maxFailures: 0 } }, { code: 'invalid_option' }, /maxFailures/],
    [{ failurePolicy: { maxStepDowns: 0 } }, { code: 'invalid_option' }, /maxStepDowns/],
    [{ failurePolicy: { backoff: 2000, maxBackoff: 1000 } }, { code: 'invalid_option' }, /backoff/],
  ]
  for (const [bad, want, message] of cases) {
    assert.throws(() => new Elector({ ...ok, ...bad }), (/** @type {any} */ e) => {
      assert.ok(e instanceof TenureError, `${JSON.stringify(bad)}: ${e}`)
      assert.ok(e instanceof ConfigError)
      for (const [k, v] of Object.entries(want)) assert.equal(e[k], v, `${JSON.stringify(bad)}: ${k}`)
      if (message) assert.match(e.message, message)
      return true
    })
  }
  assert.throws(() => new Elector({ ...ok, peers: 'x' }), TypeError)
  assert.throws(() => new Elector({ ...ok, bogus: 1 }), /bogus/)
  assert.throws(() => new Elector({ ...ok, confirmTimeout: -1 }), RangeError)
  assert.throws(() => new Elector({ ...ok, signal: {} }), TypeError)
  assert.throws(() => new Elector({ ...ok, failurePolicy: { maxFailures: -1 } }), RangeError)
  assert.throws(() => new Elector({ ...ok, failurePolicy: { tries: 3 } }), /tries/)
  assert.throws(() => new Elector({ ...ok, failurePolicy: 3 }), TypeError)
  assert.throws(() => new Elector({ ...ok, confirmLeader: 'yes' }), TypeError)
})

test('start failures are typed: EADDRINUSE, state file missing dir, corrupt, locked', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenure-node-'))
  const { electors } = await cluster(1, () => ({ minClusterSize: 1 }))
  try {
    await electors[0].start()
    const clash = new Elector({ id: electors[0].id, peers: ['127.0.0.1:9'], cluster: 'c' })
    await assert.rejects(clash.start(), (/** @type {any} */ e) => e instanceof BindError && e.code === 'address_in_use')
    assert.equal(clash.state, 'closed')
    const [port] = await freePorts(1)
    const id = `127.0.0.1:${port}`
    const missing = new Elector({ id, peers: ['127.0.0.1:9'], cluster: 'c', stateFile: path.join(dir, 'no', 'state') })
    await assert.rejects(missing.start(), { name: 'StateFileError', code: 'state_dir_missing' })
    const bad = path.join(dir, 'bad')
    fs.writeFileSync(bad, 'not a state file')
    await assert.rejects(new Elector({ id, peers: ['127.0.0.1:9'], cluster: 'c', stateFile: bad }).start(), { code: 'state_corrupt' })
    const file = path.join(dir, 'state')
    const a = new Elector({ id, peers: ['127.0.0.1:9'], cluster: 'c', stateFile: file })
    await a.start()
    const [port2] = await freePorts(1)
    const b = new Elector({ id: `127.0.0.1:${port2}`, peers: ['127.0.0.1:9'], cluster: 'c', stateFile: file })
    await assert.rejects(b.start(), (/** @type {any} */ e) => e instanceof StateFileError && e.code === 'state_locked')
    await a.stop()
    assert.ok(JSON.parse(fs.readFileSync(file, 'utf8')).term >= 0)
  } finally {
    await stopAll(electors)
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('whileLeader runs the work with a lease each leadership; its abort is not an error', async () => {
  const { electors } = await cluster(3)
  /** @type {Array<{ id: string, term: number, valid: boolean, aborted: boolean }>} */
  const runs = []
  /** @type {Error[]} */
  const errors = []
  const loops = electors.map((e) => {
    e.on('error', (err) => errors.push(err))
    return e.whileLeader(async (lease) => {
      await waitFor(() => lease.valid, 1000, 'the lease')
      const run = { id: e.id, term: lease.term, valid: lease.valid, aborted: false }
      runs.push(run)
      await timers.setTimeout(60_000, null, { signal: lease.signal }) // rejects with AbortError
      run.aborted = true
    })
  })
  try {
    await Promise.all(electors.map((e) => e.start()))
    await waitFor(() => runs.length === 1, 3000, 'the leader work')
    const leader = /** @type {Elector} */ (electors.find((e) => e.id === runs[0].id))
    assert.equal(runs[0].term, leader.term)
    assert.equal(runs[0].valid, true)
    leader.transferLeadership()
    await waitFor(() => runs.length === 2, 3000, 'the work on the new leader')
    assert.notEqual(runs[1].id, runs[0].id)
    await timers.setTimeout(50)
    assert.deepEqual(errors, [], 'an AbortError of the ended leadership is not an error')
  } finally {
    await stopAll(electors)
  }
  await Promise.all(loops) // resolve at close
})

test("a 'leader' listener rejecting with its signal's AbortError emits no 'error'", async () => {
  const { electors } = await cluster(3)
  /** @type {Error[]} */
  const errors = []
  let leaderships = 0
  for (const e of electors) {
    e.on('error', (err) => errors.push(err))
    e.on('leader', async ({ signal }) => {
      leaderships++
      for (;;) await timers.setTimeout(20, null, { signal }) // the README's job loop
    })
  }
  try {
    await Promise.all(electors.map((e) => e.start()))
    const leader = await waitFor(() => electors.find((e) => e.isLeader), 3000, 'a leader')
    leader.transferLeadership()
    await waitFor(() => leaderships === 2, 3000, 'a second leadership')
    await timers.setTimeout(50)
    assert.deepEqual(errors, [])
  } finally {
    await stopAll(electors)
  }
})

test('Symbol.asyncDispose and the signal option stop the elector', async () => {
  const { electors } = await cluster(2)
  const ac = new AbortController()
  const [a] = electors
  const b = new Elector({ id: electors[1].id, peers: [a.id], cluster: 'test', ...FAST, signal: ac.signal })
  await a.start()
  await b.start()
  const closed = new Promise((r) => b.once('close', r))
  ac.abort()
  await closed
  assert.equal(b.state, 'closed')
  await a[Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose')]()
  assert.equal(a.state, 'closed')
  const pre = new Elector({ id: a.id, peers: [b.id], cluster: 'test', signal: AbortSignal.abort() })
  await assert.rejects(pre.start(), { code: 'already_started' })
})

test('failure policy: a leader listener that always throws is retried, hands over and never stops the cluster', async () => {
  const { electors } = await cluster(3)
  /** @type {Error[]} */
  const errors = []
  /** @type {string[]} */
  const warnings = []
  /** Calls of the listener, by leadership (`id@term`), in the order the leaderships began. @type {Map<string, number>} */
  const calls = new Map()
  for (const e of electors) {
    e.on('error', (err) => errors.push(err))
    e.on('warning', ({ code }) => warnings.push(code))
    e.on('leader', ({ term }) => {
      assert.ok(e.leaseValid(term), 'the leader event came before the lease held')
      const key = `${e.id}@${term}`
      calls.set(key, (calls.get(key) ?? 0) + 1)
      throw new Error('the database is down')
    })
  }
  const leaders = () => [...calls.keys()].map((k) => k.split('@')[0])
  try {
    await Promise.all(electors.map((e) => e.start()))
    await waitFor(() => calls.size >= 5, 15000, 'five failed leaderships')
    // Leader work like any other: the runtime's policy runs it again in the same leadership
    // (maxFailures, 3, times in all) before handing over.
    assert.equal([...calls.values()][0], 3, `calls by leadership: ${[...calls]}`)
    assert.ok(electors.every((e) => e.state === 'running'), 'an elector gave up')
    assert.ok(!errors.some((e) => e instanceof LeaderWorkError))
    assert.ok(errors.some((e) => e.message === 'the database is down'))
    assert.ok(warnings.includes('leader_work_failed'))
    const ls = leaders()
    for (let i = 1; i < ls.length; i++) assert.notEqual(ls[i], ls[i - 1], `a failed leader led again: ${ls}`)
    const m = electors.map((e) => e.metrics())
    // Every leadership but the last (which may still be retrying) ended in a step-down.
    assert.ok(m.reduce((n, x) => n + x.leaderWorkStepDowns, 0) >= calls.size - 1)
  } finally {
    await stopAll(electors)
  }
})

test('failure policy: whileLeader work that fails twice then succeeds is retried in the same leadership', async () => {
  const { electors } = await cluster(3, () => ({ failurePolicy: { backoff: 10, maxBackoff: 20 } }))
  /** @type {Array<{ id: string, term: number }>} */
  const runs = []
  let ok = 0
  for (const e of electors) {
    e.on('error', () => {})
    void e.whileLeader(async (lease) => {
      runs.push({ id: e.id, term: lease.term })
      if (runs.length <= 2) throw new Error('not yet')
      ok++
      await timers.setTimeout(60_000, null, { signal: lease.signal }).catch(() => {})
    })
  }
  try {
    await Promise.all(electors.map((e) => e.start()))
    await waitFor(() => ok === 1, 5000, 'the third run')
    assert.equal(runs.length, 3)
    assert.ok(runs.every((r) => r.id === runs[0].id && r.term === runs[0].term), JSON.stringify(runs))
  } finally {
    await stopAll(electors)
  }
})

test('failure policy: with maxStepDowns, failed leaderships stop the elector', async () => {
  const { electors } = await cluster(3, () => ({ failurePolicy: { maxStepDowns: 2 } }))
  /** @type {Error[]} */
  const errors = []
  /** Leaderships seen (`id@term`): the listener runs up to maxFailures times in each. */
  const led = new Set()
  for (const e of electors) {
    e.on('error', (err) => errors.push(err))
    e.on('leader', ({ term }) => {
      led.add(`${e.id}@${term}`)
      throw new Error('cannot start the scheduler')
    })
  }
  try {
    await Promise.all(electors.map((e) => e.start()))
    await waitFor(() => electors.filter((e) => e.state === 'closed').length >= 2, 15000, 'two electors to give up')
    assert.ok(errors.filter((e) => e instanceof LeaderWorkError).length >= 2)
    assert.ok(errors.some((e) => e.message === 'cannot start the scheduler'))
    // With two of three gone no quorum remains: nobody can lead (and fail) again. (Events of
    // different electors are not ordered with each other: let the last handover's arrive first.)
    await timers.setTimeout(300)
    const seen = led.size
    await timers.setTimeout(500)
    assert.equal(led.size, seen)
    assert.ok(led.size <= 3 * 2, `${led.size} leaderships`)
  } finally {
    await stopAll(electors)
  }
})

test('the process exits by itself after stop()', { timeout: 15000 }, async () => {
  const [p1, p2] = await freePorts(2)
  const script = `
    const { Elector } = require(${JSON.stringify(path.join(__dirname, '..'))})
    const e = new Elector({ id: '127.0.0.1:${p1}', peers: ['127.0.0.1:${p2}'], cluster: 'exit' })
    e.start().then(() => e.stop()).then(() => console.log('stopped'))
  `
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 10000 })
  assert.equal(r.signal, null, 'the process did not exit by itself')
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.stdout.trim(), 'stopped')
})

/**
 * Three electors whose whileLeader work takes 60 ms to clean up after its signal aborts; the
 * leader hands over with transferLeadership(). Returns when the first leader's work returned,
 * when the next leader's began, and how long after the transfer that was.
 */
async function handoverWithSlowCleanup() {
  /** @type {Map<number, number>} */ const starts = new Map()
  /** @type {Map<number, number>} */ const ends = new Map()
  const { electors } = await cluster(3)
  for (const e of electors) {
    e.whileLeader(async (lease) => {
      starts.set(lease.term, performance.now())
      try {
        await timers.setTimeout(30_000, undefined, { signal: lease.signal })
      } finally {
        // Cleanup that outlives the abort (flushing, closing a connection).
        await timers.setTimeout(60)
        ends.set(lease.term, performance.now())
      }
    })
  }
  try {
    await Promise.all(electors.map((e) => e.start()))
    const old = await waitFor(() => electors.find((e) => e.isLeader), 3000, 'a leader')
    const term = old.term
    await waitFor(() => starts.has(term), 2000, 'the work to start')
    await timers.setTimeout(200)
    const t0 = performance.now()
    old.transferLeadership()
    const next = await waitFor(() => [...starts.keys()].find((t) => t > term), 5000, "the next leader's work")
    await waitFor(() => ends.has(term), 2000, "the first leader's work to return")
    return { ended: /** @type {number} */ (ends.get(term)), started: /** @type {number} */ (starts.get(next)), took: /** @type {number} */ (starts.get(next)) - t0 }
  } finally {
    await stopAll(electors)
  }
}

test("a transfer waits until the leader's work has returned", async () => {
  const { ended, started, took } = await handoverWithSlowCleanup()
  assert.ok(ended <= started, `the next leader's work started ${Math.round(ended - started)} ms before this one returned`)
  assert.ok(took < 1000, `${took} ms`)
})

test('the overlap check catches a transfer that does not wait', async () => {
  process.env.TENURE_TEST_NO_TRANSFER_HOLD = '1'
  try {
    const { ended, started } = await handoverWithSlowCleanup()
    assert.ok(ended > started, 'the injected bug went unnoticed')
  } finally {
    delete process.env.TENURE_TEST_NO_TRANSFER_HOLD
  }
})
