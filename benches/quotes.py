#!/usr/bin/env python3
"""Numbers the docs quote from BENCHMARKS.md, by key, so they cannot go stale.

A page quotes a measured number as a marked span:

    a silent crash for <!-- bench:failover.silent.p99 -->245 ms<!-- /bench --> at p99

`KEYS` below says where each key's value lives in BENCHMARKS.md (a table cell found by its
heading, row and column, or a regular expression over one section; never a line number, so a
regenerated file works as long as report.py keeps its headings and columns) and how it is
written. `make bench` calls `rewrite()` after report.py writes BENCHMARKS.md, so every span is
regenerated; `tests/docs/test_numbers.py` (`make test-docs`) fails when a span disagrees with
BENCHMARKS.md, names an unknown key, or a key no longer resolves.

    python benches/quotes.py --check     # list disagreeing spans (exit 1 if any)
    python benches/quotes.py --write     # rewrite every span from BENCHMARKS.md
    python benches/quotes.py --keys      # every key with its current value

Standard library only (report.py runs it with the host Python).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Pages whose numbers are guarded (spans here are checked and rewritten).
DOC_GLOBS = (
    "README.md",
    "python/README.md",
    "node/README.md",
    "bindings/*/README.md",
    "benches/README.md",
    "docs/*.md",
)

# One line at most; a span written inside `inline code` (documentation of the syntax) is not one.
SPAN = re.compile(r"(?<!`)<!-- bench:([A-Za-z0-9_.\-]+) -->((?:(?!<!--)[^\n])*?)<!-- /bench -->")


def doc_paths(root: Path = ROOT) -> list[Path]:
    out: list[Path] = []
    for pattern in DOC_GLOBS:
        out.extend(sorted(root.glob(pattern)))
    return out


# --------------------------------------------------------------------------------------------
# Reading BENCHMARKS.md
# --------------------------------------------------------------------------------------------


class NotFound(LookupError):
    """A key's place in BENCHMARKS.md is missing (a renamed heading, row or column)."""


def sections(text: str) -> list[tuple[str, str]]:
    """(heading text, body up to the next heading of any level), skipping fenced blocks."""
    out: list[tuple[str, list[str]]] = [("", [])]
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and re.match(r"#{1,6} ", line):
            out.append((line.lstrip("#").strip(), []))
        else:
            out[-1][1].append(line)
    return [(h, "\n".join(body)) for h, body in out]


def section(text: str, heading: str) -> str:
    """The body under the first heading that starts with `heading`."""
    for h, body in sections(text):
        if h.startswith(heading):
            return body
    raise NotFound(f"no heading starting with {heading!r}")


def tables(body: str) -> list[list[dict[str, str]]]:
    """The Markdown tables of a section body, each a list of rows keyed by column header."""
    out: list[list[dict[str, str]]] = []
    lines = body.splitlines()
    i = 0

    def cells(line: str) -> list[str]:
        return [c.strip() for c in line.strip().strip("|").split("|")]

    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"\|[\s:|-]+$", lines[i + 1]):
            header = cells(lines[i])
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(dict(zip(header, cells(lines[i]))))
                i += 1
            out.append(rows)
        else:
            i += 1
    return out


Extract = Callable[[str], list[str]]


def cell(heading: str, row: dict[str, str], column: str) -> Extract:
    """Every `column` value of the rows matching `row` in the first table under `heading` that
    has all those columns."""

    def get(text: str) -> list[str]:
        for table in tables(section(text, heading)):
            if table and all(c in table[0] for c in [*row, column]):
                found = [r[column] for r in table if all(r.get(k) == v for k, v in row.items())]
                if found:
                    return found
        raise NotFound(f"under {heading!r}: no table row {row} with column {column!r}")

    return get


def match(heading: str, pattern: str) -> Extract:
    """The groups of the first match of `pattern` in the section under `heading`."""

    def get(text: str) -> list[str]:
        m = re.search(pattern, section(text, heading))
        if not m:
            raise NotFound(f"under {heading!r}: nothing matches {pattern!r}")
        return list(m.groups())

    return get


# --------------------------------------------------------------------------------------------
# Writing numbers
# --------------------------------------------------------------------------------------------


def num(s: str) -> float:
    return float(s.replace(",", "").replace("\u2009", ""))


def fixed(decimals: int, unit: str) -> Callable[[list[str]], str]:
    """One value, rounded to `decimals`, thousands separated, then the unit (may be empty)."""

    def fmt(v: list[str]) -> str:
        s = f"{num(v[0]):,.{decimals}f}"
        return f"{s} {unit}".rstrip() if unit not in ("×", "") else f"{s}{unit}"

    return fmt


def maximum(decimals: int, unit: str) -> Callable[[list[str]], str]:
    """The largest of several values (e.g. every tenure process's idle CPU)."""
    one = fixed(decimals, unit)
    return lambda v: one([max(v, key=num)])


def verbatim(v: list[str]) -> str:
    return v[0]


@dataclass(frozen=True)
class Quote:
    extract: Extract
    fmt: Callable[[list[str]], str]

    def render(self, benchmarks: str) -> str:
        return self.fmt(self.extract(benchmarks))


def _failover(kind: str, col: str, decimals: int, nodes: str = "5") -> Quote:
    return Quote(cell(kind, {"nodes": nodes, "RTT (ms)": "1.0"}, col), fixed(decimals, "ms"))


_PROC = "Processes: idle cost and failover"
_SIZES = "Sizes"
_PY = "Python (`python python/benches/bench_node.py"
_NODE = "Node.js (`node node/bench/bench.mjs`)"
_WEB = "Browser build in headless Chromium"
_SOAK = "Simulator soak"
_SOAK_TOTAL = r"\| \*\*total\*\* \(\d+ variants\) \| \| \| (\d+) \| (\d+) \|"

# Every quotable number. Keys are stable names; add one here, then quote it in a page.
KEYS: dict[str, Quote] = {
    # Simulated failover (benches/failover), 5 nodes, 1 ms RTT.
    "failover.silent.p50": _failover("silent crash", "p50 (ms)", 1),
    "failover.silent.p99": _failover("silent crash", "p99 (ms)", 1),
    "failover.silent.p99.int": _failover("silent crash", "p99 (ms)", 0),
    "failover.silent.max": _failover("silent crash", "max (ms)", 1),
    "failover.reported.p50": _failover("reported death", "p50 (ms)", 1),
    "failover.reported.p99": _failover("reported death", "p99 (ms)", 1),
    "failover.reported.max": _failover("reported death", "max (ms)", 1),
    "failover.transfer.p50": _failover("graceful transfer", "p50 (ms)", 1),
    "failover.transfer.p99": _failover("graceful transfer", "p99 (ms)", 1),
    "cold.1000.first_leader": Quote(
        cell("A 1,000-node cluster", {}, "first leader (ms)"), fixed(0, "ms")
    ),
    # Core CPU and heap (criterion, counting allocator, raft-rs side by side).
    "core.follower_heartbeat.plain": Quote(
        cell("1. Core CPU", {"operation": "follower: heartbeat in → ack out"}, "plain"), verbatim
    ),
    "compare.interleaved.tenure": Quote(
        match("3. Side by side", r"Interleaved measurement[^:]*: tenure (\d+ ns)"), verbatim
    ),
    "compare.interleaved.ratio": Quote(match("3. Side by side", r"median \*\*([\d.]+)×"), fixed(1, "×")),
    "compare.heartbeat.allocations": Quote(
        match("Heap per node: tenure vs raft-rs", r"per follower heartbeat round: tenure (\d+)"), verbatim
    ),
    "heap.tenure.follower": Quote(
        cell("Heap per node: tenure vs raft-rs", {"": "tenure"}, "follower, mean (bytes)"), fixed(0, "B")
    ),
    "heap.raft.follower": Quote(
        cell(
            "Heap per node: tenure vs raft-rs",
            {"": "raft-rs 0.7.0 (`RawNode<MemStorage>`)"},
            "follower, mean (bytes)",
        ),
        fixed(0, "B"),
    ),
    # Goal verdicts of the headline table ("met" or "**not met**"), for prose that says which.
    "goal.heartbeat.interleaved": Quote(
        match("Headline", r"interleaved \|[^\n]*\| ≥ 3× cheaper: (met|\*\*not met\*\*) \|"), verbatim
    ),
    "goal.heap.follower": Quote(
        match("Headline", r"heap per node \(5-node cluster, follower\)[^\n]*\| ≤ 25 %: (met|\*\*not met\*\*) \|"),
        verbatim,
    ),
    "goal.component.size": Quote(
        match("Headline", r"component `tenure.wasm`[^\n]*\| ≤ 60 KB raw: (met|\*\*not met\*\*) \|"), verbatim
    ),
    "goal.browser.size": Quote(
        match("Headline", r"browser build after wasm-opt[^\n]*\| ≤ 60 KB raw: (met|\*\*not met\*\*) \|"), verbatim
    ),
    "heap.ratio.follower": Quote(
        match("Heap per node: tenure vs raft-rs", r"tenure uses ([\d.]+)× less heap per follower"),
        fixed(1, "×"),
    ),
    # Per-call cost from each host.
    "python.handle_drain.plain": Quote(
        match(_PY, r"handle_message\+drain \[plain\]\s+([\d.]+) µs"), fixed(2, "µs")
    ),
    "python.handle_drain.hmac": Quote(
        match(_PY, r"handle_message\+drain \[hmac\]\s+([\d.]+) µs"), fixed(2, "µs")
    ),
    "python.native.plain": Quote(match(_PY, r"native core \[plain\]\s+([\d.]+) µs"), fixed(2, "µs")),
    "python.native.hmac": Quote(match(_PY, r"native core \[hmac\]\s+([\d.]+) µs"), fixed(2, "µs")),
    "python.overhead.plain": Quote(
        match(_PY, r"binding overhead \[plain\]: ([\d.]+) µs"), fixed(2, "µs")
    ),
    "node.handle_drain": Quote(
        match(_NODE, r"follower: handleMessage\(heartbeat\) \+ drain\(\)[^:]*, public Node class: ([\d.]+) µs"),
        fixed(2, "µs"),
    ),
    "node.dropped": Quote(match(_NODE, r"dropped datagram: [^:]*:\s+([\d.]+) µs"), fixed(2, "µs")),
    "web.chromium": Quote(match(_WEB, r"chromium (\d+)\."), verbatim),
    "web.follower.5": Quote(
        match(_WEB, r"([\d.]+) µs\s+n=5 follower: handleMessage"), fixed(1, "µs")
    ),
    "web.leader_tick.5": Quote(match(_WEB, r"([\d.]+) µs\s+n=5 leader: handleTimeout"), fixed(1, "µs")),
    "web.leader_tick.9": Quote(match(_WEB, r"([\d.]+) µs\s+n=9 leader: handleTimeout"), fixed(1, "µs")),
    "web.decode.5": Quote(match(_WEB, r"([\d.]+) µs\s+n=5 decodeMessage"), fixed(1, "µs")),
    "web.inspect.5": Quote(match(_WEB, r"([\d.]+) µs\s+n=5 inspect"), fixed(1, "µs")),
    "web.sim.5": Quote(match(_WEB, r"([\d.]+) ms\s+n=5 whole simulated cluster"), fixed(0, "ms")),
    "web.wasm.before_opt": Quote(match(_WEB, r"wasm before wasm-opt: (\d+) bytes"), fixed(0, "")),
    "web.glue": Quote(match(_WEB, r"JS glue: (\d+) bytes"), fixed(0, "")),
    # Processes on 127.0.0.1 (benches/processes/run.py).
    "proc.tenure.p50": Quote(
        cell(_PROC, {"cluster": "tenure (mixed runtimes)"}, "p50 ms"), fixed(0, "ms")
    ),
    "proc.tenure.p90": Quote(
        cell(_PROC, {"cluster": "tenure (mixed runtimes)"}, "p90 ms"), fixed(0, "ms")
    ),
    "proc.tenure.max": Quote(
        cell(_PROC, {"cluster": "tenure (mixed runtimes)"}, "max ms"), fixed(0, "ms")
    ),
    "proc.pysyncobj_default.p50": Quote(
        cell(_PROC, {"cluster": "PySyncObj, defaults"}, "p50 ms"), fixed(0, "ms")
    ),
    "proc.pysyncobj_fast.p50": Quote(
        cell(_PROC, {"cluster": "PySyncObj, 150-300 ms"}, "p50 ms"), fixed(0, "ms")
    ),
    "proc.pysyncobj_fast.p90": Quote(
        cell(_PROC, {"cluster": "PySyncObj, 150-300 ms"}, "p90 ms"), fixed(0, "ms")
    ),
    "proc.tenure.idle_cpu.max": Quote(
        cell(_PROC, {"cluster": "tenure (mixed runtimes)"}, "idle CPU %"), maximum(1, "%")
    ),
    # Artefact sizes (report.py's "Sizes" table; tests/docs also compare them with the build).
    "size.component": Quote(cell(_SIZES, {"artefact": "WebAssembly component"}, "bytes"), verbatim),
    "size.component.gzip": Quote(
        cell(_SIZES, {"artefact": "WebAssembly component"}, "gzip -9 bytes"), verbatim
    ),
    "size.web": Quote(
        cell(_SIZES, {"artefact": "browser build (wasm-bindgen, wasm-opt)"}, "bytes"), verbatim
    ),
    "size.web.gzip": Quote(
        cell(_SIZES, {"artefact": "browser build (wasm-bindgen, wasm-opt)"}, "gzip -9 bytes"),
        verbatim,
    ),
    "size.wheel": Quote(cell(_SIZES, {"artefact": "Python wheel (abi3)"}, "bytes"), verbatim),
    "size.node_addon": Quote(cell(_SIZES, {"artefact": "Node.js addon"}, "bytes"), verbatim),
    "bench.minutes": Quote(match("Run time", r"took ([\d.]+) minutes"), fixed(0, "minutes")),
    # The recorded simulator soak (benches/recorded/soak.md, written by tests/sim/soak-record.py).
    "soak.seeds": Quote(match(_SOAK, _SOAK_TOTAL), lambda v: fixed(0, "")([v[0]])),
    "soak.violations": Quote(match(_SOAK, _SOAK_TOTAL), lambda v: fixed(0, "")([v[1]])),
    "soak.default.failover.p99": Quote(cell(_SOAK, {"variant": "default"}, "failover p99 (ms)"), fixed(0, "ms")),
}


# --------------------------------------------------------------------------------------------
# Checking and rewriting pages
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    path: str
    line: int
    key: str
    quoted: str
    expected: str | None  # None: the key is unknown or does not resolve
    why: str = ""

    def __str__(self) -> str:
        if self.expected is None:
            return f"{self.path}:{self.line}: bench:{self.key}: {self.why}"
        return (
            f"{self.path}:{self.line}: bench:{self.key} quotes {self.quoted!r} but BENCHMARKS.md "
            f"gives {self.expected!r} (run `python benches/quotes.py --write`)"
        )


def expected(key: str, benchmarks: str) -> str:
    """The text a span with `key` must hold; KeyError or NotFound when it cannot be made."""
    return KEYS[key].render(benchmarks)


def check_text(text: str, benchmarks: str, path: str = "<text>") -> list[Problem]:
    problems = []
    for m in SPAN.finditer(text):
        key, quoted = m.group(1), m.group(2)
        line = text.count("\n", 0, m.start()) + 1
        try:
            want = expected(key, benchmarks)
        except KeyError:
            problems.append(Problem(path, line, key, quoted, None, "unknown key (benches/quotes.py KEYS)"))
            continue
        except NotFound as e:
            problems.append(Problem(path, line, key, quoted, None, f"not in BENCHMARKS.md: {e}"))
            continue
        if quoted != want:
            problems.append(Problem(path, line, key, quoted, want))
    return problems


def rewrite_text(text: str, benchmarks: str) -> str:
    """Every resolvable span filled from `benchmarks`; others left as they are (the check
    reports them)."""

    def sub(m: re.Match[str]) -> str:
        try:
            value = expected(m.group(1), benchmarks)
        except (KeyError, NotFound):
            return m.group(0)
        return f"<!-- bench:{m.group(1)} -->{value}<!-- /bench -->"

    return SPAN.sub(sub, text)


def check(root: Path = ROOT, benchmarks: str | None = None) -> list[Problem]:
    bench = benchmarks if benchmarks is not None else (root / "BENCHMARKS.md").read_text()
    out: list[Problem] = []
    for p in doc_paths(root):
        out.extend(check_text(p.read_text(), bench, str(p.relative_to(root))))
    return out


def rewrite(root: Path = ROOT, benchmarks: str | None = None) -> list[Path]:
    """Rewrites every span of every page from BENCHMARKS.md; returns the pages it changed."""
    bench = benchmarks if benchmarks is not None else (root / "BENCHMARKS.md").read_text()
    changed = []
    for p in doc_paths(root):
        old = p.read_text()
        new = rewrite_text(old, bench)
        if new != old:
            p.write_text(new)
            changed.append(p)
    return changed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--check", action="store_true")
    g.add_argument("--write", action="store_true")
    g.add_argument("--keys", action="store_true")
    ap.add_argument("--root", type=Path, default=ROOT)
    args = ap.parse_args()
    if args.keys:
        bench = (args.root / "BENCHMARKS.md").read_text()
        for key in KEYS:
            try:
                print(f"{key:34} {expected(key, bench)}")
            except NotFound as e:
                print(f"{key:34} NOT FOUND: {e}")
        return 0
    if args.write:
        for p in rewrite(args.root):
            print(f"quotes: rewrote {p.relative_to(args.root)}")
    problems = check(args.root)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
