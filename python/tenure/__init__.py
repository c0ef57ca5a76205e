"""tenure: embeddable leader election (Raft-style terms and votes, no log).

Two layers, one core:

- :class:`Node`: the sans-IO state machine. You move bytes and pass the time; it returns what to
  send, what to persist and what happened (``drain()``).
- :class:`Elector`: a ready asyncio runtime that runs a node over UDP, with callbacks, leader-only
  work that is cancelled when leadership is lost, durable state and graceful handover.

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
    ConfigError,
    DecodeError,
    InvalidPeerError,
    LeadershipLost,
    NoPendingConfirmError,
    NotLeaderError,
    NotLeaderInTermError,
    RandomSourceError,
    ViewFullError,
    PayloadTooLargeError,
    SelfPeerError,
    StateFileError,
    TenureError,
    UnknownPeerError,
    UsageError,
)
from .runtime import Elector, LeaderWork, Lease, now_ms

__version__: str = VERSION
"""The package version (the version of the tenure core it contains)."""

__all__ = [
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
