"""docs/api.md's table against the real surfaces: every name in a backticked cell must exist in
the definitions of that cell's surface (its column), and a name that does not exist there is
reported as one difference (shown by the injected-rename test below)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
API = ROOT / "docs" / "api.md"

# Column -> the files that define that surface.
SURFACES: dict[str, tuple[str, ...]] = {
    "Rust core (`tenure`)": ("core/src/**/*.rs",),
    "runtime (`tenure_runtime`)": ("runtime/src/**/*.rs",),
    "CLI / JSON lines": ("runtime/src/cli.rs", "runtime/src/cli/*.rs", "runtime/src/process/**/*.rs", "runtime/src/sidecar/**/*.rs"),
    "HTTP": ("runtime/src/http.rs", "runtime/src/metrics.rs", "docs/http.md"),
    "Python": ("python/tenure/*.py", "python/tenure/*.pyi"),
    "Node.js": ("node/index.d.ts", "node/tables.d.ts", "node/prometheus.d.ts"),
    "WIT": ("wit/*.wit",),
    # The browser build's configuration, options and inspect() types are the npm package's
    # declarations (bindings/wasm/build.sh appends them from node/index.d.ts).
    "browser": ("bindings/wasm/src/*.rs", "node/index.d.ts"),
}

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def table(text: str) -> tuple[list[str], list[list[str]]]:
    """The header and the rows of the first Markdown table under "## The table"."""
    section = text.split("## The table", 1)[1]
    lines = [ln for ln in section.splitlines() if ln.startswith("|")]

    def cells(line: str) -> list[str]:
        return [c.strip() for c in line.strip().strip("|").split("|")]

    header = cells(lines[0])
    rows = [cells(ln) for ln in lines[2:]]
    return header, rows


def surface_text(column: str, root: Path = ROOT) -> str:
    parts = []
    for pattern in SURFACES[column]:
        for p in sorted(root.glob(pattern)):
            parts.append(p.read_text())
    assert parts, f"no files for {column}"
    return "\n".join(parts)


def names(cell: str) -> list[str]:
    """The identifiers in a cell's backticked spans (`RuntimeEvent::Leader` -> RuntimeEvent, Leader)."""
    out = []
    for span in re.findall(r"`([^`]+)`", cell):
        out.extend(t.rstrip("-") for t in _TOKEN.findall(span) if t.rstrip("-"))
    return out


def differences(text: str, root: Path = ROOT) -> list[str]:
    header, rows = table(text)
    assert header[0] == "Concept" and set(header[1:]) == set(SURFACES), header
    sources = {col: surface_text(col, root) for col in header[1:]}
    out = []
    for row in rows:
        assert len(row) == len(header), f"row {row[0]!r} has {len(row)} cells, the header {len(header)}"
        for col, cell in zip(header[1:], row[1:]):
            for name in names(cell):
                if not re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", sources[col]):
                    out.append(f"{row[0]} / {col}: `{name}` is not defined there")
    return out


def test_every_name_in_the_table_exists_in_its_surface() -> None:
    assert differences(API.read_text()) == []


def test_the_table_covers_every_concept() -> None:
    _, rows = table(API.read_text())
    concepts = {r[0] for r in rows}
    for needed in ("node (sans-IO)", "lease", "fencing token", "leader work", "failure policy", "errors",
                   "metrics", "inspect fields", "control lines", "event: confirm leader"):
        assert needed in concepts, needed
    assert sum(1 for r in rows if r[0].startswith("event:")) >= 7


def test_an_injected_rename_is_one_difference() -> None:
    text = API.read_text()
    broken = text.replace("`electionTimeoutMin` | `election-timeout-min`", "`electionTimeoutMinimum` | `election-timeout-min`")
    assert broken != text
    assert differences(broken) == [
        "election_timeout_min / Node.js: `electionTimeoutMinimum` is not defined there"
    ]
