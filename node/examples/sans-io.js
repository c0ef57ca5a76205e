'use strict'
// The sans-IO layer: three nodes in one process, an in-memory "network" and a simulated clock.
// You move the bytes and pass the time; the node tells you what to send, persist and announce.
//
//   node examples/sans-io.js

const { Node } = require('tenure')

const ids = ['n1', 'n2', 'n3']
/** @type {Map<string, import('tenure').Node>} */
const nodes = new Map(ids.map((id, i) => [id, new Node({ id, cluster: 'example', bootstrap: ids }, { now: 0, seed: i + 1 })]))
/** @type {Array<{ at: number, from: string, to: string, bytes: Buffer }>} */
let network = []
let now = 0

/** Carry out every output of one node, in order. @param {string} id */
function drain(id) {
  const node = /** @type {import('tenure').Node} */ (nodes.get(id))
  for (const out of node.drain()) {
    if (out.type === 'send') network.push({ at: now + 1, from: id, to: out.to, bytes: out.bytes })
    else if (out.type === 'persist') {
      /* with durable: true, write { term, votedFor } to disk here, before anything else */
    } else if (out.event === 'confirm_leader') {
      node.confirmLeader(now, out.term, true) // the leadership gate: say yes
      drain(id)
    } else if (out.event === 'became_leader') console.log(`${String(now).padStart(5)} ms  ${id} leads term ${out.term}`)
    else if (out.event === 'became_follower') console.log(`${String(now).padStart(5)} ms  ${id} follows ${out.leader ?? 'nobody'} in term ${out.term}`)
  }
}

/** Jump from deadline to delivery until `until`. @param {number} until @param {Set<string>} [down] */
function run(until, down = new Set()) {
  for (;;) {
    const deadlines = ids.filter((id) => !down.has(id)).map((id) => Number(nodes.get(id)?.pollTimeout() ?? Infinity))
    const next = Math.min(...deadlines, ...network.map((m) => m.at))
    if (next > until) return void (now = until)
    now = Math.max(now, next)
    const due = network.filter((m) => m.at <= now)
    network = network.filter((m) => m.at > now)
    for (const m of due) {
      if (down.has(m.to) || down.has(m.from)) continue
      try {
        nodes.get(m.to)?.handleMessage(now, m.from, m.bytes)
      } catch (e) {
        console.log(`dropped: ${/** @type {Error} */ (e).message}`)
      }
      drain(m.to)
    }
    for (const id of ids) {
      const node = /** @type {import('tenure').Node} */ (nodes.get(id))
      const t = node.pollTimeout()
      if (!down.has(id) && t !== null && t <= now) {
        node.handleTimeout(now)
        drain(id)
      }
    }
  }
}

run(1000)
const leader = ids.find((id) => nodes.get(id)?.isLeader)
console.log(`leader: ${leader}; crashing it`)
run(3000, new Set([leader ?? '']))
console.log(`new leader: ${ids.find((id) => id !== leader && nodes.get(id)?.isLeader)}`)
