// ESM entry point: the same objects as the CommonJS entry (one addon instance, one set of classes).
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const tenure = require('./lib/index.js')

export const {
  Node,
  Elector,
  FenceChecker,
  wire,
  durableState,
  osSeed,
  VERSION,
  DROP_REASONS,
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
  InvalidAddressError,
  InvalidIdError,
  InvalidPeerError,
  InvalidBindError,
  KeyFileError,
  SelfPeerError,
  UnknownPeerError,
  NotLeaderError,
  PayloadTooLargeError,
  NoPendingConfirmError,
  NotLeaderInTermError,
  ViewFullError,
  NoTransferTargetError,
  AddressInUseError,
  RandomSourceError,
  RuntimeFailure,
  Lease,
} = tenure
export default tenure
