// Per-call overhead of the Node.js binding (a benchmark, not a test):
//   node bench/bench.mjs
// Prints µs per call for the hot paths: a follower handling a heartbeat and draining its ack,
// a leader's heartbeat tick to 4 peers, a dropped datagram, and the addon's size.

import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { Node, wire } from 'tenure'

const require = createRequire(import.meta.url)
const native = require('../lib/native.js')
const here = path.dirname(fileURLToPath(import.meta.url))

/** Runs `fn` `n` times after a warm-up; returns µs per call (best of 5 rounds). */
function bench(n, fn) {
  for (let i = 0; i < n / 10; i++) fn(i)
  let best = Infinity
  for (let round = 0; round < 5; round++) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < n; i++) fn(i)
    const us = Number(process.hrtime.bigint() - t0) / 1000 / n
    best = Math.min(best, us)
  }
  return best
}

const ids = ['n1', 'n2', 'n3', 'n4', 'n5']
const scratch = Buffer.alloc(4096)
const hb = (sentAt) => wire.encode({ cluster: 'bench', from: 'n1', term: 1, message: { kind: 'heartbeat', sentAt } })

// A follower of n1 in term 1.
function follower(cls) {
  const n = cls === 'native' ? new native.NativeNode({ id: 'n2', cluster: 'bench', bootstrap: ids }, 1, null, 0) : new Node({ id: 'n2', cluster: 'bench', bootstrap: ids }, { seed: 1 })
  n.handleMessage(1, 'n1', hb(1))
  if (cls === 'native') n.drainInto(scratch)
  else n.drain()
  return n
}

// The core acknowledges only a fresh heartbeat (a duplicate proves nothing and is ignored), so the
// follower rows feed heartbeats with increasing `sentAt`: batches of K pre-encoded ones, each
// batch on a fresh follower (set up outside the timed loop).
const K = 1000
const beats = Array.from({ length: K }, (_, i) => hb(i + 2))

/** µs per heartbeat of `step(node, i)` over `batches` batches of K (best of 5 rounds). */
function followerBench(batches, cls, step, prepare = () => {}) {
  let best = Infinity
  for (let round = -1; round < 5; round++) {
    let ns = 0n
    for (let b = 0; b < batches; b++) {
      const n = follower(cls)
      prepare(n)
      const t0 = process.hrtime.bigint()
      for (let i = 0; i < K; i++) step(n, i)
      ns += process.hrtime.bigint() - t0
    }
    // Round -1 warms up.
    if (round >= 0) best = Math.min(best, Number(ns) / 1000 / (batches * K))
  }
  return best
}

const B = 200
const N = 200000
const usWrapper = followerBench(B, 'wrapper', (n, i) => {
  n.handleMessage(2 + i, 'n1', beats[i])
  if (n.drain().length !== 1) throw new Error('bench: expected one ack')
})
const usNative = followerBench(B, 'native', (n, i) => {
  n.handleMessage(2 + i, 'n1', beats[i])
  if (n.drainInto(scratch) <= 0) throw new Error('bench: expected one ack')
})
const usFused = followerBench(
  B,
  'native',
  (n, i) => {
    if (native.handleMessageInto(n, 2 + i, 0, beats[i], scratch) <= 0) throw new Error('bench: expected one ack')
  },
  (n) => n.internPeer('n1')
)
const usHandleOnly = followerBench(B, 'native', (n, i) => {
  n.handleMessage(2 + i, 'n1', beats[i])
})
const g = follower('native')
const usEmpty = bench(N, () => {
  g.pollTimeout()
})

// A leader of 5 (confirm gate off), ticking: 4 heartbeats per tick.
const leader = new Node({ id: 'n1', cluster: 'bench', bootstrap: ids, confirmLeader: false, preVote: false }, { seed: 1 })
leader.handleTimeout(10000)
leader.drain()
for (const p of ['n2', 'n3']) {
  leader.handleMessage(10001, p, wire.encode({ cluster: 'bench', from: p, term: 1, message: { kind: 'vote_reply', granted: true } }))
}
leader.drain()
if (!leader.isLeader) throw new Error('bench setup: not leader')
let now = 10002
const usTick = bench(20000, () => {
  now += 50
  for (const p of ['n2', 'n3', 'n4']) {
    leader.handleMessage(now, p, wire.encode({ cluster: 'bench', from: p, term: 1, message: { kind: 'heartbeat_ack', echo: now - 50 } }))
  }
  leader.drain()
  leader.handleTimeout(now)
  leader.drain()
})

const garbage = Buffer.from('not a tenure message')
const usDrop = bench(N, () => {
  g.handleMessage(5, 'n1', garbage)
})

const addon = path.join(here, '..', 'native', 'tenure.node')
const size = fs.statSync(addon).size
const results = {
  addon_bytes: size,
  follower_heartbeat_handle_message_plus_drain_us: +usWrapper.toFixed(3),
  follower_heartbeat_native_handle_message_plus_drain_into_us: +usNative.toFixed(3),
  follower_heartbeat_native_handle_message_into_us: +usFused.toFixed(3),
  follower_heartbeat_native_handle_message_only_us: +usHandleOnly.toFixed(3),
  native_empty_call_us: +usEmpty.toFixed(3),
  dropped_datagram_native_handle_message_us: +usDrop.toFixed(3),
  leader_round_3_acks_plus_tick_4_heartbeats_us: +usTick.toFixed(3),
}
console.log(`addon native/tenure.node: ${(size / 1024).toFixed(0)} KiB (${size} bytes)`)
console.log(`follower: handleMessage(heartbeat) + drain() [1 send out], public Node class: ${usWrapper.toFixed(2)} µs/call`)
console.log(`follower: handleMessage + drainInto on the raw addon (outputs not decoded): ${usNative.toFixed(2)} µs/call`)
console.log(`follower: handleMessageInto (handle + drain in one call, raw addon): ${usFused.toFixed(2)} µs/call`)
console.log(`follower: handleMessage only (raw addon):                                 ${usHandleOnly.toFixed(2)} µs/call`)
console.log(`an addon call that does nothing (raw pollTimeout):                        ${usEmpty.toFixed(2)} µs/call`)
console.log(`dropped datagram: handleMessage (raw addon):                              ${usDrop.toFixed(2)} µs/call`)
console.log(`leader: 3 acks (encode+handle+drain) + tick with 4 heartbeats + drain:   ${usTick.toFixed(2)} µs/round`)
console.log(JSON.stringify(results))
