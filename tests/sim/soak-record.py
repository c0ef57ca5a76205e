#!/usr/bin/env python3
"""Writes benches/recorded/soak.md from the output of tests/sim/variants.sh.

A soak (`make soak`: 1,000,000 seeds) takes tens of minutes to hours on a shared machine, so
`make bench` does not repeat it; its figures are committed under benches/recorded/ with what
produced them, and benches/report.py copies them into BENCHMARKS.md's reliability section, where
benches/quotes.py finds the numbers the docs quote (keys `soak.*`).

    tests/sim/variants.sh 1000000 target/release/tenure-sim | tee soak.txt
    python3 tests/sim/soak-record.py soak.txt --date "$(date -u +%F)" --commit "$(git rev-parse --short HEAD)" \\
        --machine "AMD EPYC, 2 cores shared with other builds (load average 6 to 9)" \\
        > benches/recorded/soak.md

Standard library only.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent

# One variant line: `name seeds viol  K=V ... / p50 p99 max / Ns` (see variants.sh's printf).
LINE = re.compile(
    r"^(?P<name>\S+)\s+(?P<seeds>\d+)\s+(?P<viol>\S+)\s+(?P<invs>(?:\S+=\d+\s*)*)/ "
    r"(?P<p50>\S+) (?P<p99>\S+) (?P<max>\S+) / (?P<secs>\d+)s$"
)
TOTAL = re.compile(r"^total: seeds=(\d+) violations=(\d+) variants=(\d+) elapsed_s=(\d+)$")


@dataclass
class Row:
    name: str
    seeds: int
    violations: str
    invariants: dict[str, int]
    p50: str
    p99: str
    max: str
    seconds: int
    failing: list[str] = field(default_factory=list)


def variant_options() -> dict[str, tuple[str, str]]:
    """name -> (first seed, options), read from variants.sh's table."""
    out: dict[str, tuple[str, str]] = {}
    for line in (HERE / "variants.sh").read_text().splitlines():
        m = re.match(r'^\s*"([^|"]+)\|(\d+)\|(\d+)\|([^"]*)"$', line)
        if m:
            out[m.group(1)] = (m.group(3), m.group(4))
    return out


def parse(text: str) -> tuple[list[Row], tuple[int, int, int, int] | None]:
    rows: list[Row] = []
    total = None
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            invs = {k: int(v) for k, v in (kv.split("=") for kv in m.group("invs").split())}
            rows.append(
                Row(
                    m.group("name"),
                    int(m.group("seeds")),
                    m.group("viol"),
                    invs,
                    m.group("p50"),
                    m.group("p99"),
                    m.group("max"),
                    int(m.group("secs")),
                )
            )
            continue
        if rows and line.startswith("    failing seeds:"):
            rows[-1].failing = [s.strip() for s in line.split(":", 1)[1].split(",")]
            continue
        t = TOTAL.match(line)
        if t:
            total = (int(t.group(1)), int(t.group(2)), int(t.group(3)), int(t.group(4)))
    return rows, total


def render(rows: list[Row], total: tuple[int, int, int, int] | None, args: argparse.Namespace) -> str:
    opts = variant_options()
    names = sorted({k for r in rows for k in r.invariants})
    out: list[str] = []
    w = out.append
    w("### Simulator soak (`make soak`, `tests/sim`, docs/protocol.md \"What the simulator checks\")\n")
    w(
        f"Recorded from `tests/sim/variants.sh {args.seeds} target/release/tenure-sim` (what `make soak` runs) "
        f"on {args.date}, commit {args.commit}, {args.machine}; the simulator runs its seeds on two "
        "threads. `make bench` does not repeat it: `tests/sim/soak-record.py` writes "
        "`benches/recorded/soak.md` from the soak's output and `benches/report.py` copies it here. "
        "Failover: from the silent crash of the stable leader to the next leader, simulated time, "
        "one probe per seed (3 or more nodes); seconds are wall time.\n"
    )
    if args.note:
        w(args.note.strip() + "\n")
    head = ["variant", "first seed", "options", "seeds", "violations", *names,
            "failover p50 (ms)", "failover p99 (ms)", "failover max (ms)", "seconds"]
    w("| " + " | ".join(head) + " |")
    w("| --- | ---: | --- | ---: | ---: | " + " | ".join("---:" for _ in names) + " | ---: | ---: | ---: | ---: |")
    for r in rows:
        first, o = opts.get(r.name, ("?", "?"))
        cells = [r.name, first, f"`{o}`" if o else "", str(r.seeds), r.violations,
                 *(str(r.invariants.get(k, "?")) for k in names), r.p50, r.p99, r.max, str(r.seconds)]
        w("| " + " | ".join(cells) + " |")
    if total:
        seeds, viol, variants, secs = total
        sums = [str(sum(r.invariants.get(k, 0) for r in rows)) for k in names]
        w(f"| **total** ({variants} variants) | | | {seeds} | {viol} | " + " | ".join(sums) + f" | | | | {secs} |")
    else:
        w("\n**The soak did not finish**: the rows above are the variants that ran.")
    failing = [r for r in rows if r.failing]
    if failing:
        w("\nFailing seeds (reproduce with `tenure-sim --seed S` and the variant's options):\n")
        for r in failing:
            w(f"- {r.name}: {', '.join(r.failing)}")
    return "\n".join(out) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("output", type=Path, help="what variants.sh printed")
    p.add_argument("--seeds", default="1000000", help="the TOTAL given to variants.sh")
    p.add_argument("--date", required=True)
    p.add_argument("--commit", required=True)
    p.add_argument("--machine", required=True)
    p.add_argument("--note", default="", help="a paragraph printed above the table")
    args = p.parse_args()
    rows, total = parse(args.output.read_text())
    if not rows:
        print(f"soak-record: no variant lines in {args.output}", file=sys.stderr)
        return 1
    sys.stdout.write(render(rows, total, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
