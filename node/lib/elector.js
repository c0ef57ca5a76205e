'use strict'

const { EventEmitter } = require('node:events')

const native = require('./native')
const { wrapError, TenureError, StoppedError, LeadershipLost } = require('./errors')
const { camelKeys } = require('./casing')
const { DEFAULTS, CONFIG_OPTIONS, RUNTIME_OPTIONS } = require('./tables')

/** Options the native runtime reads: the node's configuration and the runtime's own (both lists generated from the runtime's). */
const NODE_KEYS = CONFIG_OPTIONS
const RUNTIME_KEYS = RUNTIME_OPTIONS
const OPTION_KEYS = new Set(['id', 'peers', 'cluster', 'confirmLeader', 'signal', ...NODE_KEYS, ...RUNTIME_KEYS])

/**
 * @param {string} what
 * @param {string} message
 */
function typeError(what, message) {
  return Object.assign(new TypeError(`${what} ${message}`), { code: 'ERR_INVALID_ARG_TYPE' })
}

/**
 * Whether `err` is only the consequence of `signal` aborting (work cancelled because its
 * leadership ended): not a failure.
 * @param {unknown} err
 * @param {AbortSignal | undefined} signal
 */
function causedByAbort(err, signal) {
  if (!signal?.aborted) return false
  return err === signal.reason || (err instanceof Error && (err.name === 'AbortError' || err.cause === signal.reason))
}

/**
 * A leadership as seen by leader-only work: the fencing token, the signal aborted when it ends,
 * and the lease (whether this node is still certain to lead). The same words as the Python
 * package's `Lease`: `valid`, `remainingMs`, `deadline`, `check()`, `waitValid()`.
 */
class Lease {
  #elector
  #pollMs
  /**
   * @param {Elector} elector
   * @param {number} term
   * @param {AbortSignal} signal
   * @param {number} pollMs how often `waitValid()` asks the runtime again
   */
  constructor(elector, term, signal, pollMs) {
    this.#elector = elector
    this.#pollMs = pollMs
    /** The term led: the fencing token. */
    this.term = term
    /** Aborted the moment this leadership ends. */
    this.signal = signal
  }
  /** Whether this term is still led (by this node). */
  #held() {
    return !this.signal.aborted && this.#elector.isLeader && this.#elector.term === this.term
  }
  /** Milliseconds the lease still holds (0 once expired); `null` once leadership ended. */
  get remainingMs() {
    return this.#held() ? this.#elector.leaseRemainingMs : null
  }
  /**
   * The last instant, on the runtime's clock ({@link Elector#nowMs}), at which this node can be
   * sure no other leader has been elected; `null` once leadership ended.
   */
  get deadline() {
    return this.#held() ? this.#elector.leaseDeadline : null
  }
  /**
   * Whether this leadership still holds and its lease has not lapsed, read from the runtime now
   * (not from the event loop, which a paused process runs late): check before each irreversible
   * step.
   */
  get valid() {
    return !this.signal.aborted && this.#elector.leaseValid(this.term)
  }
  /** Throws a `LeadershipLost` (its `cause`: the signal's reason once leadership ended) unless {@link valid}. */
  check() {
    if (this.valid) return
    const cause = this.signal.aborted ? this.signal.reason : undefined
    throw new LeadershipLost(`leadership of term ${this.term} is not valid (remainingMs: ${this.remainingMs})`, 'leadership_lost', { cause })
  }
  /**
   * Resolves once the lease is valid (a quorum acknowledged a heartbeat of this term); rejects
   * with a `LeadershipLost` if leadership ends first.
   * @returns {Promise<void>}
   */
  async waitValid() {
    while (!this.valid) {
      if (this.signal.aborted) {
        throw new LeadershipLost(`leadership of term ${this.term} was lost`, 'leadership_lost', { cause: this.signal.reason })
      }
      await new Promise((resolve) => setTimeout(resolve, this.#pollMs))
    }
  }
}

/**
 * Runs one tenure node over UDP on the native runtime (`tenure-runtime`: socket, timers, DNS,
 * state file, graceful stop) and tells you — as events — when this process leads.
 *
 * Events: `'leader'` `{ term, signal }`, `'follower'` `{ term, leader }`, `'peerJoined'`,
 * `'peerLeft'`, `'message'` `{ sender, payload }`, `'warning'` `{ code, message }`, `'error'`
 * (a listener failed, or a fatal runtime error) and `'close'` (after the runtime stopped).
 */
class Elector extends EventEmitter {
  /** @type {any} */ #config
  /** @type {any} */ #rt = null
  /** @type {string} */ #id
  /** @type {'new' | 'starting' | 'running' | 'stopping' | 'closed'} */ #state = 'new'
  /** @type {{ term: number, controller: AbortController } | null} */ #leadership = null
  /** @type {((info: { term: number }) => boolean | Promise<boolean>) | undefined} */ #confirm
  /** @type {AbortSignal | undefined} */ #signal
  #onAbort = () => void this.stop()
  #term = 0
  /** @type {{ promise: Promise<void>, resolve: () => void, reject: (e: unknown) => void } | null} */ #starting = null
  /** @type {Promise<void> | null} */ #closed = null
  /** @type {() => void} */ #resolveClosed = () => {}
  /** @type {Error | null} */ #fatal = null
  /** @type {Set<(lease: Lease) => unknown>} */ #workers = new Set()
  #throwAtClose = false
  /** Leader work running now (see `#workBegan`). */
  #runningWork = 0
  /** How often a waiting lease asks the runtime again: half a heartbeat interval. */
  #pollMs = DEFAULTS.heartbeat_interval / 2

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
    const { id, peers, cluster, confirmLeader, signal } = options
    if (typeof id !== 'string') throw typeError('options.id', `must be a "HOST:PORT" string, got ${typeof id}`)
    if (!Array.isArray(peers)) throw typeError('options.peers', 'must be an array of "HOST:PORT" strings')
    if (confirmLeader != null && typeof confirmLeader !== 'function') {
      throw typeError('options.confirmLeader', `must be a function, got ${typeof confirmLeader}`)
    }
    if (signal != null && !(signal instanceof AbortSignal)) throw typeError('options.signal', 'must be an AbortSignal')
    /** @type {Record<string, any>} */
    const node = { id, cluster, bootstrap: peers }
    /** @type {Record<string, any>} */
    const runtime = { deferConfirm: confirmLeader != null }
    const o = /** @type {Record<string, any>} */ (options)
    for (const k of NODE_KEYS) if (o[k] !== undefined) node[k] = o[k]
    for (const k of RUNTIME_KEYS) if (o[k] != null) runtime[k] = o[k]
    try {
      this.#config = new native.NativeRuntimeConfig(node, runtime)
    } catch (e) {
      throw wrapError(e)
    }
    this.#id = id
    if (typeof o.heartbeatInterval === 'number') this.#pollMs = Math.max(1, o.heartbeatInterval / 2)
    this.#confirm = confirmLeader ?? undefined
    this.#signal = signal ?? undefined
    if (this.#signal?.aborted) this.#state = 'closed'
  }

  /**
   * Binds the socket (and locks the state file) and starts the election; resolves once the node
   * runs. A bind or state-file failure rejects with a typed error (`BindError` with code
   * `address_in_use` for EADDRINUSE, `StateFileError`, ...).
   * @returns {Promise<void>}
   */
  start() {
    if (this.#state !== 'new') {
      return Promise.reject(new TenureError(`start() called on an elector that is ${this.#state}`, 'already_started'))
    }
    /** @type {any} */
    const starting = {}
    starting.promise = new Promise((resolve, reject) => Object.assign(starting, { resolve, reject }))
    this.#starting = starting
    this.#closed = new Promise((resolve) => (this.#resolveClosed = resolve))
    try {
      this.#rt = this.#config.spawn((/** @type {any} */ e) => this.#onEvent(e))
    } catch (e) {
      starting.reject(wrapError(e))
      this.#close()
      return starting.promise
    }
    this.#state = 'starting'
    this.#signal?.addEventListener('abort', this.#onAbort, { once: true })
    return starting.promise
  }

  /**
   * Stops gracefully: a leader hands leadership to the peer heard from most recently and waits
   * for the new leader (at most `handoverTimeout`, default `electionTimeoutMax`); a follower stops
   * at once. Resolves after `'close'`. `{ transfer: false }`: no wait for a new leader.
   * @param {{ transfer?: boolean }} [options]
   * @returns {Promise<void>}
   */
  stop(options) {
    if (this.#state === 'new') {
      this.#close()
      return Promise.resolve()
    }
    if (this.#state === 'closed') return this.#closed ?? Promise.resolve()
    if (this.#state !== 'stopping') {
      this.#state = 'stopping'
      try {
        this.#rt.requestStop(options?.transfer === false ? 0 : null)
      } catch {
        // Already stopped: the 'stopped' event is on its way.
      }
    }
    return /** @type {Promise<void>} */ (this.#closed)
  }

  /** `await using elector = new Elector(...)`: stops it at the end of the scope. */
  [Symbol.asyncDispose]() {
    return this.stop()
  }

  /**
   * Runs `fn(lease)` at the start of every leadership of this elector, until it closes (or
   * `options.signal` aborts). A rejection that is not caused by `lease.signal` aborting is a
   * failure of leader work, handled by the runtime's failure policy (`failurePolicy`): `fn` runs
   * again in the same leadership after a backoff, and after `maxFailures` failures the node hands
   * leadership over. Resolves when the elector closes.
   * @param {(lease: Lease) => unknown} fn
   * @param {{ signal?: AbortSignal }} [options]
   * @returns {Promise<void>}
   */
  whileLeader(fn, options) {
    if (typeof fn !== 'function') return Promise.reject(typeError('fn', `must be a function, got ${typeof fn}`))
    if (this.#state === 'closed') return Promise.reject(new StoppedError('the elector is closed', 'stopped'))
    this.#workers.add(fn)
    const l = this.#leadership
    if (l !== null && !l.controller.signal.aborted) this.#runWorker(fn, l)
    const unregister = () => this.#workers.delete(fn)
    options?.signal?.addEventListener('abort', unregister, { once: true })
    return new Promise((resolve) => {
      const done = () => {
        unregister()
        resolve()
      }
      this.once('close', done)
      options?.signal?.addEventListener('abort', () => {
        this.off('close', done)
        resolve()
      }, { once: true })
    })
  }

  /** @param {any} e one runtime event, on the JS thread, in order */
  #onEvent(e) {
    if (e.term !== undefined) this.#term = e.term
    switch (e.type) {
      case 'started':
        if (this.#state === 'starting') this.#state = 'running'
        this.#starting?.resolve()
        break
      case 'leader': {
        this.#endLeadership()
        const l = { term: e.term, controller: new AbortController() }
        this.#leadership = l
        this.#emitLeader(l)
        for (const fn of this.#workers) this.#runWorker(fn, l)
        break
      }
      case 'follower':
        this.#endLeadership()
        this.#emit('follower', { term: e.term, leader: e.leader ?? null, value: e.value ?? null })
        break
      case 'peer_joined':
        this.#emit('peerJoined', { peer: e.peer })
        break
      case 'peer_left':
        this.#emit('peerLeft', { peer: e.peer })
        break
      case 'message':
        this.#emit('message', { sender: e.sender, payload: e.payload })
        break
      case 'warning':
        this.#emit('warning', { code: e.code, message: e.message })
        break
      case 'confirm_leader':
        this.#askConfirm(e.term)
        break
      case 'fatal': {
        const err = wrapError(Object.assign(new Error(e.message), { code: e.code, kind: e.kindOfError }))
        this.#fatal = /** @type {Error} */ (err)
        if (this.#state === 'starting') this.#starting?.reject(err)
        else if (this.listenerCount('error') > 0) this.emit('error', err)
        // Else thrown once the runtime has stopped (a leader hands over first), as an
        // EventEmitter does with an 'error' nobody listens to: the process exits non-zero, so a
        // supervisor restarts it.
        else this.#throwAtClose = true
        break
      }
      case 'stopped':
        this.#close()
        break
    }
  }

  #close() {
    this.#endLeadership()
    const wasClosed = this.#state === 'closed' && this.#rt === null
    this.#state = 'closed'
    this.#rt = null
    this.#signal?.removeEventListener('abort', this.#onAbort)
    this.#starting?.reject(this.#fatal ?? new StoppedError('the elector stopped before it started', 'stopped'))
    this.#resolveClosed()
    if (!wasClosed) this.emit('close')
    if (this.#throwAtClose && this.#fatal !== null) {
      this.#throwAtClose = false
      const err = this.#fatal
      process.nextTick(() => {
        throw err
      })
    }
  }

  /**
   * Emits, routing a synchronous throw to the listener-failure path (async rejections arrive
   * through `captureRejections`).
   * @param {string} name
   * @param {any} value
   */
  #emit(name, value) {
    try {
      this.emit(name, value)
    } catch (err) {
      this.#listenerFailed(name, value, err)
    }
  }

  /**
   * @param {string} name
   * @param {any} value
   * @param {unknown} err
   */
  #listenerFailed(name, value, err) {
    this.#reportError(err)
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
   * Emits `'leader'`, calling each listener as leader work: one that throws or rejects (not
   * because the leadership ended) is reported to the runtime's failure policy, which decides, as
   * for a `whileLeader` function: that listener runs again in the same leadership after the
   * policy's delay, or leadership is handed over.
   * @param {{ term: number, controller: AbortController }} l
   */
  #emitLeader(l) {
    const info = { term: l.term, signal: l.controller.signal }
    for (const raw of this.rawListeners('leader')) {
      const fn = /** @type {any} */ (raw).listener ?? raw // a `once` listener runs once, then as itself
      if (fn !== raw) this.off('leader', /** @type {any} */ (fn))
      this.#runLeaderListener(/** @type {(info: any) => unknown} */ (fn), info, l)
    }
  }

  /**
   * @param {(info: { term: number, signal: AbortSignal }) => unknown} fn
   * @param {{ term: number, signal: AbortSignal }} info
   * @param {{ term: number, controller: AbortController }} l
   */
  #runLeaderListener(fn, info, l) {
    const failed = (/** @type {unknown} */ err) => {
      if (causedByAbort(err, info.signal)) return // it stopped because leadership ended
      this.#reportError(err)
      const delay = this.#leaderWorkFailed(l.term)
      if (delay === null) return
      setTimeout(() => {
        if (this.#leadership === l && !info.signal.aborted) this.#runLeaderListener(fn, info, l)
      }, delay)
    }
    try {
      const r = /** @type {any} */ (fn.call(this, info))
      if (r !== null && typeof r === 'object' && typeof r.then === 'function') {
        this.#workBegan()
        r.then(undefined, failed).finally(() => this.#workEnded())
      }
    } catch (err) {
      failed(err)
    }
  }

  /** @param {unknown} err */
  #reportError(err) {
    if (this.listenerCount('error') > 0) this.emit('error', err)
    else process.emitWarning(err instanceof Error ? err : new Error(String(err)))
  }

  /**
   * @param {(lease: Lease) => unknown} fn
   * @param {{ term: number, controller: AbortController }} l
   */
  #runWorker(fn, l) {
    const lease = new Lease(this, l.term, l.controller.signal, this.#pollMs)
    this.#workBegan()
    const run = async () => {
      while (!lease.signal.aborted) {
        try {
          await fn(lease)
          return
        } catch (err) {
          if (causedByAbort(err, lease.signal)) return
          this.#reportError(err)
          const delay = this.#leaderWorkFailed(l.term)
          if (delay === null) return
          await new Promise((resolve) => setTimeout(resolve, delay))
        }
      }
    }
    void run().finally(() => this.#workEnded())
  }

  /**
   * Leader work running now (`whileLeader` functions, `'leader'` listeners' promises), told to
   * the runtime as a flag: a transfer's TimeoutNow waits while it is set after a step-down, so
   * the next leader cannot start its work beside this node's.
   */
  #workBegan() {
    if (++this.#runningWork === 1) this.#setWorkRunning(true)
  }

  #workEnded() {
    if (--this.#runningWork === 0) this.#setWorkRunning(false)
  }

  /** @param {boolean} running */
  #setWorkRunning(running) {
    try {
      this.#rt?.setLeaderWorkRunning(running)
    } catch {
      // The runtime is gone: nothing is held any more.
    }
  }

  /**
   * A failure of leader work, reported to the runtime's failure policy (`failurePolicy`), which
   * decides: the delay in ms before running the work again in this leadership, or `null` (the
   * node hands leadership over and campaigns last for a while; only with `maxStepDowns` set does
   * it stop after that many failed leaderships in a row: a `fatal` event with a
   * `LeaderWorkError`, then `'close'`).
   * @param {number} term
   * @returns {number | null}
   */
  #leaderWorkFailed(term) {
    try {
      return this.#rt?.leaderWorkFailed(term) ?? null
    } catch {
      return null // leadership already ended
    }
  }

  /**
   * Whether this node leads `term` with a lease that holds now (the runtime's decision).
   * @param {number} term
   */
  leaseValid(term) {
    return this.#rt?.leaseValid(term) ?? false
  }

  /** @param {number} term */
  #askConfirm(term) {
    const answer = (/** @type {boolean} */ granted) => {
      try {
        this.#rt?.confirmLeader(term, granted)
      } catch {
        // Too late: the runtime timed the confirmation out (a denial) or moved on.
      }
    }
    const confirm = /** @type {(info: { term: number }) => boolean | Promise<boolean>} */ (this.#confirm)
    Promise.resolve()
      .then(() => confirm({ term }))
      .then(
        (granted) => answer(granted === true),
        (err) => {
          answer(false)
          this.#reportError(err)
        }
      )
  }

  #endLeadership() {
    const l = this.#leadership
    if (l === null) return
    this.#leadership = null
    l.controller.abort(wrapError(Object.assign(new Error('leadership ended'), { code: 'not_leader' })))
  }

  /** @param {() => void} f */
  #command(f) {
    if (this.#rt === null) throw new StoppedError(`the elector is ${this.#state}`, 'stopped')
    try {
      f()
    } catch (e) {
      throw wrapError(e)
    }
  }

  /** Sends a payload to every member of the view (they emit `'message'`). @param {Uint8Array | string} payload */
  broadcast(payload) {
    const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload
    this.#command(() => this.#rt.broadcast(bytes))
  }
  /**
   * Changes the value this node proclaims while it leads (empty: none); every member reports it as
   * `leaderValue` within a heartbeat interval. @param {string} value
   */
  proclaim(value) {
    this.#command(() => this.#rt.proclaim(value))
  }
  /** Declares a peer (`HOST:PORT`). @param {string} peer */
  join(peer) {
    this.#command(() => this.#rt.join(peer))
  }
  /** Withdraws a peer from the view. @param {string} peer */
  leave(peer) {
    this.#command(() => this.#rt.leave(peer))
  }
  /** Hands leadership to `peer` (default: the peer heard from most recently). @param {string} [peer] */
  transferLeadership(peer) {
    this.#command(() => this.#rt.transfer(peer ?? null))
  }
  /**
   * The whole election state (the SPEC's fields, camelCase keys; map keys inside, such as drop
   * reasons and peer ids, are values and stay as they are).
   */
  inspect() {
    /** @type {string} */
    let json = ''
    this.#command(() => (json = this.#rt.inspectJson()))
    return camelKeys(JSON.parse(json))
  }

  /**
   * The runtime's metrics snapshot (the numbers behind `tenure run --http`'s `/metrics`, see
   * docs/http.md): a cheap read, no round trip to the runtime thread. `dropped` and `peers` keep
   * their label values (`bad_mac`, `in_view`) as keys. `tenure/prometheus` exposes them to prom-client.
   * @returns {import('../index').Metrics}
   */
  metrics() {
    /** @type {string} */
    let json = ''
    this.#command(() => (json = this.#rt.metricsJson()))
    const m = JSON.parse(json)
    return {
      id: m.id,
      role: m.role,
      term: m.term,
      leader: m.leader,
      leaderValue: m.leader_value ?? null,
      isLeader: m.is_leader,
      leaseRemainingMs: m.lease_remaining_ms,
      running: m.running,
      stopping: m.stopping,
      loopAgeMs: m.loop_age_ms,
      leaderChanges: m.leader_changes,
      elections: m.elections,
      dropped: m.dropped,
      peers: m.peers,
      failover: { buckets: m.failover.buckets, sumSeconds: m.failover.sum_seconds, count: m.failover.count },
      peerLastHeardMs: m.peer_last_heard_ms,
      peerLastAckMs: m.peer_last_ack_ms,
      quorumSlack: m.quorum_slack,
      silentPeers: m.silent_peers,
      leaderWorkFailures: m.leader_work_failures,
      leaderWorkStepDowns: m.leader_work_step_downs,
      wireVersion: m.wire_version ?? null,
      version: m.version,
    }
  }

  /** `'new' | 'starting' | 'running' | 'stopping' | 'closed'`. */
  get state() {
    return this.#state
  }
  /** This node's id (`HOST:PORT`). */
  get id() {
    return this.#id
  }
  /** The local address the UDP socket is bound to (`null` unless running). @returns {string | null} */
  get boundAddr() {
    return this.#rt?.boundAddr ?? null
  }
  /** The HTTP sidecar's address (`HOST:PORT`) while running with the `http` option, else `null`. */
  get httpAddr() {
    return this.#rt?.httpAddr ?? null
  }
  /** `'unclustered' | 'follower' | 'candidate' | 'leader'` (`'follower'` unless running). */
  get role() {
    return this.#rt?.role ?? 'follower'
  }
  /** Whether this node leads now. */
  get isLeader() {
    return this.role === 'leader'
  }
  /** The current term. @returns {number} */
  get term() {
    return this.#rt?.term ?? this.#term
  }
  /** The leader known in the current term, or `null`. @returns {string | null} */
  get leader() {
    return this.#rt?.leader ?? null
  }
  /** The value the leader proclaims, as this node knows it, or `null`. @returns {string | null} */
  get leaderValue() {
    return this.#rt?.leaderValue ?? null
  }
  /** The fencing token (the term) while leading, else `null`. @returns {number | null} */
  get fencingToken() {
    return this.isLeader ? this.term : null
  }
  /** While leading: milliseconds the lease still holds (0 once expired), else `null`. @returns {number | null} */
  get leaseRemainingMs() {
    return this.#rt?.leaseRemaining ?? null
  }
  /** While leading with a confirmed lease: its deadline on {@link nowMs}'s clock, else `null`. @returns {number | null} */
  get leaseDeadline() {
    return this.#rt?.leaseDeadline ?? null
  }
  /** The runtime's clock (monotonic milliseconds), the clock of {@link Lease#deadline}. @returns {number} */
  nowMs() {
    if (this.#rt === null) throw new StoppedError(`the elector is ${this.#state}`, 'stopped')
    return this.#rt.nowMs()
  }
  /** The signal of the current leadership, or `null` when not leading. @returns {AbortSignal | null} */
  get leaderSignal() {
    return this.#leadership?.controller.signal ?? null
  }
}

module.exports = { Elector, Lease }
