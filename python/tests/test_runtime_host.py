"""tenure on the Rust runtime: typed errors at construction, use after stop, the synchronous
facade and the leader-work failure policy (real loopback UDP, bounded in time)."""

from __future__ import annotations

import asyncio
import fcntl
import os
import socket
import threading
from pathlib import Path
from typing import Any, List, Optional

import pytest
from conftest import free_udp_ports

import tenure
from tenure import Elector, FailurePolicy, SyncElector

FAST = {"election_timeout_min": 100, "election_timeout_max": 200, "heartbeat_interval": 20}


def run(coro: Any, timeout: float = 30) -> Any:
    async def bounded() -> Any:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


def ids(n: int) -> List[str]:
    return [f"127.0.0.1:{p}" for p in free_udp_ports(n)]


# ----- bad input: a typed error at construction, naming the value ---------------------------------


@pytest.mark.parametrize(
    ("node_id", "peers", "error"),
    [
        ("127.0.0.1", ["127.0.0.1:2"], tenure.InvalidIdError),  # no port
        ("127.0.0.1:0", ["127.0.0.1:2"], tenure.InvalidIdError),  # port 0
        ("127.0.0.1:70000", ["127.0.0.1:2"], tenure.InvalidIdError),  # port > 65535
        ("0.0.0.0:7001", ["127.0.0.1:2"], tenure.InvalidIdError),  # unspecified: use bind=
        ("127.0.0.1:1", ["127.0.0.1"], tenure.InvalidPeerError),
        ("127.0.0.1:1", ["127.0.0.1:99999"], tenure.InvalidPeerError),
    ],
)
def test_bad_addresses_raise_typed_errors_at_construction(node_id: str, peers: List[str], error: type) -> None:
    bad = node_id if error is tenure.InvalidIdError else peers[0]
    for cls in (Elector, SyncElector):
        with pytest.raises(error) as info:
            cls(node_id, peers, cluster="x")  # type: ignore[operator]
        assert isinstance(info.value, tenure.TenureError)
        assert isinstance(info.value, ValueError)
        assert bad in str(info.value)


def test_unspecified_id_hints_at_bind() -> None:
    with pytest.raises(tenure.InvalidIdError, match="bind"):
        Elector("0.0.0.0:7001", ["127.0.0.1:2"], cluster="x")


def test_bad_bind_and_config_raise_typed_errors() -> None:
    with pytest.raises(tenure.InvalidBindError):
        Elector("127.0.0.1:1", ["127.0.0.1:2"], cluster="x", bind="not an ip")
    with pytest.raises(tenure.ConfigError):
        Elector("127.0.0.1:1", ["127.0.0.1:2"], cluster="")
    with pytest.raises(tenure.ConfigError):
        SyncElector("127.0.0.1:1", ["127.0.0.1:2"], cluster="x", election_timeout_min=300, election_timeout_max=200)


def test_both_electors_take_the_one_option_list() -> None:
    """`tenure.ElectorOptions` is the list both constructors take: an option reaches the core
    config from either (checked there), and a keyword outside it is a TypeError naming it."""
    for cls in (Elector, SyncElector):
        with pytest.raises(tenure.ConfigError, match="lease"):
            cls("127.0.0.1:1", ["127.0.0.1:2"], cluster="x", heartbeat_interval=50, lease_duration=10)
        with pytest.raises(TypeError, match="bogus"):
            cls("127.0.0.1:1", ["127.0.0.1:2"], cluster="x", bogus=1)
    assert "lease_duration" in tenure.ElectorOptions.__annotations__


def sync(node_id: str, peers: List[str], **kw: Any) -> SyncElector:
    return SyncElector(node_id, peers, cluster="pytest", **{**FAST, **kw})


def test_state_file_errors_are_typed(tmp_path: Path) -> None:
    a, b = ids(2)
    with pytest.raises(tenure.StateFileError) as missing:
        sync(a, [b], state_file=tmp_path / "no-such-dir" / "state")
    assert missing.value.code == "state_dir_missing"
    latin1 = tmp_path / "latin1"
    latin1.write_bytes(b"\xff\xfe 3 x")
    with pytest.raises(tenure.StateFileError) as not_utf8:
        sync(a, [b], state_file=latin1)
    assert not_utf8.value.code == "state_not_utf8"
    corrupt = tmp_path / "corrupt"
    corrupt.write_text("{not json")
    with pytest.raises(tenure.StateFileError) as bad:
        sync(a, [b], state_file=corrupt)
    assert bad.value.code == "state_corrupt"
    shared = tmp_path / "shared"
    first = sync(a, [b], state_file=shared)
    try:
        with pytest.raises(tenure.StateFileError) as locked:
            sync(b, [a], state_file=shared)
        assert locked.value.code == "state_locked"
    finally:
        first.stop()


def test_address_in_use_is_typed() -> None:
    a, b = ids(2)
    host, port = a.rsplit(":", 1)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as taken:
        taken.bind((host, int(port)))
        with pytest.raises(tenure.AddressInUseError) as info:
            sync(a, [b])
        assert isinstance(info.value, OSError)

        async def start() -> None:
            await Elector(a, [b], cluster="x").start()

        with pytest.raises(tenure.AddressInUseError):
            run(start())


# ----- use after stop -------------------------------------------------------------------------------


def test_use_after_stop_raises_stopped_error() -> None:
    a, b, c = ids(3)

    async def main() -> None:
        e = Elector(a, [b, c], cluster="pytest", **FAST)
        await e.start()
        await e.stop()
        await e.stop()  # idempotent
        for call in (lambda: e.broadcast(b"x"), lambda: e.inspect(), lambda: e.join(b), lambda: e.while_leader(noop)):
            with pytest.raises(tenure.StoppedError):
                call()
        with pytest.raises(tenure.StoppedError):
            await e.start()
        with pytest.raises(tenure.StoppedError):
            await e.wait_leader()

    async def noop(lease: tenure.Lease) -> None:
        return None

    run(main())
    s = sync(a, [b, c])
    s.stop()
    with pytest.raises(tenure.StoppedError):
        s.broadcast(b"x")
    with pytest.raises(tenure.StoppedError):
        s.wait_leader(100)


# ----- the synchronous facade -------------------------------------------------------------------------


def test_sync_facade_elects_one_leader_and_hands_over() -> None:
    nodes = ids(3)
    seen: List[tuple[str, Optional[str]]] = []
    lock = threading.Lock()

    def on_leader(term: int) -> None:
        with lock:
            seen.append((threading.current_thread().name, None))

    els = [sync(n, [p for p in nodes if p != n], on_leader=on_leader) for n in nodes]
    try:
        leases = []
        for e in els:
            lease = e.wait_leader(timeout_ms=50)
            if lease is not None:
                leases.append((e, lease))
        deadline = threading.Event()
        while not any(e.is_leader for e in els):
            deadline.wait(0.01)
        leader = next(e for e in els if e.is_leader)
        with leader.leading(timeout_ms=5000) as lease:
            # The README's pattern: the lease is valid when handed over, no wait needed.
            lease.check()
            assert lease.term == leader.term
            assert lease.wait_valid(0) is True
            assert lease.deadline is not None and lease.deadline > leader.now_ms()
        assert [e for e in els if e.is_leader] == [leader]
        old_term = leader.term
        leader.stop(handover_timeout_ms=2000)
        others = [e for e in els if e is not leader]
        new = others[0].wait_leader(timeout_ms=5000) or others[1].wait_leader(timeout_ms=5000)
        assert new is not None and new.term > old_term
        assert seen and all(name == "tenure-callbacks" for name, _ in seen)
    finally:
        for e in els:
            e.stop(handover_timeout_ms=0)


def test_sync_leading_hands_over_a_valid_lease_right_after_start() -> None:
    """The README pattern, entered before anyone leads: the lease is valid when the block starts."""
    for _ in range(3):
        nodes = ids(3)
        els = [sync(n, [p for p in nodes if p != n]) for n in nodes]
        results: List[str] = []

        def lead(e: SyncElector, results: List[str] = results) -> None:
            try:
                with e.leading(timeout_ms=5000) as lease:
                    lease.check()
                    results.append("valid")
            except tenure.LeadershipLost as err:
                results.append(f"invalid: {err}")
            except (tenure.StoppedError, TimeoutError):
                pass

        threads = [threading.Thread(target=lead, args=(e,)) for e in els]
        try:
            for t in threads:
                t.start()
            for _ in range(500):
                if results:
                    break
                threading.Event().wait(0.01)
        finally:
            for e in els:
                e.stop(handover_timeout_ms=0)
            for t in threads:
                t.join(5)
        assert results[:1] == ["valid"], results


def test_sync_wait_leader_times_out() -> None:
    a, b, c = ids(3)
    e = sync(a, [b, c])  # alone: no quorum
    try:
        assert e.wait_leader(timeout_ms=300) is None
        with pytest.raises(TimeoutError):
            with e.leading(timeout_ms=100):
                pass
    finally:
        e.stop()


# ----- the leader-work failure policy -----------------------------------------------------------------


def test_always_failing_leader_work_stops_the_elector_at_a_limit_the_user_set() -> None:
    (a,) = ids(1)
    policy = FailurePolicy(max_failures=2, max_step_downs=3, backoff_ms=10, max_backoff_ms=20)
    attempts: List[int] = []
    warnings: List[str] = []

    async def main() -> int:
        e = Elector(
            a,
            [],
            cluster="pytest",
            min_cluster_size=1,
            failure_policy=policy,
            on_warning=lambda code, _message: warnings.append(code),
            **FAST,
        )

        async def work(lease: tenure.Lease) -> None:
            attempts.append(lease.term)
            raise RuntimeError("the database is down")

        e.while_leader(work)
        await e.start()
        with pytest.raises(tenure.LeaderWorkError):
            await asyncio.wait_for(e.wait_stopped(), 20)
        assert not e.running
        assert isinstance(e.error, tenure.LeaderWorkError)
        return e.term

    term = run(main())
    # 3 leaderships, 2 attempts each, then the elector stopped: the term stopped growing.
    assert len(attempts) == 6
    assert len(set(attempts)) == 3
    # The runtime explains the step-downs (a rate-limited warning: one per 10 s, with a count).
    assert warnings.count("leader_work_failed") == 1, warnings
    assert term <= max(attempts) + 1


def test_an_on_leader_that_always_raises_does_not_churn_terms_forever() -> None:
    policy = FailurePolicy(max_step_downs=3)
    calls: List[int] = []

    def on_leader(term: int) -> None:
        calls.append(term)
        raise RuntimeError("cannot start the scheduler")

    async def main() -> int:
        (a,) = ids(1)
        e = Elector(a, [], cluster="pytest", min_cluster_size=1, failure_policy=policy, on_leader=on_leader, **FAST)
        await e.start()
        with pytest.raises(tenure.LeaderWorkError):
            await asyncio.wait_for(e.wait_stopped(), 20)
        return e.term

    term = run(main())
    # Three leaderships (max_step_downs), in each on_leader run max_failures (3) times: it is
    # leader work like any other, retried in place before each hand-over.
    assert len(set(calls)) == 3 and len(calls) == 9 and term <= max(calls) + 1

    (b,) = ids(1)
    stopped = threading.Event()
    sync_calls: List[int] = []

    def sync_on_leader(term: int) -> None:
        sync_calls.append(term)
        raise RuntimeError("cannot start the scheduler")

    s = sync(b, [], min_cluster_size=1, failure_policy=policy, on_leader=sync_on_leader)
    try:
        for _ in range(2000):
            if not s.running:
                stopped.set()
                break
            threading.Event().wait(0.01)
        assert stopped.is_set(), "the sync elector kept churning terms"
        assert isinstance(s.error, tenure.LeaderWorkError)
        assert len(set(sync_calls)) == 3 and len(sync_calls) == 9
    finally:
        s.stop()


def test_by_default_failing_leader_work_never_stops_the_elector() -> None:
    """A dependency outage: the work fails in every leadership. The elector keeps participating
    (hands over, backs off, campaigns again) and recovers by itself when the work succeeds."""
    (a,) = ids(1)
    attempts: List[int] = []
    outage = True

    async def main() -> None:
        async with Elector(a, [], cluster="pytest", min_cluster_size=1, **FAST) as e:
            recovered = asyncio.Event()

            async def work(lease: tenure.Lease) -> None:
                assert lease.valid, "leader work was handed a lease that does not hold"
                attempts.append(lease.term)
                if outage:
                    raise RuntimeError("the database is down")
                recovered.set()
                await lease.wait_lost()

            e.while_leader(work)
            for _ in range(400):
                if len({t for t in attempts}) >= 3:
                    break
                await asyncio.sleep(0.01)
            assert len(set(attempts)) >= 3 and e.running and e.error is None
            assert e.metrics()["leader_work_step_downs"] >= 2
            nonlocal outage
            outage = False
            await asyncio.wait_for(recovered.wait(), 15)
            assert e.is_leader

    run(main())


def test_a_bad_failure_policy_is_a_typed_error_naming_the_value() -> None:
    with pytest.raises(tenure.ConfigError, match="max_failures: must be at least 1, got 0"):
        FailurePolicy(max_failures=0)
    with pytest.raises(tenure.ConfigError, match="backoff_ms"):
        FailurePolicy(backoff_ms=2000, max_backoff_ms=1000)
    with pytest.raises(tenure.ConfigError, match="max_step_downs"):
        FailurePolicy(max_step_downs=0)
    # One set of defaults: the runtime's.
    assert FailurePolicy() == FailurePolicy(max_failures=3, max_step_downs=None, backoff_ms=100, max_backoff_ms=5000)
    # The delays are the runtime's (doubling from backoff, at most max_backoff).
    policy = FailurePolicy(backoff_ms=100, max_backoff_ms=300)
    assert [policy.delay_ms(n) for n in (1, 2, 3)] == [100, 200, 300]


def test_work_that_fails_then_recovers_keeps_leadership() -> None:
    (a,) = ids(1)
    policy = FailurePolicy(max_failures=3, backoff_ms=10)
    attempts: List[int] = []

    async def main() -> None:
        async with Elector(a, [], cluster="pytest", min_cluster_size=1, failure_policy=policy, **FAST) as e:
            done = asyncio.Event()

            async def work(lease: tenure.Lease) -> None:
                attempts.append(lease.term)
                if len(attempts) < 3:
                    raise RuntimeError("transient")
                await lease.wait_valid()
                done.set()

            e.while_leader(work)
            await asyncio.wait_for(done.wait(), 10)
            assert e.is_leader
            assert len(set(attempts)) == 1  # one leadership throughout

    run(main())


def test_lock_file_is_held_while_running(tmp_path: Path) -> None:
    a, b = ids(2)
    state = tmp_path / "state"
    e = sync(a, [b], state_file=state)
    try:
        lock = os.open(f"{state}.lock", os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(lock)
    finally:
        e.stop()


def test_run_until_signal_stops_gracefully_on_sigterm(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    (a,) = ids(1)
    script = tmp_path / "app.py"
    script.write_text(
        "import asyncio, sys, tenure\n"
        "async def main():\n"
        f"    e = tenure.Elector({a!r}, [], cluster='x', min_cluster_size=1, election_timeout_min=100,\n"
        "                       election_timeout_max=200, heartbeat_interval=20,\n"
        "                       on_leader=lambda term: print('leader', term, flush=True))\n"
        "    await e.run_until_signal()\n"
        "    print('stopped', e.running, flush=True)\n"
        "asyncio.run(main())\n"
    )
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("leader ")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
        assert proc.stdout.read().strip() == "stopped False"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


# ----- a threaded program ends on SIGTERM and hands leadership over -----------------------------------

_SIGNAL_CHILD = """
import sys, tenure
me, peers = sys.argv[1], sys.argv[2:]
e = tenure.SyncElector(me, peers, cluster="pytest", election_timeout_min=100, election_timeout_max=200,
                       heartbeat_interval=20)
print("ready", flush=True)
e.run_until_signal()
print("stopped", flush=True)
"""


def test_sync_run_until_signal_hands_over_on_sigterm_and_exits_0() -> None:
    import signal as _signal
    import subprocess
    import sys
    import time

    a, b, c = ids(3)
    child = subprocess.Popen(
        [sys.executable, "-c", _SIGNAL_CHILD, a, b, c], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    # The survivors wait 1-2 s before an election of their own: only a handover gives them a
    # leader within half a second (the child leads with 100-200 ms timeouts).
    slow = {"election_timeout_min": 1000, "election_timeout_max": 2000, "heartbeat_interval": 20}
    els = [sync(b, [a, c], **slow), sync(c, [a, b], **slow)]
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        end = time.monotonic() + 10
        # Make the child the leader: hand leadership to it from whoever leads here.
        while True:
            assert time.monotonic() < end, "the child never led"
            leaders = [e for e in els if e.is_leader]
            if not leaders and els[0].leader == a:
                break
            if leaders:
                try:
                    leaders[0].transfer_leadership(a)
                except tenure.TenureError:
                    pass
            time.sleep(0.05)
        time.sleep(0.3)  # steady state under the child's leadership
        assert els[0].leader == a
        sent = time.monotonic()
        child.send_signal(_signal.SIGTERM)
        while not any(e.is_leader for e in els):
            assert time.monotonic() - sent < 2, "no handover after SIGTERM"
            time.sleep(0.001)
        handover_ms = (time.monotonic() - sent) * 1000
        assert child.wait(10) == 0, child.stderr.read() if child.stderr else ""
        # A handover (a round trip; tens of ms when the machine is idle), not an election
        # timeout (at least 1 s here) after a lost leader.
        print(f"SIGTERM to a new leader: {handover_ms:.1f} ms")
        assert handover_ms < 500, f"{handover_ms:.0f} ms to a new leader"
    finally:
        if child.poll() is None:
            child.kill()
        for e in els:
            e.stop(handover_timeout_ms=0)
