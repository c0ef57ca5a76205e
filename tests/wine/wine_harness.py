"""What the Wine test bed's two runners share: tests/dist/test_wine.py (pytest, the shipped
command line) and tests/wine/wine_command.py (a script, the leader-only command). Finding Wine
and mingw-w64, the bcryptprimitives.dll stand-in, the prefix's environment, a node's output
pumped into lists and an event queue, waiting for an event, and free loopback ports
(tests/dist/conftest.py takes that one from here too).

No pytest here: wine_command.py runs as a plain script. A check that fails raises
AssertionError; each runner reports it its own way. Named wine_harness, not harness, because
tests/netns and tests/deploy import a module of that name.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The C compiler that builds the bcryptprimitives.dll stand-in (Debian's gcc-mingw-w64-x86-64).
MINGW_GCC = "x86_64-w64-mingw32-gcc"

Event = dict[str, object]


def free_udp_ports(n: int) -> list[int]:
    """`n` distinct UDP ports on 127.0.0.1 that were free a moment ago (bound together, so the
    kernel hands out different ones, then released for the nodes to take)."""
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def wine_loader() -> str | None:
    """The 64-bit Wine loader, or None when Wine is not installed."""
    for candidate in (shutil.which("wine64"), "/usr/lib/wine/wine64", shutil.which("wine")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def windows_path(p: Path) -> str:
    """Wine's Z: drive is the Unix root."""
    return "Z:" + str(p).replace("/", "\\")


def build_bcrypt_standin(gcc: str, into: Path) -> Path:
    """Wine 8 lacks bcryptprimitives.dll, from which Rust's standard library takes random bytes:
    a stand-in (bcryptprimitives.c) built into `into`, beside the executables that load it. It is
    never shipped."""
    dll = into / "bcryptprimitives.dll"
    subprocess.run([gcc, "-shared", "-O2", "-o", str(dll), str(HERE / "bcryptprimitives.c"), "-ladvapi32"],
                   check=True)
    return dll


def wine_env(prefix: Path) -> dict[str, str]:
    """The environment of every Wine process of a run: one 64-bit prefix (creating one takes Wine
    tens of seconds, so runs reuse it) and no debug channels."""
    prefix.mkdir(parents=True, exist_ok=True)
    return dict(os.environ, WINEPREFIX=str(prefix), WINEDEBUG="-all", WINEARCH="win64")


class Node:
    """A started node: its stdout and stderr lines as they arrive, and each JSON object on
    stdout also as an event in `events` (consumed by wait_for, which keeps them in `seen`)."""

    def __init__(self, node_id: str, proc: subprocess.Popen[str]) -> None:
        self.id = node_id
        self.proc = proc
        self.events: queue.Queue[Event] = queue.Queue()
        self.seen: list[Event] = []
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        threading.Thread(target=self._pump, args=(proc.stdout, self.stdout, self.events), daemon=True).start()
        threading.Thread(target=self._pump, args=(proc.stderr, self.stderr, None), daemon=True).start()

    @staticmethod
    def _pump(stream: object, sink: list[str], events: queue.Queue[Event] | None) -> None:
        for line in stream:  # type: ignore[attr-defined]
            sink.append(line.rstrip())
            if events is None:
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                events.put(obj)


def wait_for(nodes: list[Node], want: Callable[[Event], bool], timeout: float) -> tuple[Node, Event]:
    """The first event from any of `nodes` for which want(event) holds; AssertionError with each
    node's last output lines when none comes within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for n in nodes:
            try:
                e = n.events.get_nowait()
            except queue.Empty:
                continue
            n.seen.append(e)
            if want(e):
                return n, e
        time.sleep(0.02)
    logs = "\n".join(f"--- {n.id} (exit {n.proc.poll()})\n" + "\n".join(n.stdout[-15:] + n.stderr[-15:])
                     for n in nodes)
    raise AssertionError(f"no such event within {timeout} s:\n{logs}")
