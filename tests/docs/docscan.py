"""What the docs tests read: the guarded pages, their fenced code blocks with the marker before
each, and the numbers their prose quotes. Standard library only."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benches"))

import quotes

# Pages whose code blocks must each be run by a test or marked.
SNIPPET_GLOBS = ("README.md", "python/README.md", "node/README.md", "docs/*.md")


def snippet_pages(root: Path = ROOT) -> list[Path]:
    out: list[Path] = []
    for pattern in SNIPPET_GLOBS:
        out.extend(sorted(root.glob(pattern)))
    return out


@dataclass
class Block:
    path: str
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    marker: str | None  # "KIND: rest" of the <!-- snippet: KIND ... --> comment right before it

    def __str__(self) -> str:
        return f"{self.path}:{self.line} (```{self.lang})"


MARKER = re.compile(r"<!--\s*snippet:\s*(.*?)\s*-->")


def blocks(text: str, path: str) -> list[Block]:
    """Every fenced block; its marker is an HTML comment on the last non-blank line before it."""
    out = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"\s*(```+)(.*)$", lines[i])
        if not m:
            i += 1
            continue
        fence, lang, start = m.group(1), m.group(2).strip(), i
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        mk = MARKER.fullmatch(lines[k].strip()) if k >= 0 else None
        indent = len(lines[start]) - len(lines[start].lstrip())
        code = "\n".join(ln[indent:] for ln in lines[start + 1 : j]) + "\n"
        out.append(Block(path, start + 1, lang, code, mk.group(1) if mk else None))
        i = j + 1
    return out


def all_blocks(root: Path = ROOT) -> list[Block]:
    out = []
    for p in snippet_pages(root):
        out.extend(blocks(p.read_text(), str(p.relative_to(root))))
    return out


# ---------------------------------------------------------------------------------------------
# Numbers in prose
# ---------------------------------------------------------------------------------------------

_NUM = r"\d[\d,]*(?:\.\d+)?"
_UNIT = r"(?:ms|µs|ns|s|KB|KiB|MB|MiB|Mi|GB|GiB|B|bytes|%|minutes|seconds)"
QUANTITY = re.compile(
    rf"(?<![\w.^/\-]){_NUM}(?:\s?[–-]\s?{_NUM})?\s?(?:{_UNIT}(?![\w])|×)"
)


def prose(text: str) -> str:
    """`text` with fenced blocks, bench spans, HTML comments and inline code blanked (same length and line
    numbers): what is left is what a reader reads as typed by hand."""

    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    text = re.sub(r"^(\s*)(```+).*?^\s*\2\s*$", blank, text, flags=re.DOTALL | re.MULTILINE)
    text = quotes.SPAN.sub(blank, text)
    text = re.sub(r"<!--.*?-->", blank, text, flags=re.DOTALL)
    return re.sub(r"`[^`\n]+`", blank, text)  # inline code is not prose


@dataclass(frozen=True)
class Allowed:
    path: str
    phrase: str
    why: str

    def pattern(self) -> re.Pattern[str]:
        return re.compile(r"\s+".join(re.escape(w) for w in self.phrase.split()))


def allowed(path: Path) -> list[Allowed]:
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split(" | ")]
        if len(parts) != 3 or not all(parts):
            raise ValueError(f"{path}:{n}: expected `page | phrase | why`, got {line!r}")
        out.append(Allowed(*parts))
    return out


@dataclass(frozen=True)
class Unmarked:
    path: str
    line: int
    quantity: str
    context: str

    def __str__(self) -> str:
        return (
            f"{self.path}:{self.line}: {self.quantity!r} ({self.context.strip()!r}) is typed by hand: quote "
            "it from BENCHMARKS.md with <!-- bench:KEY -->…<!-- /bench --> (benches/quotes.py), or, if "
            "it is not a measurement (a default, a limit, a parameter), list it in "
            "tests/docs/numbers_allowed.txt with the reason"
        )


def unmarked(text: str, path: str, allow: list[Allowed]) -> tuple[list[Unmarked], list[Allowed]]:
    """Quantities in the prose of `text` outside bench spans and allowed phrases, and the allowed
    phrases of this page that no longer occur (stale entries)."""
    body = prose(text)
    covered: list[tuple[int, int]] = []
    unused = []
    for a in allow:
        if a.path != path:
            continue
        spans = [(m.start(), m.end()) for m in a.pattern().finditer(body)]
        if not spans:
            unused.append(a)
        covered.extend(spans)
    out = []
    for m in QUANTITY.finditer(body):
        if any(s <= m.start() and m.end() <= e for s, e in covered):
            continue
        line = body.count("\n", 0, m.start()) + 1
        out.append(Unmarked(path, line, m.group(0), body[max(0, m.start() - 30) : m.end() + 10]))
    return out, unused
