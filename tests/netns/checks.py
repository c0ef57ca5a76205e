"""Safety checks over the recorded JSON lines of every process (after every schedule).

- One leader per term across all processes (`leader` lines).
- Leases never overlap: no node becomes leader (its `leader` line) while another node's reported
  lease deadline (from its `inspect` lines) has not passed.
- Leader-only commands (`tenure run … -- CMD`, the harness's TICKER) never run on two nodes at
  once, from the commands' own timestamps (beyond COMMAND_SLACK_MS), and a command the runtime
  stopped (`command_stopped`/`command_exited` with `lease_deadline_ts_ms`) was gone by that lease
  deadline: no leader acts after its reported lease deadline.

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
from pathlib import Path

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
        if not st.get("is_leader") or ld is None:
            continue
        out.append(
            Lease(ln.node, int(st.get("term", 0)), ln.ts, lease_wall_ms(ln, int(ld)))
        )
    return out


def handed_over(lines: list[Line], lease: Lease) -> int | None:
    """When the holder of `lease` gave its leadership up itself, after it reported the lease: its
    own `follower` line of the lease's term naming no leader. A leader that hands over (a transfer,
    or a preemption to a member of higher priority) ends its lease there, before it tells the
    target to campaign, and the voters set their promise to it aside for that campaign
    (docs/protocol.md); what its leader-only command did after is `command_overlaps`' to judge."""
    for ln in lines:
        if (
            ln.node == lease.node
            and ln.event == "follower"
            and ln.ts >= lease.at_ms
            and int(ln.data.get("term", -1)) == lease.term
            and ln.data.get("leader") is None
        ):
            return ln.ts
    return None


def lease_overlaps(lines: list[Line]) -> list[str]:
    """A node's `leader` line (term T) at a wall time before another node's lease of a term < T
    surely ended, unless that lease was ended first by its holder's death notice (the watchdog
    sends one only once the holder's process is dead and its command is gone: docs/protocol.md,
    "Death notices", which `command_overlaps` and `notices_from_the_living` check) or by its holder
    handing leadership over (`handed_over`)."""
    found = []
    ls = leases(lines)
    # (node, term) -> when its watchdog said that leadership ended.
    ended = {}
    for ln in lines:
        if ln.event == "death_notice":
            key = (ln.node, int(ln.data.get("term", -1)))
            ended.setdefault(key, ln.ts)
    handed: dict[tuple[str, int, int], int | None] = {}
    for ln in lines:
        if ln.event != "leader":
            continue
        term, t = int(ln.data.get("term", 0)), ln.ts
        for lease in ls:
            notice = ended.get((lease.node, lease.term))
            if notice is not None and notice <= t:
                continue
            key = (lease.node, lease.term, lease.at_ms)
            if key not in handed:
                handed[key] = handed_over(lines, lease)
            if handed[key] is not None and handed[key] <= t:  # type: ignore[operator]
                continue
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


# Commands: a supervisor woken late on a loaded 2-core machine, `date` forked by the ticker, the
# SIGKILL's delivery. The faults these checks exist for are off by a lease (~150 ms) or more.
COMMAND_SLACK_MS = 25


@dataclass
class Life:
    """One run of the leader-only command, from its own file (harness.TICKER)."""

    name: str
    node: str  # TENURE_LEADER_ID
    term: int
    pid: int
    start_ns: int
    end_ns: int  # its `stop`, else its last tick (at most one 5 ms tick early)


def lives(commands: Path) -> list[Life]:
    out = []
    for path in sorted(commands.iterdir()) if commands.is_dir() else []:
        life = Life(path.name, "", 0, int(path.name.rsplit("-", 1)[-1]), 0, 0)
        for line in path.read_text(errors="replace").splitlines():
            w = line.split(" ")
            # A line may be cut by SIGKILL (`t ` without its time): skipped.
            if len(w) == 3 and w[0] == "env" and w[1].isdigit():
                life.term, life.node = int(w[1]), w[2]
            elif len(w) == 2 and w[1].isdigit() and w[0] in ("start", "t", "stop"):
                ns = int(w[1])
                if w[0] == "start":
                    life.start_ns = ns
                life.end_ns = max(life.end_ns, ns)
        if life.start_ns:
            out.append(life)
    return sorted(out, key=lambda x: x.start_ns)


def largest_command_overlap(ls: list[Life]) -> tuple[int, str]:
    """The largest overlap in ms (negative: the smallest gap) between two commands of different
    nodes, and the pair."""
    worst: tuple[int, str] = (-(10**9), "")
    for i, a in enumerate(ls):
        for b in ls[i + 1 :]:
            if a.node == b.node:
                continue
            ms = (min(a.end_ns, b.end_ns) - b.start_ns) // 1_000_000
            if ms > worst[0]:
                pair = (
                    f"{a.node}'s command (term {a.term}, pid {a.pid}) ran until {a.end_ns // 1_000_000} "
                    f"and {b.node}'s (term {b.term}, pid {b.pid}) from {b.start_ns // 1_000_000}"
                )
                worst = (ms, pair)
    return worst


def command_overlaps(ls: list[Life]) -> list[str]:
    ms, pair = largest_command_overlap(ls)
    if ms > COMMAND_SLACK_MS:
        return [f"two leader-only commands ran together for {ms} ms: {pair}"]
    return []


def commands_past_deadline(lines: list[Line], ls: list[Life]) -> list[str]:
    """A command the runtime reports stopped or exited, with the lease deadline it was held to,
    that still ticked after that deadline."""
    by_pid = {(life.node, life.pid): life for life in ls}
    found = []
    for ln in lines:
        if ln.event not in ("command_stopped", "command_exited"):
            continue
        deadline, pid = ln.data.get("lease_deadline_ts_ms"), ln.data.get("pid")
        life = by_pid.get((str(ln.data.get("id", ln.node)), pid))  # type: ignore[arg-type]
        if deadline is None or life is None:
            continue
        late = life.end_ns // 1_000_000 - int(deadline)
        if late > COMMAND_SLACK_MS:
            found.append(
                f"{life.node}'s command (term {life.term}, pid {life.pid}) ran {late} ms past its lease "
                f"deadline {deadline} ({ln.data.get('cause')})"
            )
    return found


def notices_from_the_living(lines: list[Line]) -> list[str]:
    """A watchdog's `death_notice` says its runtime's process is dead: no line of that run of the
    runtime (same node, same spawn) may come after it."""
    found = []
    for ln in lines:
        if ln.event != "death_notice":
            continue
        later = [
            x
            for x in lines
            if x.node == ln.node
            and x.spawn_wall_ms == ln.spawn_wall_ms
            and x.event not in ("death_notice", "?")
            and "ts_ms" in x.data
            and x.ts > ln.ts + SLACK_MS
        ]
        if later:
            found.append(
                f"{ln.node}'s watchdog sent death notices at {ln.ts} (term {ln.data.get('term')}) while its "
                f"runtime lived: it printed {later[0].event} at {later[0].ts}"
            )
    return found


def safety(lines: list[Line], commands: Path | None = None) -> list[str]:
    found = (
        one_leader_per_term(lines)
        + lease_overlaps(lines)
        + notices_from_the_living(lines)
    )
    if commands is not None:
        ls = lives(commands)
        found += command_overlaps(ls) + commands_past_deadline(lines, ls)
    return found


def first_after(
    lines: list[Line], node: str, events: tuple[str, ...], since_ms: int
) -> Line | None:
    for ln in sorted(lines, key=lambda x: x.ts):
        if ln.node == node and ln.ts >= since_ms and ln.event in events:
            return ln
    return None
