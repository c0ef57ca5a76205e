'use strict'
// Random API calls with random and garbage arguments: the only errors allowed are the documented
// ones (TypeError, RangeError, TenureError subclasses other than InternalError), and the process
// must survive. Deterministic (seeded) so that a failure can be replayed.

const test = require('node:test')
const assert = require('node:assert/strict')
const tenure = require('..')
const { Node, FenceChecker, wire, durableState, Elector, TenureError, InternalError } = tenure
const { rng } = require('./helpers')

const SEED = Number(process.env.TENURE_FUZZ_SEED ?? 20261202)
const CALLS = Number(process.env.TENURE_FUZZ_CALLS ?? 20000)

/** @param {() => number} r */
function garbagePool(r) {
  const bytes = Buffer.alloc(1 + Math.floor(r() * 64))
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(r() * 256)
  const valid = wire.encode({ cluster: 'c', from: 'b', term: Math.floor(r() * 5), message: { kind: 'heartbeat', sentAt: 3 } })
  const mutated = Buffer.from(valid)
  mutated[Math.floor(r() * mutated.length)] ^= 1 << Math.floor(r() * 8)
  return [
    undefined,
    null,
    true,
    false,
    0,
    -0,
    1,
    -1,
    1.5,
    42,
    NaN,
    Infinity,
    -Infinity,
    2 ** 31,
    2 ** 32,
    2 ** 53,
    2 ** 53 - 1,
    2 ** 64,
    Number.MIN_VALUE,
    0n,
    1n,
    -1n,
    2n ** 63n,
    2n ** 64n - 1n,
    2n ** 64n,
    '',
    'a',
    'b',
    'c',
    'n2',
    '127.0.0.1:1',
    'x'.repeat(256),
    '\u0000',
    '\ud800',
    'terminated',
    'no_connection',
    'refused',
    Symbol('s'),
    {},
    [],
    ['a', 'b', 'c'],
    [1, 2],
    { id: 'a' },
    { id: 'a', cluster: 'c', bootstrap: ['a', 'b', 'c'] },
    { term: 1, votedFor: 'b' },
    { term: 1, leader: 'a' },
    { cluster: 'c', from: 'b', term: 1, message: { kind: 'pre_vote' } },
    { event: 'became_leader', term: 1 },
    Object.create(null),
    new Proxy({}, {}),
    () => {},
    new Date(0),
    new Error('x'),
    bytes,
    valid,
    mutated,
    new Uint8Array(0),
    new Uint8Array(70000),
    new Uint16Array(3),
    new Float64Array(1),
    new DataView(new ArrayBuffer(2)),
    new ArrayBuffer(4),
  ]
}

/** @param {unknown} e */
function documented(e) {
  if (e instanceof InternalError) return false
  if (e instanceof TenureError) return typeof e.code === 'string' && e.code.length > 0
  if (e instanceof TypeError || e instanceof RangeError) return typeof (/** @type {any} */ (e).code) === 'string'
  return false
}

test(`random calls with garbage arguments only throw documented errors (seed ${SEED})`, (t) => {
  const r = rng(SEED)
  const pick = (/** @type {any[]} */ a) => a[Math.floor(r() * a.length)]
  let pool = garbagePool(r)
  const nodes = [new Node({ id: 'a', cluster: 'c', bootstrap: ['a', 'b', 'c'] }), new Node({ id: 'a', cluster: 'c', bootstrap: ['a', 'b'], key: 'k' })]
  const fence = new FenceChecker()
  const args = () => Array.from({ length: Math.floor(r() * 5) }, () => pick(pool))
  const nodeMethods = [
    'handleMessage',
    'handleTimeout',
    'join',
    'leave',
    'peerDown',
    'confirmLeader',
    'leaderHandlerFailed',
    'transferLeadership',
    'broadcast',
    'drain',
    'pollOutput',
    'pollTimeout',
    'inspect',
  ]
  const getters = ['id', 'cluster', 'role', 'term', 'votedFor', 'leader', 'isLeader', 'view', 'quorum', 'fencingToken', 'leaseDeadline', 'config', 'warnings']
  /** @type {Array<() => unknown>} */
  const actions = [
    () => {
      const n = pick(nodes)
      // @ts-ignore deliberate garbage
      return n[pick(nodeMethods)](...args())
    },
    () => pick(nodes)[pick(getters)],
    () => {
      // Mostly plausible inputs, so that the node actually moves through its states.
      const n = pick(nodes)
      const now = Math.floor(r() * 100000)
      const which = r()
      if (which < 0.4) return n.handleTimeout(now)
      if (which < 0.8) return n.handleMessage(now, pick(['b', 'c', 'a', '']), pick(pool))
      return n.confirmLeader(now, Math.floor(r() * 5), r() < 0.5)
    },
    // @ts-ignore
    () => new Node(...args()),
    () => new Node({ id: pick(pool), cluster: pick(pool), bootstrap: pick(pool), electionTimeoutMin: pick(pool), key: pick(pool) }, pick(pool)),
    // @ts-ignore
    () => fence.check(...args()),
    // @ts-ignore
    () => new FenceChecker(...args()),
    // @ts-ignore
    () => wire.decode(...args()),
    // @ts-ignore
    () => wire.encode(...args()),
    // @ts-ignore
    () => durableState.encode(...args()),
    // @ts-ignore
    () => durableState.decode(...args()),
    // @ts-ignore  (constructing does not bind a socket)
    () => new Elector(...args()),
    () => new Elector({ id: pick(pool), peers: pick(pool), cluster: pick(pool), stateFile: pick([undefined, 42]) }),
  ]
  const seen = new Map()
  for (let i = 0; i < CALLS; i++) {
    if (i % 500 === 0) pool = garbagePool(r)
    const a = Math.floor(r() * actions.length)
    try {
      actions[a]()
    } catch (e) {
      if (!documented(e)) {
        assert.fail(`call ${i} (action ${a}) threw an undocumented error: ${e instanceof Error ? e.stack : String(e)}`)
      }
      const key = `${/** @type {any} */ (e).constructor.name}:${/** @type {any} */ (e).code}`
      seen.set(key, (seen.get(key) ?? 0) + 1)
    }
  }
  t.diagnostic(`errors seen: ${[...seen].map(([k, v]) => `${k}×${v}`).join(', ')}`)
  // The nodes are still usable afterwards.
  for (const n of nodes) {
    assert.equal(typeof n.inspect().term, 'number')
    n.handleTimeout(200000)
    n.drain()
  }
  // The mix really exercised the error paths.
  for (const k of ['TypeError:ERR_INVALID_ARG_TYPE', 'RangeError:ERR_OUT_OF_RANGE', 'DroppedError:malformed']) {
    assert.ok(seen.has(k), `never saw ${k}: ${[...seen.keys()].join(', ')}`)
  }
})
