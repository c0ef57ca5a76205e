"""Helpers for the dist/ tests (`make test-dist`): where the artefacts are, a PATH without any
compiler, and a 3-process cluster that must elect."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DIST = Path(os.environ.get("TENURE_DIST", ROOT / "dist")).resolve()

# The Wine test bed's shared helpers (test_wine.py), free_udp_ports among them.
sys.path.insert(0, str(ROOT / "tests" / "wine"))
from wine_harness import free_udp_ports

# Nothing that could build the extension or the addon may be reachable in the install tests.
FORBIDDEN = ("cargo", "rustc", "rustup", "cc", "gcc", "g++", "c++", "clang", "zig", "maturin", "cargo-zigbuild")
# What the installs need besides python and node: npm's lifecycle scripts and npx run through sh;
# sleep is the leader-only command of the install tests.
COREUTILS = ("sh", "env", "cat", "ls", "mkdir", "rm", "cp", "mv", "uname", "dirname", "basename", "sed", "sleep")


def workspace_version() -> str:
    with open(ROOT / "Cargo.toml", "rb") as f:
        return str(tomllib.load(f)["workspace"]["package"]["version"])


VERSION = workspace_version()
# The environment for the build-side tools (wasm-tools, maturin, auditwheel from this venv), also
# when pytest runs without the venv on PATH.
TOOLS_ENV = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


def artefact(pattern: str) -> Path:
    """The one file in dist/ matching the glob, or a failure that says to run `make dist`."""
    found = sorted(DIST.glob(pattern))
    assert len(found) == 1, f"expected one {DIST}/{pattern}, found {[p.name for p in found]}: run `make dist`"
    return found[0]


def needs_x86_64() -> None:
    if platform.machine() != "x86_64":
        pytest.skip("the install tests install the x86_64 artefacts")


@pytest.fixture(scope="session")
def clean_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment whose PATH is one directory of symlinks: python3, node, npm, npx and a few
    coreutils. No cargo, rustc or C compiler is reachable (asserted)."""
    bindir = tmp_path_factory.mktemp("clean-path")
    wanted = {
        "python3": os.path.realpath(shutil.which("python3") or ""),
        "node": shutil.which("node"),
        "npm": shutil.which("npm"),
        "npx": shutil.which("npx"),
        **{tool: shutil.which(tool) for tool in COREUTILS},
    }
    for name, target in wanted.items():
        assert target, f"{name} is not on PATH"
        # npm and npx are `#!/usr/bin/env node` scripts: link to the real file, so their own
        # imports resolve next to it.
        (bindir / name).symlink_to(os.path.realpath(target))
    env = {
        "PATH": str(bindir),
        "HOME": str(tmp_path_factory.mktemp("home")),
        "LANG": "C.UTF-8",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_INDEX": "1",
        "npm_config_cache": str(tmp_path_factory.mktemp("npm-cache")),
        "npm_config_offline": "true",
        "npm_config_audit": "false",
        "npm_config_fund": "false",
        "npm_config_update_notifier": "false",
    }
    for tool in FORBIDDEN:
        assert shutil.which(tool, path=env["PATH"]) is None, f"{tool} is reachable on the clean PATH"
    return env


def run_ok(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 600) -> str:
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert out.returncode == 0, f"{cmd} failed ({out.returncode}):\n{out.stdout[-4000:]}\n{out.stderr[-4000:]}"
    return out.stdout


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid` (from /proc), children before grandchildren."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    out: list[int] = []
    todo = [pid]
    while todo:
        kids = children.get(todo.pop(0), [])
        out += kids
        todo += kids
    return out


def stop_tree(proc: subprocess.Popen[str], grace: float = 10) -> None:
    """SIGTERM to `proc`'s process group and to each of its descendants, then SIGKILL to whatever
    of them is left after `grace` seconds. A launcher (npx, a shell) may run the program in a
    group of its own and not pass a signal on; the supervisor of a leader-only command has a
    session of its own by design (and holds the same stderr): each gets its signal directly, so
    that nothing keeps the pipes open after this returns."""
    tree = [proc.pid, *descendants(proc.pid)]
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
    for pid in tree[1:]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() for pid in tree[1:]):
        time.sleep(0.05)
    try:
        proc.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        pass
    for pid in [*tree, *descendants(proc.pid)]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    proc.wait()


def elect(argv_for_node: Callable[[str, list[str]], list[str]], cwd: Path, env: dict[str, str],
          timeout: float = 60, event: str = "leader",
          while_running: Callable[[dict[str, object]], None] | None = None) -> dict[str, object]:
    """Starts 3 processes `argv_for_node(me, peers)` on loopback and waits for one JSON line with
    `"event": EVENT` (default `leader`) on any stdout; returns that line's object, after calling
    `while_running` with it while the processes still run. Stops all of them either way."""
    addrs = [f"127.0.0.1:{p}" for p in free_udp_ports(3)]
    procs = []
    lines: list[str] = []
    leader: list[dict[str, object]] = []
    done = threading.Event()

    def pump(proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip())
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict) and obj.get("event") == event:
                leader.append(obj)
                done.set()

    try:
        for me in addrs:
            argv = argv_for_node(me, [a for a in addrs if a != me])
            proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, start_new_session=True)
            procs.append(proc)
            threading.Thread(target=pump, args=(proc,), daemon=True).start()
        deadline = time.monotonic() + timeout
        while not done.is_set() and time.monotonic() < deadline:
            if all(p.poll() is not None for p in procs):
                break
            done.wait(0.1)
        if leader and while_running is not None:
            while_running(leader[0])
    finally:
        for p in procs:
            stop_tree(p)
    errors = "\n".join((p.stderr.read() if p.stderr else "")[-2000:] for p in procs)
    assert leader, f"no {event} line; stdout:\n" + "\n".join(lines[-40:]) + "\nstderr:\n" + errors
    return leader[0]


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    """A directory outside the repository, so nothing resolves to the checkout's sources."""
    d = tmp_path / "work"
    d.mkdir()
    yield d

