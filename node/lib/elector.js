'use strict'

const dgram = require('node:dgram')
const fs = require('node:fs')
const path = require('node:path')
const net = require('node:net')
const { EventEmitter } = require('node:events')
const { performance } = require('node:perf_hooks')

const native = require('./native')
const { wrapError, StateFileError, TenureError, NodeError } = require('./errors')

/** Longest delay `setTimeout` accepts without clamping it to 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1

const OPTION_KEYS = new Set([
  'id',
  'peers',
  'cluster',
  'minClusterSize',
  'electionTimeoutMin',
  'electionTimeoutMax',
  'heartbeatInterval',
  'ghostTtl',
  'preVote',
  'stateFile',
  'key',
  'confirmLeader',
  'confirmTimeout',
  'eventHook',
  'bind',
  'seed',
])

/** Gives the command-line runtime (bin/tenure.js) the native node, for the shared JSON lines. */
const kNative = Symbol('tenure.native')

/**
 * @param {string} what
 * @param {string} message
 */
function typeError(what, message) {
  return Object.assign(new TypeError(`${what} ${message}`), { code: 'ERR_INVALID_ARG_TYPE' })
}

/**
 * Parses `HOST:PORT` (IPv4, or `[v6]:PORT`) into a socket address.
 * @param {string} addr
 * @returns {{ host: string, port: number, family: 4 | 6 } | null}
 */
function parseAddress(addr) {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+)):(\d{1,5})$/.exec(addr)
  if (!m) return null
  const host = m[1] ?? m[2]
  const port = Number(m[3])
  const family = net.isIP(host)
  if (family === 0 || port < 1 || port > 65535) return null
  return { host, port, family: family === 6 ? 6 : 4 }
}

/**
 * The peer id of a datagram's sender, in the same `HOST:PORT` form as the ids.
 * @param {dgram.RemoteInfo} rinfo
 */
function senderId(rinfo) {
  return rinfo.family === 'IPv6' ? `[${rinfo.address}]:${rinfo.port}` : `${rinfo.address}:${rinfo.port}`
}

/**
 * Writes `text` to `file` durably: a temporary file, fsync, rename over the old one, fsync of
 * the directory. Synchronous on purpose: the outputs after a `persist` must not leave before it
 * is on disk.
 * @param {string} file
 * @param {string} text
 */
function writeDurably(file, text) {
  const tmp = `${file}.tmp-${process.pid}`
  const fd = fs.openSync(tmp, 'w', 0o600)
  try {
    fs.writeSync(fd, text)
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
  fs.renameSync(tmp, file)
  let dfd
  try {
    dfd = fs.openSync(path.dirname(file), 'r')
    fs.fsyncSync(dfd)
  } catch {
    // Some file systems do not allow fsync on a directory; the rename is still atomic.
  } finally {
    if (dfd !== undefined) fs.closeSync(dfd)
  }
}

/**
 * Whether the persist output at `i` is followed by another persist before any send.
 * @param {any[]} outputs
 * @param {number} i
 */
function supersededPersist(outputs, i) {
  for (let j = i + 1; j < outputs.length; j++) {
    if (outputs[j].type === 'persist') return true
    if (outputs[j].type === 'send') return false
  }
  return false
}

/**
 * Reads the durable state from `file`: `null` when the file does not exist.
 * @param {string} file
 */
function readState(file) {
  let text
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (e) {
    if (/** @type {any} */ (e).code === 'ENOENT') return null
    throw new StateFileError(`cannot read state file ${file}: ${/** @type {Error} */ (e).message}`, 'state_file_unreadable', {
      cause: e,
    })
  }
  const state = native.decodeDurableState(text)
  if (state === null) {
    throw new StateFileError(`state file ${file} is not in the "<term> <voted_for>" format`, 'state_file_corrupt')
  }
  return state
}

/**
 * Runs one tenure node over UDP (`node:dgram`) with real timers, and tells you — as events —
 * when this process leads and when it stops.
 *
 * Events (all emitted asynchronously, after the datagrams of the same step have been sent, so a
 * slow listener never delays a heartbeat):
 * - `'leader'` `{ term, signal }`: this node leads `term` (the fencing token); `signal` is an
 *   `AbortSignal` aborted the moment that leadership ends.
 * - `'follower'` `{ term, leader }`: this node follows `leader` (or `null`: none known).
 * - `'peerJoined'` `{ peer }`, `'peerLeft'` `{ peer }`: the view changed.
 * - `'message'` `{ from, payload }`: a peer's {@link Elector#broadcast}.
 * - `'error'` (Error): a listener threw, the state file could not be written, or the socket
 *   failed. A throwing (or rejecting) `'leader'` listener also rolls leadership back.
 *
 * @example
 * const elector = new Elector({ id: '127.0.0.1:7001', peers: ['127.0.0.1:7002', '127.0.0.1:7003'], cluster: 'jobs' })
 * elector.on('leader', ({ term, signal }) => runScheduler({ term, signal }))
 * await elector.start()
 * process.once('SIGTERM', () => elector.stop())
 */
class Elector extends EventEmitter {
  /** @type {any} */ #n
  /** @type {string} */ #id
  /** @type {{ host: string, port: number, family: 4 | 6 }} */ #bind
  /** @type {dgram.Socket | null} */ #socket = null
  /** @type {NodeJS.Timeout | null} */ #timer = null
  /** @type {number | bigint | null} */ #deadline = null
  /** @type {string | undefined} */ #stateFile
  /** @type {((info: { term: number }) => boolean | Promise<boolean>) | undefined} */ #confirm
  /** @type {'new' | 'starting' | 'running' | 'stopping' | 'stopped'} */ #state = 'new'
  /** @type {AbortController | null} */ #leadership = null
  /** @type {Map<string, { host: string, port: number, family: 4 | 6 } | null>} */ #addresses = new Map()
  /** @type {Array<[string, any]>} */ #queue = []
  #flushScheduled = false
  /** @type {Promise<void> | null} */ #stopping = null
  /** @type {Promise<void> | null} */ #starting = null
  /** @type {((leader: string) => void) | null} */ #onNewLeader = null
  #electionTimeoutMin = 0
  #confirmTimeout = 0
  /** @type {((event: any) => void) | undefined} */ #hook
  #onTimer = () => this.#timeout()
  #flush = () => this.#emitQueued()

  /**
   * @param {import('..').ElectorOptions} options
   */
  constructor(options) {
    super({ captureRejections: true })
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw typeError('options', `must be an object, got ${options === null ? 'null' : typeof options}`)
    }
    for (const k of Object.keys(options)) {
      if (!OPTION_KEYS.has(k)) {
        throw typeError('options', `has an unknown property ${JSON.stringify(k)}; expected some of: ${[...OPTION_KEYS].join(', ')}`)
      }
    }
    const { id, peers, cluster, stateFile, confirmLeader, confirmTimeout, eventHook, key, seed } = options
    if (typeof id !== 'string') throw typeError('options.id', `must be a "HOST:PORT" string, got ${typeof id}`)
    const bind = parseAddress(id)
    if (!bind) {
      throw Object.assign(new TypeError(`options.id must be "IP:PORT" (IPv4) or "[IPv6]:PORT", got ${JSON.stringify(id)}`), {
        code: 'ERR_INVALID_ARG_VALUE',
      })
    }
    let bindTo = bind
    if (options.bind !== undefined && options.bind !== null) {
      if (typeof options.bind !== 'string') throw typeError('options.bind', `must be an "IP:PORT" string, got ${typeof options.bind}`)
      const b = parseAddress(options.bind)
      if (!b) {
        throw Object.assign(new TypeError(`options.bind must be "IP:PORT" or "[IPv6]:PORT", got ${JSON.stringify(options.bind)}`), {
          code: 'ERR_INVALID_ARG_VALUE',
        })
      }
      bindTo = b
    }
    if (!Array.isArray(peers)) throw typeError('options.peers', `must be an array of "HOST:PORT" strings`)
    if (stateFile !== undefined && stateFile !== null && typeof stateFile !== 'string') {
      throw typeError('options.stateFile', `must be a path string, got ${typeof stateFile}`)
    }
    if (confirmLeader !== undefined && confirmLeader !== null && typeof confirmLeader !== 'function') {
      throw typeError('options.confirmLeader', `must be a function, got ${typeof confirmLeader}`)
    }
    if (eventHook !== undefined && eventHook !== null && typeof eventHook !== 'function') {
      throw typeError('options.eventHook', `must be a function, got ${typeof eventHook}`)
    }
    if (confirmTimeout !== undefined && confirmTimeout !== null) {
      if (typeof confirmTimeout !== 'number') throw typeError('options.confirmTimeout', `must be a number of ms, got ${typeof confirmTimeout}`)
      if (!(confirmTimeout >= 0 && confirmTimeout <= MAX_TIMER_MS)) {
        throw Object.assign(new RangeError(`options.confirmTimeout must be from 0 to ${MAX_TIMER_MS} ms, got ${confirmTimeout}`), {
          code: 'ERR_OUT_OF_RANGE',
        })
      }
    }
    this.#id = id
    this.#bind = bindTo
    this.#hook = eventHook ?? undefined
    this.#stateFile = stateFile ?? undefined
    this.#confirm = confirmLeader ?? undefined
    const config = {
      id,
      cluster,
      bootstrap: peers,
      minClusterSize: options.minClusterSize,
      electionTimeoutMin: options.electionTimeoutMin,
      electionTimeoutMax: options.electionTimeoutMax,
      heartbeatInterval: options.heartbeatInterval,
      ghostTtl: options.ghostTtl,
      preVote: options.preVote,
      confirmLeader: this.#confirm !== undefined,
      durable: this.#stateFile !== undefined,
      key: key ?? null,
    }
    const restored = this.#stateFile !== undefined ? readState(this.#stateFile) : null
    try {
      this.#n = new native.NativeNode(config, seed, restored, this.now())
    } catch (e) {
      throw wrapError(e)
    }
    this.#electionTimeoutMin = Number(this.#n.effectiveConfig.electionTimeoutMin)
    this.#confirmTimeout = confirmTimeout ?? this.#electionTimeoutMin
  }

  /** @returns {any} */
  get [kNative]() {
    return this.#n
  }

  /** The runtime's monotonic clock in whole milliseconds (the `now` of every deadline). */
  now() {
    return Math.floor(performance.now())
  }

  /**
   * Binds the UDP socket on this node's address and starts the election.
   * @returns {Promise<void>}
   */
  start() {
    if (this.#state !== 'new') {
      return Promise.reject(new TenureError(`start() called on an elector that is ${this.#state}`, 'already_started'))
    }
    this.#state = 'starting'
    this.#starting = this.#doStart()
    return this.#starting
  }

  async #doStart() {
    if (this.#stateFile !== undefined) {
      // Fail now, not at the first vote, when the state file cannot be written.
      try {
        writeDurably(this.#stateFile, native.encodeDurableState({ term: this.#n.term, votedFor: this.#n.votedFor }))
      } catch (e) {
        this.#state = 'stopped'
        throw new StateFileError(`cannot write state file ${this.#stateFile}: ${/** @type {Error} */ (e).message}`, 'state_file_write_failed', {
          cause: e,
        })
      }
    }
    const socket = dgram.createSocket({ type: this.#bind.family === 6 ? 'udp6' : 'udp4' })
    this.#socket = socket
    await new Promise((resolve, reject) => {
      const onError = (/** @type {Error} */ err) => {
        this.#state = 'stopped'
        this.#socket = null
        socket.close()
        reject(err)
      }
      socket.once('error', onError)
      socket.bind(this.#bind.port, this.#bind.host, () => {
        socket.off('error', onError)
        resolve(undefined)
      })
    })
    socket.on('message', (msg, rinfo) => this.#message(msg, rinfo))
    socket.on('error', (err) => this.#queueEvent('error', err))
    this.#state = 'running'
    this.#step(this.now())
  }

  /**
   * Stops the node. When leading (and `transfer` is not false) it first hands leadership to the
   * peer the core picks (`Node.transferTarget`: answered, reachable, heard from most recently)
   * and waits — at most `electionTimeoutMin` — for the new leader,
   * so the cluster is leaderless for about one round trip. Aborts the leadership signal.
   * @param {{ transfer?: boolean }} [options]
   * @returns {Promise<void>}
   */
  stop(options) {
    if (this.#stopping) return this.#stopping
    const transfer = options?.transfer !== false
    this.#stopping = this.#doStop(transfer)
    return this.#stopping
  }

  /** @param {boolean} transfer */
  async #doStop(transfer) {
    if (this.#state === 'new') {
      this.#state = 'stopped'
      return
    }
    if (this.#state === 'starting') {
      await this.#starting?.catch(() => {})
    }
    if (this.#state !== 'running') {
      this.#state = 'stopped'
      return
    }
    this.#state = 'stopping'
    if (transfer && this.#n.isLeader) {
      const target = this.#transferTarget()
      if (target !== null) {
        const now = this.now()
        const waited = new Promise((resolve) => {
          const t = setTimeout(resolve, Math.max(1, this.#electionTimeoutMin))
          this.#onNewLeader = () => {
            clearTimeout(t)
            resolve(undefined)
          }
        })
        try {
          this.#n.transferLeadership(now, target)
        } catch {
          // Not leading after all, or the peer just left: nothing to hand over.
        }
        this.#step(now)
        await waited
        this.#onNewLeader = null
      }
    }
    this.#endLeadership()
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = null
    this.#state = 'stopped'
    const socket = this.#socket
    this.#socket = null
    if (socket) await new Promise((resolve) => socket.close(() => resolve(undefined)))
    this.#emitQueued()
  }

  /**
   * The core's choice (the freshest answered, reachable peer), else the first peer of the view
   * that is not failing sends, else `null`.
   * @returns {string | null}
   */
  #transferTarget() {
    const target = this.#n.transferTarget()
    if (target !== null) return target
    const failing = new Set(JSON.parse(this.#n.inspectJson()).send_failing_peers)
    return this.#n.view.find((/** @type {string} */ peer) => peer !== this.#id && !failing.has(peer)) ?? null
  }

  /**
   * @param {Buffer} msg
   * @param {dgram.RemoteInfo} rinfo
   */
  #message(msg, rinfo) {
    if (this.#state !== 'running' && this.#state !== 'stopping') return
    const from = senderId(rinfo)
    const now = this.now()
    try {
      this.#n.handleMessage(now, from, msg) // a dropped datagram returns its reason: nothing to do
    } catch (e) {
      this.#queueEvent('error', wrapError(e))
      return
    }
    this.#step(now)
  }

  #timeout() {
    this.#timer = null
    this.#deadline = null
    if (this.#state !== 'running' && this.#state !== 'stopping') return
    const now = this.now()
    this.#n.handleTimeout(now)
    this.#step(now)
  }

  /**
   * After every input: carry out every output in order, end leadership if it ended, re-arm the
   * one timer, and schedule the events.
   * @param {number} now
   */
  #step(now) {
    /** @type {string[]} */
    const failed = []
    const outputs = this.#n.drain()
    for (let i = 0; i < outputs.length; i++) {
      const out = outputs[i]
      if (out.type === 'send') {
        if (!this.#send(out.to, out.bytes)) failed.push(out.to)
      } else if (out.type === 'persist') {
        // Consecutive persists with no send between them: only the last one needs to reach the
        // disk (nothing can have observed the earlier pair), which saves an fsync per vote.
        if (supersededPersist(outputs, i)) continue
        if (!this.#persist(out.term, out.votedFor)) return
      } else {
        this.#event(now, out)
      }
    }
    if (this.#leadership !== null && !this.#n.isLeader) this.#endLeadership()
    for (const peer of failed) {
      try {
        this.#n.peerDown(now, peer, 'no_connection')
      } catch {
        // Not a member (any more).
      }
    }
    if (failed.length > 0) {
      this.#step(now)
      return
    }
    this.#arm(now)
  }

  /** @param {number} now */
  #arm(now) {
    if (this.#state !== 'running' && this.#state !== 'stopping') return
    const deadline = this.#n.pollTimeout()
    if (deadline === this.#deadline && this.#timer !== null) return
    if (this.#timer !== null) clearTimeout(this.#timer)
    this.#deadline = deadline
    if (deadline === null) {
      this.#timer = null
      return
    }
    const delay = typeof deadline === 'bigint' ? MAX_TIMER_MS : Math.min(MAX_TIMER_MS, Math.max(0, deadline - now))
    this.#timer = setTimeout(this.#onTimer, delay)
  }

  /**
   * @param {string} to
   * @param {Buffer} bytes
   * @returns {boolean} false when the peer has no usable address
   */
  #send(to, bytes) {
    let addr = this.#addresses.get(to)
    if (addr === undefined) {
      addr = parseAddress(to)
      this.#addresses.set(to, addr)
    }
    const socket = this.#socket
    if (addr === null || socket === null) return addr !== null
    socket.send(bytes, addr.port, addr.host, (err) => {
      if (err && (this.#state === 'running' || this.#state === 'stopping')) {
        try {
          this.#n.peerDown(this.now(), to, 'no_connection')
        } catch {
          // Not a member (any more).
        }
        this.#step(this.now())
      }
    })
    return true
  }

  /**
   * @param {number | bigint} term
   * @param {string | null} votedFor
   * @returns {boolean} false when the state could not be made durable (the elector stops)
   */
  #persist(term, votedFor) {
    if (this.#stateFile === undefined) return true
    try {
      writeDurably(this.#stateFile, native.encodeDurableState({ term, votedFor }))
      return true
    } catch (e) {
      // Nothing after this output may leave: stop at once, without a handover.
      const err = new StateFileError(
        `cannot write state file ${this.#stateFile}: ${/** @type {Error} */ (e).message}`,
        'state_file_write_failed',
        { cause: e }
      )
      this.#queueEvent('error', err)
      this.#stopping = this.#stopping ?? this.#doStop(false)
      return false
    }
  }

  /**
   * @param {number} now
   * @param {any} out
   */
  #event(now, out) {
    if (this.#hook !== undefined && out.event !== 'confirm_leader') {
      try {
        this.#hook(out)
      } catch (e) {
        this.#queueEvent('error', e)
      }
    }
    switch (out.event) {
      case 'became_leader': {
        this.#endLeadership()
        const ctl = new AbortController()
        this.#leadership = ctl
        this.#queueEvent('leader', { term: out.term, signal: ctl.signal })
        break
      }
      case 'became_follower':
        this.#endLeadership()
        if (out.leader !== null && out.leader !== this.#id && this.#onNewLeader) this.#onNewLeader(out.leader)
        this.#queueEvent('follower', { term: out.term, leader: out.leader })
        break
      case 'peer_joined':
        this.#queueEvent('peerJoined', { peer: out.peer })
        break
      case 'peer_left':
        this.#queueEvent('peerLeft', { peer: out.peer })
        break
      case 'message':
        this.#queueEvent('message', { from: out.from, payload: out.payload })
        break
      case 'confirm_leader':
        this.#askConfirm(out.term)
        break
    }
  }

  /** @param {number} term */
  #askConfirm(term) {
    const confirm = this.#confirm
    let answered = false
    const answer = (/** @type {boolean} */ granted) => {
      if (answered) return
      answered = true
      if (this.#state !== 'running') return
      const now = this.now()
      try {
        this.#n.confirmLeader(now, term, granted)
      } catch {
        // Too late: the core timed the confirmation out (a denial) or moved on.
        return
      }
      this.#step(now)
    }
    if (confirm === undefined) {
      answer(true)
      return
    }
    // Asynchronously, like every callback: the datagram path never waits for user code.
    // No answer within confirmTimeout is a denial.
    const timer = setTimeout(() => answer(false), this.#confirmTimeout)
    const settle = (/** @type {boolean} */ granted) => {
      clearTimeout(timer)
      answer(granted)
    }
    setImmediate(() => {
      if (answered) return
      let result
      try {
        result = confirm({ term })
      } catch (e) {
        settle(false)
        this.#queueEvent('error', e)
        return
      }
      Promise.resolve(result).then(
        (granted) => settle(granted === true),
        (e) => {
          settle(false)
          this.#queueEvent('error', e)
        }
      )
    })
  }

  #endLeadership() {
    const ctl = this.#leadership
    if (ctl === null) return
    this.#leadership = null
    ctl.abort(new NodeError('leadership ended', 'not_leader'))
  }

  /**
   * @param {string} name
   * @param {any} value
   */
  #queueEvent(name, value) {
    this.#queue.push([name, value])
    if (!this.#flushScheduled) {
      this.#flushScheduled = true
      setImmediate(this.#flush)
    }
  }

  #emitQueued() {
    this.#flushScheduled = false
    const queue = this.#queue
    this.#queue = []
    for (const [name, value] of queue) {
      if (name === 'error') {
        // Without an 'error' listener the runtime keeps running and reports it as a warning.
        if (this.listenerCount('error') > 0) this.emit('error', value)
        else process.emitWarning(value instanceof Error ? value : new Error(String(value)))
        continue
      }
      try {
        this.emit(name, value)
      } catch (e) {
        this.#listenerFailed(name, value, e)
      }
    }
  }

  /**
   * A listener threw (or an async listener rejected): report it, and roll leadership back when
   * it was the `'leader'` listener.
   * @param {string} name
   * @param {any} value
   * @param {unknown} err
   */
  #listenerFailed(name, value, err) {
    if (name === 'leader' && this.#state === 'running') {
      const now = this.now()
      try {
        this.#n.leaderHandlerFailed(now, value.term)
        this.#step(now)
      } catch {
        // Leadership already ended.
      }
    }
    if (this.listenerCount('error') > 0) this.emit('error', err)
    else process.emitWarning(/** @type {Error} */ (err))
  }

  /**
   * EventEmitter `captureRejections` hook: an async listener's rejection.
   * @param {unknown} err
   * @param {string} name
   * @param {any[]} args
   */
  [Symbol.for('nodejs.rejection')](err, name, ...args) {
    this.#listenerFailed(name, args[0], err)
  }

  /**
   * Sends an application payload to every member of the view (peers receive a `'message'`).
   * @param {Uint8Array | string} payload
   */
  broadcast(payload) {
    const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload
    this.#input((now) => this.#n.broadcast(now, bytes))
  }

  /** Declares a peer (`HOST:PORT`). @param {string} peer */
  join(peer) {
    this.#input((now) => this.#n.join(now, peer))
  }

  /** Withdraws a peer from the view. @param {string} peer */
  leave(peer) {
    this.#input((now) => this.#n.leave(now, peer))
  }

  /** Hands leadership to `peer` now. @param {string} peer */
  transferLeadership(peer) {
    this.#input((now) => this.#n.transferLeadership(now, peer))
  }

  /** @param {(now: number) => void} f */
  #input(f) {
    const now = this.now()
    try {
      f(now)
    } catch (e) {
      throw wrapError(e)
    }
    if (this.#state === 'running' || this.#state === 'stopping') this.#step(now)
  }

  /** The whole election state (the SPEC's keys; times on this elector's clock, see `now()`). */
  inspect() {
    return JSON.parse(this.#n.inspectJson())
  }

  /** This node's id (`HOST:PORT`). */
  get id() {
    return this.#id
  }
  /** Whether this node leads now. */
  get isLeader() {
    return this.#n.isLeader
  }
  /** The current term. @returns {number} */
  get term() {
    return this.#n.term
  }
  /** The leader known in the current term, or `null`. @returns {string | null} */
  get leader() {
    return this.#n.leader
  }
  /** `'unclustered' | 'follower' | 'candidate' | 'leader'`. */
  get role() {
    return this.#n.role
  }
  /** The fencing token (the term) while leading, else `null`. @returns {number | null} */
  get fencingToken() {
    return this.#n.fencingToken
  }
  /** While leading, the lease deadline on this elector's clock (`now()`), else `null`. */
  get leaseDeadline() {
    return this.#n.leaseDeadline
  }
  /** The signal of the current leadership, or `null` when not leading. @returns {AbortSignal | null} */
  get leaderSignal() {
    return this.#leadership?.signal ?? null
  }
  /** Configuration warnings (`{ code, message }`). */
  get warnings() {
    return this.#n.warnings
  }
  /** The effective timing configuration. */
  get config() {
    return this.#n.effectiveConfig
  }
}

module.exports = { Elector, parseAddress, kNative }
