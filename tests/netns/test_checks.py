"""The safety checks catch what they claim to (synthetic lines; no namespaces needed)."""

from __future__ import annotations

from pathlib import Path

import checks
from harness import Line


def line(node: str, ts: int, event: str, **kw: object) -> Line:
    return Line(ts, node, {"ts_ms": ts, "id": node, "event": event, **kw})


def inspect(
    node: str, ts: int, term: int, lease: int, spawn_wall: int, spawn_mono: int
) -> Line:
    state = {"is_leader": True, "leader": node, "term": term, "lease_deadline": lease}
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


def test_a_lease_handed_over_ends_at_the_step_down() -> None:
    # a reports a lease until at least 10_200, hands over at 10_050 (its own follower line of the
    # term, no leader), and b leads at 10_060: no overlap. Without the step-down, or with a
    # step-down after b's line, or naming a leader (it followed someone: no handover), there is.
    lease = inspect("a", 10_000, 2, 1_200, 9_000, 50_000)
    b = line("b", 10_060, "leader", term=3)
    stepped = line("a", 10_050, "follower", term=2, leader=None)
    assert checks.lease_overlaps([lease, stepped, b]) == []
    assert len(checks.lease_overlaps([lease, b])) == 1
    late = line("a", 10_070, "follower", term=2, leader=None)
    assert len(checks.lease_overlaps([lease, late, b])) == 1
    followed = line("a", 10_050, "follower", term=3, leader="b")
    assert len(checks.lease_overlaps([lease, followed, b])) == 1


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


def write_life(
    d: Path, node: str, term: int, pid: int, *ticks_ms: int, stop: bool = False
) -> None:
    ns = [t * 1_000_000 for t in ticks_ms]
    text = [f"env {term} {node}", f"start {ns[0]}", *(f"t {t}" for t in ns[1:])]
    if stop:
        text.append(f"stop {ns[-1] + 1_000_000}")
    (d / f"{node}-{term}-{pid}").write_text(
        "\n".join(text) + "\nt \n"
    )  # a tick cut by SIGKILL


def test_two_commands_running_together_are_reported(tmp_path: Path) -> None:
    write_life(tmp_path, "a", 1, 10, 1000, 1005, 1500)  # ticks until 1500
    write_life(tmp_path, "b", 2, 20, 1400, 1405, 1600)  # from 1400: 100 ms together
    write_life(
        tmp_path, "a", 3, 30, 2000, 2005
    )  # the same node again: never an overlap
    found = checks.command_overlaps(checks.lives(tmp_path))
    assert len(found) == 1 and "ran together for 100 ms" in found[0], found


def test_commands_one_after_another_pass(tmp_path: Path) -> None:
    write_life(tmp_path, "a", 1, 10, 1000, 1100, stop=True)
    write_life(tmp_path, "b", 2, 20, 1110, 1200)
    ls = checks.lives(tmp_path)
    assert checks.command_overlaps(ls) == []
    assert checks.largest_command_overlap(ls)[0] == -9  # a stopped at 1101


def test_a_command_ticking_past_its_lease_deadline_is_reported(tmp_path: Path) -> None:
    write_life(tmp_path, "a", 1, 10, 1000, 1100, 1200)
    write_life(tmp_path, "a", 2, 11, 3000, 3050)
    ls = checks.lives(tmp_path)
    lines = [
        line(
            "a",
            1300,
            "command_stopped",
            pid=10,
            term=1,
            cause="deadline",
            lease_deadline_ts_ms=1150,
        ),
        line(
            "a",
            3100,
            "command_stopped",
            pid=11,
            term=2,
            cause="stopped",
            lease_deadline_ts_ms=3060,
        ),
    ]
    found = checks.commands_past_deadline(lines, ls)
    assert len(found) == 1 and "ran 50 ms past its lease deadline 1150" in found[0], (
        found
    )
