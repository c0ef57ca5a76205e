"""The command line: ``python -m tenure run ...`` and the ``tenure`` console script are the
runtime's own command line (``tenure-runtime``'s ``cli``), identical to ``tenure-wasmtime`` and the
Node.js ``tenure`` command: same options, JSON event lines on stdout, control lines on stdin
(``transfer [PEER]``, ``inspect``, ``broadcast TEXT``, ``join PEER``, ``leave PEER``,
``proclaim TEXT``), a one-line
usage error with exit status 2, and a graceful handover on SIGTERM/SIGINT."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, Optional, Sequence

from ._native import run_cli

__all__ = ["main"]

# The leader-only command's supervisor: the small native program the wheel ships next to this file
# (``make python-dev`` builds it there too), ``tenure-supervise.exe`` on Windows. An install built
# from the sdist, or a source checkout not built with ``make python-dev``, has none; then the
# supervisor is this command line again, a second Python interpreter (several times the memory,
# slower to start).
SUPERVISOR_HELPER = Path(__file__).with_name("tenure-supervise" + (".exe" if os.name == "nt" else ""))


def _supervisor(args: List[str]) -> List[str]:
    """The argv prefix the runtime starts the supervisor with (``PREFIX __supervise ...``)."""
    # On Windows os.access checks X_OK as existence: Windows runs a file by its name.
    if os.access(SUPERVISOR_HELPER, os.X_OK):
        return [str(SUPERVISOR_HELPER)]
    if args[:1] == ["run"] and "--" in args:  # a leader-only command: say at start why it costs more
        print(
            f"tenure: warning: the native supervisor {SUPERVISOR_HELPER} is missing (an install from the sdist "
            "or an unbuilt source checkout); the leader-only command is supervised by a second Python interpreter",
            file=sys.stderr,
        )
    return [sys.executable, "-m", "tenure"]


def main(argv: Optional[Sequence[str]] = None, prog: str = "tenure") -> int:
    """Runs the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    # Arguments that were not UTF-8 arrive as surrogate escapes; decoded lossily (U+FFFD), the
    # shared command line refuses them as a usage error (status 2).
    args = [os.fsencode(a).decode("utf-8", "replace") for a in (sys.argv[1:] if argv is None else argv)]
    sys.stdout.flush()
    # A leader-only command (`-- CMD ARGS...`) runs under a supervisor process.
    return run_cli([prog, *args], _supervisor(args))
