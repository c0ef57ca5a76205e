"""Prometheus metrics for an :class:`tenure.Elector` (or :class:`tenure.SyncElector`) through
``prometheus_client`` — the optional extra ``pip install 'tenure[prometheus]'``.

:class:`TenureCollector` maps the runtime's metrics snapshot (``Elector.metrics()``, the numbers
the Rust runtime counts and the ``tenure run --http`` sidecar serves at ``/metrics``) to metric
families on every scrape. Nothing is counted in Python: the same names, types and values as the
sidecar's ``/metrics`` (``docs/http.md`` lists them)::

    from prometheus_client import start_http_server
    from tenure.prometheus import TenureCollector

    elector = tenure.Elector("10.0.0.1:7946", peers, cluster="jobs")
    TenureCollector(elector)          # registers with prometheus_client's default REGISTRY
    start_http_server(9100)
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Protocol

from prometheus_client.core import (
    REGISTRY,
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector, CollectorRegistry

from . import _tables
from ._tables import METRIC_FAMILIES
from .errors import TenureError

__all__ = ["ROLES", "TenureCollector"]

ROLES = _tables.ROLES
"""Every value of the ``role`` label of ``tenure_role``."""


# Names, types and help texts are the runtime's (generated from runtime/src/metrics.rs); only the
# mapping from a snapshot to samples is written here.
_HELP = {name: doc for name, _, doc, _ in METRIC_FAMILIES}


class _HasMetrics(Protocol):
    def metrics(self) -> Dict[str, Any]: ...


def _families(m: Optional[Dict[str, Any]]) -> Iterable[Metric]:
    """The metric families of a snapshot (``None``: the families without samples, for describe)."""

    def gauge(name: str, value: float) -> GaugeMetricFamily:
        doc = _HELP[name]
        return GaugeMetricFamily(name, doc, value=value) if m is not None else GaugeMetricFamily(name, doc)

    def counter(name: str, value: float) -> CounterMetricFamily:
        doc = _HELP[name]
        return CounterMetricFamily(name, doc, value=value) if m is not None else CounterMetricFamily(name, doc)

    s: Dict[str, Any] = m if m is not None else {}
    yield gauge("tenure_is_leader", 1 if s.get("is_leader") else 0)
    yield gauge("tenure_term", s.get("term", 0))
    roles = GaugeMetricFamily("tenure_role", _HELP["tenure_role"], labels=["role"])
    if m is not None:
        for role in ROLES:
            roles.add_metric([role], 1 if s["role"] == role else 0)
    yield roles
    yield counter("tenure_leader_changes", s.get("leader_changes", 0))
    yield counter("tenure_elections", s.get("elections", 0))
    yield counter("tenure_leader_work_failures", s.get("leader_work_failures", 0))
    yield counter("tenure_leader_work_step_downs", s.get("leader_work_step_downs", 0))
    dropped = CounterMetricFamily("tenure_messages_dropped", _HELP["tenure_messages_dropped"], labels=["reason"])
    for reason, n in s.get("dropped", {}).items():
        dropped.add_metric([reason], n)
    yield dropped
    peers = GaugeMetricFamily("tenure_peers", _HELP["tenure_peers"], labels=["state"])
    for state, n in s.get("peers", {}).items():
        peers.add_metric([state], n)
    yield peers
    heard = GaugeMetricFamily(
        "tenure_peer_last_heard_seconds",
        _HELP["tenure_peer_last_heard_seconds"],
        labels=["peer"],
    )
    for peer, ms in s.get("peer_last_heard_ms", {}).items():
        if ms is not None:
            heard.add_metric([peer], ms / 1000)
    yield heard
    acked = GaugeMetricFamily(
        "tenure_peer_last_ack_seconds",
        _HELP["tenure_peer_last_ack_seconds"],
        labels=["peer"],
    )
    for peer, ms in s.get("peer_last_ack_ms", {}).items():
        acked.add_metric([peer], ms / 1000)
    yield acked
    if m is None or s.get("quorum_slack") is not None:
        yield gauge("tenure_quorum_slack", s.get("quorum_slack") or 0)
        yield gauge("tenure_peers_silent", len(s.get("silent_peers", [])))
    if m is None or s.get("wire_version") is not None:
        yield gauge("tenure_wire_version", s.get("wire_version") or 0)
    failover = HistogramMetricFamily("tenure_failover_seconds", _HELP["tenure_failover_seconds"])
    if m is not None:
        f = s["failover"]
        buckets = [(str(float(le)), n) for le, n in f["buckets"]] + [("+Inf", f["count"])]
        failover.add_metric([], buckets, f["sum_seconds"])
    yield failover
    build = GaugeMetricFamily("tenure_build_info", _HELP["tenure_build_info"], labels=["version"])
    if m is not None:
        build.add_metric([s["version"]], 1)
    yield build


class TenureCollector(Collector):
    """A ``prometheus_client`` collector for one elector: on every scrape, the elector's
    :meth:`~tenure.Elector.metrics` snapshot as ``tenure_*`` metric families (see ``docs/http.md``).

    Registers itself with ``registry`` (the default ``REGISTRY``; ``None`` to register it yourself),
    like ``prometheus_client``'s own ``ProcessCollector``. Before the elector is started and after
    it stopped, a scrape yields no ``tenure_*`` samples (the families stay described).
    """

    def __init__(self, elector: _HasMetrics, registry: Optional[CollectorRegistry] = REGISTRY) -> None:
        self._elector = elector
        if registry is not None:
            registry.register(self)

    def describe(self) -> Iterable[Metric]:
        return list(_families(None))

    def collect(self) -> Iterable[Metric]:
        try:
            snapshot = self._elector.metrics()
        except TenureError:
            return []
        return list(_families(snapshot))
