"""The synchronous facade for threaded code (Flask, Django, Celery workers, gunicorn).

:class:`SyncElector` starts the runtime in the background when constructed and is read from any
thread. Callbacks run on one dedicated daemon thread named ``tenure-callbacks`` (in order, never on
the runtime thread, so a slow callback cannot stall heartbeats). There is no leader-work
cancellation in threads: leader-only code checks :attr:`SyncLease.valid` before each
irreversible step and passes :attr:`SyncLease.term` (the fencing token) to the resource.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
from typing import Any, Callable, Dict, Iterable, Iterator, Optional, Tuple, Union

from ._types import Config, PeerDownReason, Role
from .errors import LeadershipLost, LeaderWorkError, StoppedError, TenureError
from .runtime import Address, FailurePolicy, _options

__all__ = ["SyncElector", "SyncLease"]

log = logging.getLogger("tenure")


class SyncLease:
    """Leadership of one term, for threaded leader-only code."""

    def __init__(self, elector: SyncElector, term: int) -> None:
        self._elector = elector
        self.term = term
        """The term led: the fencing token."""

    @property
    def valid(self) -> bool:
        """Whether this node still leads this term and the lease deadline has not passed."""
        rt = self._elector._rt
        if not rt.running or not rt.is_leader or rt.term != self.term:
            return False
        deadline = rt.lease_deadline
        return deadline is not None and rt.now_ms() < deadline

    @property
    def lost(self) -> bool:
        """Whether this leadership has ended."""
        rt = self._elector._rt
        return not rt.running or not rt.is_leader or rt.term != self.term

    def check(self) -> None:
        """Raises :class:`tenure.LeadershipLost` unless :attr:`valid`."""
        if not self.valid:
            raise LeadershipLost(f"leadership of term {self.term} is not valid")

    def __repr__(self) -> str:
        return f"SyncLease(term={self.term}, valid={self.valid})"


class SyncElector:
    """One tenure node for threaded code; the runtime starts here, in the background.

    Arguments are those of :class:`tenure.Elector` (bad values raise typed errors here, and so do
    an address in use or a locked state file). Callbacks are plain functions run on the
    ``tenure-callbacks`` thread: ``on_leader(term)``, ``on_follower(term, leader)``,
    ``on_peer_joined(peer)``, ``on_peer_left(peer)``, ``on_message(sender, payload)``,
    ``on_warning(code, message)``. An ``on_leader`` that raises steps the node down
    (``leader_work_failed``); after ``failure_policy.max_step_downs`` consecutive leaderships ended
    that way the elector stops with :class:`tenure.LeaderWorkError` instead of churning terms.
    ``stop()`` (or leaving ``with``) hands leadership over.
    """

    def __init__(
        self,
        id: Optional[str] = None,
        peers: Iterable[str] = (),
        *,
        cluster: Optional[str] = None,
        config: Optional[Config] = None,
        min_cluster_size: int = 3,
        election_timeout_min: Optional[int] = None,
        election_timeout_max: Optional[int] = None,
        heartbeat_interval: int = 50,
        ghost_ttl: int = 5000,
        pre_vote: bool = True,
        state_file: Union[str, os.PathLike[str], None] = None,
        key: Union[bytes, str, None] = None,
        key_file: Union[str, os.PathLike[str], None] = None,
        on_leader: Optional[Callable[[int], Any]] = None,
        on_follower: Optional[Callable[[int, Optional[str]], Any]] = None,
        on_peer_joined: Optional[Callable[[str], Any]] = None,
        on_peer_left: Optional[Callable[[str], Any]] = None,
        on_message: Optional[Callable[[str, bytes], Any]] = None,
        on_warning: Optional[Callable[[str, str], Any]] = None,
        handover_timeout: Optional[float] = None,
        failure_policy: Optional[FailurePolicy] = None,
        bind: Union[str, Address, None] = None,
        seed: Optional[int] = None,
        log: bool = False,
        http: Optional[str] = None,
        ready_when: str = "node",
    ) -> None:
        options = _options(
            id,
            peers,
            cluster=cluster,
            config=config,
            key=key,
            state_file=state_file,
            key_file=key_file,
            bind=bind,
            confirm_timeout=None,
            handover_timeout=handover_timeout,
            seed=seed,
            log=log,
            http=http,
            ready_when=ready_when,
            min_cluster_size=min_cluster_size,
            election_timeout_min=election_timeout_min,
            election_timeout_max=election_timeout_max,
            heartbeat_interval=heartbeat_interval,
            ghost_ttl=ghost_ttl,
            pre_vote=pre_vote,
        )
        self._callbacks: Dict[str, Optional[Callable[..., Any]]] = {
            "leader": on_leader,
            "follower": on_follower,
            "peer_joined": on_peer_joined,
            "peer_left": on_peer_left,
            "message": on_message,
            "warning": on_warning,
        }
        self._policy = failure_policy if failure_policy is not None else FailurePolicy()
        self._step_downs = 0
        self._cond = threading.Condition()
        self._stopped = False
        self._error: Optional[BaseException] = None
        self._queue: queue.SimpleQueue[Optional[Tuple[Any, ...]]] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._dispatch, name="tenure-callbacks", daemon=True)
        self._rt = options.spawn(self._deliver, defer_confirm=False)
        self._thread.start()

    # ----- runtime thread -> callback thread -------------------------------------------------------

    def _deliver(self, *event: Any) -> None:  # on the runtime thread: never blocks
        kind = event[0]
        if kind == "fatal":
            self._error = event[1]
        if kind in ("leader", "follower", "stopped"):
            with self._cond:
                if kind == "stopped":
                    self._stopped = True
                self._cond.notify_all()
        self._queue.put(event)
        if kind == "stopped":
            self._queue.put(None)

    def _dispatch(self) -> None:
        while True:
            event = self._queue.get()
            if event is None:
                return
            fn = self._callbacks.get(event[0])
            if fn is None:
                continue
            try:
                fn(*event[1:])
            except Exception:
                log.exception("tenure: callback on_%s failed", event[0])
                if event[0] == "leader":
                    self._leader_failed(event[1])
            else:
                if event[0] == "leader":
                    self._step_downs = 0

    def _leader_failed(self, term: int) -> None:
        self._step_downs += 1
        if self._step_downs >= self._policy.max_step_downs:
            self._error = LeaderWorkError(
                f"on_leader failed in {self._step_downs} consecutive leaderships (last term {term}): "
                "the elector stopped instead of churning terms"
            )
            log.error("tenure: %s", self._error)
            self._rt.request_stop()
            return
        with contextlib.suppress(TenureError):  # no longer leading that term
            self._rt.leader_work_failed(term)

    # ----- queries ---------------------------------------------------------------------------------

    @property
    def id(self) -> str:
        """This node's id."""
        return self._rt.id

    @property
    def bound_addr(self) -> str:
        """The local address the UDP socket is bound to."""
        return self._rt.bound_addr

    @property
    def is_leader(self) -> bool:
        """Whether this node leads (cheap: a snapshot of the runtime's last round)."""
        return self._rt.is_leader

    @property
    def role(self) -> Role:
        """The current role."""
        return Role(self._rt.role)

    @property
    def term(self) -> int:
        """The current term."""
        return self._rt.term

    @property
    def leader(self) -> Optional[str]:
        """The leader known in the current term (this node's id when leading)."""
        return self._rt.leader

    @property
    def running(self) -> bool:
        """Whether the runtime still runs."""
        return self._rt.running

    @property
    def error(self) -> Optional[BaseException]:
        """The error that stopped the runtime on its own, or ``None``."""
        return self._error

    def inspect(self) -> Dict[str, Any]:
        """The whole election state (every key listed in the SPEC)."""
        return self._rt.inspect()

    def metrics(self) -> Dict[str, Any]:
        """The runtime's metrics snapshot (see :meth:`tenure.Elector.metrics`)."""
        return self._rt.metrics()

    # ----- waiting ---------------------------------------------------------------------------------

    def wait_leader(self, timeout: Optional[float] = None) -> Optional[SyncLease]:
        """Blocks until this node leads; returns its lease, or ``None`` after ``timeout`` seconds.
        Raises :class:`tenure.StoppedError` if the elector stops first."""
        with self._cond:
            ok = self._cond.wait_for(lambda: self._rt.is_leader or self._stopped, timeout)
            if self._stopped:
                raise StoppedError("the elector stopped")
            if not ok:
                return None
            return SyncLease(self, self._rt.term)

    @contextlib.contextmanager
    def leading(self, timeout: Optional[float] = None) -> Iterator[SyncLease]:
        """``with elector.leading(timeout) as lease:`` runs the block only while leading: waits for
        leadership (raising ``TimeoutError`` after ``timeout`` seconds), then yields the lease;
        check ``lease.valid`` (or ``lease.check()``) before each irreversible step."""
        lease = self.wait_leader(timeout)
        if lease is None:
            raise TimeoutError(f"not leader within {timeout} s")
        yield lease

    # ----- inputs ----------------------------------------------------------------------------------

    def broadcast(self, payload: bytes) -> None:
        """Sends ``payload`` to every member of the view (their ``on_message``)."""
        self._rt.broadcast(bytes(payload))

    def transfer_leadership(self, peer: Optional[str] = None) -> None:
        """Hands leadership to ``peer`` (default: the peer the core picks)."""
        self._rt.transfer(peer)

    def join(self, peer: str) -> None:
        """Declares a peer ``HOST:PORT``."""
        self._rt.join(peer)

    def leave(self, peer: str) -> None:
        """Withdraws a peer from the view."""
        self._rt.leave(peer)

    def peer_down(self, peer: str, reason: Union[PeerDownReason, str] = PeerDownReason.NO_CONNECTION) -> None:
        """Reports a peer down."""
        self._rt.peer_down(peer, PeerDownReason(reason).value)

    def stop(self, handover_timeout: Optional[float] = None, callback_timeout: float = 1.0) -> None:
        """Stops gracefully (a leader hands over and waits for the new leader, up to
        ``handover_timeout`` seconds), then lets queued callbacks run for up to
        ``callback_timeout`` seconds. Idempotent."""
        self._rt.stop(handover_timeout)
        if self._thread is not threading.current_thread():
            self._thread.join(callback_timeout)

    def __enter__(self) -> SyncElector:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<tenure.SyncElector id={self.id!r} role={self.role.value} term={self.term}>"
