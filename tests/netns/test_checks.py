"""The safety checks catch what they claim to (synthetic lines; no namespaces needed)."""

from __future__ import annotations

import checks
from harness import HEARTBEAT_INTERVAL_MS, Line


def line(node: str, ts: int, event: str, **kw: object) -> Line:
    return Line(ts, node, {"ts_ms": ts, "id": node, "event": event, **kw})


def inspect(node: str, ts: int, term: int, lease: int, hb_out: int) -> Line:
    state = {
        "leader": True,
        "term": term,
        "lease_deadline": lease,
        "heartbeat_out_last": hb_out,
    }
    return line(node, ts, "inspect", state=state)


def test_two_leaders_in_one_term_are_reported() -> None:
    lines = [
        line("a", 1, "leader", term=3),
        line("b", 2, "leader", term=3),
        line("c", 3, "leader", term=4),
    ]
    assert checks.one_leader_per_term(lines) == ["term 3 had 2 leaders: ['a', 'b']"]


def test_a_leader_elected_inside_another_lease_is_reported() -> None:
    # a's lease (monotonic 5000) is 400 ms past its last heartbeat (4600): at least
    # 400 - HEARTBEAT_INTERVAL_MS after its inspect line at wall 10_000.
    lines = [inspect("a", 10_000, 2, 5000, 4600), line("b", 10_100, "leader", term=3)]
    assert 400 - HEARTBEAT_INTERVAL_MS > 100 + checks.SLACK_MS
    assert len(checks.lease_overlaps(lines)) == 1


def test_a_leader_elected_after_the_lease_is_fine() -> None:
    lines = [inspect("a", 10_000, 2, 4700, 4600), line("b", 10_100, "leader", term=3)]
    assert checks.lease_overlaps(lines) == []
    assert checks.safety(lines) == []
