#!/usr/bin/env python3
"""Assembles BENCHMARKS.md from one `make bench` run.

Inputs: criterion's estimates (target/criterion/<group>/<bench>/new/estimates.json) and the
Markdown/JSON fragments the bench binaries write to $TENURE_BENCH_RESULTS (core-memory.md,
compare-memory.md/.json, failover.md/.json, and any other *.md a later bench adds: those are
appended in name order). Standard library only.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def sh(*cmd: str) -> str:
    try:
        return subprocess.run(
            cmd, capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        return "?"


def machine() -> list[tuple[str, str]]:
    model = "?"
    for line in sh("lscpu").splitlines():
        if line.startswith("Model name:"):
            model = line.split(":", 1)[1].strip()
    mem = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    return [
        ("CPUs (`nproc`)", sh("nproc")),
        ("CPU model (`lscpu`)", model),
        ("memory", mem),
        ("OS", f"{platform.system()} {platform.release()}"),
        ("rustc", sh("rustc", "--version")),
        ("cargo", sh("cargo", "--version")),
    ]


class Criterion:
    def __init__(self, root: Path) -> None:
        self.root = root

    def median_ns(self, *path: str) -> float | None:
        f = self.root.joinpath(*path, "new", "estimates.json")
        try:
            return float(json.loads(f.read_text())["median"]["point_estimate"])
        except (OSError, KeyError, ValueError):
            return None


def fmt_ns(ns: float | None) -> str:
    if ns is None:
        return "–"
    if ns < 1_000:
        return f"{ns:.0f} ns"
    if ns < 1_000_000:
        return f"{ns / 1_000:.2f} µs"
    return f"{ns / 1_000_000:.2f} ms"


def ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return "–"
    return f"{a / b:.2f}×"


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def gz(data: bytes) -> int:
    return len(gzip.compress(data, compresslevel=9, mtime=0))


def sizes(root: Path) -> list[str]:
    """Sizes of the shipped artefacts that exist in the work tree (none is built here)."""
    rows: list[tuple[str, Path | None, str]] = []

    def newest(pattern: str) -> Path | None:
        found = sorted(root.glob(pattern), key=lambda p: p.stat().st_mtime)
        return found[-1] if found else None

    rows.append(
        (
            "WebAssembly component",
            newest("target/component/tenure.wasm"),
            "`make component`",
        )
    )
    rows.append(
        (
            "browser build (wasm-bindgen, wasm-opt)",
            newest("demo/pkg/tenure_wasm_bg.wasm"),
            "`make web`",
        )
    )
    rows.append(
        (
            "Python wheel (abi3)",
            newest("target/wheels/tenure-*.whl"),
            "`maturin build --release`",
        )
    )
    rows.append(("Node.js addon", newest("node/native/*.node"), "`make node-addon`"))
    out = [
        "| artefact | file | bytes | gzip -9 bytes | built by |",
        "| --- | --- | ---: | ---: | --- |",
    ]
    for name, path, how in rows:
        if path is None:
            out.append(f"| {name} | not built | – | – | {how} |")
            continue
        data = path.read_bytes()
        out.append(
            f"| {name} | `{path.relative_to(root)}` | {len(data):,} | {gz(data):,} | {how} |"
        )
    return out


def pct(xs: list[int], q: float) -> float:
    """The same nearest-rank percentile as benches/processes/run.py."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def process_headline(res: Path) -> list[str]:
    """Headline rows for the real-process goals: SIGKILL failover per runtime (goal: p50 ≤ 50 ms,
    p90 ≤ 80 ms, beside the previous behaviour and PySyncObj) and idle CPU per runtime (goal:
    a Python or Node.js node ≤ 0.5 % as follower, ≤ 1 % as leader)."""
    rows: list[str] = []
    procs = read_json(res / "processes.json")
    if procs:
        by_name = {
            r["name"]: r["failover_ms"] for r in procs["results"] if r["failover_ms"]
        }
        prev = {n: t for n, t in by_name.items() if "election timeout only" in n}
        no_notice = {n: t for n, t in by_name.items() if "no death notice (previous)" in n}
        for name, t in by_name.items():
            if not name.startswith("tenure ") or "mixed" in name or "(previous)" in name:
                continue
            p50, p90 = pct(t, 0.5), pct(t, 0.9)
            kind = name.split(",")[0]
            if "killed together" in name:
                # No notice can leave: the refused-port path without a notice is the reference.
                old = next((v for n, v in no_notice.items() if n.startswith(kind + ",")), None)
                goal = "no regression (p90 within 10 ms of no notice)"
                verdict = old is not None and p90 <= pct(old, 0.9) + 10
            elif "death notice, -- CMD" in name:
                goal, verdict = "p50 ≤ 15 ms", p50 <= 15
                old = next((v for n, v in no_notice.items() if n.startswith(kind + ",")), None)
            elif "death notice" in name:
                goal, verdict = "p50 ≤ 10 ms, p90 ≤ 20 ms", p50 <= 10 and p90 <= 20
                old = next((v for n, v in no_notice.items() if n.startswith(kind + ",")), None)
            else:
                goal, verdict = "p50 ≤ 50 ms, p90 ≤ 80 ms", p50 <= 50 and p90 <= 80
                old = next((v for n, v in prev.items() if n.startswith(kind + ",")), None)
            before = (
                f"previous {pct(old, 0.5):.0f} / {pct(old, 0.9):.0f} ms" if old else ""
            )
            peers = "; ".join(
                f"{n} {pct(v, 0.5):.0f} / {pct(v, 0.9):.0f} ms"
                for n, v in by_name.items()
                if n.startswith("PySyncObj")
            )
            rows.append(
                f"| SIGKILL failover p50 / p90, 5 processes ({name}, {len(t)} kills) | "
                f"{p50:.0f} / {p90:.0f} ms | {'; '.join(x for x in (before, peers) if x)} | "
                f"{goal}: {'met' if verdict else '**not met**'} |"
            )
        dogs = [
            row
            for r in procs["results"]
            for row in r.get("idle", [])
            if row["kind"].endswith(" watchdog")
        ]
        if dogs:
            cpu = max(d["cpu_pct"] for d in dogs)
            rss = max(d["rss_mib"] for d in dogs)
            ok = cpu == 0 and rss <= 2.0
            rows.append(
                f"| watchdog idle CPU / RSS, worst of {len(dogs)} nodes | {cpu:.2f} % / {rss:.1f} MiB | | "
                f"0 % / ≤ 2 MiB: {'met' if ok else '**not met**'} |"
            )
    idle = read_json(res / "idle-cpu.json")
    if idle:
        for r in idle:
            if r["kind"] not in ("python", "node"):
                continue
            ok = r["follower_cpu_pct"] <= 0.5 and r["leader_cpu_pct"] <= 1.0
            rows.append(
                f"| idle CPU, {r['kind']} node at 50 ms heartbeats (leader / follower) | "
                f"{r['leader_cpu_pct']:.2f} / {r['follower_cpu_pct']:.2f} % of a core | | "
                f"≤ 1 % / ≤ 0.5 %: {'met' if ok else '**not met**'} |"
            )
    return rows


def size_and_host_headline(res: Path, root: Path, c: Criterion) -> list[str]:
    """Headline rows for the size goals: both WebAssembly builds ≤ 60 KB raw, and the
    cost above the core of a follower's handle + drain from Node.js (≤ 1 µs) and Python (≤ 0.5 µs)."""
    rows: list[str] = []
    for what, rel in [
        ("WebAssembly component `tenure.wasm`", "target/component/tenure.wasm"),
        ("browser build after wasm-opt", "demo/pkg/tenure_wasm_bg.wasm"),
    ]:
        f = root / rel
        if f.is_file():
            n = f.stat().st_size
            verdict = "met" if n <= 60_000 else "**not met**"
            rows.append(f"| {what} | {n:,} B raw | | ≤ 60 KB raw: {verdict} |")
    try:
        hosts = (res / "hosts.md").read_text()
    except OSError:
        return rows
    core_ns = c.median_ns("message", "follower_heartbeat_to_ack", "plain")
    m = re.search(
        r"follower: handleMessage\(heartbeat\) \+ drain\(\)[^:]*, public Node class: ([\d.]+) µs",
        hosts,
    )
    if m and core_ns:
        above = float(m.group(1)) - core_ns / 1000
        verdict = "met" if above <= 1.0 else "**not met**"
        rows.append(
            f"| Node.js follower `handleMessage` + `drain()` above the core | {above:.2f} µs | "
            f"{float(m.group(1)):.2f} µs in all, core {fmt_ns(core_ns)} | ≤ 1 µs: {verdict} |"
        )
    m = re.search(r"binding overhead \[plain\]: ([\d.]+) µs", hosts)
    if m:
        above = float(m.group(1))
        verdict = "met" if above <= 0.5 else "**not met**"
        rows.append(
            f"| Python follower `handle_message` + `drain` above the core | {above:.2f} µs | | "
            f"≤ 0.5 µs: {verdict} |"
        )
    return rows


def requote(root: Path, path: Path) -> None:
    """Refills the numbers the docs quote from `path` (BENCHMARKS.md) through their marked spans
    (benches/quotes.py), and warns about quotes it cannot fill."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import quotes

    for page in quotes.rewrite(root.resolve(), path.read_text()):
        print(f"bench: updated the numbers quoted in {page.relative_to(root.resolve())}")
    for problem in quotes.check(root.resolve(), path.read_text()):
        print(f"bench: warning: {problem}")


def refresh_sizes(path: Path, root: Path) -> None:
    """Rewrites, in an existing BENCHMARKS.md, the rows that `sizes` and the WebAssembly headline
    measure from the artefacts built now (rows matched by their first cell; an artefact not built
    keeps its row), for a size change measured without a whole `make bench` run; then refills the
    docs' quoted numbers from it."""
    fresh: dict[str, str] = {}
    # No results directory: the headline gives its WebAssembly rows only.
    rows = sizes(root) + size_and_host_headline(
        root / "nonexistent", root, Criterion(root)
    )
    for row in rows:
        if (
            not row.startswith("| ")
            or "not built" in row
            or row.startswith(("| artefact", "| ---"))
        ):
            continue
        fresh[row.split(" | ")[0]] = row
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        new = fresh.get(line.split(" | ")[0]) if line.startswith("| ") else None
        if new is not None and new != line:
            print(f"bench: {line}\n    -> {new}")
            lines[i] = new
    path.write_text("\n".join(lines) + "\n")
    requote(root, path)


RECORDED_SECTION = "## 5. Reliability (recorded runs)"


def recorded(root: Path) -> list[str]:
    """The reliability section: the recorded long runs' figures (benches/recorded/), copied as
    they are."""
    out = [RECORDED_SECTION + "\n"]
    for name in ["model-check.md", "soak.md"]:
        try:
            out.append((root / "benches" / "recorded" / name).read_text().strip() + "\n")
        except OSError:
            out.append(f"_benches/recorded/{name} is missing._\n")
    return out


def refresh_recorded(path: Path, root: Path) -> None:
    """Rewrites, in an existing BENCHMARKS.md, the reliability section from benches/recorded/ (a
    new recorded run, without a whole `make bench` run); then refills the docs' quoted numbers."""
    lines = path.read_text().splitlines()
    first = lines.index(RECORDED_SECTION)
    end = next((i for i in range(first + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    # As the whole report writes it: each part, then a blank line before the next section.
    section = ("\n".join(recorded(root)) + "\n").splitlines()
    path.write_text("\n".join(lines[:first] + section + lines[end:]) + "\n")
    print(f"bench: rewrote {RECORDED_SECTION!r} in {path} from benches/recorded/")
    requote(root, path)


PROCESS_ROWS = ("| SIGKILL failover p50 / p90, 5 processes (", "| watchdog idle CPU / RSS")
PROCESS_SECTION = "## Processes: idle cost and failover from the outside"


def refresh_processes(path: Path, res: Path, root: Path) -> None:
    """Rewrites, in an existing BENCHMARKS.md, the processes section and the headline's process
    rows from `res`'s processes.json/.md (`make bench-processes`: the process benchmark alone, for a
    change to failover measured without a whole `make bench` run), saying when they were measured;
    then refills the docs' quoted numbers from it."""
    fragment = (res / "processes.md").read_text().strip().splitlines()
    assert fragment and fragment[0] == PROCESS_SECTION, f"{res / 'processes.md'} is not the process benchmark's"
    at = f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC"
    fragment[1:1] = [
        "",
        (
            "This section and the headline's process rows were measured again on their own (`make "
            f"bench-processes`, {at}); the other sections are from the run dated above."
        ),
    ]
    lines = path.read_text().splitlines()
    rows = process_headline(res)
    first = next((i for i, ln in enumerate(lines) if ln.startswith(PROCESS_ROWS)), None)
    if first is not None:
        lines = lines[:first] + rows + [ln for ln in lines[first:] if not ln.startswith(PROCESS_ROWS)]
    start = lines.index(PROCESS_SECTION)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    lines[start:end] = fragment + [""]
    path.write_text("\n".join(lines) + "\n")
    print(f"bench: {len(rows)} headline rows and the processes section rewritten in {path}")
    requote(root, path)


TARGETS_SECTION = "## Priorities and the proclaimed value: the targets, from the outside"


def refresh_targets(path: Path, res: Path, root: Path) -> None:
    """Rewrites (or appends), in an existing BENCHMARKS.md, the section of the priority and value
    targets from `res`'s targets.md (`make bench-targets`), saying when it was measured."""
    fragment = (res / "targets.md").read_text().strip().splitlines()
    assert fragment and fragment[0] == TARGETS_SECTION, f"{res / 'targets.md'} is not the targets benchmark's"
    at = f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC"
    fragment[1:1] = [
        "",
        (
            f"This section was measured again on its own (`make bench-targets`, {at}); the other "
            "sections are from the run dated above."
        ),
    ]
    lines = path.read_text().splitlines()
    if TARGETS_SECTION in lines:
        start = lines.index(TARGETS_SECTION)
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        lines[start:end] = fragment + [""]
    else:
        lines += ["", *fragment]
    path.write_text("\n".join(lines) + "\n")
    print(f"bench: the targets section rewritten in {path}")
    requote(root, path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", type=Path)
    ap.add_argument("--criterion", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument(
        "--root", default=Path.cwd(), type=Path, help="work tree holding the artefacts"
    )
    ap.add_argument(
        "--refresh-sizes",
        type=Path,
        metavar="BENCHMARKS_MD",
        help="only rewrite the size rows of this existing file from the artefacts built now",
    )
    ap.add_argument(
        "--refresh-processes",
        type=Path,
        metavar="BENCHMARKS_MD",
        help="only rewrite the processes section and the headline's process rows from --results",
    )
    ap.add_argument(
        "--refresh-targets",
        type=Path,
        metavar="BENCHMARKS_MD",
        help="only rewrite the priority and value targets section from --results",
    )
    ap.add_argument(
        "--refresh-recorded",
        type=Path,
        metavar="BENCHMARKS_MD",
        help="only rewrite the reliability section from benches/recorded/",
    )
    args = ap.parse_args()
    if args.refresh_recorded:
        refresh_recorded(args.refresh_recorded, args.root)
        return
    if args.refresh_targets:
        if not args.results:
            ap.error("--refresh-targets needs --results")
        refresh_targets(args.refresh_targets, args.results, args.root)
        return
    if args.refresh_processes:
        if not args.results:
            ap.error("--refresh-processes needs --results")
        refresh_processes(args.refresh_processes, args.results, args.root)
        return
    if args.refresh_sizes:
        refresh_sizes(args.refresh_sizes, args.root)
        return
    if not (args.results and args.criterion and args.out):
        ap.error("--results, --criterion and --out are required (or --refresh-sizes)")
    c = Criterion(args.criterion)
    res: Path = args.results
    used: set[str] = set()

    def fragment(name: str) -> str:
        used.add(name)
        try:
            return (res / name).read_text().strip() + "\n"
        except OSError:
            return f"_{name} was not produced by this run._\n"

    started = None
    try:
        started = float((res / "started").read_text())
    except (OSError, ValueError):
        pass

    o: list[str] = []
    w = o.append
    w("# tenure benchmarks\n")
    w(
        "Every number below was produced by one `make bench` run "
        f"({datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC) and is rewritten by the next. "
        "Benchmarks, not tests: nothing here fails a build. Criterion times are medians; the machine "
        "is small and may be shared, so expect a few percent of noise (more on a busy machine).\n"
    )
    w("## Machine\n")
    w("| | |\n| --- | --- |")
    for k, v in machine():
        w(f"| {k} | {v} |")
    w("")
    w("## How to reproduce\n")
    w("```sh")
    w(
        "make bench                                              # everything below, then this file"
    )
    w("cargo bench -p tenure --bench election                  # core CPU (criterion)")
    w(
        "cargo bench -p tenure --bench memory                    # core heap, allocations, wire sizes"
    )
    w(
        "cargo bench -p tenure-raft-compare                      # tenure vs raft-rs: CPU (criterion and interleaved), heap"
    )
    w(
        "TENURE_FAILOVER_TRIALS=1000 cargo bench -p tenure-bench # failover distributions, 1,000 nodes, plot"
    )
    w("```\n")

    # Headline.
    t_round = c.median_ns("compare_follower_heartbeat_round", "tenure")
    r_round = c.median_ns("compare_follower_heartbeat_round", "raft-rs")
    mem = read_json(res / "compare-memory.json")
    fo = read_json(res / "failover.json")
    w("## Headline\n")
    w("| measure | tenure | comparison | goal |")
    w("| --- | --- | --- | --- |")
    inter = read_json(res / "compare-interleaved.json")
    if inter:
        ratio_m = inter["ratio_median"]
        verdict = "met" if ratio_m >= 3 else "**not met**"
        w(
            f"| CPU per follower heartbeat round (bytes in → ack bytes out), interleaved | "
            f"{fmt_ns(inter['tenure_ns'])} | raft-rs {fmt_ns(inter['raft_ns'])}: tenure {ratio_m:.2f}× cheaper "
            f"(10th–90th pct {inter['ratio_p10']:.2f}–{inter['ratio_p90']:.2f}×) | ≥ 3× cheaper: {verdict} |"
        )
    if t_round and r_round:
        verdict = "met" if r_round / t_round >= 3 else "**not met**"
        w(
            f"| CPU per follower heartbeat round, criterion medians | {fmt_ns(t_round)} | "
            f"raft-rs {fmt_ns(r_round)}: tenure {r_round / t_round:.2f}× cheaper | ≥ 3× cheaper: {verdict} |"
        )
    if mem:
        tf, rf = mem["tenure_follower"], mem["raft_follower"]
        verdict = "met" if tf * 4 <= rf else "**not met**"
        w(
            f"| heap per node (5-node cluster, follower) | {tf} B | raft-rs {rf} B: tenure uses "
            f"{tf / rf:.0%} | ≤ 25 %: {verdict} |"
        )
    if fo:
        for cell in fo.get("headline", []):
            w(f"| {cell['what']} | {cell['value']} | | {cell['goal']} |")
    for row in process_headline(res):
        w(row)
    for row in size_and_host_headline(res, args.root, c):
        w(row)
    w("")

    # 1. Core CPU.
    w("## 1. Core CPU (criterion, `cargo bench -p tenure --bench election`)\n")
    w(
        "Message benchmarks start from the received bytes and end with the reply's bytes drained from "
        "`poll_output`: decoding, HMAC (when on), the state machine and encoding are all inside. "
        "Ids look like `10.0.0.1:7000`; the cluster id is `bench-cluster`; the key is 32 bytes.\n"
    )
    w("| operation | plain | HMAC-SHA256 |")
    w("| --- | ---: | ---: |")
    for bench, label in [
        ("follower_heartbeat_to_ack", "follower: heartbeat in → ack out"),
        ("leader_ack", "leader: heartbeat ack in"),
        ("vote_request_to_vote", "follower: vote request (new term) in → vote out"),
        ("pre_vote_request_to_reply", "follower: pre-vote request in → reply out"),
    ]:
        w(
            f"| {label} | {fmt_ns(c.median_ns('message', bench, 'plain'))} | {fmt_ns(c.median_ns('message', bench, 'hmac'))} |"
        )
    w("")
    w(
        "Leader heartbeat tick (check-quorum scan + one encoded heartbeat per peer, outputs drained):\n"
    )
    w("| peers | plain | per peer | HMAC-SHA256 | per peer |")
    w("| ---: | ---: | ---: | ---: | ---: |")
    for peers in (4, 100, 10_000):
        p = c.median_ns("leader_tick", "plain", f"{peers}_peers")
        h = c.median_ns("leader_tick", "hmac", f"{peers}_peers")
        w(
            f"| {peers:,} | {fmt_ns(p)} | {fmt_ns(p / peers if p else None)} | {fmt_ns(h)} | "
            f"{fmt_ns(h / peers if h else None)} |"
        )
    w("")
    w(
        "Wire codec, per message kind (`tenure::wire::encode` / `decode`; app payload 64 bytes):\n"
    )
    w("| kind | encode | decode | encode + HMAC | decode + HMAC |")
    w("| --- | ---: | ---: | ---: | ---: |")
    for kind in [
        "pre_vote",
        "pre_vote_reply",
        "vote",
        "vote_reply",
        "heartbeat",
        "heartbeat_ack",
        "timeout_now",
        "app",
    ]:
        cells = [
            fmt_ns(c.median_ns(f"codec_{a}", op, kind))
            for a in ("plain", "hmac")
            for op in ("encode", "decode")
        ]
        w(f"| {kind} | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} |")
    w("")
    w(
        f"Constructing a node (5-node bootstrap list): {fmt_ns(c.median_ns('construct_5_nodes'))}.\n"
    )

    w("## 2. Core memory (`cargo bench -p tenure --bench memory`)\n")
    w(fragment("core-memory.md"))

    # 3. raft-rs.
    w("## 3. Side by side with raft-rs (`cargo bench -p tenure-raft-compare`)\n")
    w(
        "Both are election-only 5-node clusters (raft-rs 0.7.0, `RawNode<MemStorage>`, protobuf codec, "
        "pre-vote and check-quorum on, default ticks; nothing proposed, so its log holds only the empty "
        "entry of the leader's term), run over an in-memory network until a leader is established, then "
        "measured on real captured messages in the same criterion run. raft-rs round: protobuf decode of "
        "`MsgHeartbeat` + `step` + `ready` (persist hard state/entries into `MemStorage`, take messages) + "
        "`advance` + `advance_apply` + protobuf encode of `MsgHeartbeatResponse`. tenure round: "
        "`handle_message(heartbeat bytes)` + drain the ack bytes.\n"
    )
    w("| operation | tenure | tenure + HMAC | raft-rs | raft-rs ÷ tenure |")
    w("| --- | ---: | ---: | ---: | ---: |")
    for group, label in [
        ("compare_follower_heartbeat_round", "follower heartbeat round"),
        ("compare_leader_ack", "leader handles one heartbeat ack"),
    ]:
        t = c.median_ns(group, "tenure")
        th = c.median_ns(group, "tenure_hmac")
        r = c.median_ns(group, "raft-rs")
        w(f"| {label} | {fmt_ns(t)} | {fmt_ns(th)} | {fmt_ns(r)} | {ratio(r, t)} |")
    w("")
    w(fragment("compare-interleaved.md"))
    w(fragment("compare-memory.md"))

    w("## 4. Failover and scale (`cargo bench -p tenure-bench`)\n")
    w(fragment("failover.md"))

    # Reliability: long runs `make bench` does not repeat (minutes to hours each). Their figures
    # are committed under benches/recorded/ with the command that produced them, and copied here
    # on every regeneration.
    o.extend(recorded(args.root))

    rest = sorted(p for p in res.glob("*.md") if p.name not in used)
    if rest:
        w("## Other results\n")
        for p in rest:
            w(p.read_text().strip() + "\n")

    w("## Sizes\n")
    w(
        "Sizes of the artefacts found in the work tree when `make bench` ran (it does not build them; "
        "stale or missing files show what the last build left).\n"
    )
    for line in sizes(args.root):
        w(line)
    w("")
    w("## Run time\n")
    if started:
        w(
            f"`make bench` took {(time.time() - started) / 60:.1f} minutes (builds included).\n"
        )

    args.out.write_text("\n".join(o).rstrip() + "\n")
    print(f"bench: wrote {args.out}")

    # The docs quote numbers from this file through marked spans (benches/quotes.py): refill them.
    requote(args.root, args.out)


if __name__ == "__main__":
    os.environ.setdefault("LC_ALL", "C")
    main()
