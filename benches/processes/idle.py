"""Idle CPU per runtime: a 3-node cluster of one runtime kind at a time (the Rust `tenure`,
`python -m tenure`, the Node.js `tenure`, `tenure-wasmtime`), default timing (50 ms heartbeats),
leader elected and nothing happening; utime+stime of each process from /proc over the window,
leader and followers reported separately.

The Python and Node.js command lines are the shared runtime inside those interpreters: while
idle, no event crosses into Python or JavaScript (heartbeats produce none), so this is also the
idle cost of an `Elector` in those languages, plus the interpreter's own.

A benchmark, not a test: it prints and writes numbers and never fails because the machine was
slow. Writes idle-cpu.md (and .json) into $TENURE_BENCH_RESULTS (or the current directory).
`make bench` runs it (bench-hosts, with TENURE_NATIVE pointing at the release `tenure`); alone:
`python benches/processes/idle.py --seconds 10`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cluster import Cluster
from run import cpu_seconds, rss_mib

KINDS = ["native", "python", "node", "wasmtime"]
LABELS = {
    "native": "Rust `tenure`",
    "python": "`python -m tenure`",
    "node": "Node.js `tenure`",
    "wasmtime": "`tenure-wasmtime`",
}


def measure(kind: str, seconds: float) -> dict:
    c = Cluster([kind] * 3)
    try:
        c.start_all()
        if not c.wait_for(lambda: c.current_leader() is not None, 20):
            raise RuntimeError(f"{kind}: no leader elected")
        c.pump(1.0)  # settle: every follower knows the leader
        leader = c.current_leader()
        before = {
            pid: cpu_seconds(p.popen.pid) for pid, p in c.procs.items() if p.popen
        }
        c.pump(seconds)
        after = {pid: cpu_seconds(p.popen.pid) for pid, p in c.procs.items() if p.popen}
        if c.current_leader() != leader:
            print(
                f"idle: {kind}: leadership changed during the window", file=sys.stderr
            )
        rows = {
            pid: {
                "cpu_pct": 100 * (after[pid] - before[pid]) / seconds,
                "rss_mib": rss_mib(p.popen.pid),
            }
            for pid, p in c.procs.items()
            if p.popen
        }
    finally:
        c.close()
    followers = [r for pid, r in rows.items() if pid != leader]
    return {
        "kind": kind,
        "leader_cpu_pct": rows[leader]["cpu_pct"],
        "follower_cpu_pct": statistics.mean(r["cpu_pct"] for r in followers),
        "leader_rss_mib": rows[leader]["rss_mib"],
        "follower_rss_mib": statistics.mean(r["rss_mib"] for r in followers),
    }


def markdown(results: list[dict], seconds: float) -> str:
    lines = [
        "## Idle CPU per runtime (3-node clusters)",
        "",
        (
            f"`python benches/processes/idle.py` (in `make bench`): per runtime, 3 processes of that runtime on "
            f"127.0.0.1 with the default timing (50 ms heartbeats, 150-300 ms election timeout), leader elected; "
            f"CPU is utime+stime from /proc over {seconds:.0f} s with nothing happening (% of one core), followers "
            "averaged; RSS is VmRSS at the end. The Python and Node.js command lines run the shared Rust runtime "
            "inside the interpreter; idle, no event crosses into the language, so this is also an idle `Elector`'s "
            "cost there."
        ),
        "",
        "| runtime | leader CPU % | follower CPU % | leader RSS MiB | follower RSS MiB |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        lines.append(
            f"| {LABELS[r['kind']]} | {r['leader_cpu_pct']:.2f} | {r['follower_cpu_pct']:.2f} "
            f"| {r['leader_rss_mib']:.1f} | {r['follower_rss_mib']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument(
        "--kinds", default=",".join(KINDS), help="comma list of: " + ", ".join(KINDS)
    )
    a = ap.parse_args()
    results = [measure(k, a.seconds) for k in a.kinds.split(",")]
    md = markdown(results, a.seconds)
    print(md)
    out = Path(os.environ.get("TENURE_BENCH_RESULTS", "."))
    out.mkdir(parents=True, exist_ok=True)
    (out / "idle-cpu.md").write_text(md)
    (out / "idle-cpu.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
