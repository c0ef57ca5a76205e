"""Priority and value benchmark: the two targets of priorities and the proclaimed value, measured
with real runtime processes on 127.0.0.1.

1. The preferred member returns. Five processes, the first with `--priority 10`, all with
   `--preempt-after P`. Each repetition: the preferred member leads; it is SIGKILLed; another
   member is elected; the preferred member is started again. Measured from its lines and the
   interim leader's (`ts_ms`, one machine, one wall clock): from its first `follower` line naming
   the interim leader (it hears and answers that leader from then on) to its `leader` line, less
   P (the target: at most 10 ms); and the leaderless gap of the handover, from the interim
   leader's `follower` line to the preferred member's `leader` line (the target: at most 5 ms).
   Repetitions are 8 x P apart: a leader does not preempt again, within that, to a member it
   preempted to (the core's backoff), and an interim leader may be the same member twice.
2. A new value reaches everyone. Five members and one observer (`--observer`, listed by every
   member with `--observer-peer`). Each repetition: the harness writes `proclaim TEXT` to the
   leader's stdin; measured from that write to the last `follower` line carrying TEXT among the
   four other members and the observer (the target: at most one heartbeat interval and two round
   trips; a round trip on loopback is well under a millisecond).

A benchmark, not a test: it prints and writes numbers, and never fails because the machine was
slow. Writes targets.md (and .json) into $TENURE_BENCH_RESULTS (or the current directory).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from cluster import Cluster, Event, now_ms

SECTION = "## Priorities and the proclaimed value: the targets, from the outside"
HEARTBEAT_MS = 50  # the runtimes' default heartbeat interval (not changed here)
# The targets: leadership back on the preferred member within preempt_after + 10 ms, no
# leaderless gap above 5 ms; a new value everywhere within a heartbeat interval + 2 round trips.
PREEMPT_EXCESS_MS = 10
GAP_MS = 5
# A leader does not preempt to a member it preempted to within this many preempt_after (the
# core's PREEMPT_BACKOFF_FACTOR): repetitions wait it out, so that each measures a preemption.
PREEMPT_BACKOFF_FACTOR = 8


def pct(xs: list[int], q: float) -> float:
    """Nearest-rank percentile, as benches/processes/run.py."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def first(c: Cluster, since: int, pred) -> Event | None:  # type: ignore[no-untyped-def]
    for e in c.events:
        if e.ts_ms >= since and pred(e):
            return e
    return None


def preferred_returns(kind: str, reps: int, preempt_after: int) -> list[dict]:
    """Repetitions of: the preferred member killed, another elected, the preferred one restarted
    and preempted to. One dict per repetition that completed."""
    c = Cluster([kind] * 5, options=["--preempt-after", str(preempt_after)])
    pref = c.members[0]
    c.procs[pref].args += ["--priority", "10"]
    out: list[dict] = []
    try:
        c.start_all()
        for _ in range(reps):
            if not c.wait_for(lambda: c.current_leader() == pref, 10):
                print(
                    f"  the preferred member {pref} did not lead within 10 s; stopping",
                    flush=True,
                )
                break
            c.pump(0.3)
            term = c.procs[pref].term
            t_kill = c.signal(pref, signal.SIGKILL)
            if not c.wait_for(
                lambda t=t_kill, term=term: (
                    c.first_leader_after(t, term + 1, pref) is not None
                ),
                10,
            ):
                print("  no interim leader within 10 s; stopping", flush=True)
                break
            interim = c.first_leader_after(t_kill, term + 1, pref)
            assert interim is not None
            c.pump(0.2)
            t_start = now_ms()
            c.start(pref)
            if not c.wait_for(
                lambda t=t_start: (
                    first(c, t, lambda e: e.id == pref and e.event == "leader")
                    is not None
                ),
                10 + preempt_after / 1000,
            ):
                print(
                    "  leadership did not return to the preferred member within 10 s; stopping",
                    flush=True,
                )
                break
            led = first(c, t_start, lambda e: e.id == pref and e.event == "leader")
            follows = first(
                c,
                t_start,
                lambda e, i=interim.id: (
                    e.id == pref and e.event == "follower" and e.leader == i
                ),
            )
            handed = first(
                c, t_start, lambda e, i=interim.id: e.id == i and e.event == "follower"
            )
            assert led is not None
            row = {
                "from_start_ms": led.ts_ms - t_start,
                "from_follows_ms": None
                if follows is None
                else led.ts_ms - follows.ts_ms,
                "gap_ms": None if handed is None else led.ts_ms - handed.ts_ms,
            }
            print(f"  {row}", flush=True)
            out.append(row)
            c.pump(PREEMPT_BACKOFF_FACTOR * preempt_after / 1000)
    finally:
        c.close()
    return out


def value_everywhere(kind: str, reps: int) -> list[dict]:
    """Repetitions of: `proclaim TEXT` written to the leader; the time until every other member
    and the observer reported TEXT. One dict per repetition that completed."""
    c = Cluster([kind] * 5, extra=[(kind, None)])
    obs = next(pid for pid in c.procs if pid not in c.members)
    c.procs[obs].args += ["--observer"]
    for m in c.members:
        c.procs[m].args += ["--observer-peer", obs]
    out: list[dict] = []
    try:
        c.start_all()
        for i in range(reps):
            if not c.wait_for(lambda: c.current_leader() is not None, 10):
                print("  no leader within 10 s; stopping", flush=True)
                break
            leader = c.current_leader()
            assert leader is not None
            # Everyone follows it (the observer too) before the clock starts.
            if not c.wait_for(
                lambda leader=leader: all(
                    p.leader == leader for pid, p in c.procs.items() if pid != leader
                ),
                10,
            ):
                print(
                    "  not everyone follows the leader within 10 s; stopping",
                    flush=True,
                )
                break
            c.pump(0.1)
            text = f"http://bench-{i}.example:8080/"
            t0 = now_ms()
            c.send_control(leader, f"proclaim {text}")
            watchers = [pid for pid in c.procs if pid != leader]

            def seen(pid: str, t0: int = t0, text: str = text) -> Event | None:
                return first(
                    c,
                    t0,
                    lambda e: (
                        e.id == pid
                        and e.event == "follower"
                        and e.raw.get("value") == text
                    ),
                )

            if not c.wait_for(
                lambda w=watchers, seen=seen: all(seen(pid) is not None for pid in w), 5
            ):
                print(
                    f"  {text!r} did not reach everyone within 5 s; stopping",
                    flush=True,
                )
                break
            times = {pid: seen(pid).ts_ms - t0 for pid in watchers}  # type: ignore[union-attr]
            row = {"all_ms": max(times.values()), "observer_ms": times[obs]}
            print(f"  {row}", flush=True)
            out.append(row)
    finally:
        c.close()
    return out


def summary(xs: list[int]) -> str:
    if not xs:
        return "- | - | - | -"
    return f"{pct(xs, 0.5):.0f} | {pct(xs, 0.9):.0f} | {max(xs)} | {statistics.mean(xs):.1f}"


def markdown(
    kind: str, reps: int, preempt_after: int, pref: list[dict], value: list[dict]
) -> str:
    excess = [
        r["from_follows_ms"] - preempt_after
        for r in pref
        if r["from_follows_ms"] is not None
    ]
    gaps = [r["gap_ms"] for r in pref if r["gap_ms"] is not None]
    starts = [r["from_start_ms"] for r in pref]
    alls = [r["all_ms"] for r in value]
    obs = [r["observer_ms"] for r in value]
    bound = HEARTBEAT_MS  # + 2 round trips, each well under 1 ms on loopback

    def verdict(xs: list[int], limit: float) -> str:
        if not xs:
            return "not measured"
        return (
            "met"
            if max(xs) <= limit
            else f"**not met** ({sum(x > limit for x in xs)} of {len(xs)} above)"
        )

    w = [
        SECTION,
        "",
        (
            f"`python benches/processes/targets.py` (in `make bench`; alone: `make bench-targets`): 5 {kind} "
            f"processes on 127.0.0.1, default timers (election timeout 150-300 ms, heartbeat {HEARTBEAT_MS} ms), "
            f"{reps} repetitions each. Preferred member: `--priority 10` on one, `--preempt-after {preempt_after}` on "
            "all; it is SIGKILLed, another member is elected, it starts again (repetitions 8 × preempt_after "
            "apart: the core's preemption backoff); *excess* is the time from its first "
            "`follower` line naming the interim leader to its `leader` line, less preempt_after; *gap* is the "
            "interim leader's `follower` line to the preferred member's `leader` line. Value: 5 members and one "
            "`--observer`; the time from writing `proclaim TEXT` to the leader's stdin to the last `follower` line "
            "with TEXT among the other members and the observer. Times are the processes' own `ts_ms`."
        ),
        "",
        "| measure | repetitions | p50 ms | p90 ms | max ms | mean ms | target |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
        (
            f"| preferred member back in the lead: excess over preempt_after | {len(excess)} | {summary(excess)} | "
            f"≤ {PREEMPT_EXCESS_MS} ms: {verdict(excess, PREEMPT_EXCESS_MS)} |"
        ),
        f"| leaderless gap of the handover | {len(gaps)} | {summary(gaps)} | ≤ {GAP_MS} ms: {verdict(gaps, GAP_MS)} |",
        f"| preferred member: from its restart to leading | {len(starts)} | {summary(starts)} | (context) |",
        (
            f"| new value reported by every member and the observer | {len(alls)} | {summary(alls)} | "
            f"≤ heartbeat + 2 RTT ≈ {bound} ms: {verdict(alls, bound)} |"
        ),
        f"| new value reported by the observer | {len(obs)} | {summary(obs)} | (context) |",
    ]
    return "\n".join(w) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--reps", type=int, default=30, help="repetitions of each measure")
    ap.add_argument(
        "--runtime",
        default="native",
        help="the runtime of every process (native, python, node, wasmtime)",
    )
    ap.add_argument(
        "--preempt-after",
        type=int,
        default=300,
        help="--preempt-after of every member, ms",
    )
    a = ap.parse_args()
    print(
        f"preferred member returns ({a.runtime}, preempt_after {a.preempt_after} ms):",
        flush=True,
    )
    pref = preferred_returns(a.runtime, a.reps, a.preempt_after)
    print(f"new value everywhere ({a.runtime}):", flush=True)
    value = value_everywhere(a.runtime, a.reps)
    md = markdown(a.runtime, a.reps, a.preempt_after, pref, value)
    print(md)
    out = Path(os.environ.get("TENURE_BENCH_RESULTS", "."))
    out.mkdir(parents=True, exist_ok=True)
    (out / "targets.md").write_text(md)
    (out / "targets.json").write_text(
        json.dumps(
            {
                "at_ms": now_ms(),
                "runtime": a.runtime,
                "preempt_after_ms": a.preempt_after,
                "preferred": pref,
                "value": value,
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
