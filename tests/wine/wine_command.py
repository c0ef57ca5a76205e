#!/usr/bin/env python3
"""The leader-only command on Windows, run under Wine: a 3-node cluster of tenure.exe on loopback
where each node's command is ticker.exe (it appends "TERM MS" to a file every 20 ms and starts a
copy of itself that does the same: a descendant). Two kills, each a SIGKILL of a Wine process (the
Windows process ends as by TerminateProcess, and wineserver closes its handles):

1. the leader's runtime: its command and the command's descendant must stop (the supervisor reads
   the end of its orders pipe and ends the job), the new leader's command must start, and no line
   of the old leadership's files may be later than the first line of the new one's; the killed
   leader's watchdog reports its death notice for both peers, and the election must match what it
   sent (to both: within the lease; a notice Wine failed to send is reported as an anomaly, and
   then the election must wait for the election timeout);
2. the new leader's supervisor: the command and its descendant must stop at once (the supervisor
   held the only handle of their Job Object, which has JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE): no
   line is written between the kill and the next command's start (the runtime starts a supervisor
   again). This comes second: under Wine, a death notice from a supervisor started again after
   such a kill was sometimes not sent (docs/platforms.md).

Then an ordered stop: `transfer` on the new leader's stdin; its command is stopped (`cause`
`stopped`) before the next leader's starts, and the script says how: Ctrl-Break reached the command
(exit code STATUS_CONTROL_C_EXIT) or, with no console to send it on, the job was ended at once
(exit code 1).

The supervisor is `tenure-supervise.exe` when one sits beside tenure.exe (the runtime looks there
first; the release archive ships it there), else tenure.exe started again. The script names the
program from the supervisor process's command line, and with a tenure-supervise.exe given fails if
tenure.exe supervised instead.

Wine is a test bed, not Windows (docs/platforms.md): Wine 8 lacks bcryptprimitives.dll, from which
Rust's standard library takes random bytes, so a stand-in (bcryptprimitives.c, built here with
mingw-w64) goes next to tenure.exe; it is never shipped.

Usage: tests/wine/wine_command.py [--exe PATH/tenure.exe]   (default: builds the debug
x86_64-pc-windows-gnu tenure.exe and tenure-supervise.exe with cargo; with --exe, the
tenure-supervise.exe beside it if there is one). Prints `SKIP: why` and exits 0 without wine64 or
mingw-w64; exits 1 on a failed check.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NoReturn

from wine_harness import (
    HERE,
    MINGW_GCC,
    Node,
    build_bcrypt_standin,
    free_udp_ports,
    wait_for,
    windows_path,
    wine_env,
    wine_loader,
)

ROOT = HERE.parents[1]
HELPER = "tenure-supervise.exe"
TARGET = "x86_64-pc-windows-gnu"
# Wine starts a Windows process in seconds on an idle machine, more on a busy one.
START_TIMEOUT = 180
FAILOVER_TIMEOUT = 60
LEASE_MS = 500
KILL_GRACE_MS = 1000
# What a console program's exit code is when Ctrl-C or Ctrl-Break ended it (0xC000013A).
CONTROL_C_EXIT = 0xC000013A
ELECTION_MIN_MS = 4000
TIMING = ["--election-timeout-min", str(ELECTION_MIN_MS), "--election-timeout-max", str(2 * ELECTION_MIN_MS), "--lease-duration", str(LEASE_MS),
          "--kill-grace", str(KILL_GRACE_MS)]


def skip(why: str) -> NoReturn:
    print(f"SKIP: {why}")
    sys.exit(0)


def fail(why: str) -> NoReturn:
    print(f"FAIL: {why}")
    sys.exit(1)


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


def supervisor_of(out_file: Path) -> tuple[int, str]:
    """The Unix pid and the command line of the Wine process that supervises the command writing
    to `out_file` (Wine shows a Windows process's command line as its own)."""
    needle = windows_path(out_file)
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "__supervise" in cmdline and needle in cmdline:
            return int(proc.name), cmdline
    fail(f"no supervisor process found for {needle}")


def supervising_program(cmdline: str) -> str:
    """The file name of the program a supervisor's command line runs: what precedes
    `__supervise`, as Wine shows it (a Windows path, maybe after the loader's own)."""
    program = cmdline.split("__supervise", 1)[0].strip().split()[-1]
    return program.replace("\\", "/").rsplit("/", 1)[-1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exe", type=Path, help="tenure.exe to run (default: build the debug one)")
    args = ap.parse_args()
    loader = wine_loader()
    if loader is None:
        skip("wine64 is not installed (Debian: apt-get install wine64): the Windows leader-only command is not run")
    gcc = shutil.which(MINGW_GCC)
    if gcc is None:
        skip(f"{MINGW_GCC} (Debian's gcc-mingw-w64-x86-64) builds ticker.exe and the "
             "bcryptprimitives.dll stand-in Wine 8 needs")
    exe = args.exe
    if exe is None:
        subprocess.run(["cargo", "build", "-p", "tenure-runtime", "--bin", "tenure", "--bin", "tenure-supervise",
                        "--target", TARGET], cwd=ROOT, check=True)
        exe = ROOT / "target" / TARGET / "debug" / "tenure.exe"
    helper = exe.with_name(HELPER)
    work = Path(tempfile.mkdtemp(prefix="tenure-wine-"))
    shutil.copy(exe, work / "tenure.exe")
    if helper.exists():
        shutil.copy(helper, work / HELPER)
    build_bcrypt_standin(gcc, work)
    subprocess.run([gcc, "-O2", "-o", str(work / "ticker.exe"), str(HERE / "ticker.c")], check=True)
    # One prefix for every run (creating it takes Wine tens of seconds), outside the sources; the
    # caller's, when it has one (test-dist shares its own).
    env = wine_env(Path(os.environ.get("WINEPREFIX") or ROOT / "target" / "wine-prefix"))
    try:
        check(loader, work, env, supervisor=HELPER if helper.exists() else "tenure.exe")
    except AssertionError as e:
        fail(str(e))
    finally:
        # The supervisors read the end of their orders pipes and exit. What a failed check left
        # running (a command that outlived its supervisor) is ended with the prefix's wineserver,
        # which is this script's alone.
        server = shutil.which("wineserver") or "/usr/lib/wine/wineserver64"
        try:
            subprocess.run([server, "-w"], env=env, timeout=20, check=False)
        except subprocess.TimeoutExpired:
            subprocess.run([server, "-k"], env=env, timeout=60, check=False)
        shutil.rmtree(work, ignore_errors=True)


def check(loader: str, work: Path, env: dict[str, str], supervisor: str) -> None:
    """The cluster and its kills (the module's docstring); `supervisor`: the program that must
    supervise each command."""
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
        if notice["peers"] != 2 or int(notice["term"]) != term:  # type: ignore[arg-type]
            fail(f"the death notice was armed for other peers or another term: {notice}")
        if notice["sent"] != 2:
            # Under Wine 8 the watchdog's sends on its duplicate of the node's socket sometimes fail
            # with WSAEWOULDBLOCK (docs/platforms.md): reported, and the failover must then be the
            # one without a notice (the followers wait for the election timeout).
            print(f"wine: WINE ANOMALY: the death notice went to {notice['sent']} of 2 peers; the killed leader's "
                  "last stderr lines (its watchdog shares them):\n" + "\n".join(leader.stderr[-10:]))
            if int(elected["ts_ms"]) / 1000 - killed_at < ELECTION_MIN_MS / 1000 - 0.1:  # type: ignore[arg-type]
                fail(f"elected before an election timeout without the death notice: {elected}")
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

        sup_pid, sup_cmdline = supervisor_of(new)
        program = supervising_program(sup_cmdline)
        print(f"wine: {successor.id}'s command is supervised by {program}")
        if program.lower() != supervisor.lower():
            fail(f"the supervisor is {program}, expected {supervisor}: {sup_cmdline}")
        os.kill(sup_pid, signal.SIGKILL)
        sup_killed_at = time.time()
        _, restarted = wait_for(rest, lambda e: e.get("event") == "command_started", FAILOVER_TIMEOUT)
        restart_ms = int(restarted["ts_ms"])  # type: ignore[arg-type]
        files_now = [f for n in rest for f in (files[n.id], files[n.id].with_name(files[n.id].name + ".child"))]
        quiet_from, quiet_to = int(sup_killed_at * 1000) + 200, restart_ms - 200
        late = [(f.name, ms) for f in files_now for _, ms in stamps(f) if quiet_from < ms < quiet_to]
        print(f"wine: supervisor killed; the next command started {restart_ms / 1000 - sup_killed_at:.3f} s later; "
              f"lines written in between (after the first 200 ms): {len(late)}")
        if quiet_to - quiet_from < 300:
            fail(f"the next command started too soon after the supervisor's kill to check a quiet gap: {restarted}")
        if late:
            fail(f"the command outlived its supervisor's kill: {late[:5]}")
        successor = next(n for n in rest if n.id == restarted["id"])
        new = files[successor.id]
        wait_lines(new, len(stamps(new)) + 10, 30)

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


if __name__ == "__main__":
    main()
