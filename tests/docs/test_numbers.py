"""Numbers in the docs cannot go stale.

Every measured number a page quotes is a `<!-- bench:KEY -->…<!-- /bench -->` span that
benches/quotes.py fills from BENCHMARKS.md (`make bench` refills them); every other quantity in
the prose is listed, with its reason, in numbers_allowed.txt. The shipped artefacts' sizes in
BENCHMARKS.md are also compared with the built files (SIZE_TOLERANCE), so a build that moves a
size fails here until `make bench` is re-run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from docscan import ROOT, Allowed, allowed, quotes, unmarked

BENCHMARKS = (ROOT / "BENCHMARKS.md").read_text()
ALLOWED = allowed(Path(__file__).with_name("numbers_allowed.txt"))
# How far a built artefact may drift from the size BENCHMARKS.md (and so the docs) quote.
SIZE_TOLERANCE = 0.05


def test_every_quoted_number_agrees_with_benchmarks() -> None:
    problems = quotes.check(ROOT, BENCHMARKS)
    assert problems == [], "\n".join(map(str, problems))


def test_there_are_quotes_on_the_pages_the_issue_names() -> None:
    keys = {
        (str(p.relative_to(ROOT)), m.group(1))
        for p in quotes.doc_paths()
        for m in quotes.SPAN.finditer(p.read_text())
    }
    for page, key in [
        ("README.md", "failover.silent.p99.int"),
        ("docs/component.md", "size.component"),
        ("bindings/wasm/README.md", "size.web"),
        ("bindings/wasm/README.md", "web.chromium"),
        ("docs/kubernetes.md", "proc.tenure.p50"),
    ]:
        assert (page, key) in keys


@pytest.mark.parametrize("key", sorted(quotes.KEYS))
def test_every_key_resolves_in_benchmarks(key: str) -> None:
    assert quotes.expected(key, BENCHMARKS)


def test_an_injected_wrong_number_is_caught() -> None:
    readme = (ROOT / "README.md").read_text()
    span = next(m for m in quotes.SPAN.finditer(readme) if m.group(1) == "failover.silent.p99.int")
    broken = readme.replace(span.group(0), "<!-- bench:failover.silent.p99.int -->199 ms<!-- /bench -->")
    [problem] = quotes.check_text(broken, BENCHMARKS, "README.md")
    assert problem.key == "failover.silent.p99.int" and problem.quoted == "199 ms"
    assert problem.expected == span.group(2)
    # --write repairs it.
    assert quotes.rewrite_text(broken, BENCHMARKS) == readme


def test_a_changed_benchmark_fails_until_the_docs_are_rewritten() -> None:
    old = "| 5 | 1.0 | 153.5 | 244.6 | 447.8 |"
    assert old in BENCHMARKS
    rerun = BENCHMARKS.replace(old, "| 5 | 1.0 | 160.0 | 251.2 | 447.8 |")
    readme = (ROOT / "README.md").read_text()
    problems = quotes.check_text(readme, rerun, "README.md")
    assert [(p.key, p.expected) for p in problems] == [("failover.silent.p99.int", "251 ms")]
    assert quotes.check_text(quotes.rewrite_text(readme, rerun), rerun) == []


def test_a_key_that_no_longer_resolves_or_is_unknown_is_caught() -> None:
    text = "<!-- bench:failover.silent.p50 -->153.5 ms<!-- /bench --> <!-- bench:no.such -->1<!-- /bench -->"
    renamed = BENCHMARKS.replace("#### silent crash", "#### quiet crash")
    problems = quotes.check_text(text, renamed)
    assert [(p.key, p.expected) for p in problems] == [("failover.silent.p50", None), ("no.such", None)]
    assert "silent crash" in problems[0].why and "unknown key" in problems[1].why


def test_no_quantity_is_typed_by_hand() -> None:
    found = []
    stale: list[Allowed] = []
    for p in quotes.doc_paths():
        u, unused = unmarked(p.read_text(), str(p.relative_to(ROOT)), ALLOWED)
        found += u
        stale += unused
    assert found == [], "\n".join(map(str, found))
    assert stale == [], f"numbers_allowed.txt entries whose phrase is gone: {stale}"


def test_a_quantity_typed_by_hand_is_caught() -> None:
    text = (ROOT / "docs" / "kubernetes.md").read_text() + "\nA new leader in 161 ms, 2.1× faster.\n"
    found, _ = unmarked(text, "docs/kubernetes.md", ALLOWED)
    assert [u.quantity for u in found] == ["161 ms", "2.1×"]
    # Inside a span, a fenced block or an allowed phrase it is not typed by hand.
    ok = "<!-- bench:proc.tenure.p50 -->161 ms<!-- /bench -->\n```text\n4 ms\n```\n"
    assert unmarked(ok, "docs/kubernetes.md", ALLOWED)[0] == []


def _size(artefact: str) -> int:
    return int(quotes.expected(artefact, BENCHMARKS).replace(",", ""))


@pytest.mark.parametrize(
    "key,path",
    [
        ("size.component", "target/component/tenure.wasm"),
        ("size.web", "demo/pkg/tenure_wasm_bg.wasm"),
        ("size.node_addon", "node/native/tenure.node"),
    ],
)
def test_quoted_size_matches_the_built_artefact(key: str, path: str) -> None:
    built = ROOT / path
    if not built.exists():
        if os.environ.get("TENURE_DOCS_REQUIRE_ARTEFACTS"):
            pytest.fail(f"{path} is not built (make component web node-addon)")
        pytest.skip(f"{path} is not built")
    actual, quoted = built.stat().st_size, _size(key)
    assert abs(actual - quoted) <= SIZE_TOLERANCE * quoted, (
        f"{path} is {actual:,} bytes but BENCHMARKS.md (and the docs) say {quoted:,}: "
        f"run `make bench` (or fix the size regression)"
    )
