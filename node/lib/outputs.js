'use strict'
// Reads the addon's flat output representation (bindings/node/src/flat.rs; the layout is in
// bindings/node/README.md) and builds the public `Output` objects from it with plain object
// literals: the addon writes every pending output into one reused buffer per `drainInto` call
// instead of building an object per output through Node-API, which costs a call per property.

const native = require('./native')

const SEND = 0
const PERSIST = 1
const BECAME_LEADER = 2
const BECAME_FOLLOWER = 3
const PEER_JOINED = 4
const PEER_LEFT = 5
const CONFIRM_LEADER = 6
const MESSAGE = 7
const DEFINE = 8
const RESET = 9
const NONE = 0xffffffff
/** Initial buffer size; it grows to the next power of two when the pending outputs need more. */
const INITIAL = 4096
/** `handleMessageInto`: accepted, but the outputs did not fit (they stay queued in the addon). */
const NOT_DRAINED = -1
/** `handleMessageInto`: dropped for `DROP_REASONS[DROPPED - n]`. */
const DROPPED = -2
/** The core's drop reasons, in the order `handleMessageInto` indexes them. */
const DROP_REASONS = native.dropReasons()
/** The hot path: a raw Node-API function of the addon (`bindings/node/src/hot.rs`). */
const handleMessageInto = native.handleMessageInto
/** The buffer handed to `handleMessageInto` when the outputs must stay queued in the addon. */
const EMPTY = Buffer.alloc(0)
/** Byte strings at least this long are copied with `TypedArray#set`, shorter ones by a loop. */
const SET_FROM = 64

/**
 * The outputs of one native node: a reused buffer of encoded records, the read position in it,
 * and the strings (peer ids) the addon has defined so far.
 */
class OutputReader {
  /** @type {any} */
  #native
  #buf = Buffer.allocUnsafeSlow(INITIAL)
  #pos = 0
  #end = 0
  /** @type {string[]} */
  #strings = []
  /**
   * Whether the addon may hold outputs not moved into the buffer yet. Every input but a message
   * handled through {@link OutputReader#handleMessage} sets it (`markPending`); while it is clear,
   * `drain` and `next` read the buffer without calling the addon.
   */
  #pending = true
  /** Peer ids interned in the addon (`internPeer`), by id. @type {Map<string, number>} */
  #peers = new Map()

  /** @param {any} native a `NativeNode` */
  constructor(native) {
    this.#native = native
  }

  /** Records that an input other than `handleMessage` may have queued outputs in the addon. */
  markPending() {
    this.#pending = true
  }

  /**
   * Feeds a datagram in one addon call (`handleMessageInto(node, ...)`): when every output so far has been
   * read, the addon writes the new ones straight into the buffer. Returns `null` when the message
   * was accepted, or the `DropReason` name when it was dropped.
   * @param {number | bigint} now @param {string} from @param {Uint8Array} bytes
   * @returns {string | null}
   */
  handleMessage(now, from, bytes) {
    let peer = this.#peers.get(from)
    if (peer === undefined) {
      const interned = /** @type {number} */ (this.#native.internPeer(from))
      // Index 0 again: the addon's table was full and started over; so does this one.
      if (interned === 0) this.#peers.clear()
      this.#peers.set(from, interned)
      peer = interned
    }
    // With unread records in the buffer, hand the addon an empty one: it queues the new outputs.
    const fused = this.#pos === this.#end && !this.#pending
    const n = handleMessageInto(this.#native, now, peer, bytes, fused ? this.#buf : EMPTY)
    if (n >= 0) {
      if (fused) {
        this.#pos = 0
        this.#end = n
      }
      return null
    }
    this.#pending = true
    return n === NOT_DRAINED ? null : DROP_REASONS[DROPPED - n]
  }

  /** The next output, or `null` when none is pending. @returns {any} */
  next() {
    if (this.#pos === this.#end && !this.#fill()) return null
    return this.#read()
  }

  /** Every pending output, in order. @returns {any[]} */
  drain() {
    const outs = []
    // Records read from the addon before (by `next`) come first, then everything still queued.
    while (this.#pos < this.#end) outs.push(this.#read())
    if (this.#fill()) {
      while (this.#pos < this.#end) outs.push(this.#read())
    }
    return outs
  }

  /** Moves every output queued in the addon into the buffer; false when there was none. */
  #fill() {
    if (!this.#pending) return false
    let n = this.#native.drainInto(this.#buf)
    if (n < 0) {
      // They did not fit: the addon kept them; retry with a buffer large enough.
      let size = this.#buf.length * 2
      while (size < -n) size *= 2
      this.#buf = Buffer.allocUnsafeSlow(size)
      n = this.#native.drainInto(this.#buf)
    }
    this.#pending = false
    this.#pos = 0
    this.#end = n
    return n > 0
  }

  /** Decodes the output record at the read position (after the string records before it). */
  #read() {
    const b = this.#buf
    let p = this.#pos
    for (;;) {
      const tag = b[p]
      if (tag === DEFINE) {
        const i = u32(b, p + 1)
        const len = u32(b, p + 5)
        this.#strings[i] = b.toString('utf8', p + 9, p + 9 + len)
        p += 9 + len
      } else if (tag === RESET) {
        this.#strings = []
        p += 1
      } else {
        break
      }
    }
    const strings = this.#strings
    /** @type {any} */
    let out
    switch (b[p]) {
      case SEND: {
        const len = u32(b, p + 5)
        out = { type: 'send', to: strings[u32(b, p + 1)], bytes: copy(b, p + 9, len) }
        p += 9 + len
        break
      }
      case PERSIST: {
        const v = u32(b, p + 9)
        out = { type: 'persist', term: u64(b, p + 1), votedFor: v === NONE ? null : strings[v] }
        p += 13
        break
      }
      case BECAME_LEADER:
        out = { type: 'event', event: 'became_leader', term: u64(b, p + 1) }
        p += 9
        break
      case BECAME_FOLLOWER: {
        const v = u32(b, p + 9)
        out = { type: 'event', event: 'became_follower', term: u64(b, p + 1), leader: v === NONE ? null : strings[v] }
        p += 13
        break
      }
      case PEER_JOINED:
        out = { type: 'event', event: 'peer_joined', peer: strings[u32(b, p + 1)] }
        p += 5
        break
      case PEER_LEFT:
        out = { type: 'event', event: 'peer_left', peer: strings[u32(b, p + 1)] }
        p += 5
        break
      case CONFIRM_LEADER:
        out = { type: 'event', event: 'confirm_leader', term: u64(b, p + 1) }
        p += 9
        break
      case MESSAGE: {
        const len = u32(b, p + 5)
        out = { type: 'event', event: 'message', sender: strings[u32(b, p + 1)], payload: copy(b, p + 9, len) }
        p += 9 + len
        break
      }
      default:
        throw new Error(`tenure: unknown output record ${b[p]} from the addon (addon and JS layer out of step)`)
    }
    this.#pos = p
    return out
  }
}

/** @param {Buffer} b @param {number} p */
function u32(b, p) {
  return (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0
}

/** A u64 as a `number` when it is a safe integer, else a `bigint` (as everywhere in the API). */
function u64(/** @type {Buffer} */ b, /** @type {number} */ p) {
  const lo = u32(b, p)
  const hi = u32(b, p + 4)
  return hi < 0x200000 ? hi * 0x100000000 + lo : (BigInt(hi) << 32n) | BigInt(lo)
}

// Module-level: a global lookup per output showed in profiles.
const allocUnsafe = Buffer.allocUnsafe

/** A fresh `Buffer` holding `len` bytes of `b` from `p` (pooled by Node for small sizes). */
function copy(/** @type {Buffer} */ b, /** @type {number} */ p, /** @type {number} */ len) {
  const out = allocUnsafe(len)
  if (len >= SET_FROM) {
    out.set(b.subarray(p, p + len))
  } else {
    for (let i = 0; i < len; i++) out[i] = b[p + i]
  }
  return out
}

module.exports = { OutputReader }
