"""What :class:`tenure.Elector` (asyncio) and :class:`tenure.SyncElector` (threads) share: the one
mapping from runtime events to user callbacks, what a failing ``on_leader`` means, and the queries
and inputs on the running runtime. The two differ only in where callbacks run (a task on the
event loop, or the ``tenure-callbacks`` thread)."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, Optional, Tuple, TypedDict, Union

from . import _native, _tables
from ._types import Config, PeerDownReason, Role
from .errors import TenureError

log = logging.getLogger("tenure")

Address = Tuple[str, int]


# The runtime's defaults (one set, in tenure-runtime's FailurePolicy).
_POLICY_DEFAULTS = _native.failure_policy_defaults()


@dataclass(frozen=True)
class FailurePolicy:
    """What happens when leader-only work keeps failing (see the module docs). The runtime
    (``tenure-runtime``) counts the failures and decides, for this package, the Node.js one and
    ``tenure run -- CMD`` alike; this only configures it."""

    max_failures: int = _POLICY_DEFAULTS[0]
    """Consecutive failures of leader-only work in one leadership before handing leadership over
    (default 3)."""
    max_step_downs: Optional[int] = _POLICY_DEFAULTS[1]
    """Consecutive leaderships ended by failing work before the elector stops with
    :class:`tenure.LeaderWorkError`; ``None`` (the default): never stop for that, keep backing off
    and participating (an outage of something the work needs must not end leadership for good)."""
    backoff_ms: int = _POLICY_DEFAULTS[2]
    """The first restart delay in milliseconds; doubles after each failure (default 100)."""
    max_backoff_ms: int = _POLICY_DEFAULTS[3]
    """The longest restart delay in milliseconds, and the longest time a node that handed over
    campaigns last (default 5000)."""

    def __post_init__(self) -> None:
        _native.check_failure_policy(self._args())

    def _args(self) -> Tuple[int, Optional[int], int, int]:
        return (self.max_failures, self.max_step_downs, self.backoff_ms, self.max_backoff_ms)

    def delay_ms(self, failures: int) -> int:
        """The restart delay in milliseconds after ``failures`` consecutive failures."""
        return _native.failure_delay(self._args(), failures)


def _bind_str(bind: Union[str, Address, None]) -> Optional[str]:
    if bind is None or isinstance(bind, str):
        return bind
    host, port = bind
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@dataclass
class _Options:
    """The arguments shared by :class:`tenure.Elector` and :class:`tenure.SyncElector`, checked."""

    config: Config
    bind: Optional[str]
    state_file: Optional[str]
    key_file: Optional[str]
    confirm_timeout_ms: Optional[int]
    handover_timeout_ms: Optional[int]
    seed: Optional[int]
    log: bool
    failure_policy: FailurePolicy
    http: Optional[str] = None
    ready_when: str = "node"
    pod_label: Optional[str] = None
    service_account: Optional[str] = None

    def spawn(self, callback: Callable[..., None], defer_confirm: bool) -> _native.Runtime:
        return _native.spawn_runtime(
            self.config,
            callback,
            bind=self.bind,
            state_file=self.state_file,
            key_file=self.key_file,
            confirm_timeout_ms=self.confirm_timeout_ms,
            handover_timeout_ms=self.handover_timeout_ms,
            defer_confirm=defer_confirm,
            seed=self.seed,
            log=self.log,
            http=self.http,
            ready_when=self.ready_when,
            failure_policy=self.failure_policy._args(),
            pod_label=self.pod_label,
            service_account=self.service_account,
        )


class ElectorOptions(TypedDict, total=False):
    """The keyword options :class:`tenure.Elector` and :class:`tenure.SyncElector` share: the one
    list (a new option is added here, read in :func:`_options`, and both constructors take it; type
    checkers and IDEs show these keys in both signatures through ``**options: Unpack[...]``).
    Defaults and meanings: the options table in the Python README."""

    cluster: str
    config: Config
    min_cluster_size: int
    election_timeout_min: Optional[int]
    election_timeout_max: Optional[int]
    heartbeat_interval: int
    lease_duration: Optional[int]
    ghost_ttl: int
    pre_vote: bool
    admit_unknown_peers: bool
    max_peers: int
    max_clock_drift_ppm: int
    incarnation: Optional[int]
    value: Optional[str]
    priority: int
    never_lead: bool
    preempt_after: Optional[int]
    observer: bool
    observer_peers: Iterable[str]
    state_file: Union[str, os.PathLike[str], None]
    key: Union[bytes, str, None]
    key_file: Union[str, os.PathLike[str], None]
    handover_timeout_ms: Optional[int]
    failure_policy: Optional[FailurePolicy]
    bind: Union[str, Address, None]
    seed: Optional[int]
    log: bool
    http: Optional[str]
    ready_when: str
    pod_label: Optional[str]
    service_account: Union[str, os.PathLike[str], None]


def _options(
    id: Optional[str],
    peers: Iterable[str],
    options: ElectorOptions,
    confirm_timeout_ms: Optional[int] = None,
) -> _Options:
    """Checks an elector's arguments (typed errors naming the bad value, before anything runs)."""
    unknown = sorted(set(options) - set(ElectorOptions.__annotations__))
    if unknown:
        raise TypeError(f"unexpected keyword argument(s): {', '.join(unknown)}")
    config = options.get("config")
    cluster = options.get("cluster")
    key = options.get("key")
    # The options that are the core's configuration (the runtime's one list; the rest configure
    # the runtime); defaults: Config's.
    core: Dict[str, Any] = {k: options[k] for k in _tables.CONFIG_OPTIONS if k in options}  # type: ignore[literal-required]
    if config is None:
        if id is None or cluster is None:
            raise TypeError("Elector needs id and cluster (or config=)")
        if isinstance(peers, str):
            raise TypeError("peers must be a list of HOST:PORT strings, not a single str")
        config = Config(id=id, cluster=cluster, bootstrap=tuple(peers), **core)
    elif key is not None:
        raise TypeError("pass key= inside config= when config= is given")
    fields = {f: getattr(config, f) for f in config.__dataclass_fields__}
    # The runtime makes term and vote durable when a state file is given, and owns the leadership
    # gate (it asks confirm_leader, if any).
    config = Config(**{**fields, "durable": False})
    bind_s = _bind_str(options.get("bind"))
    http = options.get("http")
    ready_when = options.get("ready_when", "node")
    pod_label = options.get("pod_label")
    service_account = options.get("service_account")
    sa = os.fspath(service_account) if service_account is not None else None
    state_file = options.get("state_file")
    key_file = options.get("key_file")
    handover_timeout_ms = options.get("handover_timeout_ms")
    # Everything the runtime checks at start (the addresses, the key file, the options, then the
    # core's configuration), checked now, in the runtime's order.
    _native.validate_runtime(
        config,
        bind=bind_s,
        state_file=os.fspath(state_file) if state_file is not None else None,
        key_file=os.fspath(key_file) if key_file is not None else None,
        http=http,
        ready_when=ready_when,
        confirm_timeout_ms=confirm_timeout_ms,
        handover_timeout_ms=handover_timeout_ms,
        pod_label=pod_label,
        service_account=sa,
    )
    failure_policy = options.get("failure_policy")
    return _Options(
        config=config,
        bind=bind_s,
        state_file=os.fspath(state_file) if state_file is not None else None,
        key_file=os.fspath(key_file) if key_file is not None else None,
        confirm_timeout_ms=confirm_timeout_ms,
        handover_timeout_ms=handover_timeout_ms,
        seed=options.get("seed"),
        log=options.get("log", False),
        http=http,
        ready_when=ready_when,
        pod_label=pod_label,
        service_account=sa,
        failure_policy=failure_policy if failure_policy is not None else FailurePolicy(),
    )


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

    def _callback_failed(self, kind: str, fn: Callback, args: Tuple[Any, ...]) -> None:
        """A user callback raised (called inside ``except``). A failing ``on_leader`` is leader work
        that failed: reported to the runtime's failure policy, which decides, as for every other
        leader work: ``on_leader`` runs again in the same leadership after the policy's delay, or
        leadership is handed over."""
        log.exception("tenure: callback on_%s failed", kind)
        if kind == "leader":
            term = args[0]
            delay_ms = self._work_failed(term)
            if delay_ms is not None:
                self._retry_later(delay_ms, (kind, fn, args))

    def _work_failed(self, term: int) -> Optional[int]:
        """Reports a failure of leader work in ``term`` to the runtime's failure policy: the delay
        in milliseconds before running it again in this leadership, or ``None`` (stepped down, or
        the runtime is stopping: its ``fatal`` event carries the :class:`tenure.LeaderWorkError`)."""
        rt = self._rt
        if rt is None or not self._accepting_work():
            return None
        try:
            return rt.leader_work_failed(term)
        except TenureError:  # no longer leading that term: nothing to roll back
            return None

    def _accepting_work(self) -> bool:
        """Whether leader work may still run (not stopping)."""
        raise NotImplementedError

    def _retry_later(self, delay_ms: int, item: Tuple[str, Callback, Tuple[Any, ...]]) -> None:
        """Delivers the ``on_leader`` callback ``item`` again after ``delay_ms``, if this node
        still leads its term then."""
        raise NotImplementedError

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

    @property
    def leader_value(self) -> Optional[str]:
        """The value the leader proclaims (``value=``, :meth:`proclaim`), as this node knows it:
        its own while leading, learned within a heartbeat interval while following; ``None`` when
        no leader is known or it has none. An ``on_follower`` callback runs again when it changes."""
        return self._rt.leader_value if self._rt is not None else None

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

    def proclaim(self, value: str) -> None:
        """Changes the value this node proclaims while it leads (empty: none); every member reports
        it as :attr:`leader_value` within a heartbeat interval. Raises
        :class:`tenure.NotLeaderError` when not leading, :class:`tenure.ConfigError`
        (``value_too_long``) above 256 bytes."""
        self._running().proclaim(value)

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
