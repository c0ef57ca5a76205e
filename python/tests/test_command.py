"""The leader-only command through `python -m tenure run ... -- CMD ARGS...`: its supervisor is
this command line again (`[sys.executable, "-m", "tenure"]`), so this checks that re-invocation
end to end: the command runs on the leader with its environment, and a SIGKILL of the runtime's
pid takes it down. The rules themselves are tested once, in runtime/tests/command.rs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest
from conftest import free_udp_ports

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="process groups and /proc")


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(") ", 1)[1][0] != "Z"


def test_the_command_runs_on_the_leader_and_dies_with_its_runtime() -> None:
    ids = [f"127.0.0.1:{p}" for p in free_udp_ports(3)]
    lines: List[Dict[str, Any]] = []
    cond = threading.Condition()
    procs: Dict[str, subprocess.Popen[str]] = {}

    def read(proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            with cond:
                lines.append(json.loads(raw))
                cond.notify_all()

    def wait_for(kind: str, timeout: float = 15.0) -> Dict[str, Any]:
        deadline = time.monotonic() + timeout
        with cond:
            while True:
                found = [x for x in lines if x["event"] == kind]
                if found:
                    return found[0]
                left = deadline - time.monotonic()
                assert left > 0, f"no {kind}; lines: {lines[-10:]}"
                cond.wait(left)

    with tempfile.TemporaryDirectory() as tmp:
        script = 'echo "$TENURE_TERM $TENURE_LEADER_ID" > "$0/$$"; exec sleep 60'
        try:
            for node_id in ids:
                args = [sys.executable, "-m", "tenure", "run", "--id", node_id, "--cluster", "py-command",
                        "--kill-grace", "200"]  # fmt: skip
                for peer in ids:
                    if peer != node_id:
                        args += ["--peer", peer]
                args += ["--", "sh", "-c", script, tmp]
                proc = subprocess.Popen(
                    args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
                )
                procs[node_id] = proc
                threading.Thread(target=read, args=(proc,), daemon=True).start()
            started = wait_for("command_started")
            pid = started["pid"]
            record = Path(tmp) / str(pid)
            deadline = time.monotonic() + 5
            # `>` creates the file before `echo` writes it: wait for the whole line, not the file.
            while not (record.exists() and record.read_text().endswith("\n")) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert record.read_text().split() == [str(started["term"]), started["id"]]
            leader = procs[started["id"]]
            os.kill(leader.pid, signal.SIGKILL)  # the runtime's pid alone
            deadline = time.monotonic() + 2
            while alive(pid) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert not alive(pid), "the command outlived its SIGKILLed runtime"
        finally:
            for proc in procs.values():
                proc.kill()
                proc.wait()
