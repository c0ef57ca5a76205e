"""The command line: ``python -m tenure run ...`` and the ``tenure`` console script are the
runtime's own command line (``tenure-runtime``'s ``cli``), identical to ``tenure-wasmtime`` and the
Node.js ``tenure`` command: same options, JSON event lines on stdout, control lines on stdin
(``transfer [PEER]``, ``inspect``, ``broadcast TEXT``, ``join PEER``, ``leave PEER``), a one-line
usage error with exit status 2, and a graceful handover on SIGTERM/SIGINT."""

from __future__ import annotations

import os
import sys
from typing import Optional, Sequence

from ._native import run_cli

__all__ = ["main"]


def main(argv: Optional[Sequence[str]] = None, prog: str = "tenure") -> int:
    """Runs the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    # Arguments that were not UTF-8 arrive as surrogate escapes; decoded lossily (U+FFFD), the
    # shared command line refuses them as a usage error (status 2).
    args = [os.fsencode(a).decode("utf-8", "replace") for a in (sys.argv[1:] if argv is None else argv)]
    sys.stdout.flush()
    # A leader-only command (`-- CMD ARGS...`) runs under a supervisor: this command line again.
    return run_cli([prog, *args], [sys.executable, "-m", "tenure"])
