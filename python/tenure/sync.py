"""The synchronous facade for threaded code (Flask, Django, Celery workers, gunicorn).

:class:`SyncElector` starts the runtime in the background when constructed and is read from any
thread. Callbacks run on one dedicated daemon thread named ``tenure-callbacks`` (in order, never on
the runtime thread, so a slow callback cannot stall heartbeats). There is no leader-work
cancellation in threads: leader-only code checks :attr:`SyncLease.valid` before each
irreversible step and passes :attr:`SyncLease.term` (the fencing token) to the resource. A lease is
handed over (:meth:`SyncElector.wait_leader`, :meth:`SyncElector.leading`) only once it is valid.

:meth:`SyncElector.run_until_signal` runs until SIGTERM or SIGINT and hands leadership over, the
way a threaded server (or its main thread) ends.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import signal
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Optional, Tuple

from . import _native
from ._facade import ElectorOptions, _Facade, _options
from .errors import LeadershipLost, StoppedError

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["SyncElector", "SyncLease"]

log = logging.getLogger("tenure")


def _deadline(timeout_ms: Optional[int]) -> Optional[float]:
    """The ``time.monotonic()`` instant a wait of ``timeout_ms`` ends (``None``: never)."""
    if timeout_ms is None:
        return None
    return time.monotonic() + _native.check_millis(timeout_ms, "timeout_ms") / 1000


class SyncLease:
    """Leadership of one term, for threaded leader-only code."""

    def __init__(self, elector: SyncElector, term: int) -> None:
        self._elector = elector
        self.term = term
        """The term led: the fencing token."""

    @property
    def valid(self) -> bool:
        """Whether this node still leads this term and its lease has not lapsed (the runtime
        decides, reading its clock now). Check it before each irreversible step."""
        return self._elector._rt.lease_valid(self.term)

    @property
    def deadline(self) -> Optional[int]:
        """The lease deadline on the runtime's clock (:meth:`SyncElector.now_ms`), or ``None``
        once leadership ended or before a quorum acknowledged this leadership."""
        rt = self._elector._rt
        return None if self.lost else rt.lease_deadline

    @property
    def remaining_ms(self) -> Optional[int]:
        """Milliseconds the lease still holds (0 once it lapsed); ``None`` once leadership ended."""
        rt = self._elector._rt
        return None if self.lost else rt.lease_remaining_ms

    @property
    def lost(self) -> bool:
        """Whether this leadership has ended."""
        rt = self._elector._rt
        return not rt.running or not rt.is_leader or rt.term != self.term

    def check(self) -> None:
        """Raises :class:`tenure.LeadershipLost` unless :attr:`valid`: call it before each
        irreversible step."""
        if not self.valid:
            raise LeadershipLost(f"leadership of term {self.term} is not valid (remaining_ms: {self.remaining_ms})")

    def wait_valid(self, timeout_ms: Optional[int] = None) -> bool:
        """Blocks until the lease is valid (a quorum acknowledged this leadership, or renewed a
        lapsed lease); ``False`` after ``timeout_ms``. Raises :class:`tenure.LeadershipLost`
        if leadership ends first."""
        end = _deadline(timeout_ms)
        interval = self._elector._heartbeat_interval / 2000
        while not self.valid:
            if self.lost:
                raise LeadershipLost(f"leadership of term {self.term} was lost")
            left = None if end is None else end - time.monotonic()
            if left is not None and left <= 0:
                return False
            time.sleep(interval if left is None else min(interval, left))
        return True

    def __repr__(self) -> str:
        return f"SyncLease(term={self.term}, valid={self.valid}, remaining_ms={self.remaining_ms})"


class SyncElector(_Facade):
    """One tenure node for threaded code; the runtime starts here, in the background.

    Arguments are those of :class:`tenure.Elector` (bad values raise typed errors here, and so do
    an address in use or a locked state file). Callbacks are plain functions run on the
    ``tenure-callbacks`` thread: ``on_leader(term)``, ``on_follower(term, leader)``,
    ``on_peer_joined(peer)``, ``on_peer_left(peer)``, ``on_message(sender, payload)``,
    ``on_warning(code, message)``. An ``on_leader`` that raises is leader work that failed: the
    runtime's failure policy has it called again in the same leadership after a backoff, then hands
    leadership over (``leader_work_failed``); only with
    ``failure_policy.max_step_downs`` set does the elector stop, with
    :class:`tenure.LeaderWorkError`, after that many failed leaderships in a row.
    ``stop()`` (or leaving ``with``) hands leadership over; :meth:`run_until_signal` does on
    SIGTERM/SIGINT.
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
        self._heartbeat_interval = checked.config.heartbeat_interval
        # The term whose `leader` event was delivered (the runtime sends it once the lease holds),
        # until a `follower` or `stopped` event ends it.
        self._leading: Optional[int] = None
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
                self._leading = event[1] if kind == "leader" else None
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
                self._callback_failed(kind, fn, args)

    def _running(self) -> _native.Runtime:
        return self._rt

    def _accepting_work(self) -> bool:
        return self._rt.running and not self._stopped

    def _retry_later(self, delay_ms: int, item: Tuple[str, Callable[..., Any], Tuple[Any, ...]]) -> None:
        term = item[2][0]

        def again() -> None:
            with self._cond:
                if self._leading != term or self._stopped:
                    return
            self._queue.put(item)

        timer = threading.Timer(delay_ms / 1000, again)
        timer.daemon = True
        timer.start()

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

    def now_ms(self) -> int:
        """The runtime's clock (monotonic milliseconds), the clock of :attr:`SyncLease.deadline`."""
        return self._rt.now_ms()

    def wait_leader(self, timeout_ms: Optional[int] = None) -> Optional[SyncLease]:
        """Blocks until this node leads with a valid lease; returns the lease, or ``None`` after
        ``timeout_ms``. Raises :class:`tenure.StoppedError` if the elector stops first."""
        end = _deadline(timeout_ms)
        while True:
            with self._cond:
                left = None if end is None else max(0.0, end - time.monotonic())
                ok = self._cond.wait_for(lambda: self._leading is not None or self._stopped, left)
                if self._stopped:
                    raise StoppedError("the elector stopped")
                if not ok or self._leading is None:
                    return None
                lease = SyncLease(self, self._leading)
            left = None if end is None else max(0.0, end - time.monotonic())
            with contextlib.suppress(LeadershipLost):  # lost before it held: wait for the next one
                return lease if lease.wait_valid(None if left is None else int(left * 1000)) else None
            ended = lease.term
            with self._cond:  # do not spin on a term that already ended
                self._cond.wait_for(lambda ended=ended: self._leading != ended or self._stopped, left)  # type: ignore[misc]

    @contextlib.contextmanager
    def leading(self, timeout_ms: Optional[int] = None) -> Iterator[SyncLease]:
        """``with elector.leading(timeout_ms) as lease:`` runs the block only while leading: waits
        for leadership with a valid lease (raising ``TimeoutError`` after ``timeout_ms``), then
        yields the lease; check ``lease.valid`` (or ``lease.check()``) before each irreversible
        step."""
        lease = self.wait_leader(timeout_ms)
        if lease is None:
            raise TimeoutError(f"not leader within {timeout_ms} ms")
        yield lease

    def run_until_signal(self, signals: Iterable[int] = (signal.SIGTERM, signal.SIGINT)) -> None:
        """Blocks until one of ``signals`` arrives, then stops gracefully (a leader hands over and
        waits for its successor) and returns; raises the error that stopped the node on its own,
        if one did (then the process should exit non-zero). Call it from the main thread (Python
        runs signal handlers there); it restores the previous handlers before returning."""
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("run_until_signal() must be called from the main thread (signal handlers run there)")
        got = threading.Event()

        def handler(signum: int, frame: Any) -> None:
            got.set()
            self._rt.request_stop()  # the handover starts now, not when this thread wakes
            with self._cond:
                self._cond.notify_all()

        previous = {sig: signal.signal(sig, handler) for sig in signals}
        try:
            while not got.is_set():
                with self._cond:
                    if self._stopped:
                        break
                    self._cond.wait(1.0)
        finally:
            for sig, old in previous.items():
                signal.signal(sig, old)
        self.stop()
        if self._error is not None:
            raise self._error

    # ----- inputs ----------------------------------------------------------------------------------

    def stop(self, handover_timeout_ms: Optional[int] = None, callback_timeout_ms: int = 1000) -> None:
        """Stops gracefully (a leader hands over and waits for the new leader, up to
        ``handover_timeout_ms``), then lets queued callbacks run for up to
        ``callback_timeout_ms``. Idempotent."""
        callback_timeout_ms = _native.check_millis(callback_timeout_ms, "callback_timeout_ms")
        self._rt.stop(handover_timeout_ms)
        if self._thread is not threading.current_thread():
            self._thread.join(callback_timeout_ms / 1000)

    def __enter__(self) -> SyncElector:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<tenure.SyncElector id={self.id!r} role={self.role.value} term={self.term}>"
