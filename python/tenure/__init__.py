"""tenure: embeddable leader election (Raft-style terms and votes, no log).

Two layers, one core:

- :class:`Node`: the sans-IO state machine. You move bytes and pass the time; it returns what to
  send, what to persist and what happened (``drain()``).
- :class:`Elector`: the ready runtime (``tenure-runtime``: UDP, timers, state file, DNS, graceful
  handover) driven from asyncio, with callbacks and leader-only work cancelled when leadership is
  lost; :class:`SyncElector` is the same for threaded code.

See ``python -m tenure --help`` for the command-line runtime, and the package README.
"""

from . import cli, errors, wire
from ._native import VERSION, FenceChecker, Node
from ._types import (
    BecameFollower,
    BecameLeader,
    Config,
    ConfigWarning,
    ConfirmLeader,
    DropReason,
    DurableState,
    Event,
    FenceVerdict,
    Message,
    Output,
    PeerDownReason,
    PeerJoined,
    PeerLeft,
    Persist,
    Role,
    Send,
    ValidConfig,
)
from .errors import (
    AddressInUseError,
    BindError,
    ConfigError,
    DecodeError,
    InvalidAddressError,
    InvalidBindError,
    InvalidIdError,
    InvalidPeerError,
    KeyFileError,
    LeadershipLost,
    LeaderWorkError,
    NodeError,
    NoPendingConfirmError,
    NotLeaderError,
    NotLeaderInTermError,
    NoTransferTargetError,
    PayloadTooLargeError,
    RandomSourceError,
    RuntimeFailure,
    SelfPeerError,
    StateFileError,
    StoppedError,
    TenureError,
    UnknownPeerError,
    UsageError,
    ViewFullError,
)
from .runtime import Elector, ElectorOptions, FailurePolicy, LeaderWork, Lease, now_ms
from .sync import SyncElector, SyncLease

__version__: str = VERSION
"""The package version (the version of the tenure core it contains)."""

__all__ = [
    "SyncLease",
    "SyncElector",
    "ElectorOptions",
    "FailurePolicy",
    "StoppedError",
    "RuntimeFailure",
    "NoTransferTargetError",
    "LeaderWorkError",
    "NodeError",
    "KeyFileError",
    "InvalidIdError",
    "InvalidBindError",
    "InvalidAddressError",
    "BindError",
    "AddressInUseError",
    "BecameFollower",
    "BecameLeader",
    "Config",
    "ConfigError",
    "ConfigWarning",
    "ConfirmLeader",
    "DecodeError",
    "DropReason",
    "DurableState",
    "Elector",
    "Event",
    "FenceChecker",
    "FenceVerdict",
    "InvalidPeerError",
    "LeaderWork",
    "LeadershipLost",
    "Lease",
    "Message",
    "NoPendingConfirmError",
    "Node",
    "NotLeaderError",
    "NotLeaderInTermError",
    "RandomSourceError",
    "ViewFullError",
    "Output",
    "PayloadTooLargeError",
    "PeerDownReason",
    "PeerJoined",
    "PeerLeft",
    "Persist",
    "Role",
    "SelfPeerError",
    "Send",
    "StateFileError",
    "TenureError",
    "UnknownPeerError",
    "UsageError",
    "ValidConfig",
    "cli",
    "errors",
    "now_ms",
    "wire",
]
