'use strict'
/**
 * Errors thrown by tenure. Every one carries a stable `code`:
 *
 * - The classes shared with the Python package (`ConfigError`, `InvalidAddressError`,
 *   `InvalidIdError`, `InvalidPeerError`, `InvalidBindError`, `KeyFileError`, `NodeError` and one
 *   subclass per refusal, `BindError`, `AddressInUseError`, `StateFileError`, `StoppedError`,
 *   `LeaderWorkError`, `RandomSourceError`, `RuntimeFailure`, `LeadershipLost`): which code
 *   raises which class is the generated table `lib/tables.js` (`ERROR_CODES`), rendered from the
 *   Rust definitions; `tables.d.ts` lists each class's codes (`ConfigErrorCode`, ...).
 * - {@link DroppedError}: an inbound message that was dropped; `code` is the drop reason.
 * - {@link UsageError}: a bad command line (`usage`).
 * - {@link InternalError}: a bug inside the native core (`internal`); the process keeps running.
 *
 * Arguments of the wrong type throw the built-in `TypeError` (code `ERR_INVALID_ARG_TYPE`);
 * numbers out of range (negative, fractional, above `Number.MAX_SAFE_INTEGER`) throw `RangeError`
 * (code `ERR_OUT_OF_RANGE`).
 */

/** Base class of every tenure error. */
class TenureError extends Error {
  /**
   * @param {string} message
   * @param {string} code stable snake_case code
   * @param {ErrorOptions} [options]
   */
  constructor(message, code, options) {
    super(message, options)
    /** @type {string} */
    this.code = code
  }
}

const tables = require('./tables')

/**
 * The classes shared with the Python package, made from the generated table (name and base
 * class decided once, in runtime/src/vocabulary.rs): `ConfigError`, `InvalidAddressError`,
 * `InvalidIdError`, `KeyFileError`, `NodeError`, `NotLeaderError`, ..., `RuntimeFailure`.
 * @type {Record<string, typeof TenureError>}
 */
const CLASSES = { TenureError }
for (const [name, base] of tables.ERROR_CLASSES) {
  if (name in CLASSES) continue
  const Base = CLASSES[base]
  // A computed key names the class (`err.name`, stack traces) without eval.
  CLASSES[name] = { [name]: class extends Base {} }[name]
}

/** An inbound message that was dropped and counted; `code` is the drop reason. */
class DroppedError extends TenureError {
  /** The drop reason (same as `code`). */
  get reason() {
    return this.code
  }
}
/** The durable state file could not be read or written. */
const StateFileError = CLASSES.StateFileError
/**
 * `Lease#check()` or `Lease#waitValid()`: the leadership ended or its lease lapsed
 * (`leadership_lost`, as Python's `tenure.LeadershipLost`).
 */
const LeadershipLost = CLASSES.LeadershipLost
/** A bad `tenure run` command line. */
class UsageError extends TenureError {}
/** A bug inside the native core (a Rust panic, caught at the boundary). */
class InternalError extends TenureError {}
for (const C of [...Object.values(CLASSES), DroppedError, UsageError, InternalError]) {
  Object.defineProperty(C.prototype, 'name', { value: C.name, enumerable: false, configurable: true, writable: true })
}

const DROP_REASONS = new Set(tables.DROP_REASONS)

/**
 * The tenure error for a stable code (the class the generated table names), or null for a code
 * outside the table.
 * @param {string} message
 * @param {string} code
 * @param {ErrorOptions} [options]
 */
function fromCode(message, code, options) {
  const entry = /** @type {Record<string, readonly string[]>} */ (tables.ERROR_CODES)[code]
  if (entry !== undefined) return new CLASSES[entry[1]](message, code, options)
  if (DROP_REASONS.has(code)) return new DroppedError(message, code, options)
  if (code === 'usage') return new UsageError(message, code, options)
  return null
}

/**
 * Turns an error thrown by the addon into the matching tenure error class. `TypeError` and
 * `RangeError` are returned unchanged.
 * @param {unknown} err
 * @returns {unknown}
 */
function wrapError(err) {
  if (!(err instanceof Error) || err instanceof TenureError) return err
  if (err instanceof TypeError || err instanceof RangeError) return err
  const code = /** @type {any} */ (err).code
  if (typeof code !== 'string') return err
  // Anything outside the tables is napi's own failure or a caught Rust panic.
  return fromCode(err.message, code) ?? new InternalError(err.message, 'internal', { cause: err })
}

// Named one by one for the type checker; test/tables.test.js checks this list against the table.
module.exports = {
  TenureError,
  ConfigError: CLASSES.ConfigError,
  InvalidAddressError: CLASSES.InvalidAddressError,
  InvalidIdError: CLASSES.InvalidIdError,
  InvalidPeerError: CLASSES.InvalidPeerError,
  InvalidBindError: CLASSES.InvalidBindError,
  KeyFileError: CLASSES.KeyFileError,
  NodeError: CLASSES.NodeError,
  SelfPeerError: CLASSES.SelfPeerError,
  UnknownPeerError: CLASSES.UnknownPeerError,
  NotLeaderError: CLASSES.NotLeaderError,
  PayloadTooLargeError: CLASSES.PayloadTooLargeError,
  NoPendingConfirmError: CLASSES.NoPendingConfirmError,
  NotLeaderInTermError: CLASSES.NotLeaderInTermError,
  ViewFullError: CLASSES.ViewFullError,
  NoTransferTargetError: CLASSES.NoTransferTargetError,
  BindError: CLASSES.BindError,
  AddressInUseError: CLASSES.AddressInUseError,
  StoppedError: CLASSES.StoppedError,
  LeaderWorkError: CLASSES.LeaderWorkError,
  RandomSourceError: CLASSES.RandomSourceError,
  RuntimeFailure: CLASSES.RuntimeFailure,
  StateFileError,
  DroppedError,
  UsageError,
  InternalError,
  LeadershipLost,
  wrapError,
  fromCode,
  DROP_REASONS,
}
