#!/usr/bin/env python3
"""The leader-only command on Windows, run under Wine: a 3-node cluster of tenure.exe on loopback
where each node's command is ticker.exe (it appends "TERM MS" to a file every 20 ms and starts a
copy of itself that does the same: a descendant). Two kills, each a SIGKILL of a Wine process (the
Windows process ends as by TerminateProcess, and wineserver closes its handles):

1. the leader's supervisor: the command and its descendant must stop at once (the supervisor held
   the only handle of their Job Object, which has JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE): no line is
   written between the kill and the next command's start (the runtime starts a supervisor again);
2. the leader's runtime: its command and the command's descendant must stop (the supervisor reads
   the end of its orders pipe and ends the job), the new leader's command must start, and no line
   of the old leadership's files may be later than the first line of the new one's; the killed
   leader's watchdog must send its death notice to both peers.

Then an ordered stop: `transfer` on the new leader's stdin; its command is stopped (`cause`
`stopped`) before the next leader's starts, and the script says how: Ctrl-Break reached the command
(exit code STATUS_CONTROL_C_EXIT) or, with no console to send it on, the job was ended at once
(exit code 1).

Wine is a test bed, not Windows (docs/platforms.md): Wine 8 lacks bcryptprimitives.dll, from which
Rust's standard library takes random bytes, so a stand-in (bcryptprimitives.c, built here with
mingw-w64) goes next to tenure.exe; it is never shipped.

Usage: tests/wine/wine_command.py [--exe PATH/tenure.exe]   (default: builds the debug
x86_64-pc-windows-gnu tenure.exe with cargo). Prints `SKIP: why` and exits 0 without wine64 or
mingw-w64; exits 1 on a failed check.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
TARGET = "x86_64-pc-windows-gnu"
# Wine starts a Windows process in seconds on an idle machine, more on a busy one.
START_TIMEOUT = 180
FAILOVER_TIMEOUT = 60
LEASE_MS = 500
KILL_GRACE_MS = 1000
# What a console program's exit code is when Ctrl-C or Ctrl-Break ended it (0xC000013A).
CONTROL_C_EXIT = 0xC000013A
TIMING = ["--election-timeout-min", "4000", "--election-timeout-max", "8000", "--lease-duration", str(LEASE_MS),
          "--kill-grace", str(KILL_GRACE_MS)]


def skip(why: str) -> None:
    print(f"SKIP: {why}")
    sys.exit(0)


def fail(why: str) -> None:
    print(f"FAIL: {why}")
    sys.exit(1)


def wine() -> str:
    for candidate in (shutil.which("wine64"), "/usr/lib/wine/wine64", shutil.which("wine")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    skip("wine64 is not installed (Debian: apt-get install wine64): the Windows leader-only command is not run")
    raise AssertionError


def free_udp_ports(n: int) -> list[int]:
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def windows_path(p: Path) -> str:
    """Wine's Z: drive is the Unix root."""
    return "Z:" + str(p).replace("/", "\\")


class Node:
    def __init__(self, node_id: str, proc: subprocess.Popen[str]) -> None:
        self.id = node_id
        self.proc = proc
        self.events: queue.Queue[dict[str, object]] = queue.Queue()
        self.seen: list[dict[str, object]] = []
        self.stderr: list[str] = []
        threading.Thread(target=self._pump_out, daemon=True).start()
        threading.Thread(target=self._pump_err, daemon=True).start()

    def _pump_out(self) -> None:
        for line in self.proc.stdout:  # type: ignore[union-attr]
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                self.events.put(obj)

    def _pump_err(self) -> None:
        for line in self.proc.stderr:  # type: ignore[union-attr]
            self.stderr.append(line.rstrip())


def wait_for(nodes: list[Node], want, timeout: float) -> tuple[Node, dict[str, object]]:
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
    logs = "\n".join(f"--- {n.id} (exit {n.proc.poll()})\n" + "\n".join(
        [json.dumps(e) for e in n.seen[-10:]] + n.stderr[-15:]) for n in nodes)
    fail(f"no such event within {timeout} s:\n{logs}")
    raise AssertionError


def stamps(path: Path) -> list[tuple[int, int]]:
    """(term, ms) per complete line."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
            out.append((int(parts[0]), int(parts[1])))
    return out


def wait_lines(path: Path, n: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while len(stamps(path)) < n:
        if time.monotonic() > deadline:
            fail(f"{path.name}: fewer than {n} lines within {timeout} s")
        time.sleep(0.1)


def supervisor_of(out_file: Path) -> int:
    """The Unix pid of the Wine process that supervises the command writing to `out_file` (Wine
    shows a Windows process's command line as its own)."""
    needle = windows_path(out_file)
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "__supervise" in cmdline and needle in cmdline:
            return int(proc.name)
    fail(f"no supervisor process found for {needle}")
    raise AssertionError


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exe", type=Path, help="tenure.exe to run (default: build the debug one)")
    args = ap.parse_args()
    loader = wine()
    gcc = shutil.which("x86_64-w64-mingw32-gcc")
    if gcc is None:
        skip("x86_64-w64-mingw32-gcc (Debian's gcc-mingw-w64-x86-64) builds ticker.exe and the "
             "bcryptprimitives.dll stand-in Wine 8 needs")
    exe = args.exe
    if exe is None:
        subprocess.run(["cargo", "build", "-p", "tenure-runtime", "--bin", "tenure", "--target", TARGET],
                       cwd=ROOT, check=True)
        exe = ROOT / "target" / TARGET / "debug" / "tenure.exe"
    work = Path(tempfile.mkdtemp(prefix="tenure-wine-"))
    shutil.copy(exe, work / "tenure.exe")
    subprocess.run([gcc, "-shared", "-O2", "-o", str(work / "bcryptprimitives.dll"),
                    str(HERE / "bcryptprimitives.c"), "-ladvapi32"], check=True)
    subprocess.run([gcc, "-O2", "-o", str(work / "ticker.exe"), str(HERE / "ticker.c")], check=True)
    # One prefix for every run (creating it takes Wine tens of seconds), outside the sources; the
    # caller's, when it has one (test-dist shares its own).
    prefix = Path(os.environ.get("WINEPREFIX") or ROOT / "target" / "wine-prefix")
    prefix.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, WINEPREFIX=str(prefix), WINEDEBUG="-all", WINEARCH="win64")
    # Wine creates or updates the prefix at its first start: done here, before any timed step (a
    # node started while Wine sets the prefix up can wait there past the checks' limits).
    subprocess.run([loader, str(work / "tenure.exe"), "--version"], env=env, capture_output=True, timeout=600,
                   check=True)
    ids = [f"127.0.0.1:{p}" for p in free_udp_ports(3)]
    files = {me: work / f"out-{me.replace(':', '_')}.txt" for me in ids}
    nodes: list[Node] = []
    try:
        for me in ids:
            peers = [a for p in ids if p != me for a in ("--peer", p)]
            argv = [loader, str(work / "tenure.exe"), "run", "--id", me, *peers, "--cluster", "wine", *TIMING,
                    "--", windows_path(work / "ticker.exe"), windows_path(files[me])]
            proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
            nodes.append(Node(me, proc))
        leader, started = wait_for(nodes, lambda e: e.get("event") == "command_started", START_TIMEOUT)
        term = int(started["term"])  # type: ignore[arg-type]
        old = files[leader.id]
        child = old.with_name(old.name + ".child")
        wait_lines(old, 10, 30)
        wait_lines(child, 10, 30)
        print(f"wine: {leader.id} leads term {term}; its command and the command's child tick")

        os.kill(supervisor_of(old), signal.SIGKILL)
        sup_killed_at = time.time()
        _, restarted = wait_for(nodes, lambda e: e.get("event") == "command_started", FAILOVER_TIMEOUT)
        restart_ms = int(restarted["ts_ms"])  # type: ignore[arg-type]
        files_now = [f for f in [*files.values()] + [f.with_name(f.name + ".child") for f in files.values()]]
        quiet_from, quiet_to = int(sup_killed_at * 1000) + 200, restart_ms - 200
        late = [(f.name, ms) for f in files_now for _, ms in stamps(f) if quiet_from < ms < quiet_to]
        print(f"wine: supervisor killed; the next command started {restart_ms / 1000 - sup_killed_at:.3f} s later; "
              f"lines written in between (after the first 200 ms): {len(late)}")
        if quiet_to - quiet_from < 300:
            fail(f"the next command started too soon after the supervisor's kill to check a quiet gap: {restarted}")
        if late:
            fail(f"the command outlived its supervisor's kill: {late[:5]}")
        leader, started = next(n for n in nodes if n.id == restarted["id"]), restarted
        term = int(started["term"])  # type: ignore[arg-type]
        old = files[leader.id]
        child = old.with_name(old.name + ".child")
        wait_lines(old, len(stamps(old)) + 10, 30)
        wait_lines(child, len(stamps(child)) + 10, 30)

        leader.proc.send_signal(signal.SIGKILL)  # the Windows process itself: Wine's loader execs into it
        killed_at = time.time()
        leader.proc.wait(30)
        rest = [n for n in nodes if n is not leader]
        successor, again = wait_for(rest, lambda e: e.get("event") == "command_started", FAILOVER_TIMEOUT)
        new_term = int(again["term"])  # type: ignore[arg-type]
        # The killed leader's supervisor, its watchdog, printed on the stdout it shares with it.
        _, notice = wait_for([leader], lambda e: e.get("event") == "death_notice", 10)
        elected = next(e for e in successor.seen if e.get("event") == "leader" and e["term"] == new_term)
        print(f"wine: death notice sent to {notice['sent']} of {notice['peers']} peers "
              f"{int(notice['ts_ms']) / 1000 - killed_at:.3f} s after the kill; {successor.id} elected "
              f"{int(elected['ts_ms']) / 1000 - killed_at:.3f} s after it")  # type: ignore[arg-type]
        if notice["sent"] != 2 or notice["peers"] != 2 or int(notice["term"]) != term:  # type: ignore[arg-type]
            fail(f"the death notice went to fewer than both peers, or for another term: {notice}")
        new = files[successor.id]
        wait_lines(new, 10, 30)
        time.sleep(2)
        sizes = (old.stat().st_size, child.stat().st_size)
        time.sleep(1)
        if (old.stat().st_size, child.stat().st_size) != sizes:
            fail(f"the killed leader's command (or its child) still runs: {old.name} or {child.name} grows")
        last_old = max(ms for _, ms in stamps(old) + stamps(child))
        first_new = min(ms for _, ms in stamps(new))
        ended_after = last_old / 1000 - killed_at
        print(f"wine: leader killed; its command and child ended {ended_after:.3f} s after the kill "
              f"(lease {LEASE_MS} ms, kill grace {KILL_GRACE_MS} ms); {successor.id} leads term {new_term} and "
              f"its command started {first_new / 1000 - killed_at:.3f} s after the kill")
        if new_term <= term:
            fail(f"the new command's term {new_term} is not later than {term}")
        if last_old >= first_new:
            fail(f"overlap: the old leadership's last line ({last_old}) is not before the new one's first ({first_new})")
        if ended_after > (LEASE_MS + KILL_GRACE_MS) / 1000 + 1.0:
            fail(f"the old command ended {ended_after:.3f} s after the kill, later than lease + grace + 1 s")

        successor.proc.stdin.write("transfer\n")  # type: ignore[union-attr]
        successor.proc.stdin.flush()  # type: ignore[union-attr]
        others = [n for n in rest if n is not successor]
        _, stopped = wait_for([successor], lambda e: e.get("event") == "command_stopped", FAILOVER_TIMEOUT)
        third, next_start = wait_for(others, lambda e: e.get("event") == "command_started", FAILOVER_TIMEOUT)
        code = stopped.get("code")
        how = {CONTROL_C_EXIT: "Ctrl-Break reached the command", CONTROL_C_EXIT - 2**32: "Ctrl-Break reached the command",
               1: "the job was ended at once (no console for Ctrl-Break)"}.get(code, f"exit code {code}")  # type: ignore[call-overload]
        print(f"wine: transfer from {successor.id}: its command stopped ({how}); {third.id} leads term "
              f"{next_start['term']} and starts its command")
        if stopped.get("cause") != "stopped":
            fail(f"the transfer did not stop the command in order: {stopped}")
        third_file = files[third.id]
        wait_lines(third_file, 5, 30)
        last_stopped = max(ms for _, ms in stamps(new) + stamps(new.with_name(new.name + ".child")))
        first_third = min(ms for _, ms in stamps(third_file))
        if last_stopped >= first_third:
            fail(f"overlap after the transfer: {last_stopped} is not before {first_third}")
        print("PASS")
    finally:
        for n in nodes:
            if n.proc.poll() is None:
                n.proc.kill()
        for n in nodes:
            n.proc.wait(30)
        # The supervisors read the end of their orders pipes and exit. What a failed check left
        # running (a command that outlived its supervisor) is ended with the prefix's wineserver,
        # which is this script's alone.
        server = shutil.which("wineserver") or "/usr/lib/wine/wineserver64"
        try:
            subprocess.run([server, "-w"], env=env, timeout=20, check=False)
        except subprocess.TimeoutExpired:
            subprocess.run([server, "-k"], env=env, timeout=60, check=False)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
