"""The leader-only command through `python -m tenure run ... -- CMD ARGS...`: its supervisor is
the native helper `tenure-supervise` shipped in the package (`make python-dev` builds it), or,
when it is missing, this command line again (`[sys.executable, "-m", "tenure"]`). Both are checked
end to end: the command runs on the leader with its environment, under the expected supervisor, and
a SIGKILL of the runtime's pid takes it down. The rules themselves are tested once, in
runtime/tests/command.rs."""

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

import tenure.cli

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="process groups and /proc")


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(") ", 1)[1][0] != "Z"


def parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[1])


# The command line with the package's helper, and one whose helper is gone (as in an unbuilt
# checkout): the same `main`, with the helper's path pointed at nothing.
WITHOUT_HELPER = (
    "import sys, pathlib, tenure.cli as c; c.SUPERVISOR_HELPER = pathlib.Path('/nonexistent/tenure-supervise'); "
    "sys.exit(c.main())"
)


@pytest.mark.parametrize("helper", [True, False], ids=["native-helper", "fallback-interpreter"])
def test_the_command_runs_on_the_leader_and_dies_with_its_runtime(helper: bool) -> None:
    if helper and not os.access(tenure.cli.SUPERVISOR_HELPER, os.X_OK):
        pytest.fail(f"{tenure.cli.SUPERVISOR_HELPER} is missing: build it with `make python-dev`")
    ids = [f"127.0.0.1:{p}" for p in free_udp_ports(3)]
    lines: List[Dict[str, Any]] = []
    cond = threading.Condition()
    procs: Dict[str, subprocess.Popen[str]] = {}
    errors: Dict[str, List[str]] = {}
    drains: List[threading.Thread] = []

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
                prefix = [sys.executable, "-m", "tenure"] if helper else [sys.executable, "-c", WITHOUT_HELPER]
                args = [*prefix, "run", "--id", node_id, "--cluster", "py-command", "--kill-grace", "200"]
                for peer in ids:
                    if peer != node_id:
                        args += ["--peer", peer]
                args += ["--", "sh", "-c", script, tmp]
                proc = subprocess.Popen(
                    args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
                )
                procs[node_id] = proc
                threading.Thread(target=read, args=(proc,), daemon=True).start()
                errors[node_id] = []
                drain = threading.Thread(target=lambda p=proc, e=errors[node_id]: e.extend(p.stderr or ()), daemon=True)
                drain.start()
                drains.append(drain)
            started = wait_for("command_started")
            # `pid` is the command's own (it names its record after `$$`); `pgid` its process group,
            # led by the guard the supervisor forked, whose child the command is.
            pid = started["pgid"]

            def record_line() -> str:
                records = list(Path(tmp).iterdir())
                return records[0].read_text() if len(records) == 1 else ""

            deadline = time.monotonic() + 5
            # `>` creates the file before `echo` writes it: wait for the whole line, not the file.
            while not record_line().endswith("\n") and time.monotonic() < deadline:
                time.sleep(0.01)
            assert record_line().split() == [str(started["term"]), started["id"]]
            (record,) = Path(tmp).iterdir()
            command = int(record.name)
            assert command == started["pid"]
            assert parent(command) == pid
            leader = procs[started["id"]]
            # The supervisor is the guard's parent, a child of the runtime's process.
            assert Path(f"/proc/{pid}/comm").read_text().strip() == "tenure-guard"
            supervisor = parent(pid)
            assert parent(supervisor) == leader.pid
            exe = os.readlink(f"/proc/{supervisor}/exe")
            if helper:
                assert Path(exe) == tenure.cli.SUPERVISOR_HELPER.resolve(), f"supervised by {exe}"
            else:
                assert Path(exe) == Path(sys.executable).resolve(), f"supervised by {exe}"
            os.kill(leader.pid, signal.SIGKILL)  # the runtime's pid alone
            deadline = time.monotonic() + 2
            while (alive(pid) or alive(command)) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert not alive(command), "the command outlived its SIGKILLed runtime"
            assert not alive(pid), "the guard outlived its SIGKILLed runtime"
        finally:
            for proc in procs.values():
                proc.kill()
                proc.wait()
    # The fallback says why at start, once per process; the helper says nothing.
    for drain in drains:  # done when every process holding the pipe (a supervisor too) is gone
        drain.join(timeout=5)
    for node_id, lines_ in errors.items():
        warned = sum("the native supervisor" in line for line in lines_)
        assert warned == (0 if helper else 1), f"{node_id}: {warned} warnings in {lines_}"
