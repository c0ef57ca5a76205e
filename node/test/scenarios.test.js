'use strict'
// tests/scenarios: timelines of inputs to one node with the exact outputs expected. Every host
// replays every file and must produce the same outputs, byte for byte (format: README there).

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { Node, TenureError } = require('..')
const { parseExact } = require('./exact-json')
const { REPO } = require('./helpers')

const DIR = path.join(REPO, 'tests', 'scenarios')
const files = fs.existsSync(DIR) ? fs.readdirSync(DIR).filter((f) => f.endsWith('.json')).sort() : []

/** @param {any} c the scenario's snake_case config */
function config(c) {
  return {
    id: c.id,
    cluster: c.cluster,
    bootstrap: c.bootstrap,
    minClusterSize: c.min_cluster_size,
    electionTimeoutMin: c.election_timeout_min,
    electionTimeoutMax: c.election_timeout_max,
    heartbeatInterval: c.heartbeat_interval,
    ghostTtl: c.ghost_ttl,
    preVote: c.pre_vote,
    confirmLeader: c.confirm_leader,
    durable: c.durable,
    key: c.key_hex === null ? null : Buffer.from(c.key_hex, 'hex'),
    // Fields added after the first files; absent ones keep the core's defaults.
    admitUnknownPeers: c.admit_unknown_peers ?? false,
    ...(c.max_peers === undefined ? {} : { maxPeers: c.max_peers }),
    ...(c.max_clock_drift_ppm === undefined ? {} : { maxClockDriftPpm: c.max_clock_drift_ppm }),
    ...(c.incarnation == null ? {} : { incarnation: c.incarnation }),
    value: c.value ?? null,
    priority: c.priority ?? 0,
    neverLead: c.never_lead ?? false,
    preemptAfter: c.preempt_after ?? null,
    observer: c.observer ?? false,
    observerPeers: c.observer_peers ?? [],
  }
}

/** An output in the scenario files' format. @param {import('..').Output} o */
function recorded(o) {
  if (o.type === 'send') return { type: 'send', to: o.to, hex: o.bytes.toString('hex') }
  if (o.type === 'persist') return { type: 'persist', term: o.term, voted_for: o.votedFor }
  switch (o.event) {
    case 'became_leader':
    case 'confirm_leader':
      return { type: 'event', event: o.event, term: o.term }
    case 'became_follower':
      return { type: 'event', event: o.event, term: o.term, leader: o.leader }
    case 'peer_joined':
    case 'peer_left':
      return { type: 'event', event: o.event, peer: o.peer }
    case 'message':
      // The recorded scenarios keep the core's `from` key; the Node.js output says `sender`.
      return { type: 'event', event: o.event, from: o.sender, hex: Buffer.from(o.payload).toString('hex') }
  }
  throw new Error(`unknown output ${JSON.stringify(o)}`)
}

/** Applies one input; returns "ok" or the error's stable code. @param {Node} node @param {number} at @param {any} input */
function apply(node, at, input) {
  try {
    switch (input.kind) {
      case 'timeout':
        node.handleTimeout(at)
        break
      case 'message':
        node.handleMessage(at, input.from, Buffer.from(input.hex, 'hex'))
        break
      case 'join':
        node.join(at, input.peer)
        break
      case 'leave':
        node.leave(at, input.peer)
        break
      case 'peer_down':
        node.peerDown(at, input.peer, input.reason)
        break
      case 'confirm':
        node.confirmLeader(at, input.term, input.granted)
        break
      case 'leader_failed':
        node.leaderHandlerFailed(at, input.term)
        break
      case 'transfer':
        node.transferLeadership(at, input.peer)
        break
      case 'broadcast':
        node.broadcast(at, Buffer.from(input.hex, 'hex'))
        break
      case 'proclaim':
        node.proclaim(at, input.value)
        break
      default:
        throw new Error(`unknown input kind ${input.kind}`)
    }
    return 'ok'
  } catch (e) {
    if (e instanceof TenureError) return e.code
    throw e
  }
}

test('tests/scenarios/*.json exist', { skip: files.length === 0 && 'no scenario files yet (tests/scenarios/*.json)' }, () => {
  assert.ok(files.length > 0)
})

for (const file of files) {
  test(`scenario ${file} replays byte for byte`, () => {
    const s = parseExact(fs.readFileSync(path.join(DIR, file), 'utf8'))
    const restored = s.restored === null ? null : { term: s.restored.term, votedFor: s.restored.voted_for }
    const node = new Node(config(s.config), { now: s.start_ms, seed: s.seed, restored })
    s.steps.forEach((/** @type {any} */ step, /** @type {number} */ i) => {
      const where = `${file} step ${i} (at ${step.at}, ${step.input.kind})`
      assert.equal(apply(node, step.at, step.input), step.result, `${where}: result`)
      assert.deepEqual(node.drain().map(recorded), step.outputs, `${where}: outputs`)
      assert.equal(node.pollTimeout(), step.next_deadline, `${where}: next_deadline`)
    })
    if (s.final) {
      assert.deepEqual(
        { role: node.role, term: node.term, leader: node.leader, voted_for: node.votedFor, value: node.leaderValue },
        {
          role: s.final.role,
          term: s.final.term,
          leader: s.final.leader,
          voted_for: s.final.voted_for,
          value: s.final.value ?? null,
        },
        `${file}: final state`
      )
    }
  })
}
