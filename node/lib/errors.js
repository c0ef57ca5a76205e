'use strict'
/**
 * Errors thrown by tenure. Every one carries a stable `code`:
 *
 * - {@link ConfigError}: an invalid configuration (`empty_id`, `id_too_long`, `zero_timeout`,
 *   `min_above_max`, `heartbeat_not_below_election_timeout`, `zero_min_cluster_size`, `empty_key`).
 * - {@link NodeError}: a call the node refused (`invalid_peer`, `self_peer`, `unknown_peer`,
 *   `not_leader`, `payload_too_large`, `no_pending_confirm`, `not_leader_in_term`).
 * - {@link DroppedError}: an inbound message that was dropped; `code` is the drop reason
 *   (`oversized`, `malformed`, `unknown_version`, `wrong_cluster`, `bad_mac`, `sender_mismatch`,
 *   `from_self`, `removed_peer`, `unknown_peer`, `view_full`, `implausible_term`, `replay`).
 * - {@link StateFileError}: a state file that exists but cannot be read (`state_file_corrupt`,
 *   `state_file_unreadable`) or written (`state_file_write_failed`).
 * - {@link UsageError}: a bad command line (`usage`).
 * - {@link InternalError}: a bug inside the native core (`internal`); the process keeps running.
 * - From the runtime (`Elector`): {@link ConfigError} also for `invalid_id`, `invalid_peer`,
 *   `invalid_bind`, `invalid_option`, `key_file`; {@link BindError} (`address_in_use`,
 *   `bind_failed`); {@link StateFileError} (`state_dir_missing`, `state_unwritable`,
 *   `state_not_utf8`, `state_corrupt`, `state_locked`, `state_read_failed`); {@link NodeError}
 *   (`no_transfer_target`, the core's refusals); {@link StoppedError} (`stopped`);
 *   {@link LeaderWorkError} (`leader_work_failed`).
 *
 * Arguments of the wrong type throw the built-in `TypeError` (code `ERR_INVALID_ARG_TYPE`);
 * numbers out of range (negative, fractional, above `Number.MAX_SAFE_INTEGER`) throw `RangeError`
 * (code `ERR_OUT_OF_RANGE`).
 */

const native = require('./native')

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

/** An invalid node configuration. */
class ConfigError extends TenureError {}
/** A call the node refused (its state is unchanged). */
class NodeError extends TenureError {}
/** An inbound message that was dropped and counted; `code` is the drop reason. */
class DroppedError extends TenureError {
  /** The drop reason (same as `code`). */
  get reason() {
    return this.code
  }
}
/** The durable state file could not be read or written. */
class StateFileError extends TenureError {}
/** A bad `tenure run` command line. */
class UsageError extends TenureError {}
/** A bug inside the native core (a Rust panic, caught at the boundary). */
class InternalError extends TenureError {}
/** The UDP socket could not be bound (`address_in_use`: EADDRINUSE, `bind_failed`). */
class BindError extends TenureError {}
/** A call on an elector that is not running (`stopped`). */
class StoppedError extends TenureError {}
/** Leader work failed in `failurePolicy.maxStepDowns` leaderships in a row (`leader_work_failed`). */
class LeaderWorkError extends TenureError {}

for (const C of [TenureError, ConfigError, NodeError, DroppedError, StateFileError, UsageError, InternalError, BindError, StoppedError, LeaderWorkError]) {
  Object.defineProperty(C.prototype, 'name', { value: C.name, enumerable: false, configurable: true, writable: true })
}

const CONFIG_CODES = new Set([
  'empty_id',
  'id_too_long',
  'zero_timeout',
  'min_above_max',
  'heartbeat_not_below_election_timeout',
  'zero_min_cluster_size',
  'empty_key',
  'id_has_whitespace',
  'timeout_spread_too_small',
  'clock_drift_too_large',
  'too_many_peers',
  'lease_out_of_range',
])
const NODE_CODES = new Set([
  'invalid_peer',
  'self_peer',
  'unknown_peer',
  'not_leader',
  'payload_too_large',
  'no_pending_confirm',
  'not_leader_in_term',
  'view_full',
  'no_randomness',
])
const DROP_REASONS = new Set(native.dropReasons())
/** @type {Record<string, typeof TenureError>} */
const RUNTIME_KINDS = {
  address: ConfigError,
  config: ConfigError,
  key_file: ConfigError,
  bind: BindError,
  state_file: StateFileError,
  node: NodeError,
  stopped: StoppedError,
  engine: InternalError,
  misuse: InternalError,
  leader_work: LeaderWorkError,
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
  const kind = /** @type {any} */ (err).kind
  // Errors of the runtime carry their family (`RuntimeError::kind`) as `kind`.
  if (typeof kind === 'string') {
    const C = RUNTIME_KINDS[kind] ?? TenureError
    return new C(err.message, code)
  }
  if (CONFIG_CODES.has(code)) return new ConfigError(err.message, code)
  if (NODE_CODES.has(code)) return new NodeError(err.message, code)
  if (DROP_REASONS.has(code)) return new DroppedError(err.message, code)
  if (code === 'usage') return new UsageError(err.message, code)
  // Anything else from the addon is napi's own failure or a caught Rust panic.
  return new InternalError(err.message, 'internal', { cause: err })
}

module.exports = {
  TenureError,
  ConfigError,
  NodeError,
  DroppedError,
  StateFileError,
  UsageError,
  InternalError,
  BindError,
  StoppedError,
  LeaderWorkError,
  wrapError,
  CONFIG_CODES,
  NODE_CODES,
  DROP_REASONS,
}
