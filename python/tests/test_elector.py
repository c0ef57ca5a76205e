"""The asyncio runtime, in one process over real loopback UDP (bounded in time)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any, Awaitable, Callable, List, Optional, Tuple

import pytest
from conftest import free_udp_ports

import tenure
from tenure import Elector, Lease

FAST = {"election_timeout_min": 100, "election_timeout_max": 200, "heartbeat_interval": 20}


def run(coro: Awaitable[Any], timeout: float = 30) -> Any:
    async def bounded() -> Any:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


def free_id() -> str:
    return f"127.0.0.1:{free_udp_ports(1)[0]}"


def cluster(n: int = 3, **kw: Any) -> List[Elector]:
    ids = [f"127.0.0.1:{p}" for p in free_udp_ports(n)]
    per_node: List[dict[str, Any]] = kw.pop("per_node", [{} for _ in ids])
    return [
        Elector(i, [x for x in ids if x != i], cluster="pytest", **{**FAST, **kw, **per_node[k]})
        for k, i in enumerate(ids)
    ]


async def wait_for(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.005)


def leaders(els: List[Elector]) -> List[Elector]:
    return [e for e in els if e.running and e.is_leader]


async def stop_all(els: List[Elector]) -> None:
    for e in els:
        await e.stop(handover_timeout_ms=200)


def test_three_electors_elect_one_leader_and_report_callbacks() -> None:
    calls: List[Tuple[str, str, Any]] = []

    def mk(tag: str) -> dict[str, Any]:
        async def on_leader(term: int) -> None:
            calls.append((tag, "leader", term))

        def on_follower(term: int, leader: Optional[str]) -> None:
            calls.append((tag, "follower", (term, leader)))

        return {"on_leader": on_leader, "on_follower": on_follower}

    async def main() -> None:
        els = cluster(per_node=[mk("a"), mk("b"), mk("c")])
        try:
            for e in els:
                await e.start()
            await wait_for(lambda: len(leaders(els)) == 1 and all(e.leader is not None for e in els))
            leader = leaders(els)[0]
            await wait_for(lambda: any(c[1] == "leader" for c in calls))
            assert leader.lease is not None and leader.lease.term == leader.term
            await wait_for(lambda: leader.lease is not None and leader.lease.valid, 2)
            info = leader.inspect()
            assert info["state"] == "leader" and info["is_leader"] is True and info["leader"] == leader.id
            for e in els:
                if e is not leader:
                    assert e.leader == leader.id and e.role is tenure.Role.FOLLOWER
        finally:
            await stop_all(els)

    run(main())
    assert sum(1 for c in calls if c[1] == "leader") >= 1


def test_blocking_callbacks_do_not_stall_heartbeats() -> None:
    """Every callback blocks its thread (sync) or awaits for a long time (async): the leader must
    keep its term, because callbacks never run in the datagram or timer path."""
    release = threading.Event()

    def blocking(*_: Any) -> None:
        release.wait(5)

    async def slow(*_: Any) -> None:
        await asyncio.sleep(5)

    async def main() -> None:
        per = [{"on_leader": blocking, "on_follower": blocking}, {"on_leader": slow, "on_follower": slow},
               {"on_leader": blocking, "on_follower": slow}]  # fmt: skip
        els = cluster(per_node=per)
        try:
            for e in els:
                await e.start()
            await wait_for(lambda: len(leaders(els)) == 1)
            leader = leaders(els)[0]
            term = leader.term
            # 1 s = 5 election timeouts: without heartbeats someone would campaign.
            await asyncio.sleep(1.0)
            assert leaders(els) == [leader] and leader.term == term
            assert all(e.term == term for e in els)
        finally:
            release.set()
            for e in els:
                e._on_leader = e._on_follower = None
            await stop_all(els)

    run(main())


def test_confirm_timeout_counts_as_denial() -> None:
    async def never(term: int) -> bool:
        await asyncio.sleep(60)
        return True

    async def main() -> None:
        els = cluster(confirm_leader=never, confirm_timeout_ms=50)
        try:
            for e in els:
                await e.start()
            await wait_for(lambda: any(e.inspect()["confirm_denied"] > 0 for e in els), 10)
            assert leaders(els) == []
        finally:
            await stop_all(els)

    run(main())


def test_confirm_gate_sync_false_and_exception_deny_and_true_grants() -> None:
    seen: List[int] = []

    def deny_then_grant(term: int) -> bool:
        seen.append(term)
        if len(seen) == 1:
            return False
        if len(seen) == 2:
            raise RuntimeError("not ready")
        return True

    async def main() -> None:
        els = cluster(confirm_leader=deny_then_grant)
        try:
            for e in els:
                await e.start()
            await wait_for(lambda: len(leaders(els)) == 1, 15)
            assert len(seen) >= 3
        finally:
            await stop_all(els)

    run(main())


def test_failing_on_leader_runs_again_in_the_same_leadership() -> None:
    calls: List[int] = []
    started: List[int] = []
    cancelled: List[int] = []

    def on_leader(term: int) -> None:
        calls.append(term)
        if len(calls) == 1:
            raise RuntimeError("cannot start the scheduler")

    async def work(lease: Lease) -> None:
        started.append(lease.term)
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.append(lease.term)
            raise

    async def main() -> None:
        els = cluster(on_leader=on_leader)
        try:
            for e in els:
                e.while_leader(work)
                await e.start()
            # Leader work like any other: the runtime's failure policy has it run again in the
            # same leadership after its backoff; the leadership (and its other work) goes on.
            await wait_for(lambda: len(calls) >= 2, 10)
            assert calls[0] == calls[1], calls
            assert started[0] == calls[0] and not cancelled
            assert len(leaders(els)) == 1 and leaders(els)[0].term == calls[0]
        finally:
            await stop_all(els)

    run(main())


def test_leadership_context_is_cancelled_when_leadership_ends() -> None:
    async def main() -> None:
        els = cluster()
        try:
            for e in els:
                await e.start()
            await wait_for(lambda: len(leaders(els)) == 1)
            leader = leaders(els)[0]
            reached_end = False
            with pytest.raises(tenure.LeadershipLost):
                async with leader.leadership() as lease:
                    assert lease.term == leader.term and not lease.lost
                    asyncio.get_running_loop().call_later(0.1, lambda: asyncio.ensure_future(leader.stop()))
                    await asyncio.sleep(10)
                    reached_end = True
            assert not reached_end and lease.lost and lease.deadline is None and not lease.valid
            # The cluster handed over: another node leads.
            await wait_for(lambda: len(leaders(els)) == 1)
        finally:
            await stop_all(els)

    run(main())


def test_stop_of_a_leader_hands_over_quickly() -> None:
    async def main() -> None:
        els = cluster(5)
        try:
            for e in els:
                await e.start()
            await wait_for(lambda: len(leaders(els)) == 1 and all(e.leader for e in els))
            old = leaders(els)[0]
            old_term = old.term
            t0 = time.monotonic()
            await old.stop()
            await wait_for(lambda: len(leaders(els)) == 1, 2)
            gap = time.monotonic() - t0
            new = leaders(els)[0]
            assert new is not old and new.term == old_term + 1
            assert gap < 0.2, f"handover took {gap * 1000:.0f} ms"
        finally:
            await stop_all(els)

    run(main())


def test_state_file_is_written_and_restored(tmp_path: Path) -> None:
    files = [tmp_path / f"n{i}.state" for i in range(3)]

    async def first() -> int:
        els = cluster(per_node=[{"state_file": f} for f in files])
        try:
            for e in els:
                await e.start()
            await wait_for(lambda: len(leaders(els)) == 1)
            return leaders(els)[0].term
        finally:
            await stop_all(els)

    term = run(first())
    states = [json.loads(f.read_text()) for f in files]  # the runtime's one format
    assert all(s["term"] >= term for s in states)
    assert not any(Path(f"{f}.tmp").exists() for f in files)

    async def restart() -> None:
        e = Elector(free_id(), ["127.0.0.1:2", "127.0.0.1:3"], cluster="pytest", state_file=files[0])
        async with e:
            assert e.term >= term and e.inspect()["voted_for"] == states[0]["voted_for"]

    run(restart())
    bad = tmp_path / "bad.state"
    bad.write_text("not a state")

    async def start_bad() -> None:
        await Elector(free_id(), ["127.0.0.1:2"], cluster="pytest", state_file=bad).start()

    with pytest.raises(tenure.StateFileError):
        run(start_bad())


def test_key_mismatch_excludes_a_node() -> None:
    async def main() -> None:
        els = cluster(per_node=[{"key": b"k1"}, {"key": "k1"}, {"key": b"other"}])
        try:
            for e in els:
                await e.start()
            await wait_for(lambda: len(leaders(els)) == 1)
            assert not els[2].is_leader and els[2].leader is None
            await wait_for(lambda: els[2].inspect()["dropped_by_reason"]["bad_mac"] > 0)
        finally:
            await stop_all(els)

    run(main())


def test_broadcast_reaches_on_message_and_async_with_works() -> None:
    got: List[Tuple[str, bytes]] = []

    async def on_message(sender: str, payload: bytes) -> None:
        got.append((sender, payload))

    async def main() -> None:
        els = cluster(on_message=on_message)
        async with els[0], els[1], els[2]:
            els[0].broadcast(b"hi")
            await wait_for(lambda: len(got) == 2)
        assert all(not e.running for e in els)

    run(main())
    assert {p for _, p in got} == {b"hi"}


def test_constructor_errors() -> None:
    with pytest.raises(tenure.ConfigError):
        Elector("127.0.0.1:1", ["127.0.0.1:2"], cluster="")
    with pytest.raises(TypeError):
        Elector("127.0.0.1:1", "127.0.0.1:2", cluster="x")
    with pytest.raises(tenure.InvalidIdError, match="nonsense"):
        Elector("nonsense", ["127.0.0.1:2"], cluster="x")
    with pytest.raises(tenure.ConfigError, match=r"lease_duration \(40 ms\)") as lease:
        Elector("127.0.0.1:1", ["127.0.0.1:2"], cluster="x", lease_duration=40)
    assert lease.value.code == "lease_out_of_range"


def test_concurrent_stops_both_wait_for_the_handover() -> None:
    async def main() -> None:
        els = cluster()
        try:
            for e in els:
                await e.start()
            await wait_for(lambda: len(leaders(els)) == 1 and all(e.leader for e in els))
            leader = leaders(els)[0]
            await asyncio.gather(leader.stop(), leader.stop())
            assert not leader.running
            await wait_for(lambda: len(leaders(els)) == 1, 2)
        finally:
            await stop_all(els)

    run(main())


def test_unwritable_state_file_fails_start_or_stops_the_node_before_it_sends(tmp_path: Path) -> None:
    async def main() -> None:
        state = tmp_path / "state"
        els = cluster(per_node=[{"state_file": state}, {}, {}])
        state.mkdir()  # after the (empty) read: the state file cannot be written
        with pytest.raises(tenure.StateFileError):
            await els[0].start()
        assert not els[0].running

        els = cluster(per_node=[{"state_file": tmp_path / "s2"}, {}, {}])
        try:
            await els[0].start()
            assert json.loads((tmp_path / "s2").read_text()) == {"term": 0, "voted_for": None}
            (tmp_path / "s2").unlink()
            (tmp_path / "s2").mkdir()  # now the first Persist cannot replace it
            for e in els[1:]:
                await e.start()
            # The error is published before the runtime thread ends: wait for both.
            await wait_for(lambda: els[0].error is not None and not els[0].running, 5)
            assert isinstance(els[0].error, tenure.StateFileError) and not els[0].running
            with pytest.raises(tenure.StoppedError):
                els[0].inspect()
            # Whatever it was about to send after the failed write never left: nobody voted for it.
            await asyncio.sleep(0.3)
            assert all(e.inspect()["voted_for"] != els[0].id for e in els[1:])
        finally:
            await stop_all(els)
        assert not els[0].running

    run(main())


def test_every_elector_reports_the_leaders_value_and_a_proclaimed_change() -> None:
    async def main() -> None:
        els = cluster(per_node=[{"value": f"http://node{k}"} for k in range(3)])
        async with els[0], els[1], els[2]:
            await wait_for(lambda: len(leaders(els)) == 1)
            leader = leaders(els)[0]
            want = f"http://node{els.index(leader)}"
            await wait_for(lambda: all(e.leader_value == want for e in els))
            assert leader.metrics()["leader_value"] == want
            leader.proclaim("http://moved")
            await wait_for(lambda: all(e.leader_value == "http://moved" for e in els))
            follower = next(e for e in els if e is not leader)
            with pytest.raises(tenure.NotLeaderError):
                follower.proclaim("nope")

    run(main())


def test_an_observer_elector_reports_the_leader_and_its_value_and_never_leads() -> None:
    async def main() -> None:
        ports = free_udp_ports(4)
        ids = [f"127.0.0.1:{p}" for p in ports[:3]]
        obs = f"127.0.0.1:{ports[3]}"
        followed: List[Tuple[Any, ...]] = []
        els = [
            Elector(i, [x for x in ids if x != i], cluster="pytest", value=f"http://{i}", observer_peers=[obs], **FAST)
            for i in ids
        ]
        observer = Elector(
            obs, ids, cluster="pytest", observer=True, on_follower=lambda *a: followed.append(a), **FAST
        )
        async with els[0], els[1], els[2], observer:
            await wait_for(lambda: len(leaders(els)) == 1)
            leader = leaders(els)[0]
            await wait_for(lambda: observer.leader_value == f"http://{leader.id}")
            assert observer.leader == leader.id and observer.role == tenure.Role.OBSERVER
            assert observer.inspect()["state"] == "observer" and leader.inspect()["view_size"] == 3
            assert not observer.is_leader and followed
            leader.proclaim("http://moved")
            await wait_for(lambda: observer.leader_value == "http://moved")
        with pytest.raises(TypeError, match="single str"):
            tenure.Config(id="a", cluster="c", observer_peers="127.0.0.1:9")  # type: ignore[arg-type]
        with pytest.raises(tenure.InvalidPeerError, match="nope"):
            Elector(ids[0], ids[1:], cluster="pytest", observer_peers=["nope"])

    run(main())


def _handover_with_slow_cleanup(transfer: Callable[[Elector], None]) -> Tuple[float, float, float]:
    """Three electors whose while_leader work takes 60 ms to clean up after it is cancelled; the
    leader hands over (``transfer``). Returns when the first leader's work returned, when the
    next leader's work started, and how long the handover took until then."""
    starts: dict[int, float] = {}
    ends: dict[int, float] = {}
    cleanup_s = 0.06

    async def work(lease: Lease) -> None:
        starts[lease.term] = time.monotonic()
        try:
            await asyncio.sleep(30)
        finally:
            # Cleanup that outlives the cancellation (flushing, closing a connection).
            await asyncio.shield(asyncio.sleep(cleanup_s))
            ends[lease.term] = time.monotonic()

    async def main() -> Tuple[float, float, float]:
        els = cluster()
        try:
            for e in els:
                e.while_leader(work)
                await e.start()
            await wait_for(lambda: len(leaders(els)) == 1)
            old = leaders(els)[0]
            term = old.term
            await wait_for(lambda: term in starts)
            await asyncio.sleep(0.2)
            t0 = time.monotonic()
            transfer(old)
            await wait_for(lambda: any(t > term for t in starts) and term in ends, 5)
            nxt = min(t for t in starts if t > term)
            return ends[term], starts[nxt], starts[nxt] - t0
        finally:
            await stop_all(els)

    return run(main())


def test_a_transfer_waits_until_the_leaders_work_has_returned() -> None:
    ended, started, took = _handover_with_slow_cleanup(lambda e: e.transfer_leadership())
    early_ms = (ended - started) * 1000
    assert ended <= started, f"the next leader's work started {early_ms:.0f} ms before this one returned"
    # It waited for the 60 ms cleanup, not much more.
    assert took < 1.0, took


def test_the_overlap_check_catches_a_transfer_that_does_not_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENURE_TEST_NO_TRANSFER_HOLD", "1")
    ended, started, _ = _handover_with_slow_cleanup(lambda e: e.transfer_leadership())
    assert ended > started, "the injected bug went unnoticed"
