'use strict'
/**
 * tenure — embeddable leader election for Node.js.
 *
 * - {@link Node}: the sans-IO state machine (bring your own transport and clock).
 * - {@link Elector}: the native runtime (UDP, timers, DNS, state file) as an `EventEmitter`, with an
 *   `AbortSignal` for leader-only work.
 * - {@link FenceChecker}: the resource side of fencing tokens.
 */

const native = require('./native')
const { Node, FenceChecker, wire, durableState, osSeed } = require('./node')
const { Elector, Lease } = require('./elector')
const errors = require('./errors')
// Every export of ./errors but its helpers: the error classes.
const { wrapError: _wrap, fromCode: _fromCode, DROP_REASONS: _drops, ...errorClasses } = errors

/** The version of the native core (the project version). */
const VERSION = native.version()
/** Every drop reason, in the core's stable order. */
const DROP_REASONS = Object.freeze(native.dropReasons())

module.exports = {
  Node,
  Elector,
  Lease,
  FenceChecker,
  wire,
  durableState,
  osSeed,
  VERSION,
  DROP_REASONS,
  // Every error class (the shared ones come from the generated table, see lib/errors.js).
  ...errorClasses,
}
// `import tenure from 'tenure'` and `require('tenure').default` name the same object.
const self = /** @type {any} */ (module.exports)
Object.defineProperty(self, 'default', { value: self, enumerable: false })
