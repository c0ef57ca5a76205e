"""The wire format: encode and decode single tenure messages.

Hosts never need this to run a node (``Node`` encodes and decodes by itself); it exists for tests,
tools and debugging. The bytes are produced by the same core in every binding; see
``docs/wire.md`` for the layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

from . import _native

__all__ = [
    "Envelope",
    "PreVote",
    "PreVoteReply",
    "Vote",
    "VoteReply",
    "Heartbeat",
    "HeartbeatAck",
    "TimeoutNow",
    "App",
    "Hello",
    "DeathNotice",
    "Value",
    "ValueAck",
    "Priority",
    "Observe",
    "WireMessage",
    "encode",
    "decode",
    "MAX_MESSAGE_SIZE",
    "MAX_TERM",
]

MAX_MESSAGE_SIZE: int = _native.MAX_MESSAGE_SIZE
"""Largest encoded message accepted or produced, in bytes."""

MAX_TERM: int = _native.MAX_TERM
"""Largest term on the wire (2**53 - 1); a greater term is malformed."""


@dataclass(frozen=True)
class PreVote:
    """ "Could I win an election in ``term``?" (asked before incrementing the term)."""

    kind = "pre_vote"


@dataclass(frozen=True)
class PreVoteReply:
    """Answer to :class:`PreVote`."""

    granted: bool
    kind = "pre_vote_reply"


@dataclass(frozen=True)
class Vote:
    """ "Vote for me in ``term``"; ``transfer`` marks a campaign started by a leadership transfer."""

    transfer: bool
    kind = "vote"


@dataclass(frozen=True)
class VoteReply:
    """Answer to :class:`Vote`."""

    granted: bool
    kind = "vote_reply"


@dataclass(frozen=True)
class Heartbeat:
    """The leader of ``term`` is alive; ``sent_at`` is the leader's clock, echoed in the ack."""

    sent_at: int
    kind = "heartbeat"


@dataclass(frozen=True)
class HeartbeatAck:
    """Acknowledgement of the heartbeat sent at ``echo``."""

    echo: int
    kind = "heartbeat_ack"


@dataclass(frozen=True)
class TimeoutNow:
    """Leadership transfer: campaign now."""

    kind = "timeout_now"


@dataclass(frozen=True)
class App:
    """An application payload sent by ``broadcast``."""

    payload: bytes
    seq: int = 0
    """The sender's sequence number for its payloads (per incarnation); receivers deliver each
    ``(incarnation, seq)`` at most once."""
    kind = "app"


@dataclass(frozen=True)
class Hello:
    """"I speak wire version ``version``" (wire version 4 and later): how members learn which
    messages every member understands. Changes no term and no vote."""

    version: int
    """The newest wire version the sender speaks."""
    reply: bool = False
    """An answer to a ``Hello`` (not answered again)."""
    kind = "hello"


@dataclass(frozen=True)
class DeathNotice:
    """"The leader of ``term`` in ``incarnation`` (the envelope's) is dead and no work of its lease
    runs" (wire version 4 and later): sent from the dead leader's address by its watchdog. Only a
    follower that acknowledged exactly that leadership acts on it."""

    kind = "death_notice"


@dataclass(frozen=True)
class Value:
    """The leader's proclaimed value (wire version 4 and later), numbered ``seq`` in its
    leadership; re-sent with every heartbeat round until acknowledged. Empty: no value."""

    seq: int
    value: str
    kind = "value"


@dataclass(frozen=True)
class ValueAck:
    """"I hold your value ``seq``" (wire version 4 and later)."""

    seq: int
    kind = "value_ack"


@dataclass(frozen=True)
class Priority:
    """"My priority is ``priority``; ``never_lead``: I am a witness" (wire version 4 and later):
    sent by a member of a rank other than the default to each member that speaks version 4, until
    that member answers with one of its own marked ``reply``."""

    priority: int
    never_lead: bool = False
    reply: bool = False
    kind = "priority"


@dataclass(frozen=True)
class Observe:
    """From an observer to the leader it follows, answering each heartbeat (wire version 4 and
    later): "I observe your leadership and hold your value ``seq``" (0: none). Counts for nothing."""

    seq: int
    kind = "observe"


WireMessage = Union[
    PreVote, PreVoteReply, Vote, VoteReply, Heartbeat, HeartbeatAck, TimeoutNow, App, Hello, DeathNotice,
    Value, ValueAck, Priority, Observe,
]
"""Any protocol message."""


@dataclass(frozen=True)
class Envelope:
    """Everything inside the (authenticated part of a) datagram."""

    cluster: str
    """The cluster id."""
    sender: str
    """The sender's node id (``from`` on the wire)."""
    term: int
    """The sender's term."""
    message: WireMessage
    """The protocol message."""
    incarnation: int = 0
    """The sender's incarnation (changes every time the sender starts; on the wire it follows
    ``term``)."""


def encode(envelope: Envelope, key: Optional[bytes] = None, receiver: Optional[str] = None) -> bytes:
    """Encodes ``envelope``, appending an HMAC-SHA256 tag when ``key`` is given; the tag covers
    ``receiver``, the id of the node the message is addressed to (required with a key: a message
    tagged for one node does not authenticate at another).

    Raises :class:`tenure.PayloadTooLargeError` if the result would exceed ``MAX_MESSAGE_SIZE``
    and :class:`tenure.DecodeError` (reason ``malformed``) for a term above ``MAX_TERM``.
    """
    return _native.encode(envelope, key, receiver)


def decode(data: bytes, key: Optional[bytes] = None, receiver: Optional[str] = None) -> Envelope:
    """Decodes one message; with ``key``, authenticates it as received by ``receiver`` (the node's
    own id; required with a key). Raises :class:`tenure.DecodeError` (with ``.reason``) on bad
    input; never anything else for any ``bytes``."""
    return _native.decode(data, key, receiver)
