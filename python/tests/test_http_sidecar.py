"""The HTTP sidecar of `python -m tenure run --http 127.0.0.1:0` (the same Rust runtime as every
host), read with a plain HTTP client and `/metrics` validated by prometheus_client's own parser;
and :class:`tenure.prometheus.TenureCollector` against a live in-process cluster."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Dict, Iterator, List, Tuple

import pytest
from conftest import free_udp_ports
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

import tenure
from tenure.prometheus import TenureCollector

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes")

EXPECTED_TYPES = {
    "tenure_is_leader": "gauge",
    "tenure_term": "gauge",
    "tenure_role": "gauge",
    "tenure_leader_changes": "counter",
    "tenure_elections": "counter",
    "tenure_leader_work_failures": "counter",
    "tenure_leader_work_step_downs": "counter",
    "tenure_messages_dropped": "counter",
    "tenure_peers": "gauge",
    "tenure_failover_seconds": "histogram",
    "tenure_build_info": "gauge",
}


def get(addr: str, path: str) -> Tuple[int, str, str]:
    try:
        with urllib.request.urlopen(f"http://{addr}{path}", timeout=5) as r:
            return r.status, r.headers["Content-Type"], r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"], e.read().decode()


def parse(text: str) -> Dict[str, Any]:
    """Metric families by name, through prometheus_client's parser (raises on a malformed line)."""
    return {f.name: f for f in text_string_to_metric_families(text)}


def value(families: Dict[str, Any], family: str, sample: str, **labels: str) -> float:
    for s in families[family].samples:
        if s.name == sample and all(s.labels.get(k) == v for k, v in labels.items()):
            return float(s.value)
    raise AssertionError(f"no sample {sample}{labels} in {families[family]}")


class Sidecars:
    """Three `python -m tenure run --http 127.0.0.1:0` processes; their JSON lines by id."""

    def __init__(self, ready_when: str) -> None:
        self.ids = [f"127.0.0.1:{p}" for p in free_udp_ports(3)]
        self.procs: List[subprocess.Popen[str]] = []
        self.http: Dict[str, str] = {}
        self.lines: List[Dict[str, Any]] = []
        self.cond = threading.Condition()
        for node_id in self.ids:
            args = [sys.executable, "-m", "tenure", "run", "--id", node_id, "--cluster", "http-test",
                    "--http", "127.0.0.1:0", "--ready-when", ready_when]  # fmt: skip
            args += [a for p in self.ids if p != node_id for a in ("--peer", p)]
            proc = subprocess.Popen(
                args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1
            )
            self.procs.append(proc)
            threading.Thread(target=self._read, args=(proc,), daemon=True).start()
        for node_id in self.ids:
            line = self.wait(lambda x, i=node_id: x["event"] == "http_listening" and x["id"] == i, 10)
            self.http[node_id] = line["addr"]

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            with self.cond:
                self.lines.append(json.loads(raw))
                self.cond.notify_all()

    def wait(self, pred: Any, timeout: float) -> Dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                found = next((x for x in self.lines if pred(x)), None)
                if found is not None:
                    return found
                left = deadline - time.monotonic()
                assert left > 0, f"timed out; last lines: {self.lines[-10:]}"
                self.cond.wait(left)

    def leader(self, timeout: float = 10) -> str:
        """The id every node's /leader agrees on (a leader with a confirmed lease)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            views = [json.loads(get(self.http[i], "/leader")[2]) for i in self.ids]
            leaders = {v["leader"] for v in views}
            if len(leaders) == 1 and None not in leaders:
                (leader,) = leaders
                mine = next(v for v in views if v["id"] == leader)
                if mine["is_leader"] and mine["lease_remaining_ms"] is not None:
                    return str(leader)
            time.sleep(0.02)
        raise AssertionError("no agreed leader")

    def stop(self) -> None:
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


@pytest.fixture
def leader_mode() -> Iterator[Sidecars]:
    c = Sidecars("leader")
    try:
        yield c
    finally:
        c.stop()


def test_the_cli_sidecar_serves_parseable_metrics_and_leader_readiness(leader_mode: Sidecars) -> None:
    c = leader_mode
    leader = c.leader()
    followers = [i for i in c.ids if i != leader]

    status, ctype, body = get(c.http[leader], "/leader")
    assert (status, ctype) == (200, "application/json")
    view = json.loads(body)
    assert set(view) == {
        "id", "leader", "leader_value", "term", "is_leader", "lease_remaining_ms", "lease_deadline_ms", "role",
        "wire_version"
    }  # fmt: skip
    assert view["lease_deadline_ms"] == view["lease_remaining_ms"]  # the deprecated name
    assert view["role"] == "leader" and view["is_leader"] is True
    assert 0 <= view["lease_remaining_ms"] <= 300

    # Readiness in leader mode: the leader alone.
    assert get(c.http[leader], "/readyz")[0] == 200
    for f in followers:
        status, _, body = get(c.http[f], "/readyz")
        assert status == 503 and json.loads(body)["reason"] == f"not the leader (the leader is {leader})"
    for i in c.ids:
        assert get(c.http[i], "/healthz")[0] == 200

    # /metrics through prometheus_client's parser: every family, with its type.
    status, ctype, text = get(c.http[leader], "/metrics")
    assert status == 200 and ctype.startswith("text/plain; version=0.0.4")
    families = parse(text)
    assert {n: families[n].type for n in EXPECTED_TYPES} == EXPECTED_TYPES
    assert value(families, "tenure_is_leader", "tenure_is_leader") == 1
    assert value(families, "tenure_role", "tenure_role", role="leader") == 1
    assert value(families, "tenure_role", "tenure_role", role="follower") == 0
    assert value(families, "tenure_term", "tenure_term") == view["term"]
    assert value(families, "tenure_peers", "tenure_peers", state="in_view") == 2
    assert value(families, "tenure_build_info", "tenure_build_info", version=tenure.__version__) == 1
    reasons = {s.labels["reason"] for s in families["tenure_messages_dropped"].samples}
    assert reasons == {r.value for r in tenure.DropReason}
    buckets = [s for s in families["tenure_failover_seconds"].samples if s.name.endswith("_bucket")]
    bounds = [0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1, 2.5, 5, 10, float("inf")]
    assert [float(s.labels["le"]) for s in buckets] == bounds

    # A handover through the stdin control line: readiness moves, counters move.
    f = followers[0]
    before = parse(get(c.http[f], "/metrics")[2])
    proc = c.procs[c.ids.index(leader)]
    assert proc.stdin is not None
    proc.stdin.write(f"transfer {f}\n")
    proc.stdin.flush()
    deadline = time.monotonic() + 5
    while not (get(c.http[f], "/readyz")[0] == 200 and get(c.http[leader], "/readyz")[0] == 503):
        assert time.monotonic() < deadline, "readiness did not follow the transfer"
        time.sleep(0.02)
    after = parse(get(c.http[f], "/metrics")[2])
    for counter in ("tenure_elections_total", "tenure_leader_changes_total"):
        family = counter.removesuffix("_total")
        assert value(after, family, counter) > value(before, family, counter)
    assert value(after, "tenure_failover_seconds", "tenure_failover_seconds_count") >= 1


def test_bad_http_values_are_usage_errors() -> None:
    ids = [f"127.0.0.1:{p}" for p in free_udp_ports(2)]
    base = [sys.executable, "-m", "tenure", "run", "--id", ids[0], "--peer", ids[1], "--cluster", "c"]
    r = subprocess.run([*base, "--http", "localhost:80"], capture_output=True, text=True, timeout=10)
    assert r.returncode == 2 and "localhost:80" in r.stderr
    r = subprocess.run([*base, "--ready-when", "follower"], capture_output=True, text=True, timeout=10)
    assert r.returncode == 2 and "follower" in r.stderr


def test_the_collector_maps_the_runtime_snapshot() -> None:
    async def main() -> None:
        ids = [f"127.0.0.1:{p}" for p in free_udp_ports(3)]
        electors = [tenure.Elector(i, ids, cluster="collector-test") for i in ids]
        registry = CollectorRegistry()
        collector = TenureCollector(electors[0], registry=registry)
        # Not started: described, but no samples.
        assert [f.samples for f in collector.collect()] == []
        for e in electors:
            await e.start()
        try:
            deadline = time.monotonic() + 10
            while not all(e.leader is not None for e in electors):
                assert time.monotonic() < deadline
                await asyncio.sleep(0.02)
            snapshot = electors[0].metrics()
            families = parse(generate_latest(registry).decode())
            assert {n: families[n].type for n in EXPECTED_TYPES} == EXPECTED_TYPES
            assert value(families, "tenure_term", "tenure_term") == snapshot["term"]
            assert value(families, "tenure_role", "tenure_role", role=snapshot["role"]) == 1
            assert value(families, "tenure_is_leader", "tenure_is_leader") == int(snapshot["is_leader"])
            assert value(families, "tenure_leader_changes", "tenure_leader_changes_total") >= 1
            for reason, n in snapshot["dropped"].items():
                assert value(families, "tenure_messages_dropped", "tenure_messages_dropped_total", reason=reason) == n
            inf = value(families, "tenure_failover_seconds", "tenure_failover_seconds_bucket", le="+Inf")
            assert inf == snapshot["failover"]["count"]
            assert value(families, "tenure_build_info", "tenure_build_info", version=snapshot["version"]) == 1
        finally:
            for e in electors:
                await e.stop()
        # Stopped: no samples, no error.
        assert list(collector.collect()) == []

    asyncio.run(main())


def test_an_elector_serves_the_sidecar_in_leader_mode() -> None:
    ids = [f"127.0.0.1:{p}" for p in free_udp_ports(3)]
    with pytest.raises(tenure.ConfigError, match="localhost:80"):
        tenure.Elector(ids[0], ids, cluster="c", http="localhost:80")
    with pytest.raises(tenure.ConfigError, match="follower"):
        tenure.SyncElector(ids[0], ids, cluster="c", http="127.0.0.1:0", ready_when="follower")

    async def main() -> None:
        electors = [tenure.Elector(i, ids, cluster="embed-test", http="127.0.0.1:0", ready_when="leader") for i in ids]
        assert electors[0].http_addr is None
        for e in electors:
            await e.start()
        try:
            addrs = [e.http_addr for e in electors]
            assert all(a is not None and a.startswith("127.0.0.1:") for a in addrs)

            def ready() -> List[bool]:
                return [get(str(a), "/readyz")[0] == 200 for a in addrs]

            deadline = time.monotonic() + 10
            while (r := await asyncio.to_thread(ready)).count(True) != 1:
                assert time.monotonic() < deadline, f"readiness {r}"
                await asyncio.sleep(0.02)
            leader = electors[r.index(True)]
            assert leader.is_leader
            view = json.loads((await asyncio.to_thread(get, str(leader.http_addr), "/leader"))[2])
            assert view["id"] == leader.id and view["is_leader"] is True
        finally:
            for e in electors:
                await e.stop()

    asyncio.run(main())
