"""The examples run and say what they claim (they are also checked by `mypy --strict`)."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import PYTHON_DIR, free_udp_ports


def run(name: str, *args: str) -> str:
    # Three consecutive free ports for the examples that run a cluster in one process.
    while True:
        base = free_udp_ports(1)[0]
        if base < 65000 and len(set(free_udp_ports(3)) & {base + 1, base + 2}) == 0:
            break
    env = {**os.environ, "EXAMPLE_BASE_PORT": str(base)}
    out = subprocess.run(
        [sys.executable, str(PYTHON_DIR / "examples" / name), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_sans_io_example_elects_and_fails_over() -> None:
    out = run("sans_io.py")
    assert "leads term 1" in out and "crashes" in out and "term 2" in out.splitlines()[-1]


def test_sqlite_fencing_example_refuses_stale_and_duplicate_writers() -> None:
    out = run("sqlite_fencing.py")
    assert "leader of term 5: accepted" in out
    assert "stale leader of term 4: stale" in out
    assert "another node in term 5: already_fenced" in out
    assert "stored: [('2026-12-02', 'all green', 5)]" in out


def test_leader_only_work_example_cancels_on_handover() -> None:
    out = run("leader_only_work.py")
    assert "scheduling batch 1" in out
    assert "leadership lost, scheduler stopped" in out
    assert "one-shot job interrupted by loss of leadership" in out


def test_asyncio_runtime_example_demo() -> None:
    out = run("asyncio_runtime.py", "--demo")
    assert out.count("I lead term") >= 1


def test_threaded_worker_example_hands_over() -> None:
    out = run("threaded_worker.py")
    assert "batch 2 written with fencing token" in out
    assert "handed over:" in out and "(on tenure-callbacks)" in out
