'use strict'
// Shared test helpers: an in-memory network of sans-IO nodes driven by a simulated clock, and
// `tenure run` processes (bin/tenure.js) whose JSON lines the tests wait for.

const dgram = require('node:dgram')
const path = require('node:path')
const readline = require('node:readline')
const { spawn } = require('node:child_process')
const { Node } = require('..')

const REPO = path.resolve(__dirname, '..', '..')
const BIN = path.join(__dirname, '..', 'bin', 'tenure.js')

/**
 * N nodes over an in-memory network with 1 ms latency, driven event by event (no sleeps).
 */
class SimCluster {
  /**
   * @param {number} n
   * @param {object} [extra] extra config for every node
   */
  constructor(n, extra = {}) {
    this.ids = Array.from({ length: n }, (_, i) => `n${i + 1}`)
    this.now = 0
    /** @type {Map<string, Node>} */
    this.nodes = new Map()
    /** @type {Array<{at: number, from: string, to: string, bytes: Buffer}>} */
    this.inFlight = []
    /** @type {Set<string>} */
    this.down = new Set()
    /** @type {Array<{at: number, id: string, out: any}>} */
    this.log = []
    /** @type {Map<string, any>} */
    this.persisted = new Map()
    this.ids.forEach((id, i) => {
      this.nodes.set(id, new Node({ id, cluster: 'sim', bootstrap: this.ids, ...extra }, { now: 0, seed: 1000 + i }))
    })
  }

  /** @param {string} id */
  drain(id) {
    const node = /** @type {Node} */ (this.nodes.get(id))
    for (const out of node.drain()) {
      this.log.push({ at: this.now, id, out })
      if (out.type === 'send') this.inFlight.push({ at: this.now + 1, from: id, to: out.to, bytes: out.bytes })
      else if (out.type === 'persist') this.persisted.set(id, { term: out.term, votedFor: out.votedFor })
      else if (out.event === 'confirm_leader') {
        node.confirmLeader(this.now, out.term, true)
        this.drain(id)
      }
    }
  }

  /** @param {number} until */
  runUntil(until) {
    for (;;) {
      const live = this.ids.filter((id) => !this.down.has(id))
      const timers = live.map((id) => /** @type {Node} */ (this.nodes.get(id)).pollTimeout()).filter((t) => t !== null)
      const msgs = this.inFlight.map((m) => m.at)
      const next = Math.min(...timers, ...msgs)
      if (!Number.isFinite(next) || next > until) {
        this.now = until
        return
      }
      this.now = Math.max(this.now, next)
      const due = this.inFlight.filter((m) => m.at <= this.now)
      this.inFlight = this.inFlight.filter((m) => m.at > this.now)
      for (const m of due) {
        if (this.down.has(m.to) || this.down.has(m.from)) continue
        const node = this.nodes.get(m.to)
        if (!node) continue
        try {
          node.handleMessage(this.now, m.from, m.bytes)
        } catch {
          // dropped: counted by the node
        }
        this.drain(m.to)
      }
      for (const id of live) {
        const node = /** @type {Node} */ (this.nodes.get(id))
        const t = node.pollTimeout()
        if (t !== null && t <= this.now) {
          node.handleTimeout(this.now)
          this.drain(id)
        }
      }
    }
  }

  leaders() {
    return this.ids.filter((id) => !this.down.has(id) && /** @type {Node} */ (this.nodes.get(id)).isLeader)
  }

  /** Every (term → leader ids) seen in became_leader events. */
  leadersByTerm() {
    /** @type {Map<number, Set<string>>} */
    const m = new Map()
    for (const { id, out } of this.log) {
      if (out.type === 'event' && out.event === 'became_leader') {
        const ids = m.get(out.term) ?? new Set()
        ids.add(id)
        m.set(out.term, ids)
      }
    }
    return m
  }
}

/**
 * A deterministic PRNG for randomized tests (mulberry32), so failures can be reproduced.
 * @param {number} seed
 */
function rng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Free UDP ports on 127.0.0.1 (bound, noted, released). @param {number} n */
async function freePorts(n) {
  const socks = []
  for (let i = 0; i < n; i++) {
    const s = dgram.createSocket('udp4')
    await new Promise((r) => s.bind(0, '127.0.0.1', () => r(undefined)))
    socks.push(s)
  }
  const ports = socks.map((s) => s.address().port)
  await Promise.all(socks.map((s) => new Promise((r) => s.close(() => r(undefined)))))
  return ports
}

/**
 * One `tenure run` process per id (bin/tenure.js), their JSON stdout lines collected in arrival
 * order. `argsFor(id, peers)` gives the arguments after `run`; `until(pred, ms)` resolves with the
 * first line, already seen or still to come, that satisfies `pred` (rejects after `ms` with every
 * line so far). The caller kills `procs` when done. `bin` is the script node runs (default
 * bin/tenure.js).
 * @param {string[]} ids
 * @param {(id: string, peers: string[]) => string[]} argsFor
 * @param {'inherit' | 'ignore' | 'pipe'} [stderr]
 * @param {string} [bin]
 */
function runProcesses(ids, argsFor, stderr = 'inherit', bin = BIN) {
  /** @type {any[]} */
  const lines = []
  /** @type {Array<() => void>} */
  let waiters = []
  const procs = ids.map((id) => {
    const args = [bin, 'run', ...argsFor(id, ids.filter((p) => p !== id))]
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', stderr] })
    readline.createInterface({ input: /** @type {any} */ (child.stdout) }).on('line', (l) => {
      lines.push(JSON.parse(l))
      const w = waiters
      waiters = []
      for (const f of w) f()
    })
    return child
  })
  /** @param {(l: any) => boolean} pred @param {number} ms @returns {Promise<any>} */
  const until = (pred, ms) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out; lines:\n${lines.map((l) => JSON.stringify(l)).join('\n')}`)), ms)
      const check = () => {
        const hit = lines.find(pred)
        if (hit) {
          clearTimeout(timer)
          resolve(hit)
        } else waiters.push(check)
      }
      check()
    })
  return { procs, lines, until }
}

module.exports = { SimCluster, rng, REPO, BIN, freePorts, runProcesses }
