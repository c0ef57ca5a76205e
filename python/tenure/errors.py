"""Exceptions raised by tenure. Every one is a :class:`TenureError` carrying the core's stable
``code`` (the same snake_case string in every binding)."""

from __future__ import annotations

from typing import Dict, Optional, Type

from ._tables import ERROR_CLASSES, ERROR_CODES
from ._types import DropReason

__all__ = [
    "TenureError",
    "ConfigError",
    "DecodeError",
    "InvalidPeerError",
    "SelfPeerError",
    "UnknownPeerError",
    "NotLeaderError",
    "PayloadTooLargeError",
    "NoPendingConfirmError",
    "NotLeaderInTermError",
    "ViewFullError",
    "NodeError",
    "RandomSourceError",
    "StateFileError",
    "UsageError",
    "LeadershipLost",
    "InvalidAddressError",
    "InvalidIdError",
    "InvalidBindError",
    "BindError",
    "AddressInUseError",
    "KeyFileError",
    "StoppedError",
    "NoTransferTargetError",
    "LeaderWorkError",
    "RuntimeFailure",
    "from_code",
    "from_runtime",
]


class TenureError(Exception):
    """Base class of every tenure error.

    ``code`` is the core's stable snake_case code, e.g. ``"unknown_peer"``; ``str(error)`` is a
    sentence naming what was wrong.
    """

    code: str = "tenure_error"

    def __init__(self, message: str, code: Optional[str] = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        """The human-readable explanation."""
        return str(self.args[0]) if self.args else ""


class ConfigError(TenureError, ValueError):
    """An invalid configuration (empty id, zero timeout, min above max, ...).

    ``code`` is one of the codes whose family is ``config`` in :data:`tenure._tables.ERROR_CODES`
    (``empty_id``, ``zero_timeout``, ``min_above_max``, ``invalid_option``, ...); the subclasses
    :class:`InvalidAddressError` and :class:`KeyFileError` carry their own.
    """

    code = "config_error"


class NodeError(TenureError):
    """A call the node refused; its state is unchanged. Each refusal has its subclass
    (:class:`NotLeaderError`, :class:`UnknownPeerError`, ...)."""

    code = "node_error"


class DecodeError(TenureError, ValueError):
    """An inbound message was dropped (and counted); ``reason`` says why.

    ``code`` equals ``reason.value`` (``malformed``, ``bad_mac``, ``wrong_cluster``, ...).
    """

    code = "malformed"

    def __init__(self, message: str, reason: DropReason | str = DropReason.MALFORMED) -> None:
        reason = DropReason(reason)
        super().__init__(message, reason.value)
        self.reason: DropReason = reason


class SelfPeerError(NodeError, ValueError):
    """The operation named this node itself where only another node makes sense (``self_peer``)."""

    code = "self_peer"


class UnknownPeerError(NodeError, LookupError):
    """The peer is not in this node's view (``unknown_peer``)."""

    code = "unknown_peer"


class NotLeaderError(NodeError):
    """Only the leader can do this (``not_leader``)."""

    code = "not_leader"


class PayloadTooLargeError(NodeError, ValueError):
    """A broadcast payload that does not fit in one message (``payload_too_large``)."""

    code = "payload_too_large"


class NoPendingConfirmError(NodeError):
    """``confirm_leader`` for a term with no pending confirmation (``no_pending_confirm``):
    already answered, timed out, or superseded."""

    code = "no_pending_confirm"


class NotLeaderInTermError(NodeError):
    """``leader_handler_failed`` for a term this node is not leading (``not_leader_in_term``)."""

    code = "not_leader_in_term"


class ViewFullError(NodeError):
    """``join`` would grow the view beyond ``max_peers`` (``view_full``)."""

    code = "view_full"


class RandomSourceError(TenureError):
    """The operating system's random source failed, so there is no seed for the election timers
    (``no_randomness``). There is deliberately no fixed fallback."""

    code = "no_randomness"


class StateFileError(TenureError):
    """The ``state_file`` cannot be used. ``code`` says why: ``state_dir_missing`` (its directory
    does not exist), ``state_unwritable``, ``state_not_utf8``, ``state_corrupt``,
    ``state_locked`` (another process holds it), ``state_read_failed``."""

    code = "state_file"


class UsageError(TenureError, ValueError):
    """A command line the shared parser refused (``usage``)."""

    code = "usage"


class LeadershipLost(TenureError):
    """Raised out of ``async with elector.leadership()`` when leadership ended inside the block
    (``leadership_lost``): the block was cancelled at that moment."""

    code = "leadership_lost"


class InvalidAddressError(ConfigError):
    """A ``HOST:PORT`` the runtime refused; the message names the value and the problem (no port,
    port 0 or above 65535, ``0.0.0.0``/``::`` as an id: use ``bind=``)."""

    code = "invalid_address"


class InvalidIdError(InvalidAddressError):
    """The node id is not a usable ``HOST:PORT`` (``invalid_id``)."""

    code = "invalid_id"


class InvalidPeerError(InvalidAddressError):
    """A peer id that is not usable (``invalid_peer``): empty, too long, whitespace, or for the
    runtime not a ``HOST:PORT``."""

    code = "invalid_peer"


class InvalidBindError(InvalidAddressError):
    """The ``bind`` address is not an ``IP`` or ``IP:PORT`` (``invalid_bind``)."""

    code = "invalid_bind"


class BindError(TenureError, OSError):
    """The UDP socket could not be bound (``bind_failed``)."""

    code = "bind_failed"


class AddressInUseError(BindError):
    """Another socket holds the address (``address_in_use``)."""

    code = "address_in_use"


class KeyFileError(ConfigError):
    """The key file cannot be read (``key_file``)."""

    code = "key_file"


class StoppedError(TenureError):
    """The elector was used after it stopped (``stopped``)."""

    code = "stopped"


class NoTransferTargetError(NodeError):
    """A transfer without a target found no peer to hand leadership to (``no_transfer_target``)."""

    code = "no_transfer_target"


class LeaderWorkError(TenureError):
    """Leader-only work kept failing: after ``max_leader_failures`` consecutive failed
    leaderships the elector stopped rather than churn terms (``leader_work_failed``)."""

    code = "leader_work_failed"


class RuntimeFailure(TenureError):
    """The runtime failed in a way no narrower class describes (``io``, ``engine_failed``, ...)."""

    code = "runtime_failure"


_CLASSES: Dict[str, Type[TenureError]] = {name: globals()[name] for name, _ in ERROR_CLASSES}


def from_code(message: str, code: str) -> TenureError:
    """The typed exception for a stable ``code`` of the runtime or the core (the class the
    generated :data:`tenure._tables.ERROR_CODES` names; :class:`RuntimeFailure` for a code this
    package does not know)."""
    entry = ERROR_CODES.get(code)
    cls = _CLASSES[entry[1]] if entry is not None else RuntimeFailure
    return cls(message, code)


def from_runtime(message: str, code: str, kind: str) -> TenureError:
    """The typed exception for an error of the runtime (its stable ``code`` and family ``kind``;
    the class follows from the code alone, ``kind`` is kept for callers that pass it)."""
    del kind
    return from_code(message, code)
