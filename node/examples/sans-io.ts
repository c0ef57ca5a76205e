// The sans-IO layer in TypeScript: three nodes, an in-memory network, a simulated clock.
//   npx tsc -p examples   (type-checks against the package's index.d.ts)

import { Node, DroppedError, type Output } from 'tenure'

const ids = ['n1', 'n2', 'n3']
const nodes = new Map<string, Node>(ids.map((id, i) => [id, new Node({ id, cluster: 'example', bootstrap: ids }, { now: 0, seed: i + 1 })]))
let network: Array<{ at: number; from: string; to: string; bytes: Buffer }> = []
let now = 0

function act(id: string, node: Node, out: Output): void {
  switch (out.type) {
    case 'send':
      network.push({ at: now + 1, from: id, to: out.to, bytes: out.bytes })
      break
    case 'persist':
      // durable mode: store { term: out.term, votedFor: out.votedFor } before anything after it
      break
    case 'event':
      if (out.event === 'confirm_leader') {
        node.confirmLeader(now, out.term, true)
        for (const o of node.drain()) act(id, node, o)
      } else if (out.event === 'became_leader') {
        console.log(`${now} ms: ${id} leads term ${out.term}`)
      }
      break
  }
}

function step(until: number): void {
  while (true) {
    const deadlines = [...nodes.values()].map((n) => Number(n.pollTimeout() ?? Infinity))
    const next = Math.min(...deadlines, ...network.map((m) => m.at))
    if (next > until) break
    now = Math.max(now, next)
    const due = network.filter((m) => m.at <= now)
    network = network.filter((m) => m.at > now)
    for (const m of due) {
      const node = nodes.get(m.to)!
      try {
        node.handleMessage(now, m.from, m.bytes)
      } catch (e) {
        if (e instanceof DroppedError) console.log(`dropped (${e.reason})`)
        else throw e
      }
      for (const o of node.drain()) act(m.to, node, o)
    }
    for (const [id, node] of nodes) {
      const t = node.pollTimeout()
      if (t !== null && t <= now) {
        node.handleTimeout(now)
        for (const o of node.drain()) act(id, node, o)
      }
    }
  }
}

step(1000)
for (const [id, node] of nodes) console.log(id, node.role, node.term, node.inspect().quorum)
