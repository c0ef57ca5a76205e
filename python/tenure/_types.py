"""Plain data types shared by the sans-IO layer and the runtime.

Everything here is an immutable value: enums whose values are the core's stable snake_case names,
and frozen dataclasses for configuration, outputs and events. The native extension builds these
objects directly, so what ``Node.drain()`` returns can be compared, pattern-matched and printed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Optional, Tuple, Union

from . import _tables as _d

__all__ = [
    "Role",
    "PeerDownReason",
    "DropReason",
    "FenceVerdict",
    "Config",
    "ValidConfig",
    "ConfigWarning",
    "DurableState",
    "Send",
    "Persist",
    "Event",
    "BecameLeader",
    "BecameFollower",
    "PeerJoined",
    "PeerLeft",
    "ConfirmLeader",
    "Message",
    "Output",
]


class Role(str, enum.Enum):
    """A node's role in the election (the value is the name used by ``inspect()``)."""

    UNCLUSTERED = "unclustered"
    """The view is smaller than ``min_cluster_size``: no leader may exist, no campaigning."""
    FOLLOWER = "follower"
    """Following a leader, or waiting for one."""
    CANDIDATE = "candidate"
    """Campaigning (or, having won, waiting for ``confirm_leader``)."""
    LEADER = "leader"
    """The leader of the current term."""
    OBSERVER = "observer"
    """An observer (``observer=True``): reports the leader and its value; never votes, campaigns
    or counts toward any quorum or view size."""

    def __str__(self) -> str:
        return self.value


class PeerDownReason(str, enum.Enum):
    """Why the host reports a peer down (``Node.peer_down``)."""

    TERMINATED = "terminated"
    """Gone for good: removed from the view at once."""
    NO_CONNECTION = "no_connection"
    """Connection lost: stays in the view for ``ghost_ttl`` unless heard from again."""
    REFUSED = "refused"
    """The peer's port refused a datagram (ICMP port unreachable): its process is gone, it stays a
    member. A node following it stops waiting for it (the lease promise still binds)."""

    def __str__(self) -> str:
        return self.value


class DropReason(str, enum.Enum):
    """Why an inbound message was dropped (counted in ``inspect()["dropped_by_reason"]``)."""

    OVERSIZED = "oversized"
    """Larger than ``MAX_MESSAGE_SIZE``."""
    MALFORMED = "malformed"
    """Not a tenure message, or a body that does not decode."""
    UNKNOWN_VERSION = "unknown_version"
    """A tenure message of a wire version this core does not speak."""
    WRONG_CLUSTER = "wrong_cluster"
    """A message for another cluster id."""
    BAD_MAC = "bad_mac"
    """Missing, unexpected or invalid authentication tag."""
    SENDER_MISMATCH = "sender_mismatch"
    """The sender named inside the message is not the peer it came from."""
    FROM_SELF = "from_self"
    """A message claiming to come from this node."""
    REMOVED_PEER = "removed_peer"
    """A message from a peer removed less than one election timeout ago."""
    UNKNOWN_PEER = "unknown_peer"
    """A sender that is not a declared peer, while membership is closed (the default)."""
    VIEW_FULL = "view_full"
    """Admitting the sender would make the view larger than ``max_peers``."""
    IMPLAUSIBLE_TERM = "implausible_term"
    """A term more than ``MAX_TERM_JUMP`` (2**32) above this node's."""
    REPLAY = "replay"
    """A payload already delivered from this sender incarnation, or a retired incarnation."""
    NOTICE_MISMATCH = "notice_mismatch"
    """A death notice for a leadership this node does not follow."""

    def __str__(self) -> str:
        return self.value


class FenceVerdict(str, enum.Enum):
    """What a ``FenceChecker`` decided about one ``(term, leader)``."""

    ACCEPTED = "accepted"
    """The newest term seen (or the same term from the same leader): go ahead."""
    STALE = "stale"
    """An older term than one already seen: refuse."""
    ALREADY_FENCED = "already_fenced"
    """The same term under another leader: refuse."""

    @property
    def accepted(self) -> bool:
        """Whether the action may proceed."""
        return self is FenceVerdict.ACCEPTED

    def __str__(self) -> str:
        return self.value


def _key_bytes(key: Union[bytes, bytearray, str, None]) -> Optional[bytes]:
    if key is None or isinstance(key, bytes):
        return key
    if isinstance(key, bytearray):
        return bytes(key)
    if isinstance(key, str):
        return key.encode("utf-8")
    raise TypeError(f"key must be bytes, str or None, got {type(key).__name__}")


@dataclass(frozen=True)
class Config:
    """Everything a node needs before it starts; build it with keyword arguments.

    ``id`` and ``cluster`` are required. Only one election timeout bound may be given: the other
    is derived (``min`` alone doubles to a max, ``max`` alone halves to a min); both ``None``
    means 150-300 ms. ``key`` (bytes, or str encoded as UTF-8) turns on authenticated messages.
    Values are checked by the core when a ``Node`` is built, or by :meth:`validate`.
    """

    id: str
    """This node's id (for the UDP runtime: its ``HOST:PORT``)."""
    cluster: str
    """The cluster id; required, namespaces the election."""
    bootstrap: Tuple[str, ...] = ()
    """Peers declared at start (this node's own id, if listed, is ignored)."""
    min_cluster_size: int = _d.DEFAULT_MIN_CLUSTER_SIZE
    """No leader exists while the view is smaller than this."""
    election_timeout_min: Optional[int] = None
    """Lower bound of the randomised election timeout in ms (``None``: derived or 150)."""
    election_timeout_max: Optional[int] = None
    """Upper bound of the randomised election timeout in ms (``None``: derived or 300)."""
    heartbeat_interval: int = _d.DEFAULT_HEARTBEAT_INTERVAL
    """Interval between a leader's heartbeats in ms."""
    ghost_ttl: int = _d.DEFAULT_GHOST_TTL
    """How long a peer reported ``no_connection`` stays in the view, in ms."""
    pre_vote: bool = _d.DEFAULT_PRE_VOTE
    """Ask "could I win?" before incrementing the term."""
    confirm_leader: bool = _d.DEFAULT_CONFIRM_LEADER
    """Ask the host (``ConfirmLeader`` event) before publishing leadership."""
    durable: bool = False
    """Emit ``Persist`` outputs whenever term or vote change (durable term and vote)."""
    key: Optional[bytes] = field(default=None, repr=False)
    """Shared cluster key: every message carries an HMAC-SHA256 tag."""
    admit_unknown_peers: bool = _d.DEFAULT_ADMIT_UNKNOWN_PEERS
    """Admit a sender that was never declared on its first valid message (discovery style). Off:
    membership is closed and such messages are dropped (``unknown_peer``)."""
    max_peers: int = _d.DEFAULT_MAX_PEERS
    """Most peers (besides this node) the view may hold (``view_full`` beyond it)."""
    max_clock_drift_ppm: int = _d.DEFAULT_MAX_CLOCK_DRIFT_PPM
    """Bound on clock-rate differences in parts per million; the lease deadline carries its margin."""
    incarnation: Optional[int] = None
    """This run's incarnation (``None``: drawn from the seed). Should grow across restarts."""
    value: Optional[str] = None
    """The value this node proclaims whenever it leads (at most 256 bytes of UTF-8, such as its
    service URL; ``None`` or empty: none): every member reports it as ``leader_value``."""
    priority: int = 0
    """This node's priority (0 to 2**32 - 1): among healthy members a higher one campaigns first,
    and a leader hands leadership to a member of higher priority that answered it steadily for
    ``preempt_after``. 0 everywhere: no preference."""
    never_lead: bool = False
    """A witness: votes and acknowledges (it counts in every quorum) but never campaigns, never
    takes a transfer and is never preempted to."""
    preempt_after: Optional[int] = None
    """Milliseconds a member of higher priority must answer the leader steadily before the leader
    hands over (``None``: twice ``election_timeout_max``; 0: never)."""
    lease_duration: Optional[int] = None
    """How long a promise (and so the leader's lease) lasts, in ms (``None``:
    ``election_timeout_min``). At most ``election_timeout_min`` and, less the clock-drift margin,
    above ``heartbeat_interval`` (``lease_out_of_range`` otherwise). Shorter means faster failover
    after ``PeerDownReason.REFUSED``, at the price of less slack for each heartbeat."""
    observer: bool = False
    """Run as an observer of the members given as ``bootstrap``: learn the leader, its term and its
    value without ever voting, campaigning or counting toward any quorum or view size (role
    ``Role.OBSERVER``)."""
    observer_peers: Tuple[str, ...] = ()
    """The observers this member keeps informed (their ids). Closed like membership: messages of
    an observer not listed are dropped (``unknown_peer``)."""

    def __post_init__(self) -> None:
        if isinstance(self.bootstrap, str):
            raise TypeError("bootstrap must be a sequence of peer ids, not a single str")
        if not isinstance(self.bootstrap, tuple):
            object.__setattr__(self, "bootstrap", tuple(self.bootstrap))
        if isinstance(self.observer_peers, str):
            raise TypeError("observer_peers must be a sequence of peer ids, not a single str")
        if not isinstance(self.observer_peers, tuple):
            object.__setattr__(self, "observer_peers", tuple(self.observer_peers))
        object.__setattr__(self, "key", _key_bytes(self.key))

    def validate(self) -> ValidConfig:
        """Checks the configuration with the core: the effective numbers and the warnings.

        Raises :class:`tenure.ConfigError` (naming the field) for an invalid configuration.
        """
        from . import _native

        return _native.validate_config(self)


@dataclass(frozen=True)
class ConfigWarning:
    """A configuration that works but is probably not what was meant."""

    code: str
    """Stable snake_case code: ``small_min_cluster_size`` or ``slow_heartbeat``."""
    message: str
    """A sentence explaining the problem."""


@dataclass(frozen=True)
class ValidConfig:
    """The numbers a node runs with after derivation, and the warnings found."""

    election_timeout_min: int
    election_timeout_max: int
    heartbeat_interval: int
    ghost_ttl: int
    min_cluster_size: int
    warnings: Tuple[ConfigWarning, ...]
    max_peers: int = _d.DEFAULT_MAX_PEERS
    max_clock_drift_ppm: int = _d.DEFAULT_MAX_CLOCK_DRIFT_PPM
    lease_span: int = _d.DEFAULT_LEASE_SPAN
    """How long a heartbeat's lease lasts on the leader's clock: ``lease_duration`` less the
    clock-drift margin."""
    lease_duration: int = _d.DEFAULT_LEASE_DURATION
    """How long a promise lasts (``Config.lease_duration``, default ``election_timeout_min``)."""


@dataclass(frozen=True)
class DurableState:
    """The term and vote a durable node stores (``Persist``) and is restored from."""

    term: int = 0
    """The current term."""
    voted_for: Optional[str] = None
    """Whom the node voted for in ``term``."""

    def encode(self) -> str:
        """The runtime's state-file text: ``{"term":4,"voted_for":"ID"}`` (``null``: no vote) and a
        newline. Every id round-trips, ``-`` included."""
        from . import _native

        return _native.encode_state(self.term, self.voted_for)

    @staticmethod
    def decode(text: str) -> Optional[DurableState]:
        """Parses :meth:`encode`'s format (or the old one-line ``"<term> <voted_for or ->"``);
        ``None`` for anything else."""
        from . import _native

        return _native.decode_state(text)


# ----- outputs ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Send:
    """Output: transmit ``data`` to peer ``to`` (best effort; loss is tolerated)."""

    __slots__ = ("to", "data")
    to: str
    data: bytes


@dataclass(frozen=True)
class Persist:
    """Output: store ``(term, voted_for)`` durably before acting on any later output."""

    __slots__ = ("term", "voted_for")
    term: int
    voted_for: Optional[str]

    @property
    def state(self) -> DurableState:
        """The pair as a :class:`DurableState`."""
        return DurableState(self.term, self.voted_for)


class Event:
    """Base class of every event output."""

    __slots__ = ()


@dataclass(frozen=True)
class BecameLeader(Event):
    """This node now leads ``term`` (the fencing token): start leader-only work."""

    __slots__ = ("term",)
    term: int


@dataclass(frozen=True)
class BecameFollower(Event):
    """This node is now a follower in ``term`` (or learned of ``leader`` while following)."""

    __slots__ = ("term", "leader")
    term: int
    leader: Optional[str]


@dataclass(frozen=True)
class PeerJoined(Event):
    """``peer`` entered the view."""

    __slots__ = ("peer",)
    peer: str


@dataclass(frozen=True)
class PeerLeft(Event):
    """``peer`` left the view."""

    __slots__ = ("peer",)
    peer: str


@dataclass(frozen=True)
class ConfirmLeader(Event):
    """The node won ``term``: answer with ``Node.confirm_leader`` before it leads."""

    __slots__ = ("term",)
    term: int


@dataclass(frozen=True)
class Message(Event):
    """An application payload broadcast by peer ``sender``."""

    __slots__ = ("sender", "payload")
    sender: str
    payload: bytes


Output = Union[Send, Persist, BecameLeader, BecameFollower, PeerJoined, PeerLeft, ConfirmLeader, Message]
"""Everything ``Node.poll_output()`` / ``Node.drain()`` can return."""
