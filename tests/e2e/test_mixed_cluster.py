"""End-to-end: Python, Node.js and wasmtime-component processes form one cluster over loopback UDP.

Runs the same fault schedule as `make demo` and asserts what the demo only reports.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cluster import ELECTION_TIMEOUT_MAX_MS, KINDS, Cluster, run_faults


@pytest.fixture
def log() -> list[str]:
    return []


def test_mixed_cluster_survives_every_fault_with_one_leader_per_term(
    log: list[str],
) -> None:
    c = Cluster(KINDS)
    try:
        c.start_all()
        report = run_faults(c, log.append)
    finally:
        c.close()
    print("\n".join(log))
    assert report.violations == [], f"two leaders in one term: {report.violations}"
    assert report.kinds_led == {"python", "node", "wasmtime"}, report.kinds_led
    for f in report.faults:
        assert f.leaderless_ms is not None, (
            f"no new leader after {f.fault} of {f.target}"
        )
        if f.fault == "SIGKILL":
            assert f.leaderless_ms <= ELECTION_TIMEOUT_MAX_MS + 200, f
        if f.fault == "SIGTERM":
            # A handover, not an election: without it no follower could even vote before its
            # lease promise (election_timeout_min after its last acknowledgement) runs out, so a
            # new leader would take at least ~100 ms.
            assert f.leaderless_ms < 100, f
    assert [f.fault for f in report.faults].count("SIGKILL") == 3
    assert report.stopped_leader_stepped_down
    assert not report.stopped_leader_led_foreign_term


def test_a_node_with_the_wrong_key_neither_votes_nor_leads_and_is_counted_as_dropped() -> (
    None
):
    c = Cluster(KINDS, key=b"the right key", extra=[("python", b"a wrong key")])
    outsider = next(pid for pid in c.procs if pid not in c.members)
    try:
        c.start_all()
        assert c.wait_for(lambda: c.current_leader() is not None, 5.0)
        # Give the outsider time to campaign (and be ignored) several times.
        c.pump(1.5)
        leader = c.current_leader()
        assert leader in c.members
        assert c.procs[outsider].role != "leader"
        assert all(outsider not in ids for ids in c.leaders_by_term().values())
        for pid in c.members:
            state = c.inspect(pid)
            assert state is not None, (
                f"no inspect answer from {pid} ({c.procs[pid].kind})"
            )
            assert state["dropped_by_reason"]["bad_mac"] > 0, (
                pid,
                state["dropped_by_reason"],
            )
            assert outsider not in state["peers"], (
                "an unauthenticated node must not enter the view"
            )
            assert state["view_size"] == 5
        assert c.violations() == []
    finally:
        c.close()
