"""``python -m tenure run ...``: one node over UDP with the command line and JSON event lines
shared by every tenure runtime (both come from the core, so the text is identical everywhere)."""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Optional, Sequence, TextIO, Tuple, Union

from . import _native
from ._native import Node
from ._types import Config, Event
from .errors import TenureError, UsageError
from .runtime import Elector

__all__ = [
    "USAGE",
    "RunOptions",
    "parse_args",
    "run_config",
    "event_line",
    "lifecycle_line",
    "warning_line",
    "key_from_file",
    "parse_control",
    "inspect_line",
    "main",
]

USAGE: str = _native.USAGE
"""The shared ``--help`` text (without the program name)."""


@dataclass(frozen=True)
class RunOptions:
    """The options of ``run``, as parsed by the core's shared parser."""

    id: str
    peers: Tuple[str, ...]
    cluster: str
    min_cluster_size: Optional[int] = None
    election_timeout_min: Optional[int] = None
    election_timeout_max: Optional[int] = None
    heartbeat_interval: Optional[int] = None
    ghost_ttl: Optional[int] = None
    state_file: Optional[str] = None
    key_file: Optional[str] = None


def parse_args(args: Sequence[str]) -> Optional[RunOptions]:
    """Parses the arguments after the program name; ``None`` means ``--help``.

    Raises :class:`tenure.UsageError` with the core's message for anything else.
    """
    return _native.parse_args(list(args))


def run_config(options: RunOptions, key: Optional[bytes] = None) -> Config:
    """The node configuration ``options`` describe (durable exactly when ``--state-file`` is set)."""
    return _native.run_config(options, key)


def event_line(ts_ms: int, id: str, event: Event) -> Optional[str]:
    """The shared JSON line for an event (``None`` for ``ConfirmLeader``)."""
    return _native.event_line(ts_ms, id, event)


def lifecycle_line(ts_ms: int, id: str, event: str, term: int) -> str:
    """The shared JSON line for ``started`` / ``stopped``."""
    return _native.lifecycle_line(ts_ms, id, event, term)


def warning_line(ts_ms: int, id: str, code: str, message: str) -> str:
    """The shared JSON ``warning`` line."""
    return _native.warning_line(ts_ms, id, code, message)


def key_from_file(contents: bytes) -> bytes:
    """The key in a key file's contents (trailing whitespace removed)."""
    return _native.key_from_file(contents)


def parse_control(line: str) -> Optional[Tuple[str, Union[str, bytes, None]]]:
    """Parses one stdin control line: ``("transfer", peer)``, ``("inspect", None)``,
    ``("broadcast", payload)``, or ``None`` for a blank line. Raises :class:`tenure.UsageError`."""
    return _native.parse_control(line)


def inspect_line(ts_ms: int, id: str, node: Node) -> str:
    """The shared JSON ``inspect`` line with ``node``'s whole state."""
    return _native.inspect_line(ts_ms, id, node)


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


async def _run(options: RunOptions, out: TextIO) -> int:
    key = None
    if options.key_file is not None:
        with open(options.key_file, "rb") as f:
            key = key_from_file(f.read())
    config = run_config(options, key)
    node_id = config.id

    def emit(line: str) -> None:
        out.write(line + "\n")
        out.flush()

    def hook(event: Event) -> None:
        line = event_line(_wall_ms(), node_id, event)
        if line is not None:
            emit(line)

    elector = Elector(config=config, state_file=options.state_file, event_hook=hook)
    for w in elector.node.warnings:
        emit(warning_line(_wall_ms(), node_id, w.code, w.message))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await elector.start()
    emit(lifecycle_line(_wall_ms(), node_id, "started", elector.term))

    def control(line: str) -> None:
        if not elector.running:
            return
        try:
            parsed = parse_control(line)
            if parsed is None:
                return
            command, arg = parsed
            if command == "inspect":
                emit(inspect_line(_wall_ms(), node_id, elector.node))
            elif command == "transfer":
                assert isinstance(arg, str)
                elector.transfer_leadership(arg)
            elif command == "broadcast":
                assert isinstance(arg, bytes)
                elector.broadcast(arg)
        except TenureError as e:
            emit(warning_line(_wall_ms(), node_id, e.code, e.message))

    def read_stdin() -> None:
        # A thread, because stdin may be a pipe, a terminal or a file. End of input is not a
        # reason to stop: only the signals are.
        for line in sys.stdin:
            loop.call_soon_threadsafe(control, line)

    if sys.stdin is not None:
        threading.Thread(target=read_stdin, name="tenure-stdin", daemon=True).start()
    await stop.wait()
    await elector.stop()
    emit(lifecycle_line(_wall_ms(), node_id, "stopped", elector.term))
    return 0


def main(argv: Optional[Sequence[str]] = None, prog: str = "python -m tenure") -> int:
    """Runs the command line; returns the exit status (0, or 2 for a usage error, 1 for a
    failure to start)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        options = parse_args(args)
    except UsageError as e:
        print(f"{prog}: {e}\n\nusage: {prog} {USAGE}", file=sys.stderr)
        return 2
    if options is None:
        print(f"usage: {prog} {USAGE}", end="")
        return 0
    try:
        return asyncio.run(_run(options, sys.stdout))
    except (TenureError, OSError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
