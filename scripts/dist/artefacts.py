#!/usr/bin/env python3
"""The list of what `make dist` built: every artefact with its size, its platform and the oldest
OS (or C library) and interpreter it runs on, each read from the artefact itself (the wheel's tag,
the package's manifest, the binary's LC_BUILD_VERSION) rather than typed.

    python scripts/dist/artefacts.py [--dist dist] [--write ARTEFACTS.md]

build.py writes dist/ARTEFACTS.md with it after every run; `make artefacts` writes the top-level
ARTEFACTS.md (the one the README links, like BENCHMARKS.md: rewritten by its make target, not by
hand), with the build times build.py recorded in dist/timings.json. tests/dist checks both against
dist/.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tarfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import binaries
from platforms import MACOS_DEPLOYMENT_TARGET, min_os, os_of

ROOT = Path(__file__).resolve().parents[2]
SUFFIXES = (".whl", ".gz", ".tgz", ".wasm", ".zip")
TIMINGS = "timings.json"


def listed(dist: Path) -> list[Path]:
    return [p for p in sorted(dist.rglob("*")) if p.is_file() and p.name.endswith(SUFFIXES)]


def _macos_floor(data: bytes, name: str) -> str:
    return f"macOS {binaries.macho(data, name).min_os}"


def _tgz(path: Path) -> dict[str, bytes]:
    with tarfile.open(path) as t:
        return {m.name.split("/", 1)[1]: t.extractfile(m).read()  # type: ignore[union-attr]
                for m in t.getmembers() if m.isfile()}


def describe(path: Path) -> tuple[str, str]:
    """(platform, oldest OS and interpreter) of one artefact."""
    name = path.name
    if name.endswith(".whl"):
        tag = name[:-4].split("-", 2)[2]  # python-abi-platform
        py = "CPython 3.10+" if "-cp310-abi3-" in name else "CPython"
        if "manylinux2014" in tag:
            return tag, f"glibc 2.17 (manylinux2014); {py}"
        if "musllinux_1_2" in tag:
            return tag, f"musl 1.2; {py}"
        if "macosx" in tag:
            with zipfile.ZipFile(path) as z:
                (ext,) = [n for n in z.namelist() if n.startswith("tenure/_native.") and n.endswith(".so")]
                return tag, f"{_macos_floor(z.read(ext), ext)}; {py}"
        if tag.endswith("win_amd64"):
            return tag, f"{min_os('x86_64-pc-windows-gnu')}; {py}"
        return tag, py
    if name.endswith(".tgz"):
        files = _tgz(path)
        manifest = json.loads(files["package.json"])
        node = f"Node.js {manifest.get('engines', {}).get('node', 'any')}"
        target = manifest.get("tenure", {}).get("rustTarget")
        if target is None:
            if manifest["name"] == "tenure-web":
                return "npm, browser ES module + wasm32", "a browser with WebAssembly, or Node.js"
            return "npm, any platform (addon from the optional dependency)", node
        platform = f"npm os={manifest['os'][0]} cpu={manifest['cpu'][0]}" + (
            f" libc={manifest['libc'][0]}" if "libc" in manifest else "")
        floor = (_macos_floor(files[manifest["main"]], manifest["main"]) if target in MACOS_DEPLOYMENT_TARGET
                 else min_os(target))
        return platform, f"{floor}; {node}"
    if name.endswith(".tar.gz") and path.parent.name == "python":
        return "sdist (any platform, builds with Rust)", "CPython 3.10+, a Rust toolchain"
    if path.parent.name == "cli":
        target = re.sub(r"\.(tar\.gz|zip)$", "", name).split("-", 2)[2]
        if target in MACOS_DEPLOYMENT_TARGET:
            (binary,) = [v for k, v in _tgz(path).items() if k == "tenure"]
            return f"command line, {target}", _macos_floor(binary, name)
        return f"command line, {target}" + (" (static)" if os_of(target) == "linux" else ""), (
            "any Linux kernel (static, no C library)" if os_of(target) == "linux" else min_os(target))
    if name.endswith(".wasm"):
        return "WebAssembly component (wasm32, any host)", "a component-model host (wasmtime, jco)"
    return "", ""


def table(dist: Path) -> list[str]:
    rows = ["| artefact | bytes | platform | oldest OS; runtime |", "| --- | ---: | --- | --- |"]
    for p in listed(dist):
        platform, floor = describe(p)
        rows.append(f"| `{p.relative_to(dist)}` | {p.stat().st_size:,} | {platform} | {floor} |")
    return rows


def write(dist: Path, out: Path, *, top_level: bool = False) -> str:
    lines = ["# dist/ artefacts" if not top_level else "# Artefacts", ""]
    if top_level:
        lines += [
            ("Written by `make artefacts` (scripts/dist/artefacts.py) from what `make dist` built on "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; rewritten by the next run, not by hand. "
             "Every file below is built on Linux x86_64 (zig from PyPI links Linux and macOS, Debian's mingw-w64 "
             "links Windows). Each oldest OS is the artefact's own (wheel tags, which auditwheel confirms for "
             "manylinux; macOS binaries' LC_BUILD_VERSION) or the one it was linked for (glibc 2.17, which "
             "tests/dist checks in the symbol versions), except Windows 10: rustc's minimum for its target, "
             "which a PE file does not record. What was run "
             "and what was only inspected on each platform is in [docs/platforms.md](docs/platforms.md), "
             "how each is built in [scripts/dist/README.md](scripts/dist/README.md). Paths are under `dist/`."),
            "",
        ]
    else:
        lines += ["Written by `make dist` (scripts/dist/build.py, artefacts.py).", ""]
    lines += table(dist)
    timings = dist / TIMINGS
    if top_level and timings.exists():
        spent = json.loads(timings.read_text())
        lines += ["", "## Build time", "",
                  (f"Wall clock of each part in the last `make dist` run that built it ({spent['cpus']} CPUs, "
                   f"`CARGO_BUILD_JOBS={spent['jobs']}`), cargo's target directory warm or cold and the machine "
                   "busy with other work or not, as they were: a record of that run, not a benchmark."), "",
                  "| part | seconds |", "| --- | ---: |"]
        lines += [f"| {part} | {seconds:.0f} |" for part, seconds in spent["parts"].items()]
        lines += [f"| total | {sum(spent['parts'].values()):.0f} |"]
    text = "\n".join(lines) + "\n"
    out.write_text(text)
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dist", type=Path, default=ROOT / "dist")
    ap.add_argument("--write", type=Path, default=ROOT / "ARTEFACTS.md")
    args = ap.parse_args()
    if not listed(args.dist):
        sys.exit(f"artefacts: nothing in {args.dist}: run `make dist` first")
    print(write(args.dist, args.write, top_level=True))


if __name__ == "__main__":
    main()
