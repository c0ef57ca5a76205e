'use strict'

const native = require('./native')
const { wrapError, DroppedError } = require('./errors')
const { camelKeys } = require('./casing')
const { OutputReader } = require('./outputs')

const OPTION_KEYS = new Set(['now', 'seed', 'restored'])

/**
 * The sans-IO election state machine. It never touches the network or the clock: feed it
 * datagrams (`handleMessage`) and the passing of time (`handleTimeout`), then carry out every
 * output of `drain()` in order — a `persist` output must be durable before any later `send`
 * leaves.
 *
 * Times are milliseconds of one monotonic clock of your choice, as whole `number`s.
 *
 * @example
 * const { Node } = require('tenure')
 * const node = new Node({ id: 'a', cluster: 'demo', bootstrap: ['b', 'c'] }, { now: 0 })
 * node.handleTimeout(node.pollTimeout())
 * for (const out of node.drain()) {
 *   if (out.type === 'send') transport.send(out.to, out.bytes)
 * }
 */
class Node {
  /** @type {any} */
  #n
  /** The outputs, read from the addon's flat representation. @type {OutputReader} */
  #out

  /**
   * @param {import('..').NodeConfig} config
   * @param {import('..').NodeOptions} [options] `now` (default 0), `seed` (default: from the
   *   OS), `restored` (the durable state last persisted, or null)
   */
  constructor(config, options) {
    if (options === undefined || options === null) options = {}
    if (typeof options !== 'object' || Array.isArray(options)) {
      throw Object.assign(new TypeError(`options must be an object, got ${typeof options}`), {
        code: 'ERR_INVALID_ARG_TYPE',
      })
    }
    for (const k of Object.keys(options)) {
      if (!OPTION_KEYS.has(k)) {
        throw Object.assign(new TypeError(`options has an unknown property ${JSON.stringify(k)}; expected some of: now, seed, restored`), {
          code: 'ERR_INVALID_ARG_TYPE',
        })
      }
    }
    const now = options.now === undefined ? 0 : options.now
    try {
      this.#n = new native.NativeNode(config, options.seed, options.restored, now)
    } catch (e) {
      throw wrapError(e)
    }
    this.#out = new OutputReader(this.#n)
  }

  /**
   * Feeds a datagram received from peer `from`. A message that is dropped (malformed, wrong
   * cluster, bad MAC, ...) is counted and throws a {@link DroppedError} whose `code` is the reason;
   * the node's state is otherwise unchanged.
   * @param {number} now
   * @param {string} from
   * @param {Uint8Array} bytes
   */
  handleMessage(now, from, bytes) {
    let reason
    try {
      reason = this.#out.handleMessage(now, from, bytes)
    } catch (e) {
      throw wrapError(e)
    }
    if (reason !== null) throw new DroppedError(`message from ${JSON.stringify(from)} dropped: ${reason}`, reason)
  }

  /**
   * Feeds the passing of time; call at (or after) {@link Node#pollTimeout}. Early or repeated
   * calls are harmless.
   * @param {number} now
   */
  handleTimeout(now) {
    this.#out.markPending()
    try {
      this.#n.handleTimeout(now)
    } catch (e) {
      throw wrapError(e)
    }
  }

  /**
   * Declares a peer (idempotent).
   * @param {number} now
   * @param {string} peer
   */
  join(now, peer) {
    this.#out.markPending()
    try {
      this.#n.join(now, peer)
    } catch (e) {
      throw wrapError(e)
    }
  }

  /**
   * Withdraws a peer from the view and from every quorum computed afterwards.
   * @param {number} now
   * @param {string} peer
   */
  leave(now, peer) {
    this.#out.markPending()
    try {
      this.#n.leave(now, peer)
    } catch (e) {
      throw wrapError(e)
    }
  }

  /**
   * Reports a peer down: `'terminated'` removes it at once; `'no_connection'` keeps it in the
   * view for `ghostTtl` unless it is heard from again; `'refused'` (its port refused a datagram:
   * the process is gone) keeps it a member, and a node following it stops waiting for it.
   * @param {number} now
   * @param {string} peer
   * @param {'terminated' | 'no_connection' | 'refused'} reason
   */
  peerDown(now, peer, reason) {
    this.#out.markPending()
    try {
      this.#n.peerDown(now, peer, reason)
    } catch (e) {
      throw wrapError(e)
    }
  }

  /**
   * Answers a `confirm_leader` event: `true` publishes leadership, `false` withholds it.
   * @param {number} now
   * @param {number} term
   * @param {boolean} granted
   */
  confirmLeader(now, term, granted) {
    this.#out.markPending()
    try {
      this.#n.confirmLeader(now, term, granted)
    } catch (e) {
      throw wrapError(e)
    }
  }

  /**
   * Reports that your became-leader handler failed: leadership is rolled back.
   * @param {number} now
   * @param {number} term
   */
  leaderHandlerFailed(now, term) {
    this.#out.markPending()
    try {
      this.#n.leaderHandlerFailed(now, term)
    } catch (e) {
      throw wrapError(e)
    }
  }

  /**
   * Hands leadership to `peer` (which campaigns at once); this node stops leading now.
   * @param {number} now
   * @param {string} peer
   */
  transferLeadership(now, peer) {
    this.#out.markPending()
    try {
      this.#n.transferLeadership(now, peer)
    } catch (e) {
      throw wrapError(e)
    }
  }

  /**
   * The peer a graceful stop should hand leadership to: of the peers that have answered and are
   * not reported unreachable, the one heard from most recently (ties: the smaller id); `null`
   * when no peer qualifies. Every runtime asks the core, so they all pick the same peer.
   * @returns {string | null}
   */
  transferTarget() {
    return this.#n.transferTarget()
  }

  /**
   * Sends an application payload to every member of the view.
   * @param {number} now
   * @param {Uint8Array} payload
   */
  broadcast(now, payload) {
    this.#out.markPending()
    try {
      this.#n.broadcast(now, payload)
    } catch (e) {
      throw wrapError(e)
    }
  }

  /**
   * Changes the value this node proclaims while it leads (empty: none).
   * @param {number} now
   * @param {string} value
   */
  proclaim(now, value) {
    this.#out.markPending()
    try {
      this.#n.proclaim(now, value)
    } catch (e) {
      throw wrapError(e)
    }
  }

  /**
   * Every pending output, in order. Call after every input.
   * @returns {import('..').Output[]}
   */
  drain() {
    try {
      return this.#out.drain()
    } catch (e) {
      throw wrapError(e)
    }
  }

  /**
   * The next pending output, or `null` when drained.
   * @returns {import('..').Output | null}
   */
  pollOutput() {
    try {
      return this.#out.next()
    } catch (e) {
      throw wrapError(e)
    }
  }

  /**
   * The next instant at which {@link Node#handleTimeout} should be called, or `null`.
   * @returns {number | null}
   */
  pollTimeout() {
    return this.#n.pollTimeout()
  }

  /**
   * The whole election state (the fields listed in the SPEC, camelCase as `Elector#inspect()`;
   * map keys inside, such as drop reasons, are codes and stay snake_case).
   * @returns {import('..').InspectCamel}
   */
  inspect() {
    try {
      return /** @type {import('..').InspectCamel} */ (camelKeys(JSON.parse(this.#n.inspectJson())))
    } catch (e) {
      throw wrapError(e)
    }
  }

  /** This node's id. @returns {string} */
  get id() {
    return this.#n.id
  }
  /** The cluster id. @returns {string} */
  get cluster() {
    return this.#n.cluster
  }
  /** `'unclustered' | 'follower' | 'candidate' | 'leader'`. @returns {import('..').Role} */
  get role() {
    return this.#n.role
  }
  /** The current term. @returns {number} */
  get term() {
    return this.#n.term
  }
  /** Whom this node voted for in the current term. @returns {string | null} */
  get votedFor() {
    return this.#n.votedFor
  }
  /** The leader known in the current term (this node's id when leading). @returns {string | null} */
  get leader() {
    return this.#n.leader
  }
  /** The value the leader proclaims, as this node knows it, or `null`. @returns {string | null} */
  get leaderValue() {
    return this.#n.leaderValue ?? null
  }
  /** Whether this node is the confirmed leader. @returns {boolean} */
  get isLeader() {
    return this.#n.isLeader
  }
  /** This node and every peer it counts, sorted. @returns {string[]} */
  get view() {
    return this.#n.view
  }
  /** Votes needed to win (a majority of the view). @returns {number} */
  get quorum() {
    return this.#n.quorum
  }
  /** The term while leading (the fencing token), else `null`. @returns {number | null} */
  get fencingToken() {
    return this.#n.fencingToken
  }
  /**
   * While leading: the last instant (your clock) at which this node can be sure no other leader
   * was elected; `null` otherwise or before a quorum acknowledged a heartbeat.
   * @returns {number | null}
   */
  get leaseDeadline() {
    return this.#n.leaseDeadline
  }
  /** The effective timing after derivation of a missing bound. @returns {import('..').EffectiveConfig} */
  get config() {
    return this.#n.effectiveConfig
  }
  /** Configuration warnings (`{ code, message }`). @returns {import('..').ConfigWarning[]} */
  get warnings() {
    return this.#n.warnings
  }

  /** @returns {string} */
  get [Symbol.toStringTag]() {
    return 'tenure.Node'
  }
}

/**
 * The resource side of fencing: remembers the highest `(term, leader)` seen and refuses stale
 * writers. Store `highest` next to the resource, in the same transaction as the write it guards.
 *
 * @example
 * const fence = new FenceChecker()
 * fence.check(4, 'a') // 'accepted'
 * fence.check(3, 'b') // 'stale'
 * fence.check(4, 'b') // 'already_fenced'
 */
class FenceChecker {
  /** @type {any} */
  #f
  /** @param {{ term: number, leader: string } | null} [highest] a stored highest pair */
  constructor(highest) {
    try {
      this.#f = new native.NativeFenceChecker(highest)
    } catch (e) {
      throw wrapError(e)
    }
  }
  /**
   * Checks a writer's `(term, leader)`; records it when accepted.
   * @param {number} term
   * @param {string} leader
   * @returns {import('..').FenceVerdict}
   */
  check(term, leader) {
    try {
      return this.#f.check(term, leader)
    } catch (e) {
      throw wrapError(e)
    }
  }
  /** The highest pair accepted so far. @returns {{ term: number, leader: string } | null} */
  get highest() {
    return this.#f.highest
  }
}

/** @param {() => any} f */
function call(f) {
  try {
    return f()
  } catch (e) {
    throw wrapError(e)
  }
}

/**
 * The wire format (for tests and tools): decode and encode single datagrams.
 */
const wire = {
  /**
   * Decodes (and, with `key`, authenticates as received by `receiver`, the node's own id) a
   * datagram; throws {@link DroppedError} with the reason when a node would drop it.
   * @param {Uint8Array} bytes
   * @param {Uint8Array | string | null} [key]
   * @param {string | null} [receiver] required with a key: the tag covers the receiver's id
   * @returns {import('..').Envelope}
   */
  decode(bytes, key, receiver) {
    return call(() => native.wireDecode(bytes, key, receiver))
  },
  /**
   * Encodes an envelope (with an HMAC tag for `receiver` when `key` is given).
   * @param {import('..').Envelope} envelope
   * @param {Uint8Array | string | null} [key]
   * @param {string | null} [receiver] required with a key: the id of the node it is sent to
   * @returns {Buffer}
   */
  encode(envelope, key, receiver) {
    return call(() => native.wireEncode(envelope, key, receiver))
  },
}

/**
 * The durable-state file format of the runtime: `{"term":4,"voted_for":"ID"}` (`null`: no vote)
 * and a newline; `decode` also reads the old one-line `"<term> <votedFor or ->"` format.
 */
const durableState = {
  /**
   * @param {import('..').DurableState} state
   * @returns {string}
   */
  encode(state) {
    return call(() => native.encodeDurableState(state))
  },
  /**
   * @param {string} text
   * @returns {import('..').DurableState | null} `null` when the text is not in the format
   */
  decode(text) {
    return call(() => native.decodeDurableState(text))
  },
}

/** A seed from the operating system's random source. @returns {number | bigint} */
function osSeed() {
  return native.osSeed()
}

module.exports = { Node, FenceChecker, wire, durableState, osSeed, call }
