"""Rolling upgrades and downgrades across wire versions, with real processes on loopback UDP.

Five nodes of the recorded release v0.1.0 (built from the git history, tests/upgrade/release.py)
are replaced one at a time by this checkout's `tenure` (a graceful stop, which hands leadership
over, then a start with the same id and state file), then downgraded back one at a time. After
every step: one leader per term across every process's `leader` lines, terms that only grow, the
leaderless gap of the step, and the wire-version gate (the leader's `/leader` `wire_version`): 3
while any member is of v0.1.0, 4 once every member is new, 3 again after the first downgrade.
"""

from __future__ import annotations

import json
import signal
import socket
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "e2e"))

import release
from cluster import Cluster, Proc, runtime_command

OLD = "v0.1.0"
NEW = "new"
# The wire versions (core/src/wire.rs): v0.1.0 speaks 3; this checkout 3 and 4.
MIN_VERSION, VERSION = 3, 4
# A step's leaderless gap must stay a handover, far below an election timeout (150-300 ms).
HANDOVER_BOUND_MS = 100


def free_tcp_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Mixed(Cluster):
    """The e2e cluster with one binary per kind (a release name, or NEW) and an HTTP sidecar per
    node (its `/leader` reports the wire version)."""

    def __init__(self, binaries: dict[str, Path], kinds: list[str]) -> None:
        self.binaries = binaries
        self.http: dict[str, int] = {}
        super().__init__(kinds)

    def _args(self, pid: str, members: list[str], key: bytes | None) -> list[str]:
        self.http[pid] = free_tcp_port()
        return super()._args(pid, members, key) + [
            "--http",
            f"127.0.0.1:{self.http[pid]}",
        ]

    def command(self, p: Proc) -> list[str]:
        return [str(self.binaries[p.kind])] + p.args

    def leader_info(self, pid: str) -> dict | None:
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{self.http[pid]}/leader", timeout=2
            ) as r:
                return json.loads(r.read())
        except OSError:
            return None


@dataclass
class Step:
    pid: str
    to: str
    was_leader: bool
    gap_ms: int | None


def replace(c: Mixed, pid: str, kind: str) -> Step:
    """Stops `pid` gracefully and starts it again as `kind`; waits until the cluster has a leader
    and the node follows or leads."""
    was_leader = c.current_leader() == pid
    before = len(c.events)
    t0 = c.signal(pid, signal.SIGTERM)
    c.procs[pid].kind = kind
    c.start(pid)
    assert c.wait_for(lambda: c.procs[pid].role in ("follower", "leader"), 30), (
        f"{pid} ({kind}) did not start"
    )
    assert c.wait_for(lambda: c.current_leader() is not None, 10), (
        "no leader after the step"
    )
    gap = None
    if was_leader:
        assert c.wait_for(
            lambda: c.first_leader_after(t0, 0, exclude=pid) is not None, 10
        )
        new = c.first_leader_after(t0, 0, exclude=pid)
        assert new is not None
        ended = [
            e.ts_ms
            for e in c.events[before:]
            if e.id == pid and e.event in ("follower", "stopped")
        ]
        gap = max(0, new.ts_ms - min(ended)) if ended else new.ts_ms - t0
    return Step(pid, kind, was_leader, gap)


def gate(c: Mixed) -> int | None:
    leader = c.current_leader()
    info = c.leader_info(leader) if leader else None
    return None if info is None else info.get("wire_version")


def terms_only_grow(c: Mixed) -> list[str]:
    out, best = [], 0
    for e in c.leader_events():
        if (e.term or 0) < best:
            out.append(f"{e.id} led term {e.term} after term {best} was led")
        best = max(best, e.term or 0)
    return out


@pytest.fixture(scope="module")
def binaries() -> dict[str, Path]:
    return {
        OLD: release.build(release.release(OLD)),
        NEW: Path(runtime_command("native")[0]),
    }


def test_a_rolling_upgrade_and_downgrade_keep_one_leader_per_term(
    binaries: dict[str, Path],
) -> None:
    c = Mixed(binaries, [OLD] * 5)
    steps: list[Step] = []
    gates: list[tuple[str, int | None]] = []
    try:
        c.start_all()
        assert c.wait_for(lambda: c.current_leader() is not None, 10), (
            "v0.1.0 elected no leader"
        )
        for kind in (NEW, OLD):
            for pid in list(c.members):
                steps.append(replace(c, pid, kind))
                assert c.violations() == [], c.violations()
                kinds = {p.kind for p in c.procs.values()}
                if kinds == {NEW}:
                    # Every member speaks 4: the leader learns it within a round trip of each.
                    assert c.wait_for(lambda: gate(c) == VERSION, 5), (
                        f"gate {gate(c)} with every member new"
                    )
                else:
                    c.pump(0.5)
                    g = gate(c)
                    assert g in (None, MIN_VERSION), (
                        f"gate {g} with members of {sorted(kinds)}"
                    )
                gates.append(
                    (",".join(sorted(p.kind for p in c.procs.values())), gate(c))
                )
        c.pump(0.5)
        assert c.violations() == [], c.violations()
        assert terms_only_grow(c) == [], terms_only_grow(c)
    finally:
        c.close()
    handed = [s for s in steps if s.was_leader]
    print(
        f"\nsteps: {len(steps)}, leaders replaced: {len(handed)}, gaps ms: {[s.gap_ms for s in handed]}"
    )
    print("gates:", gates)
    assert handed, "the leader was replaced at least once"
    for s in handed:
        assert s.gap_ms is not None and s.gap_ms <= HANDOVER_BOUND_MS, s
