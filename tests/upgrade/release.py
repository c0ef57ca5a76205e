"""Builds a recorded release's `tenure` binary from the git history (tests/upgrade/releases.txt).

`git archive COMMIT` into target/upgrade/NAME-COMMIT/src, then `cargo build -p tenure-runtime
--bin tenure` there with its own target directory (target/upgrade/target, shared by every
release, kept between runs: a second run builds nothing). Tags are not used: a clone that did not
fetch them still has the commits.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RELEASES = Path(__file__).resolve().parent / "releases.txt"


@dataclass(frozen=True)
class Release:
    name: str
    commit: str


def releases() -> list[Release]:
    out = []
    for line in RELEASES.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, commit = line.split()
            out.append(Release(name, commit))
    return out


def release(name: str) -> Release:
    for r in releases():
        if r.name == name:
            return r
    raise KeyError(f"{name} is not recorded in {RELEASES}")


def build(r: Release) -> Path:
    """The path of release `r`'s `tenure` binary, built if it is not there yet."""
    base = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target") / "upgrade"
    exe = base / f"{r.name}-{r.commit[:12]}" / "tenure"
    if exe.exists():
        return exe
    src = exe.parent / "src"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", r.commit],
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        raise RuntimeError(
            f"{r.name}: commit {r.commit} is not in this clone's history ({archive.stderr.decode().strip()}); "
            "a shallow clone cannot test upgrades"
        )
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as t:
        t.extractall(src, filter="data")
    env = dict(os.environ, CARGO_TARGET_DIR=str(base / "target"))
    subprocess.run(
        ["cargo", "build", "-q", "--locked", "-p", "tenure-runtime", "--bin", "tenure"],
        cwd=src,
        env=env,
        check=True,
    )
    shutil.copy2(base / "target" / "debug" / "tenure", exe)
    shutil.rmtree(src, ignore_errors=True)
    return exe


if __name__ == "__main__":
    for r in releases():
        print(r.name, build(r))
