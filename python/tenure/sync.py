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
import queue
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Optional, Tuple

from . import _native
from ._facade import ElectorOptions, _Facade, _options
from .errors import LeadershipLost, StoppedError

if TYPE_CHECKING:
    from typing_extensions import Unpack

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


class SyncElector(_Facade):
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
        on_leader: Optional[Callable[[int], Any]] = None,
        on_follower: Optional[Callable[[int, Optional[str]], Any]] = None,
        on_peer_joined: Optional[Callable[[str], Any]] = None,
        on_peer_left: Optional[Callable[[str], Any]] = None,
        on_message: Optional[Callable[[str, bytes], Any]] = None,
        on_warning: Optional[Callable[[str, str], Any]] = None,
        **options: Unpack[ElectorOptions],
    ) -> None:
        checked = _options(id, peers, options)
        super().__init__(
            on_leader=on_leader,
            on_follower=on_follower,
            on_peer_joined=on_peer_joined,
            on_peer_left=on_peer_left,
            on_message=on_message,
            on_warning=on_warning,
        )
        self._cond = threading.Condition()
        self._stopped = False
        self._error: Optional[BaseException] = None
        self._queue: queue.SimpleQueue[Optional[Tuple[str, Callable[..., Any], Tuple[Any, ...]]]] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._dispatch, name="tenure-callbacks", daemon=True)
        self._rt: _native.Runtime = checked.spawn(self._deliver, defer_confirm=False)
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
        callback = self._callback_for(event)
        if callback is not None:
            self._queue.put(callback)
        if kind == "stopped":
            self._queue.put(None)

    def _dispatch(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            kind, fn, args = item
            try:
                fn(*args)
            except Exception:
                self._callback_failed(kind, args)

    def _running(self) -> _native.Runtime:
        return self._rt

    # ----- queries ---------------------------------------------------------------------------------

    @property
    def id(self) -> str:
        """This node's id."""
        return self._rt.id

    @property
    def running(self) -> bool:
        """Whether the runtime still runs."""
        return self._rt.running

    @property
    def error(self) -> Optional[BaseException]:
        """The error that stopped the runtime on its own, or ``None``."""
        return self._error

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
