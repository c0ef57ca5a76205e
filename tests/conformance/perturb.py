"""A deliberately non-conformant runtime for the conformance test's own test: runs a real command
line (`perturb.py OLD NEW CMD...`) and rewrites OLD to NEW in its stdout, as a runtime with its
own event vocabulary would (the issue's example: `usage` instead of `bad_control_line`).

stdin and stderr are the child's own; signals reach it through the process group (the test
signals the group), so this wrapper ignores SIGTERM and SIGINT itself; the exit status is the
child's.
"""

from __future__ import annotations

import signal
import subprocess
import sys


def main(argv: list[str]) -> int:
    old, new, *cmd = argv
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, bufsize=1)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(
            sig, signal.SIG_IGN
        )  # after the spawn: the child keeps the defaults
    assert child.stdout is not None
    for line in child.stdout:
        sys.stdout.write(line.replace(old, new))
        sys.stdout.flush()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
