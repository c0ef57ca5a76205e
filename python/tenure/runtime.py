"""The asyncio runtime: :class:`Elector` runs one tenure node over UDP through ``tenure-runtime``.

Everything below the callbacks — the UDP socket, the timers, the state file, DNS names, graceful
handover, logging — is the Rust runtime (the same one behind ``tenure run``, the Node.js package and
``tenure-wasmtime``). This module only carries its events to your asyncio loop
(``loop.call_soon_threadsafe``) and runs your callbacks and leader-only work there.

User code never runs on the runtime thread: callbacks are queued and run by a separate task, in
order; a plain (sync) callback runs in a worker thread, so even a blocking one cannot stall
heartbeats. Leader-only work (:meth:`Elector.while_leader`, :meth:`Elector.leadership`) is handed a lease
only once it is valid (the runtime delivers ``leader`` when a quorum has acknowledged this
leadership) and is cancelled the moment leadership is lost. Until it has returned, a handover this
node makes (a preemption by a member of higher priority, :meth:`Elector.transfer_leadership`)
waits: the next leader cannot start its work beside work still running here.

Leader-work failure policy (:class:`FailurePolicy`, counted and decided by the runtime, the same
for :class:`tenure.SyncElector`, the Node.js package and ``tenure run -- CMD``): leader-only work
that raises is restarted in the same leadership after a backoff (100 ms, doubling, at most 5000 ms);
after ``max_failures`` consecutive failures the node hands leadership over and campaigns last for
a while (it still votes; it leads again only if no other member has by then), with a
``leader_work_failed`` warning (rate-limited) and the ``leader_work_failures`` /
``leader_work_step_downs`` metrics. By default that goes on for as long as the work fails, and the
node recovers by itself when the work succeeds again; only with ``max_step_downs`` set does the
elector stop with :class:`tenure.LeaderWorkError` after that many failed leaderships in a row. An
``on_leader`` callback that raises is leader work too: called again in the same leadership after
the backoff, under the same counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import signal
import time
from typing import (
    TYPE_CHECKING,
    Any,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Optional,
    Set,
    Tuple,
    Union,
)

from . import _native
from ._facade import ElectorOptions, FailurePolicy, RuntimeEvent, _Facade, _options
from .errors import LeadershipLost, StoppedError, TenureError

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Elector", "ElectorOptions", "FailurePolicy", "Lease", "LeaderWork", "now_ms"]

log = logging.getLogger("tenure")

TermCallback = Callable[[int], Union[Awaitable[None], None]]
FollowerCallback = Callable[[int, Optional[str]], Union[Awaitable[None], None]]
PeerCallback = Callable[[str], Union[Awaitable[None], None]]
MessageCallback = Callable[[str, bytes], Union[Awaitable[None], None]]
WarningCallback = Callable[[str, str], Union[Awaitable[None], None]]
ConfirmCallback = Callable[[int], Union[Awaitable[bool], bool]]
LeaderWorkFn = Callable[["Lease"], Awaitable[Any]]


def now_ms() -> int:
    """The monotonic clock every :class:`tenure.Node` input takes, in whole milliseconds."""
    return time.monotonic_ns() // 1_000_000


def _is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))  # noqa: B004


async def _call(fn: Callable[..., Any], *args: Any) -> Any:
    """Runs a user callback without blocking the event loop: coroutine functions are awaited,
    plain functions run in a worker thread (an awaitable they return is then awaited)."""
    if _is_async(fn):
        return await fn(*args)
    loop = asyncio.get_running_loop()
    result = await loop.run_in_executor(None, lambda: fn(*args))
    if inspect.isawaitable(result):
        result = await result
    return result


class Lease:
    """Proof of leadership for one term, handed to leader-only work.

    ``term`` is the fencing token: pass it to the resource, which checks it (for instance with
    :class:`tenure.FenceChecker`) in the same transaction as the write.
    """

    def __init__(self, elector: Elector, term: int) -> None:
        self._elector = elector
        self._term = term
        self._lost = asyncio.Event()

    @property
    def term(self) -> int:
        """The term led: the fencing token."""
        return self._term

    def _held(self) -> Optional[_native.Runtime]:
        """The runtime while this term is still led, else ``None``."""
        rt = self._elector._rt
        if self._lost.is_set() or rt is None or not rt.is_leader or rt.term != self._term:
            return None
        return rt

    @property
    def deadline(self) -> Optional[int]:
        """The last instant (on :meth:`Elector.now_ms`'s clock) at which this node can be sure
        that no other leader has been elected; ``None`` once the lease is lost or before a quorum
        has acknowledged a heartbeat."""
        rt = self._held()
        return None if rt is None else rt.lease_deadline

    @property
    def remaining_ms(self) -> Optional[int]:
        """Milliseconds the lease still holds (0 once it lapsed); ``None`` once leadership ended."""
        rt = self._held()
        return None if rt is None else rt.lease_remaining_ms

    @property
    def valid(self) -> bool:
        """Whether leadership of this term still holds and its lease has not lapsed (the runtime
        decides, reading its clock now). Check it before each irreversible step."""
        rt = self._elector._rt
        return not self._lost.is_set() and rt is not None and rt.lease_valid(self._term)

    @property
    def lost(self) -> bool:
        """Whether this leadership has ended."""
        return self._lost.is_set()

    async def wait_lost(self) -> None:
        """Returns when this leadership ends."""
        await self._lost.wait()

    def check(self) -> None:
        """Raises :class:`tenure.LeadershipLost` unless :attr:`valid`: call it before each
        irreversible step."""
        if not self.valid:
            raise LeadershipLost(f"leadership of term {self._term} is not valid (remaining_ms: {self.remaining_ms})")

    async def wait_valid(self) -> None:
        """Returns once the lease is valid (a quorum acknowledged a heartbeat of this term);
        raises :class:`tenure.LeadershipLost` if leadership ends first."""
        interval = self._elector._options.config.heartbeat_interval / 2000
        while not self.valid:
            if self.lost:
                raise LeadershipLost(f"leadership of term {self._term} was lost")
            await asyncio.sleep(interval)

    def _lose(self) -> None:
        self._lost.set()

    def __repr__(self) -> str:
        return f"Lease(term={self._term}, remaining_ms={self.remaining_ms}, lost={self.lost})"


class LeaderWork:
    """A registration made by :meth:`Elector.while_leader`; :meth:`cancel` withdraws it and
    cancels the running work, if any."""

    def __init__(self, elector: Elector, fn: LeaderWorkFn) -> None:
        self._elector = elector
        self.fn = fn
        self.task: Optional[asyncio.Task[Any]] = None
        """The task running the work during the current leadership, if any."""

    def cancel(self) -> None:
        """Stops running this work (now and in future leaderships)."""
        self._elector._work.discard(self)
        if self.task is not None:
            self.task.cancel()


class Elector(_Facade):
    """Runs one tenure node over UDP with asyncio, through the Rust runtime.

    ``Elector("127.0.0.1:7001", ["127.0.0.1:7002", "127.0.0.1:7003"], cluster="jobs",
    on_leader=start, on_follower=stop)``; then ``await elector.start()`` (or ``async with``)
    and ``await elector.stop()``, or ``await elector.run_until_signal()``.

    - ``id`` is this node's ``HOST:PORT`` (an IP or a DNS name): its name for the peers, which are
      listed the same way, and the address bound unless ``bind=`` (``IP`` or ``IP:PORT``) says
      otherwise. Bad ids, peers and bind addresses raise typed errors here, at construction.
    - Timing, ``min_cluster_size`` and ``pre_vote`` are as in :class:`tenure.Config`; or pass a
      whole ``config=`` (its ``id`` and ``bootstrap`` then replace ``id`` and ``peers``).
    - ``state_file=`` makes term and vote durable (one JSON file, locked while running);
      ``key=`` (bytes or str) or ``key_file=`` authenticates every message.
    - Callbacks may be plain functions or ``async def``. They run in order, outside the network
      path (plain ones in a worker thread). ``confirm_leader(term)`` returning false, raising or
      not answering within ``confirm_timeout_ms`` (default: ``election_timeout_min``) denies
      leadership. ``on_warning(code, message)`` receives the runtime's rate-limited warnings.
    - ``failure_policy=`` governs leader-only work that keeps failing (see :class:`FailurePolicy`).
    - ``http="IP:PORT"`` serves the HTTP sidecar (``/leader``, ``/healthz``, ``/readyz``, ``/metrics``;
      ``docs/http.md``) from the runtime, port 0 for any free one (:attr:`http_addr`);
      ``ready_when="leader"`` makes ``/readyz`` 200 only while this node leads with a valid lease.
    """

    def __init__(
        self,
        id: Optional[str] = None,
        peers: Iterable[str] = (),
        *,
        on_leader: Optional[TermCallback] = None,
        on_follower: Optional[FollowerCallback] = None,
        on_peer_joined: Optional[PeerCallback] = None,
        on_peer_left: Optional[PeerCallback] = None,
        on_message: Optional[MessageCallback] = None,
        on_warning: Optional[WarningCallback] = None,
        confirm_leader: Optional[ConfirmCallback] = None,
        confirm_timeout_ms: Optional[int] = None,
        **options: Unpack[ElectorOptions],
    ) -> None:
        self._options = _options(id, peers, options, confirm_timeout_ms)
        super().__init__(
            on_leader=on_leader,
            on_follower=on_follower,
            on_peer_joined=on_peer_joined,
            on_peer_left=on_peer_left,
            on_message=on_message,
            on_warning=on_warning,
        )
        self._confirm = confirm_leader

        self._rt: Optional[_native.Runtime] = None
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._callbacks: Optional[asyncio.Queue[Optional[Tuple[str, Callable[..., Any], Tuple[Any, ...]]]]] = None
        self._dispatcher: Optional[asyncio.Task[None]] = None
        self._tasks: Set[asyncio.Task[Any]] = set()
        # Leader work running now (while_leader tasks, leadership() blocks), told to the runtime
        # as a flag: a transfer's TimeoutNow waits while it is set after a step-down.
        self._running_work = 0
        self._work: Set[LeaderWork] = set()
        self._lease: Optional[Lease] = None
        self._leader_event: Optional[asyncio.Event] = None
        self._stopped_event: Optional[asyncio.Event] = None
        self._stop_task: Optional[asyncio.Task[None]] = None
        self._state = "new"
        self._failure: Optional[BaseException] = None
        self._last_term = 0

    # ----- lifecycle ------------------------------------------------------------------------------

    async def start(self) -> None:
        """Starts the runtime: binds the UDP socket, reads and locks the state file, runs the node.
        Raises a typed error (nothing left running): :class:`tenure.AddressInUseError`,
        :class:`tenure.StateFileError` (missing directory, unwritable, not UTF-8, corrupt, locked
        by another process), :class:`tenure.KeyFileError`, ..."""
        if self._state == "stopped":
            raise StoppedError("this Elector was stopped; create a new one")
        if self._state != "new":
            raise TenureError(f"Elector already {self._state}", "already_started")
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._callbacks = asyncio.Queue()
        self._leader_event = asyncio.Event()
        self._stopped_event = asyncio.Event()

        def deliver(*event: Any) -> None:  # on the runtime thread
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody is listening
                loop.call_soon_threadsafe(self._on_event, event)

        self._rt = self._options.spawn(deliver, defer_confirm=self._confirm is not None)
        self._state = "running"
        self._dispatcher = loop.create_task(self._dispatch())

    async def stop(self, handover_timeout_ms: Optional[int] = None, callback_timeout_ms: int = 1000) -> None:
        """Stops the node gracefully: a leader hands leadership to the peer the core picks and
        waits (up to ``handover_timeout_ms``, default one ``election_timeout_max``) for a new
        leader to be known. Callbacks already queued get ``callback_timeout_ms`` to run; then
        the rest are dropped. Idempotent; later use of the elector raises
        :class:`tenure.StoppedError`."""
        callback_timeout_ms = _native.check_millis(callback_timeout_ms, "callback_timeout_ms")
        if handover_timeout_ms is not None:
            handover_timeout_ms = _native.check_millis(handover_timeout_ms, "handover_timeout_ms")
        if self._state == "new":
            self._state = "stopped"
            return
        if self._state == "stopped":
            return
        if self._stop_task is None:
            self._stop_task = asyncio.get_running_loop().create_task(
                self._stop(handover_timeout_ms, callback_timeout_ms)
            )
        await asyncio.shield(self._stop_task)

    async def _stop(self, handover_timeout_ms: Optional[int], callback_timeout_ms: int) -> None:
        self._state = "stopping"
        rt = self._rt
        assert rt is not None and self._stopped_event is not None
        await asyncio.get_running_loop().run_in_executor(None, rt.stop, handover_timeout_ms)
        with contextlib.suppress(asyncio.TimeoutError):  # the 'stopped' event is queued behind the others
            await asyncio.wait_for(self._stopped_event.wait(), 1.0)
        self._lose_leadership()
        if self._callbacks is not None and self._dispatcher is not None:
            self._callbacks.put_nowait(None)
            done, _ = await asyncio.wait({self._dispatcher}, timeout=callback_timeout_ms / 1000)
            if not done:
                self._dispatcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._dispatcher
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        self._state = "stopped"

    async def wait_stopped(self) -> None:
        """Returns when the runtime has stopped (by :meth:`stop`, a fatal error or the failure
        policy); raises the error that stopped it, if any."""
        if self._stopped_event is not None:
            await self._stopped_event.wait()
        if self._stop_task is not None:
            await asyncio.shield(self._stop_task)
        if self._failure is not None:
            raise self._failure

    async def run_until_signal(self, signals: Iterable[int] = (signal.SIGTERM, signal.SIGINT)) -> None:
        """Starts (if needed) and runs until one of ``signals`` arrives, then stops gracefully
        (hands leadership over). Raises the error that stopped the node on its own, if one did."""
        if self._state == "new":
            await self.start()
        loop = asyncio.get_running_loop()
        got = asyncio.Event()
        installed = []
        for sig in signals:
            loop.add_signal_handler(sig, got.set)
            installed.append(sig)
        try:
            assert self._stopped_event is not None
            waiters = {loop.create_task(got.wait()), loop.create_task(self._stopped_event.wait())}
            _, pending = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            for t in pending:
                t.cancel()
        finally:
            for sig in installed:
                loop.remove_signal_handler(sig)
        await self.stop()
        if self._failure is not None:
            raise self._failure

    async def __aenter__(self) -> Elector:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ----- queries ---------------------------------------------------------------------------------

    @property
    def id(self) -> str:
        """This node's id (``HOST:PORT``)."""
        return self._options.config.id

    @property
    def lease(self) -> Optional[Lease]:
        """The current leadership's :class:`Lease`, or ``None`` when not leading."""
        return self._lease

    @property
    def running(self) -> bool:
        """Whether the elector is started and not stopped."""
        return self._state == "running" and self._rt is not None and self._rt.running

    @property
    def error(self) -> Optional[BaseException]:
        """The error that stopped the node on its own (the state file could not be written, or
        leader-only work kept failing), or ``None``."""
        return self._failure

    def now_ms(self) -> int:
        """The runtime's clock (monotonic milliseconds), the clock of :attr:`Lease.deadline`."""
        return self._running().now_ms()

    # ----- inputs ----------------------------------------------------------------------------------

    def _running(self) -> _native.Runtime:
        if self._rt is None:
            if self._state == "stopped":
                raise StoppedError("this Elector was stopped")
            raise TenureError("the Elector is not started (await start() first)", "not_started")
        if self._state == "stopped":
            raise StoppedError("this Elector was stopped")
        return self._rt

    # ----- leader-only work ------------------------------------------------------------------------

    def while_leader(self, fn: LeaderWorkFn) -> LeaderWork:
        """Runs ``await fn(lease)`` every time this node becomes leader, as a task that is cancelled
        the moment leadership is lost (or the elector stops). Returns a handle to withdraw it.
        Failures follow the elector's :class:`FailurePolicy`."""
        if self._state == "stopped":
            raise StoppedError("this Elector was stopped")
        if not callable(fn):
            raise TypeError("while_leader needs an async function taking a Lease")
        work = LeaderWork(self, fn)
        self._work.add(work)
        if self._lease is not None and self._loop is not None:
            self._start_work(work, self._lease)
        return work

    async def wait_leader(self) -> Lease:
        """Waits until this node leads and returns the lease."""
        while True:
            if self._lease is not None:
                return self._lease
            if self._state == "stopped" or (self._stopped_event is not None and self._stopped_event.is_set()):
                raise StoppedError("the elector stopped")
            if self._leader_event is None or self._stopped_event is None:
                raise TenureError("the Elector is not started (await start() first)", "not_started")
            waiters = {
                asyncio.ensure_future(self._leader_event.wait()),
                asyncio.ensure_future(self._stopped_event.wait()),
            }
            _, pending = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            for t in pending:
                t.cancel()

    @contextlib.asynccontextmanager
    async def leadership(self) -> AsyncIterator[Lease]:
        """``async with elector.leadership() as lease:`` waits for leadership, then runs the block
        while leading. If leadership is lost inside the block, the block is cancelled at once and
        :class:`tenure.LeadershipLost` is raised out of the ``async with``."""
        lease = await self.wait_leader()
        await lease.wait_valid()
        task = asyncio.current_task()
        assert task is not None
        cancelled_by_us = False

        def on_lost() -> None:
            nonlocal cancelled_by_us
            if not task.done():
                cancelled_by_us = True
                task.cancel()

        watcher = asyncio.get_running_loop().create_task(lease.wait_lost())
        watcher.add_done_callback(lambda t: None if t.cancelled() else on_lost())
        self._work_began()
        try:
            yield lease
        except asyncio.CancelledError:
            if cancelled_by_us:
                uncancel = getattr(task, "uncancel", None)
                if uncancel is not None:
                    uncancel()
                raise LeadershipLost(f"leadership of term {lease.term} was lost") from None
            raise
        finally:
            watcher.cancel()
            self._work_ended()

    # ----- internals: events from the runtime thread -----------------------------------------------

    def _on_event(self, event: RuntimeEvent) -> None:
        kind = event[0]
        if kind == "leader":
            self._gain_leadership(event[1])
        elif kind == "follower":
            self._lose_leadership()
        elif kind == "confirm_leader":
            self._spawn(self._confirm_task(event[1]))
        elif kind == "fatal":
            self._failure = event[1]
            log.error("tenure: the runtime stopped: %s", event[1])
        elif kind == "stopped":
            self._last_term = event[1]
            self._lose_leadership()
            if self._stopped_event is not None:
                self._stopped_event.set()
            if self._state == "running" and self._loop is not None:  # stopped on its own
                self._stop_task = self._loop.create_task(self._stop(None, 1000))
        callback = self._callback_for(event)
        if callback is not None and self._callbacks is not None:
            self._callbacks.put_nowait(callback)

    # ----- internals: leadership and the failure policy --------------------------------------------

    def _gain_leadership(self, term: int) -> None:
        self._lose_leadership()
        lease = Lease(self, term)
        self._lease = lease
        if self._leader_event is not None:
            self._leader_event.set()
        for work in list(self._work):
            self._start_work(work, lease)

    def _lose_leadership(self) -> None:
        lease = self._lease
        if lease is None:
            return
        self._lease = None
        if self._leader_event is not None:
            self._leader_event.clear()
        lease._lose()
        for work in self._work:
            if work.task is not None:
                work.task.cancel()
                work.task = None

    def _start_work(self, work: LeaderWork, lease: Lease) -> None:
        async def run() -> None:
            while True:
                try:
                    await lease.wait_valid()
                except LeadershipLost:
                    return
                try:
                    await work.fn(lease)
                    return
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("tenure: leader-only work failed (term %d)", lease.term)
                delay = self._work_failed(lease.term)
                if delay is None:
                    return
                await asyncio.sleep(delay / 1000)
                if lease.lost:
                    return

        work.task = self._spawn(run())
        self._work_began()
        work.task.add_done_callback(lambda _: self._work_ended())

    def _work_began(self) -> None:
        self._running_work += 1
        if self._running_work == 1 and self._rt is not None:
            self._rt.set_leader_work_running(True)

    def _work_ended(self) -> None:
        self._running_work -= 1
        if self._running_work == 0 and self._rt is not None:
            self._rt.set_leader_work_running(False)

    def _accepting_work(self) -> bool:
        return self._state == "running"

    def _retry_later(self, delay_ms: int, item: Tuple[str, Callable[..., Any], Tuple[Any, ...]]) -> None:
        loop, term = self._loop, item[2][0]

        def again() -> None:
            lease = self._lease
            if self._callbacks is not None and lease is not None and lease.term == term and not lease.lost:
                self._callbacks.put_nowait(item)

        if loop is not None:
            loop.call_later(delay_ms / 1000, again)

    async def _confirm_task(self, term: int) -> None:
        """Asks ``confirm_leader``; the runtime denies on its own when the answer comes later than
        ``confirm_timeout_ms`` (the answer is then dropped)."""
        assert self._confirm is not None
        try:
            granted = bool(await _call(self._confirm, term))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("tenure: confirm_leader(%d) failed: denied", term)
            granted = False
        if self._rt is None or self._state != "running":
            return
        with contextlib.suppress(TenureError):  # answered too late: the runtime denied it already
            self._rt.confirm_leader(term, granted)

    # ----- internals: callbacks --------------------------------------------------------------------

    def _spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        assert self._loop is not None
        task: asyncio.Task[Any] = self._loop.create_task(coro)  # type: ignore[arg-type]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _dispatch(self) -> None:
        assert self._callbacks is not None
        while True:
            item = await self._callbacks.get()
            if item is None:
                return
            kind, fn, args = item
            try:
                await _call(fn, *args)
            except Exception:
                self._callback_failed(kind, fn, args)

    def __repr__(self) -> str:
        return f"<tenure.Elector id={self.id!r} role={self.role.value} term={self.term} {self._state}>"
