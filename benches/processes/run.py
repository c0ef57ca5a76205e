"""Process benchmark: idle CPU and RSS of one node process of each
tenure runtime in a 5-node cluster, and leader failover after SIGKILL measured from outside, side
by side with PySyncObj (5 processes, its defaults and a 150-300 ms configuration) in the same run.
Failover is measured per runtime (native, Python, Node.js, wasmtime) in the settings of PROFILES:
the previous behaviours (an election timeout; a refused port, which still waits out the 150 ms
lease promise), the defaults (the watchdog's death notice releases the promise), the same with a
leader-only command, and the fast-lease profile (heartbeat 20 ms, lease 50 ms).

A benchmark, not a test: it prints and writes numbers, and never fails because the machine was
slow. Writes processes.md (and .json) into $TENURE_BENCH_RESULTS (or the current directory).
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

from cluster import KINDS, Cluster, Proc, now_ms

TICKS = os.sysconf("SC_CLK_TCK")


class PySyncObjCluster(Cluster):
    """The same process harness, running PySyncObj nodes (TCP) instead of tenure runtimes."""

    def __init__(self, profile: str) -> None:
        super().__init__(["python"] * 5)
        self.profile = profile
        for p in self.procs.values():
            p.kind = f"pysyncobj-{profile}"

    def command(self, p: Proc) -> list[str]:
        peers = ",".join(m for m in self.members if m != p.id)
        return [
            sys.executable,
            str(Path(__file__).with_name("pysyncobj_node.py")),
            p.id,
            peers,
            self.profile,
        ]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def idle(c: Cluster, seconds: float) -> list[dict]:
    c.wait_for(lambda: c.current_leader() is not None, 10)
    c.pump(1.0)
    before = {pid: cpu_seconds(p.popen.pid) for pid, p in c.procs.items() if p.popen}
    dogs = {pid: d for pid, p in c.procs.items() if p.popen and (d := watchdog_of(p.popen.pid))}
    dogs_before = {pid: cpu_seconds(d) for pid, d in dogs.items()}
    c.pump(seconds)
    rows = []
    for pid, p in c.procs.items():
        if not p.popen:
            continue
        cpu = cpu_seconds(p.popen.pid) - before[pid]
        rows.append(
            {
                "kind": p.kind,
                "id": pid,
                "role": p.role,
                "cpu_pct": 100 * cpu / seconds,
                "rss_mib": rss_mib(p.popen.pid),
            }
        )
    for pid, dog in dogs.items():
        p = c.procs[pid]
        try:
            cpu = cpu_seconds(dog) - dogs_before[pid]
            rows.append(
                {
                    "kind": f"{p.kind} watchdog",
                    "id": pid,
                    "role": p.role,
                    "cpu_pct": 100 * cpu / seconds,
                    "rss_mib": rss_mib(dog),
                }
            )
        except OSError:
            pass
    return rows


def watchdog_of(pid: int) -> int | None:
    """The watchdog (`__supervise`) that runtime process `pid` started, if any."""
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            args = (d / "cmdline").read_bytes().split(b"\0")
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == pid and b"__supervise" in args:
            return int(d.name)
    return None


def failovers(c: Cluster, kills: int, with_watchdog: bool = False) -> list[int]:
    """Leaderless times over `kills` SIGKILLs of the leader; `with_watchdog` kills its watchdog in
    the same instant (what a container's end does), so that no notice can leave."""
    out = []
    for _ in range(kills):
        if not c.wait_for(lambda: c.current_leader() is not None, 10):
            break
        c.pump(0.3)
        leader = c.current_leader()
        if leader is None:
            break
        term = c.procs[leader].term
        proc = c.procs[leader].popen
        watchdog = watchdog_of(proc.pid) if with_watchdog and proc is not None else None
        if watchdog is not None:
            os.kill(watchdog, signal.SIGKILL)
        t0 = c.signal(leader, signal.SIGKILL)
        if c.wait_for(
            lambda t0=t0, term=term, leader=leader: (
                c.first_leader_after(t0, term + 1, leader) is not None
            ),
            10,
        ):
            ev = c.first_leader_after(t0, term + 1, leader)
            assert ev is not None
            out.append(ev.ts_ms - t0)
        c.start(leader)
        c.wait_for(lambda pid=leader: c.procs[pid].role in ("follower", "leader"), 60)
    return out


def pct(xs: list[int], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def measure(name: str, c: Cluster, idle_s: float, kills: int) -> dict:
    try:
        c.start_all()
        rows = idle(c, idle_s)
        times = failovers(c, kills)
    finally:
        c.close()
    print(f"{name}: failover ms {times}", flush=True)
    return {"name": name, "idle": rows, "failover_ms": times}


# The defaults, with the leader's watchdog killed in the same instant as the leader.
WITH_WATCHDOG = "defaults, leader and watchdog killed together"
# Failover settings measured per runtime: (label, extra command-line options).
# A leader-only command that exits as soon as it is told to (SIGTERM).
COMMAND = ["--", "sh", "-c", "trap 'exit 0' TERM; while :; do sleep 0.05; done"]
PROFILES = [
    ("election timeout only (previous)", ["--no-failure-detection", "--no-death-notice"]),
    ("refused port, no death notice (previous)", ["--no-death-notice"]),
    ("death notice, defaults", []),
    ("death notice, -- CMD", COMMAND),
    (WITH_WATCHDOG, []),
    (
        "refused port, heartbeat 20 + lease 50",
        ["--heartbeat-interval", "20", "--lease-duration", "50", "--no-death-notice"],
    ),
]


def failover_only(name: str, c: Cluster, kills: int, with_watchdog: bool = False) -> dict:
    try:
        c.start_all()
        times = failovers(c, kills, with_watchdog)
    finally:
        c.close()
    print(f"{name}: failover ms {times}", flush=True)
    return {"name": name, "idle": [], "failover_ms": times}


def markdown(results: list[dict], idle_s: float, kills: int) -> str:
    w = [
        "## Processes: idle cost and failover from the outside",
        "",
        (
            f"`python benches/processes/run.py` (in `make bench`): 5-process clusters on 127.0.0.1; CPU is "
            f"utime+stime from /proc over {idle_s:.0f} s of an idle cluster (leader elected), RSS is VmRSS at the "
            f"end; failover is the time from SIGKILL of the leader (sent by the harness) to the first `leader` "
            f"line of a higher term from another process, over {kills} kills per cluster (each victim restarted "
            "before the next). The idle rows are the mixed cluster of `make demo` (2 Python, 2 Node.js, 1 "
            "wasmtime) and each node's watchdog; the failover rows are 5 processes of one runtime each, with "
            "default 150-300 ms election timeouts, in these settings: `--no-failure-detection --no-death-notice` "
            "(an election timeout), `--no-death-notice` (a refused port ends the wait, the 150 ms lease promise "
            "remains; docs/protocol.md, \"Failover when the leader's port refuses\"), the defaults (the "
            "watchdog's death notice releases the promise; docs/command.md, \"The watchdog\"), the defaults with "
            "a leader-only command that exits on SIGTERM, the defaults with the leader's watchdog killed with it "
            "(SIGKILL to both in the same instant, as a container's end does: no notice), and `--heartbeat-interval 20 --lease-duration 50 "
            "--no-death-notice`. PySyncObj is 5 Python processes over TCP."
        ),
        "",
        "| cluster | process | role | idle CPU % | RSS MiB |",
        "| --- | --- | --- | ---: | ---: |",
    ]
    for r in results:
        for row in r.get("idle", []):
            w.append(
                f"| {r['name']} | {row['kind']} | {row['role']} | {row['cpu_pct']:.2f} | {row['rss_mib']:.1f} |"
            )
    w += [
        "",
        "| cluster | kills measured | p50 ms | p90 ms | max ms | mean ms |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        t = r["failover_ms"]
        if t:
            w.append(
                f"| {r['name']} | {len(t)} | {pct(t, 0.5):.0f} | {pct(t, 0.9):.0f} | {max(t)} | {statistics.mean(t):.0f} |"
            )
        else:
            w.append(f"| {r['name']} | 0 | - | - | - | - |")
    return "\n".join(w) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--idle-seconds", type=float, default=30.0)
    ap.add_argument("--kills", type=int, default=30)
    ap.add_argument("--skip-pysyncobj", action="store_true")
    ap.add_argument(
        "--runtimes", default="native,python,node,wasmtime", help="runtimes measured for failover, comma-separated"
    )
    ap.add_argument("--profiles", default="", help="only the failover settings whose label contains this")
    ap.add_argument("--skip-mixed", action="store_true", help="no idle cluster of mixed runtimes")
    a = ap.parse_args()
    results = []
    if not a.skip_mixed:
        results.append(measure("tenure (mixed runtimes)", Cluster(KINDS), a.idle_seconds, a.kills))
    for kind in [k for k in a.runtimes.split(",") if k]:
        for label, options in PROFILES:
            if a.profiles not in label:
                continue
            results.append(
                failover_only(
                    f"tenure {kind}, {label}", Cluster([kind] * 5, options=options), a.kills, label == WITH_WATCHDOG
                )
            )
    if not a.skip_pysyncobj:
        results.append(
            measure(
                "PySyncObj, defaults",
                PySyncObjCluster("default"),
                a.idle_seconds,
                a.kills,
            )
        )
        results.append(
            measure(
                "PySyncObj, 150-300 ms",
                PySyncObjCluster("fast"),
                a.idle_seconds,
                a.kills,
            )
        )
    md = markdown(results, a.idle_seconds, a.kills)
    print(md)
    out = Path(os.environ.get("TENURE_BENCH_RESULTS", "."))
    out.mkdir(parents=True, exist_ok=True)
    (out / "processes.md").write_text(md)
    (out / "processes.json").write_text(
        json.dumps({"at_ms": now_ms(), "results": results}, indent=1)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
