"""The safety checks catch what they claim to (synthetic lines; no namespaces needed)."""

from __future__ import annotations

import checks
from harness import Line


def line(node: str, ts: int, event: str, **kw: object) -> Line:
    return Line(ts, node, {"ts_ms": ts, "id": node, "event": event, **kw})


def inspect(
    node: str, ts: int, term: int, lease: int, spawn_wall: int, spawn_mono: int
) -> Line:
    state = {"leader": True, "term": term, "lease_deadline": lease}
    data = {"ts_ms": ts, "id": node, "event": "inspect", "state": state}
    return Line(ts, node, data, spawn_wall, spawn_mono)


def test_two_leaders_in_one_term_are_reported() -> None:
    lines = [
        line("a", 1, "leader", term=3),
        line("b", 2, "leader", term=3),
        line("c", 3, "leader", term=4),
    ]
    assert checks.one_leader_per_term(lines) == ["term 3 had 2 leaders: ['a', 'b']"]


def test_a_leader_elected_inside_another_lease_is_reported() -> None:
    # A process clock that starts after the spawn (wall 9_000): lease 1_200 -> at least 10_200.
    lines = [
        inspect("a", 10_000, 2, 1_200, 9_000, 50_000),
        line("b", 10_100, "leader", term=3),
    ]
    assert len(checks.lease_overlaps(lines)) == 1
    # The system monotonic clock (above the spawn's 50_000): exact, 51_300 -> 10_300.
    lines = [
        inspect("a", 10_000, 2, 51_300, 9_000, 50_000),
        line("b", 10_100, "leader", term=3),
    ]
    assert len(checks.lease_overlaps(lines)) == 1


def test_a_leader_elected_after_the_lease_is_fine() -> None:
    lines = [
        inspect("a", 10_000, 2, 1_050, 9_000, 50_000),
        line("b", 10_100, "leader", term=3),
    ]
    assert checks.lease_overlaps(lines) == []
    lines = [
        inspect("a", 10_000, 2, 51_050, 9_000, 50_000),
        line("b", 10_100, "leader", term=3),
    ]
    assert checks.lease_overlaps(lines) == []
    assert checks.safety(lines) == []
