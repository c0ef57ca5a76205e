"""docs/kubernetes.md quotes failover figures from BENCHMARKS.md only: every `N ms` in its
"Failover to expect" section must appear in BENCHMARKS.md (a re-run that changes them fails here
until the page is updated)."""

from __future__ import annotations

import re

from manifests import ROOT


def section(text: str, title: str) -> str:
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def quoted_ms(text: str) -> list[str]:
    return re.findall(r"(?<![\d.])(\d+(?:\.\d+)?) ms\b", text)


def missing_from(benchmarks: str, figures: list[str]) -> list[str]:
    return [f for f in figures if not re.search(rf"(?<![\d.]){re.escape(f)}(?![\d.])", benchmarks)]


def test_every_failover_figure_is_in_benchmarks() -> None:
    page = section((ROOT / "docs" / "kubernetes.md").read_text(), "Failover to expect")
    figures = quoted_ms(page)
    assert len(figures) >= 8, figures
    assert missing_from((ROOT / "BENCHMARKS.md").read_text(), figures) == []


def test_a_figure_not_in_benchmarks_is_caught() -> None:
    assert missing_from("| tenure | 20 | 161 | 206 | 241 |", quoted_ms("161 ms p50, 207 ms p90")) == ["207"]
