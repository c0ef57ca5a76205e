"""What :class:`tenure.Elector` (asyncio) and :class:`tenure.SyncElector` (threads) share: the one
mapping from runtime events to user callbacks, what a failing ``on_leader`` means, and the queries
and inputs on the running runtime. The two differ only in where callbacks run (a task on the
event loop, or the ``tenure-callbacks`` thread)."""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Callable, Dict, Optional, Tuple, Union

from . import _native
from ._types import PeerDownReason, Role
from .errors import TenureError

log = logging.getLogger("tenure")

RuntimeEvent = Tuple[Any, ...]
Callback = Callable[..., Any]

# Runtime event kind -> the user callback it is delivered to (with the event's fields as arguments).
CALLBACK_KINDS = ("leader", "follower", "peer_joined", "peer_left", "message", "warning")


class _Facade:
    """The shared part of both electors (internal). Subclasses set ``_rt`` when started and
    implement :meth:`_running` (the runtime, or a typed error when it cannot be used)."""

    _rt: Optional[_native.Runtime]

    def __init__(self, **callbacks: Optional[Callback]) -> None:
        unknown = set(callbacks) - {f"on_{k}" for k in CALLBACK_KINDS}
        assert not unknown, unknown
        self._callbacks_by_kind: Dict[str, Callback] = {
            k: fn for k in CALLBACK_KINDS if (fn := callbacks.get(f"on_{k}")) is not None
        }

    # ----- the dispatch ----------------------------------------------------------------------------

    def _callback_for(self, event: RuntimeEvent) -> Optional[Tuple[str, Callback, Tuple[Any, ...]]]:
        """The user callback a runtime event goes to, with its arguments; ``None`` when there is
        none (or the event is not for a callback)."""
        kind = event[0]
        fn = self._callbacks_by_kind.get(kind)
        return None if fn is None else (kind, fn, tuple(event[1:]))

    def _callback_failed(self, kind: str, args: Tuple[Any, ...]) -> None:
        """A user callback raised (called inside ``except``). A failing ``on_leader`` fails the
        whole leadership: reported to the runtime's failure policy, which steps the node down (and
        stops it after ``FailurePolicy.max_step_downs`` failed leaderships in a row)."""
        log.exception("tenure: callback on_%s failed", kind)
        if kind == "leader":
            self._leadership_failed(args[0])

    def _leadership_failed(self, term: int) -> None:
        rt = self._rt
        if rt is None:
            return
        with contextlib.suppress(TenureError):  # no longer leading that term, or stopped
            rt.leader_work_failed(term, at_once=True)

    # ----- queries and inputs ----------------------------------------------------------------------

    def _running(self) -> _native.Runtime:
        raise NotImplementedError

    @property
    def bound_addr(self) -> Optional[str]:
        """The local address the UDP socket is bound to (``None`` before it is started)."""
        return self._rt.bound_addr if self._rt is not None else None

    @property
    def http_addr(self) -> Optional[str]:
        """The HTTP sidecar's address (``HOST:PORT``) while running with ``http=``, else ``None``."""
        return self._rt.http_addr if self._rt is not None else None

    @property
    def role(self) -> Role:
        """The current role."""
        return Role(self._rt.role) if self._rt is not None else Role.FOLLOWER

    @property
    def term(self) -> int:
        """The current term."""
        return self._rt.term if self._rt is not None else 0

    @property
    def leader(self) -> Optional[str]:
        """The leader known in the current term (this node's id when leading)."""
        return self._rt.leader if self._rt is not None else None

    @property
    def is_leader(self) -> bool:
        """Whether this node leads (cheap: a snapshot of the runtime's last round)."""
        return self._rt is not None and self._rt.is_leader

    def inspect(self) -> Dict[str, Any]:
        """The whole election state (every key listed in the SPEC)."""
        return self._running().inspect()

    def metrics(self) -> Dict[str, Any]:
        """The runtime's metrics snapshot: ``role``, ``term``, ``leader``, ``is_leader``,
        ``lease_remaining_ms``, ``leader_changes``, ``elections``, ``dropped`` (by reason),
        ``peers`` (by state), ``failover`` (a histogram of leaderless time), ... — the numbers behind
        ``tenure run --http``'s ``/metrics`` (``docs/http.md``). :class:`tenure.prometheus.TenureCollector`
        exposes them to ``prometheus_client``. A cheap read: no round trip to the runtime thread."""
        return self._running().metrics()

    def broadcast(self, payload: bytes) -> None:
        """Sends ``payload`` to every member of the view (received by their ``on_message``)."""
        self._running().broadcast(bytes(payload))

    def transfer_leadership(self, peer: Optional[str] = None) -> None:
        """Hands leadership to ``peer`` (default: the peer the core picks) at once. Raises
        :class:`tenure.NotLeaderError` when not leading."""
        self._running().transfer(peer)

    def join(self, peer: str) -> None:
        """Declares a peer ``HOST:PORT`` (idempotent)."""
        self._running().join(peer)

    def leave(self, peer: str) -> None:
        """Withdraws a peer from the view (lowers the quorum: see the README's guarantees)."""
        self._running().leave(peer)

    def peer_down(self, peer: str, reason: Union[PeerDownReason, str] = PeerDownReason.NO_CONNECTION) -> None:
        """Reports a peer down (see :meth:`tenure.Node.peer_down`)."""
        self._running().peer_down(peer, PeerDownReason(reason).value)
