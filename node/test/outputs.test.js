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
