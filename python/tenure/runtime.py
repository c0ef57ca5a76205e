"""The asyncio runtime: one tenure node over UDP, with real timers and your callbacks.

:class:`Elector` binds a datagram endpoint on the node's ``HOST:PORT`` id, feeds every datagram and
every deadline to a sans-IO :class:`tenure.Node`, drains its outputs after every input (writing
``Persist`` to the state file with fsync before any later send) and delivers events to callbacks.

User code never runs inside the datagram or timer path: callbacks are queued and run by a separate
task, in order; a plain (sync) callback runs in a worker thread, so even a blocking one cannot stall
heartbeats. Leader-only work (:meth:`Elector.while_leader`, :meth:`Elector.leadership`) is cancelled
the moment leadership is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import ipaddress
import logging
import os
import socket
import time
from typing import (
    Any,
    AsyncIterator,
    Awaitable,
    Callable,
    Dict,
    Iterable,
    Optional,
    Set,
    Tuple,
    Union,
)

from ._native import Node
from ._types import (
    BecameFollower,
    BecameLeader,
    Config,
    ConfirmLeader,
    DurableState,
    Event,
    Message,
    PeerDownReason,
    PeerJoined,
    PeerLeft,
    Persist,
    Role,
    Send,
)
from .errors import (
    DecodeError,
    LeadershipLost,
    NoPendingConfirmError,
    NotLeaderInTermError,
    StateFileError,
    TenureError,
)

__all__ = ["Elector", "Lease", "LeaderWork", "now_ms", "read_state_file", "write_state_file"]

log = logging.getLogger("tenure")

Address = Tuple[str, int]
TermCallback = Callable[[int], Union[Awaitable[None], None]]
FollowerCallback = Callable[[int, Optional[str]], Union[Awaitable[None], None]]
PeerCallback = Callable[[str], Union[Awaitable[None], None]]
MessageCallback = Callable[[str, bytes], Union[Awaitable[None], None]]
ConfirmCallback = Callable[[int], Union[Awaitable[bool], bool]]
LeaderWorkFn = Callable[["Lease"], Awaitable[Any]]
EventHook = Callable[[Event], None]


def now_ms() -> int:
    """The monotonic clock every tenure input takes, in whole milliseconds."""
    return time.monotonic_ns() // 1_000_000


def parse_address(node_id: str) -> Address:
    """Splits a ``HOST:PORT`` (or ``[IPv6]:PORT``) node id into ``(host, port)``."""
    host, sep, port = node_id.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"node id {node_id!r} is not HOST:PORT")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def read_state_file(path: Union[str, os.PathLike[str]]) -> Optional[DurableState]:
    """Reads a state file written by :func:`write_state_file`; ``None`` when it does not exist.

    Raises :class:`tenure.StateFileError` when it exists but is not a valid state line.
    """
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    state = DurableState.decode(text)
    if state is None:
        raise StateFileError(f"state file {os.fspath(path)!r} does not hold a 'term voted_for' line: {text[:80]!r}")
    return state


def write_state_file(path: Union[str, os.PathLike[str]], state: DurableState) -> None:
    """Atomically replaces the state file with ``state``, durably: the data and the rename are
    both fsynced before this returns."""
    path = os.fspath(path)
    tmp = f"{path}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, state.encode().encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    directory = os.path.dirname(os.path.abspath(path))
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


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

    @property
    def deadline(self) -> Optional[int]:
        """The last instant (``tenure.now_ms()`` clock) at which this node can be sure that no
        other leader has been elected, from the heartbeats a quorum acknowledged; ``None`` once
        the lease is lost or before a quorum has acknowledged a heartbeat."""
        if self._lost.is_set():
            return None
        node = self._elector._node
        if not node.is_leader or node.term != self._term:
            return None
        return node.lease_deadline

    @property
    def valid(self) -> bool:
        """Whether leadership still holds and the deadline has not passed. Check it before each
        irreversible step."""
        deadline = self.deadline
        return deadline is not None and now_ms() < deadline

    @property
    def lost(self) -> bool:
        """Whether this leadership has ended."""
        return self._lost.is_set()

    async def wait_lost(self) -> None:
        """Returns when this leadership ends."""
        await self._lost.wait()

    def _lose(self) -> None:
        self._lost.set()

    def __repr__(self) -> str:
        return f"Lease(term={self._term}, deadline={self.deadline}, lost={self.lost})"


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


class _Protocol(asyncio.DatagramProtocol):
    def __init__(self, elector: Elector) -> None:
        self._elector = elector

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self._elector._on_datagram(data, addr)

    def error_received(self, exc: Exception) -> None:
        log.debug("tenure: UDP error: %s", exc)


class Elector:
    """Runs one tenure node over UDP with asyncio.

    ``Elector("127.0.0.1:7001", ["127.0.0.1:7002", "127.0.0.1:7003"], cluster="jobs",
    on_leader=start, on_follower=stop)``; then ``await elector.start()`` (or ``async with``)
    and ``await elector.stop()``.

    - ``id`` is this node's ``HOST:PORT``: the UDP address it binds (``bind=`` overrides) and its
      name for the peers, which are listed the same way.
    - Timing, ``min_cluster_size`` and ``pre_vote`` are as in :class:`tenure.Config`; or pass a
      whole ``config=`` (its ``id`` and ``bootstrap`` then replace ``id`` and ``peers``).
    - ``state_file=`` makes term and vote durable: written atomically with fsync before any
      later datagram leaves. ``key=`` (bytes or str) authenticates every message.
    - Callbacks may be plain functions or ``async def``. They run in order, outside the network
      path (plain ones in a worker thread). ``on_leader`` raising rolls leadership back.
      ``confirm_leader(term)`` returning false, raising or not answering within
      ``confirm_timeout`` seconds (default: ``election_timeout_min``) denies leadership.
    - ``event_hook`` is called synchronously, inside the network path, with every event: it must
      be fast and must not block (the command-line runtime prints with it).
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
        on_leader: Optional[TermCallback] = None,
        on_follower: Optional[FollowerCallback] = None,
        on_peer_joined: Optional[PeerCallback] = None,
        on_peer_left: Optional[PeerCallback] = None,
        on_message: Optional[MessageCallback] = None,
        confirm_leader: Optional[ConfirmCallback] = None,
        confirm_timeout: Optional[float] = None,
        event_hook: Optional[EventHook] = None,
        bind: Optional[Address] = None,
        seed: Optional[int] = None,
    ) -> None:
        if config is None:
            if id is None or cluster is None:
                raise TypeError("Elector needs id and cluster (or config=)")
            if isinstance(peers, str):
                raise TypeError("peers must be a list of HOST:PORT strings, not a single str")
            config = Config(
                id=id,
                cluster=cluster,
                bootstrap=tuple(peers),
                min_cluster_size=min_cluster_size,
                election_timeout_min=election_timeout_min,
                election_timeout_max=election_timeout_max,
                heartbeat_interval=heartbeat_interval,
                ghost_ttl=ghost_ttl,
                pre_vote=pre_vote,
                key=key,  # type: ignore[arg-type]  # Config.__post_init__ encodes str keys
            )
        elif key is not None:
            raise TypeError("pass key= inside config= when config= is given")
        config = Config(
            **{
                **{f: getattr(config, f) for f in config.__dataclass_fields__},
                "confirm_leader": True,
                "durable": state_file is not None,
            }
        )
        self._config = config
        self._valid = config.validate()
        self._state_file = os.fspath(state_file) if state_file is not None else None
        restored = read_state_file(self._state_file) if self._state_file is not None else None
        self._restored = restored
        self._seed = seed
        self._node = Node(config, now=now_ms(), seed=seed, restored=restored)
        self._bind = bind if bind is not None else parse_address(config.id)
        self._on_leader = on_leader
        self._on_follower = on_follower
        self._on_peer_joined = on_peer_joined
        self._on_peer_left = on_peer_left
        self._on_message = on_message
        self._confirm = confirm_leader
        ms = self._valid.election_timeout_min
        self._confirm_timeout = confirm_timeout if confirm_timeout is not None else ms / 1000
        self._event_hook = event_hook

        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._transport: Optional[asyncio.DatagramTransport] = None
        self._timer: Optional[asyncio.TimerHandle] = None
        self._timer_at: Optional[int] = None
        self._addr_of: Dict[str, Address] = {}
        self._id_of: Dict[Address, str] = {}
        self._callbacks: Optional[asyncio.Queue[Optional[Tuple[Callable[..., Any], Tuple[Any, ...]]]]] = None
        self._dispatcher: Optional[asyncio.Task[None]] = None
        self._tasks: Set[asyncio.Task[Any]] = set()
        self._work: Set[LeaderWork] = set()
        self._lease: Optional[Lease] = None
        self._leader_event: Optional[asyncio.Event] = None
        self._known_leader: Optional[asyncio.Event] = None
        self._family = socket.AF_INET
        self._stopped: Optional[asyncio.Event] = None
        self._state = "new"
        self._failure: Optional[BaseException] = None

    # ----- lifecycle ------------------------------------------------------------------------------

    async def start(self) -> None:
        """Binds the UDP endpoint and starts the node. Raises ``OSError`` if the address is taken
        or the state file cannot be written (it is written once here, so that a bad path fails
        now rather than at the first election)."""
        if self._state != "new":
            raise RuntimeError(f"Elector already {self._state}")
        if self._state_file is not None:
            write_state_file(self._state_file, DurableState(self._node.term, self._node.voted_for))
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._callbacks = asyncio.Queue()
        self._leader_event = asyncio.Event()
        self._known_leader = asyncio.Event()
        host, _ = self._bind
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._family = family
        for peer in self._node.view:
            if peer != self._node.id:
                await self._resolve(peer, family)
        transport, _ = await loop.create_datagram_endpoint(
            lambda: _Protocol(self), local_addr=self._bind, family=family
        )
        self._transport = transport
        self._dispatcher = loop.create_task(self._dispatch())
        self._state = "running"
        self._pump()

    async def stop(self, handover_timeout: Optional[float] = None, callback_timeout: float = 1.0) -> None:
        """Stops the node. A leader first transfers leadership to the peer the core picks
        (:meth:`Node.transfer_target`: answered, reachable, heard from most recently) and waits
        (up to ``handover_timeout`` seconds, default one ``election_timeout_max``) for a new
        leader to be known, so the cluster is leaderless for about one round trip instead of an
        election timeout. Callbacks already queued get
        ``callback_timeout`` seconds to run; then the rest are dropped (a plain callback still
        running in its thread is left to finish on its own).
        """
        if self._state == "stopping":
            assert self._stopped is not None
            await self._stopped.wait()  # another stop() is under way: wait for it
            return
        if self._state not in ("running", "failed"):
            self._state = "stopped"
            return
        was_running = self._state == "running"
        self._state = "stopping"
        self._stopped = asyncio.Event()
        node = self._node
        if was_running and node.is_leader:
            target = self._transfer_target()
            if target is not None:
                try:
                    node.transfer_leadership(now_ms(), target)
                except TenureError as e:  # pragma: no cover - the target is a member by construction
                    log.warning("tenure: leadership transfer to %s failed: %s", target, e)
                self._pump()
                timeout = handover_timeout
                if timeout is None:
                    timeout = self._valid.election_timeout_max / 1000
                assert self._known_leader is not None
                self._known_leader.clear()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._known_leader.wait(), timeout)
        self._close()
        if self._callbacks is not None and self._dispatcher is not None:
            self._callbacks.put_nowait(None)
            done, _ = await asyncio.wait({self._dispatcher}, timeout=callback_timeout)
            if not done:
                self._dispatcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._dispatcher
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        self._state = "stopped"
        self._stopped.set()

    def _close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._lose_leadership()
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    async def __aenter__(self) -> Elector:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ----- queries ---------------------------------------------------------------------------------

    @property
    def id(self) -> str:
        """This node's id (``HOST:PORT``)."""
        return self._node.id

    @property
    def node(self) -> Node:
        """The underlying sans-IO node (read it; feeding it inputs directly bypasses the runtime)."""
        return self._node

    @property
    def role(self) -> Role:
        """The current role."""
        return self._node.role

    @property
    def term(self) -> int:
        """The current term."""
        return self._node.term

    @property
    def leader(self) -> Optional[str]:
        """The leader known in the current term (this node's id when leading)."""
        return self._node.leader

    @property
    def is_leader(self) -> bool:
        """Whether this node leads."""
        return self._node.is_leader

    @property
    def lease(self) -> Optional[Lease]:
        """The current leadership's :class:`Lease`, or ``None`` when not leading."""
        return self._lease

    @property
    def running(self) -> bool:
        """Whether the elector is started and not stopped."""
        return self._state == "running"

    @property
    def error(self) -> Optional[BaseException]:
        """The error that stopped the node on its own (the state file could not be written), or
        ``None``. Such a node sends nothing more; ``stop()`` still cleans up."""
        return self._failure

    def inspect(self) -> Dict[str, Any]:
        """The whole election state (every key listed in the SPEC)."""
        return self._node.inspect()

    # ----- inputs ----------------------------------------------------------------------------------

    def broadcast(self, payload: bytes) -> None:
        """Sends ``payload`` to every member of the view (received by their ``on_message``)."""
        self._node.broadcast(now_ms(), payload)
        self._pump()

    def transfer_leadership(self, peer: str) -> None:
        """Hands leadership to ``peer`` at once (it campaigns without waiting for its timeout);
        this node stops leading now. Raises :class:`tenure.NotLeaderError` when not leading."""
        self._node.transfer_leadership(now_ms(), peer)
        self._pump()

    def join(self, peer: str) -> None:
        """Declares a peer ``HOST:PORT`` (idempotent)."""
        addr = parse_address(peer)
        self._node.join(now_ms(), peer)
        if _is_ip(addr[0]):
            self._remember(peer, addr)
        elif self._loop is not None:
            self._spawn(self._resolve(peer, self._family))
        self._pump()

    def leave(self, peer: str) -> None:
        """Withdraws a peer from the view (lowers the quorum: see the README's guarantees)."""
        self._node.leave(now_ms(), peer)
        self._pump()

    def peer_down(self, peer: str, reason: Union[PeerDownReason, str] = PeerDownReason.NO_CONNECTION) -> None:
        """Reports a peer down (see :meth:`tenure.Node.peer_down`)."""
        self._node.peer_down(now_ms(), peer, reason)
        self._pump()

    # ----- leader-only work ------------------------------------------------------------------------

    def while_leader(self, fn: LeaderWorkFn) -> LeaderWork:
        """Runs ``await fn(lease)`` every time this node becomes leader, as a task that is cancelled
        the moment leadership is lost (or the elector stops). Returns a handle to withdraw it."""
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
            if self._leader_event is None or self._state != "running":
                raise RuntimeError("the elector is not running")
            await self._leader_event.wait()

    @contextlib.asynccontextmanager
    async def leadership(self) -> AsyncIterator[Lease]:
        """``async with elector.leadership() as lease:`` waits for leadership, then runs the block
        while leading. If leadership is lost inside the block, the block is cancelled at once and
        :class:`tenure.LeadershipLost` is raised out of the ``async with``."""
        lease = await self.wait_leader()
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

    # ----- internals: the network path ------------------------------------------------------------

    def _remember(self, peer: str, addr: Address) -> None:
        self._addr_of[peer] = addr
        self._id_of[addr] = peer

    async def _resolve(self, peer: str, family: int) -> None:
        host, port = parse_address(peer)
        if _is_ip(host):
            self._remember(peer, (host, port))
            return
        assert self._loop is not None
        try:
            infos = await self._loop.getaddrinfo(host, port, family=family, type=socket.SOCK_DGRAM)
        except OSError as e:
            log.warning("tenure: cannot resolve peer %s: %s", peer, e)
            return
        if infos:
            sockaddr = infos[0][4]
            self._remember(peer, (str(sockaddr[0]), int(sockaddr[1])))

    def _on_datagram(self, data: bytes, addr: Any) -> None:
        if self._state not in ("running", "stopping"):
            return
        key = (addr[0], addr[1])
        sender = self._id_of.get(key)
        if sender is None:
            sender = f"[{key[0]}]:{key[1]}" if ":" in key[0] else f"{key[0]}:{key[1]}"
            self._addr_of.setdefault(sender, key)
        try:
            self._node.handle_message(now_ms(), sender, data)
        except DecodeError:
            return
        self._pump()

    def _on_timer(self) -> None:
        self._timer = None
        self._timer_at = None
        if self._state not in ("running", "stopping"):
            return
        self._node.handle_timeout(now_ms())
        self._pump()

    def _pump(self) -> None:
        """Drains every output in order, then re-arms the timer."""
        node = self._node
        while True:
            out = node.poll_output()
            if out is None:
                break
            kind = type(out)
            if kind is Send:
                self._send(out.to, out.data)  # type: ignore[union-attr]
            elif kind is Persist:
                if not self._persist(out):  # type: ignore[arg-type]
                    return
            else:
                self._on_event(out)  # type: ignore[arg-type]
        self._arm()

    def _send(self, to: str, data: bytes) -> None:
        transport = self._transport
        if transport is None:
            return
        addr = self._addr_of.get(to)
        if addr is None:
            try:
                addr = parse_address(to)
            except ValueError:
                return
            if not _is_ip(addr[0]):
                return  # still resolving; the protocol tolerates loss
        try:
            transport.sendto(data, addr)
        except OSError as e:  # pragma: no cover - sendto on UDP rarely fails
            log.debug("tenure: send to %s failed: %s", to, e)

    def _persist(self, out: Persist) -> bool:
        if self._state_file is None:
            return True
        try:
            write_state_file(self._state_file, out.state)
        except OSError as e:
            # Nothing that depends on this state may leave: stop the node where it stands.
            log.error("tenure: cannot write state file %s: %s; stopping", self._state_file, e)
            self._failure = e
            self._state = "failed"
            self._close()
            return False
        return True

    def _arm(self) -> None:
        loop = self._loop
        if loop is None or self._state not in ("running", "stopping"):
            return
        deadline = self._node.poll_timeout()
        if deadline == self._timer_at and self._timer is not None:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._timer_at = deadline
        if deadline is not None:
            delay = max(0, deadline - now_ms()) / 1000
            self._timer = loop.call_later(delay, self._on_timer)

    def _on_event(self, event: Event) -> None:
        if self._event_hook is not None and not isinstance(event, ConfirmLeader):
            try:
                self._event_hook(event)
            except Exception:
                log.exception("tenure: event_hook failed")
        if isinstance(event, ConfirmLeader):
            if self._confirm is None:
                try:
                    self._node.confirm_leader(now_ms(), event.term, True)
                except NoPendingConfirmError:  # pragma: no cover - answered at once
                    pass
            else:
                self._spawn(self._confirm_task(event.term))
        elif isinstance(event, BecameLeader):
            self._gain_leadership(event.term)
            assert self._known_leader is not None
            self._known_leader.set()
            if self._on_leader is not None:
                self._queue(self._leader_callback, event.term)
        elif isinstance(event, BecameFollower):
            self._lose_leadership()
            if event.leader is not None and self._known_leader is not None:
                self._known_leader.set()
            if self._on_follower is not None:
                self._queue(self._on_follower, event.term, event.leader)
        elif isinstance(event, PeerJoined):
            if self._on_peer_joined is not None:
                self._queue(self._on_peer_joined, event.peer)
        elif isinstance(event, PeerLeft):
            if self._on_peer_left is not None:
                self._queue(self._on_peer_left, event.peer)
        elif isinstance(event, Message):
            if self._on_message is not None:
                self._queue(self._on_message, event.sender, event.payload)

    # ----- internals: leadership -------------------------------------------------------------------

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
            try:
                await work.fn(lease)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("tenure: leader-only work failed")

        work.task = self._spawn(run())

    def _transfer_target(self) -> Optional[str]:
        """The core's choice (the freshest answered, reachable peer), else the first other peer
        of the view, else ``None``."""
        target = self._node.transfer_target()
        if target is not None:
            return target
        return next((p for p in self._node.view if p != self._node.id), None)

    async def _confirm_task(self, term: int) -> None:
        assert self._confirm is not None
        try:
            granted = bool(await asyncio.wait_for(_call(self._confirm, term), self._confirm_timeout))
        except asyncio.CancelledError:
            raise
        except asyncio.TimeoutError:
            log.warning("tenure: confirm_leader(%d) did not answer in %.3f s: denied", term, self._confirm_timeout)
            granted = False
        except Exception:
            log.exception("tenure: confirm_leader(%d) failed: denied", term)
            granted = False
        if self._state != "running":
            return
        try:
            self._node.confirm_leader(now_ms(), term, granted)
        except NoPendingConfirmError:
            return
        self._pump()

    async def _leader_callback(self, term: int) -> None:
        assert self._on_leader is not None
        try:
            await _call(self._on_leader, term)
        except Exception:
            log.exception("tenure: on_leader(%d) failed: leadership rolled back", term)
            if self._state == "running":
                try:
                    self._node.leader_handler_failed(now_ms(), term)
                except NotLeaderInTermError:
                    return
                self._pump()

    # ----- internals: callbacks --------------------------------------------------------------------

    def _spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        assert self._loop is not None
        task: asyncio.Task[Any] = self._loop.create_task(coro)  # type: ignore[arg-type]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _queue(self, fn: Callable[..., Any], *args: Any) -> None:
        if self._callbacks is not None:
            self._callbacks.put_nowait((fn, args))

    async def _dispatch(self) -> None:
        assert self._callbacks is not None
        while True:
            item = await self._callbacks.get()
            if item is None:
                return
            fn, args = item
            try:
                if fn == self._leader_callback:
                    await fn(*args)
                else:
                    await _call(fn, *args)
            except Exception:
                log.exception("tenure: callback %s failed", getattr(fn, "__name__", fn))

    def __repr__(self) -> str:
        return f"<tenure.Elector id={self.id!r} role={self.role.value} term={self.term} {self._state}>"


__all__ += ["parse_address"]
