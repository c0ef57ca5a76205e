"""Per-call overhead of the Python binding: a follower of a 5-node cluster receives the leader's
heartbeat and drains the ack it produces (``handle_message`` + ``drain``), the same workload as the
core's criterion bench ``message/follower_heartbeat_to_ack``.

    python python/benches/bench_node.py            # Python numbers only
    python python/benches/bench_node.py --native   # also run the core's Rust bench for comparison

A benchmark, not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

from tenure import Config, Node, Send, wire

CLUSTER = "bench-cluster"
KEY = b"0123456789abcdef0123456789abcdef"
ROOT = Path(__file__).resolve().parents[2]


def node_id(i: int) -> str:
    return f"10.0.{i // 250}.{i % 250 + 1}:7000"


# The core acknowledges only a fresh heartbeat (a duplicate proves nothing and is ignored), so each
# measurement feeds heartbeats with increasing ``sent_at``: batches of K pre-encoded ones, each
# batch on a fresh follower set up outside the timed loop.
K = 1000


def follower(auth: bool) -> Node:
    ids = tuple(node_id(i) for i in range(5))
    key = KEY if auth else None
    node = Node(Config(id=ids[1], cluster=CLUSTER, bootstrap=ids, key=key), now=0, seed=7)
    node.handle_message(1, ids[0], heartbeat(0, auth))
    node.drain()
    return node


def heartbeat(sent_at: int, auth: bool) -> bytes:
    return wire.encode(wire.Envelope(CLUSTER, node_id(0), 1, wire.Heartbeat(sent_at)), KEY if auth else None)


def measure(body: Callable[[Node], None], auth: bool, iterations: int, repeats: int) -> List[float]:
    """Nanoseconds per heartbeat for each repeat (``body`` handles K heartbeats on a fresh node)."""
    out = []
    batches = max(1, iterations // K)
    for _ in range(repeats):
        ns = 0
        for _ in range(batches):
            node = follower(auth)
            t0 = time.perf_counter_ns()
            body(node)
            ns += time.perf_counter_ns() - t0
        out.append(ns / (batches * K))
    return out


def python_numbers(iterations: int, repeats: int) -> Dict[str, float]:
    results: Dict[str, float] = {}
    for auth in (False, True):
        results.update(one_variant(auth, iterations, repeats))
    return results


def one_variant(auth: bool, iterations: int, repeats: int) -> Dict[str, float]:
    results: Dict[str, float] = {}
    label = "hmac" if auth else "plain"
    leader = node_id(0)
    beats = [(t, heartbeat(t, auth)) for t in range(1, K + 1)]

    def drain_list(node: Node) -> None:
        handle, drain = node.handle_message, node.drain
        for t, hb in beats:
            handle(t, leader, hb)
            out = drain()
            assert type(out[0]) is Send

    def poll_loop(node: Node) -> None:
        handle, poll = node.handle_message, node.poll_output
        for t, hb in beats:
            handle(t, leader, hb)
            while poll() is not None:
                pass

    def handle_only(node: Node) -> None:
        handle = node.handle_message
        for t, hb in beats:
            handle(t, leader, hb)

    def empty_loop(node: Node) -> None:
        for _t, _hb in beats:
            pass

    for name, body in (
        ("handle_message+drain", drain_list),
        ("handle_message+poll_output loop", poll_loop),
        ("handle_message only", handle_only),
        ("empty Python loop", empty_loop),
    ):
        samples = measure(body, auth, iterations, repeats)
        results[f"{name} [{label}]"] = statistics.median(samples)
    return results


def native_numbers() -> Dict[str, float]:
    """Runs the core's criterion bench for the same workload; ns per call (median estimate)."""
    cmd = ["cargo", "bench", "-p", "tenure", "--bench", "election", "--",
           "message/follower_heartbeat_to_ack", "--noplot"]  # fmt: skip
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    results: Dict[str, float] = {}
    current: Optional[str] = None
    for line in (out.stdout + out.stderr).splitlines():
        m = re.match(r"^(message/follower_heartbeat_to_ack/(\w+))", line.strip())
        if m:
            current = m.group(2)
        t = re.search(r"time:\s+\[\S+ \S+ (\S+) (\w+)", line)
        if t and current:
            value, unit = float(t.group(1)), t.group(2)
            scale = {"ns": 1.0, "µs": 1000.0, "us": 1000.0, "ms": 1e6}[unit]
            results[f"native core [{current}]"] = value * scale
            current = None
    if not results:
        raise SystemExit(f"could not read the criterion output:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iterations", type=int, default=200_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--native", action="store_true", help="also run the core's Rust bench (cargo bench)")
    args = ap.parse_args()
    results = python_numbers(args.iterations, args.repeats)
    if args.native:
        results.update(native_numbers())
    width = max(len(k) for k in results)
    for name, ns in results.items():
        print(f"{name:<{width}}  {ns / 1000:8.3f} µs/call")
    if args.native:
        for label in ("plain", "hmac"):
            py = results[f"handle_message+drain [{label}]"]
            native = results.get(f"native core [{label}]")
            if native:
                print(f"binding overhead [{label}]: {(py - native) / 1000:.3f} µs/call ({py / native:.1f}x the core)")


if __name__ == "__main__":
    main()
