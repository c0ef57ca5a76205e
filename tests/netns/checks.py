"""Safety checks over the recorded JSON lines of every process (after every schedule).

- One leader per term across all processes (`leader` lines).
- Leases never overlap: no node becomes leader (its `leader` line) while another node's reported
  lease deadline (from its `inspect` lines) has not passed. The issue-15 leader-only `-- CMD` does
  not exist yet, so "acting as leader" is what the lines show: a `leader` line, or an `inspect`
  reporting `leader: true` with a lease deadline still in the future.

`inspect` reports `lease_deadline` on the printing process's monotonic clock, which is one of two
kinds: the system's CLOCK_MONOTONIC (main's Python runtime: `time.monotonic_ns`), converted exactly
through the harness's own (wall, monotonic) pair taken just before the spawn; or a clock that
starts at zero inside the process (the Rust runtime's `Instant` epoch, Node's `performance.now()`),
whose zero is after the spawn, so spawn wall time + deadline is a LOWER bound of the deadline's
wall time. A value larger than the system's monotonic time at spawn can only be the first kind. The
check therefore uses the earliest wall time the deadline can be, so every overlap it reports is
real (at worst it misses one by the process's start-up time).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness import Line

# Scheduling noise between the runtime's loop and its stdout (the line's ts_ms is taken later).
SLACK_MS = 5


@dataclass
class Lease:
    node: str
    term: int
    at_ms: int  # wall time of the inspect line
    earliest_deadline_ms: int  # wall time, lower bound


def leaders_by_term(lines: list[Line]) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for ln in lines:
        if ln.event == "leader":
            out.setdefault(int(ln.data.get("term", 0)), set()).add(
                str(ln.data.get("id", ln.node))
            )
    return out


def one_leader_per_term(lines: list[Line]) -> list[str]:
    return [
        f"term {t} had {len(ids)} leaders: {sorted(ids)}"
        for t, ids in sorted(leaders_by_term(lines).items())
        if len(ids) > 1
    ]


def lease_wall_ms(ln: Line, deadline: int) -> int:
    """The earliest wall time a monotonic `deadline` in this line's process can be."""
    if deadline >= ln.spawn_mono_ms:  # the system monotonic clock: exact
        return deadline + ln.spawn_wall_ms - ln.spawn_mono_ms
    return (
        ln.spawn_wall_ms + deadline
    )  # a clock that started after the spawn: lower bound


def leases(lines: list[Line]) -> list[Lease]:
    out = []
    for ln in lines:
        if ln.event != "inspect":
            continue
        st = ln.data.get("state") or {}
        ld = st.get("lease_deadline")
        if not st.get("leader") or ld is None:
            continue
        out.append(
            Lease(ln.node, int(st.get("term", 0)), ln.ts, lease_wall_ms(ln, int(ld)))
        )
    return out


def lease_overlaps(lines: list[Line]) -> list[str]:
    """A node's `leader` line (term T) at a wall time before another node's lease of a term < T
    surely ended."""
    found = []
    ls = leases(lines)
    for ln in lines:
        if ln.event != "leader":
            continue
        term, t = int(ln.data.get("term", 0)), ln.ts
        for lease in ls:
            if (
                lease.node != ln.node
                and lease.term < term
                and lease.earliest_deadline_ms - SLACK_MS > t
            ):
                found.append(
                    f"{ln.node} became leader of term {term} at {t} while {lease.node}'s lease of term "
                    f"{lease.term} (reported at {lease.at_ms}) ran until at least {lease.earliest_deadline_ms}"
                )
                break
    return found


def safety(lines: list[Line]) -> list[str]:
    return one_leader_per_term(lines) + lease_overlaps(lines)


def first_after(
    lines: list[Line], node: str, events: tuple[str, ...], since_ms: int
) -> Line | None:
    for ln in sorted(lines, key=lambda x: x.ts):
        if ln.node == node and ln.ts >= since_ms and ln.event in events:
            return ln
    return None
