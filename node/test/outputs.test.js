'use strict'
// The flat output representation (bindings/node/README.md): outputs cross from the addon as
// records in a reused buffer and are rebuilt in lib/outputs.js. These tests drive its edges
// through the public API: a buffer too small for the pending outputs, the string table filling
// up, u64 values in both words, and pollOutput/drain mixed.

const test = require('node:test')
const assert = require('node:assert/strict')
const { Node, wire } = require('..')

test('outputs larger than the reused buffer arrive whole and in order', () => {
  const n = new Node({ id: 'a', cluster: 'c', bootstrap: ['a', 'b', 'c'] }, { seed: 1 })
  n.drain()
  const payload = Buffer.alloc(60000)
  for (let i = 0; i < payload.length; i++) payload[i] = i % 251
  n.broadcast(1, payload)
  n.broadcast(2, Buffer.from('small'))
  const outs = n.drain()
  assert.deepEqual(
    outs.map((o) => [o.type, o.to]),
    [
      ['send', 'b'],
      ['send', 'c'],
      ['send', 'b'],
      ['send', 'c'],
    ]
  )
  for (const o of outs) assert.ok(Buffer.isBuffer(o.bytes))
  const big = wire.decode(outs[0].bytes)
  assert.deepEqual(Buffer.from(/** @type {any} */ (big.message).payload), payload)
  assert.deepEqual(outs[0].bytes, outs[1].bytes)
  assert.deepEqual(Buffer.from(/** @type {any} */ (wire.decode(outs[3].bytes).message).payload), Buffer.from('small'))
  assert.deepEqual(n.drain(), [])
})

test('each output owns its bytes: later drains do not overwrite them', () => {
  const n = new Node({ id: 'a', cluster: 'c', bootstrap: ['a', 'b'] }, { seed: 1 })
  n.drain()
  n.broadcast(1, Buffer.from('first'))
  const first = n.drain()[0].bytes
  const copy = Buffer.from(first)
  n.broadcast(2, Buffer.from('second'))
  n.drain()
  assert.deepEqual(first, copy)
})

test('peer ids stay right past the string table size (4,096), across its reset', () => {
  const n = new Node({ id: 'a', cluster: 'c', bootstrap: ['a'], maxPeers: 10000 }, { seed: 1 })
  n.drain()
  const peers = Array.from({ length: 4200 }, (_, i) => `peer-${i}`)
  for (const p of peers) n.join(0, p)
  const joined = n.drain().filter((o) => o.type === 'event' && o.event === 'peer_joined')
  assert.deepEqual(
    joined.map((o) => /** @type {any} */ (o).peer),
    peers
  )
  // Strings defined before the reset come back right when named again.
  n.leave(1, 'peer-0')
  n.leave(1, 'peer-4199')
  const left = n.drain().filter((o) => o.type === 'event' && o.event === 'peer_left')
  assert.deepEqual(
    left.map((o) => /** @type {any} */ (o).peer),
    ['peer-0', 'peer-4199']
  )
})

test('terms cross exactly, up to the largest the core allows (2^53 - 1, both words of a u64)', () => {
  const n = new Node(
    { id: 'a', cluster: 'c', bootstrap: ['a', 'b', 'c'], durable: true, preVote: false },
    { seed: 1, restored: { term: 2 ** 53 - 2, votedFor: null } }
  )
  n.drain()
  n.handleTimeout(/** @type {number} */ (n.pollTimeout()))
  const persist = n.drain().find((o) => o.type === 'persist')
  assert.deepEqual(persist, { type: 'persist', term: 2 ** 53 - 1, votedFor: 'a' })
  const small = new Node({ id: 'a', cluster: 'c', bootstrap: ['a', 'b', 'c'], durable: true, preVote: false }, { seed: 1 })
  small.drain()
  small.handleTimeout(/** @type {number} */ (small.pollTimeout()))
  assert.deepEqual(
    small.drain().find((o) => o.type === 'persist'),
    { type: 'persist', term: 1, votedFor: 'a' }
  )
})

test('pollOutput and drain mixed give the same outputs in the same order as drain alone', () => {
  const make = () => {
    const n = new Node({ id: 'a', cluster: 'c', bootstrap: ['a', 'b', 'c'], durable: true, preVote: false }, { seed: 7 })
    n.drain()
    n.handleTimeout(/** @type {number} */ (n.pollTimeout()))
    return n
  }
  const all = make().drain()
  assert.ok(all.length >= 3, `expected several outputs, got ${all.length}`)
  const n = make()
  const first = n.pollOutput()
  // An input between reads: its outputs come after the ones already pending.
  n.join(1000000, 'd')
  const rest = n.drain()
  assert.deepEqual([first, ...rest.slice(0, all.length - 1)], all)
  assert.deepEqual(rest.slice(all.length - 1), [{ type: 'event', event: 'peer_joined', peer: 'd' }])
  assert.equal(n.pollOutput(), null)
})

// handleMessage feeds the datagram and moves its outputs into the buffer in one addon call
// (`handleMessageInto`), with the sender as an index into a table of interned peer ids.

/** A follower `b` of `a` (term 1), its first heartbeat handled and drained. */
function follower() {
  const n = new Node({ id: 'b', cluster: 'c', bootstrap: ['a', 'b', 'c'] }, { seed: 1 })
  n.drain()
  n.handleMessage(1, 'a', wire.encode({ cluster: 'c', from: 'a', term: 1, message: { kind: 'heartbeat', sentAt: 1 } }))
  n.drain()
  return n
}
const beat = (/** @type {number} */ sentAt) =>
  wire.encode({ cluster: 'c', from: 'a', term: 1, message: { kind: 'heartbeat', sentAt } })

test('handleMessage with outputs still unread keeps them first, then the new ones', () => {
  const n = follower()
  n.handleMessage(2, 'a', beat(2))
  n.handleMessage(3, 'a', beat(3))
  const first = /** @type {any} */ (n.pollOutput())
  // One output read, one pending in the buffer: the next message's output must queue behind it.
  n.handleMessage(4, 'a', beat(4))
  const rest = /** @type {any[]} */ (n.drain())
  const echoes = [first, ...rest].map((o) => /** @type {any} */ (wire.decode(o.bytes).message).echo)
  assert.deepEqual(echoes, [2, 3, 4])
  assert.deepEqual(n.drain(), [])
})

test('handleMessage whose outputs do not fit the buffer: they arrive whole on the next drain', () => {
  const n = new Node({ id: 'b', cluster: 'c', bootstrap: ['a', 'b', 'c'] }, { seed: 1 })
  n.drain()
  const payload = Buffer.alloc(20000, 7)
  n.handleMessage(1, 'a', wire.encode({ cluster: 'c', from: 'a', term: 0, message: { kind: 'app', seq: 1, payload } }))
  const outs = /** @type {any[]} */ (n.drain())
  const msg = outs.find((o) => o.event === 'message')
  assert.ok(msg, JSON.stringify(outs.map((o) => o.type + ':' + o.event)))
  assert.equal(msg.sender, 'a')
  assert.deepEqual(msg.payload, payload)
  assert.deepEqual(n.drain(), [])
})

test('a dropped message throws its reason; outputs pending before it still drain', () => {
  const n = follower()
  n.handleMessage(2, 'a', beat(2))
  assert.throws(() => n.handleMessage(3, 'a', Buffer.from('nonsense')), { code: 'malformed' })
  assert.throws(() => n.handleMessage(3, 'x', beat(3)), { code: 'sender_mismatch' })
  const outs = /** @type {any[]} */ (n.drain())
  assert.deepEqual(
    outs.map((o) => [o.type, o.to]),
    [['send', 'a']]
  )
})

test('senders stay right past the interned peer table size (4,096), across its reset', () => {
  const n = follower()
  // Each unknown sender is interned, then its datagram dropped (the envelope names another).
  for (let i = 0; i < 4200; i++) {
    assert.throws(() => n.handleMessage(2, `p${i}`, beat(2)), { code: 'sender_mismatch' })
  }
  n.handleMessage(3, 'a', beat(3))
  const outs = /** @type {any[]} */ (n.drain())
  assert.deepEqual(
    outs.map((o) => [o.type, o.to]),
    [['send', 'a']]
  )
  assert.throws(() => n.handleMessage(4, 'p4199', beat(4)), { code: 'sender_mismatch' })
})

test('the raw handleMessageInto refuses anything but a NativeNode, and bad arguments, with a TypeError/RangeError', () => {
  const native = require('../lib/native.js')
  const buf = Buffer.alloc(256)
  const node = new native.NativeNode({ id: 'b', cluster: 'c', bootstrap: ['a', 'b'] }, 1, null, 0)
  for (const receiver of [undefined, {}, new native.NativeFenceChecker(null), Buffer.alloc(8)]) {
    assert.throws(() => native.handleMessageInto(receiver, 1, 0, beat(1), buf), { name: 'TypeError', message: /node must be a NativeNode/ })
  }
  assert.throws(() => native.handleMessageInto(node, 1, 0, beat(1), buf), { name: 'RangeError', message: /peer index 0/ })
  const peer = node.internPeer('a')
  assert.throws(() => native.handleMessageInto(node, 1, 'a', beat(1), buf), { name: 'TypeError' })
  assert.throws(() => native.handleMessageInto(node, -1, peer, beat(1), buf), { name: 'RangeError' })
  assert.throws(() => native.handleMessageInto(node, 1, peer, 'bytes', buf), { name: 'TypeError', message: /bytes must be/ })
  assert.throws(() => native.handleMessageInto(node, 1, peer, beat(1), new Uint16Array(4)), { name: 'TypeError', message: /buf must be/ })
  assert.ok(native.handleMessageInto(node, 1, peer, beat(1), buf) > 0)
})
