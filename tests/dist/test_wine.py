"""The Windows command line from dist/ (`tenure.exe`, the GNU-toolchain build) as a 3-node cluster
on loopback under Wine: it elects; a SIGKILLed leader is replaced, and the test names the path that
noticed (the death notice, the refused-port probe or the election timeout) from its evidence; Ctrl-C on a leader is a
graceful stop that hands leadership over before the process exits 0. The same tenure.exe, with the
archive's tenure-supervise.exe beside it, then runs tests/wine/wine_command.py: the leader-only
command under the shipped Windows supervisor (its Job Object ends the command's tree when the
supervisor or the runtime dies) and the death notice.

Wine is a test bed, not Windows (docs/platforms.md): Wine 8 lacks bcryptprimitives.dll, from which
Rust's standard library takes random bytes, so a stand-in (bcryptprimitives.c, built here with
mingw-w64) goes next to tenure.exe; it is never shipped. Skips, saying why, without wine64 or
mingw-w64.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time
import zipfile
from collections.abc import Iterator

import pytest
from conftest import ROOT, VERSION, artefact, free_udp_ports
from wine_harness import (
    MINGW_GCC,
    Node,
    build_bcrypt_standin,
    wait_for,
    wine_env,
    wine_loader,
)

# The Wine test bed: the bcryptprimitives.dll stand-in's source and the leader-only command check.
WINE_BED = ROOT / "tests" / "wine"

# Wine starts a Windows process in seconds on an idle machine, more on a busy one.
START_TIMEOUT = 120
FAILOVER_TIMEOUT = 30
# A refused port ends a follower's wait for the election timeout but not its promise to the old
# leader (the lease, LEASE_MS), so that path elects about LEASE_MS after the kill; without it a
# follower waits for an election timeout, at least ELECTION_MIN_MS after the last heartbeat.
LEASE_MS = 500
ELECTION_MIN_MS = 4000
TIMING = ["--election-timeout-min", str(ELECTION_MIN_MS), "--election-timeout-max", str(2 * ELECTION_MIN_MS),
          "--lease-duration", str(LEASE_MS)]


@pytest.fixture(scope="module")
def windows_cli(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], dict[str, str]]:
    """(argv prefix that runs tenure.exe under Wine, its environment). The archive's
    tenure-supervise.exe is beside it, as an unzipped archive has it."""
    loader = wine_loader()
    if loader is None:
        pytest.skip("wine64 is not installed (Debian: apt-get install wine64): the Windows command line is "
                    "inspected by test_foreign.py but not run")
    gcc = shutil.which(MINGW_GCC)
    if gcc is None:
        pytest.skip(f"{MINGW_GCC} (Debian's gcc-mingw-w64-x86-64, `make setup`) builds the "
                    "bcryptprimitives.dll stand-in Wine 8 needs")
    workdir = tmp_path_factory.mktemp("wine")
    stem = f"tenure-{VERSION}-x86_64-pc-windows-gnu"
    with zipfile.ZipFile(artefact(f"cli/{stem}.zip")) as z:
        for name in ("tenure.exe", "tenure-supervise.exe"):
            (workdir / name).write_bytes(z.read(f"{stem}/{name}"))
    build_bcrypt_standin(gcc, workdir)
    # One prefix for every run, outside the repository's sources, beside the dist builds.
    env = wine_env(ROOT / "target" / "dist" / "wine-prefix")
    argv = [loader, str(workdir / "tenure.exe")]
    out = subprocess.run([*argv, "--version"], env=env, capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0 and VERSION in out.stdout, f"tenure.exe --version under Wine: {out}"
    return argv, env


@pytest.fixture
def cluster(windows_cli: tuple[list[str], dict[str, str]]) -> Iterator[list[Node]]:
    argv, env = windows_cli
    ids = [f"127.0.0.1:{p}" for p in free_udp_ports(3)]
    nodes = []
    try:
        for me in ids:
            peers = [a for p in ids if p != me for a in ("--peer", p)]
            proc = subprocess.Popen([*argv, "run", "--id", me, *peers, "--cluster", "wine", *TIMING], env=env,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True)
            nodes.append(Node(me, proc))
        yield nodes
    finally:
        for n in nodes:
            if n.proc.poll() is None:
                n.proc.kill()
        for n in nodes:
            n.proc.wait(30)


def test_killed_leader_is_replaced_and_the_failover_path_is_named(cluster: list[Node]) -> None:
    """A SIGKILLed leader is replaced, by one of three paths told apart by their evidence: the
    death notice (the killed leader's watchdog, which shares its stdout, reports `death_notice`
    with the notices it sent, and the election follows at once), the refused-port probe (a
    survivor logs the refusal, and the election follows the lease, LEASE_MS) or the election
    timeout (neither, and at least ELECTION_MIN_MS). Evidence of a fast path with a slow election,
    or a quick election without any, fails.

    Under Wine 8 the path observed is the death notice (on by default where the runtime can prove
    its own death: on Windows a handle of its process that the watchdog waits on). Without it, the
    leader's port does refuse at once (wineserver closes it when the process dies), but the
    survivors' connected probe socket reports the refusal only when Wine's winsock tracing slows it
    down (docs/platforms.md), so the election timeout would follow."""
    leader, won = wait_for(cluster, lambda e: e.get("event") == "leader", START_TIMEOUT)
    # A leader arms its notice for the members that acknowledged it: a few heartbeat rounds first,
    # so that both followers are among them (killed at once, only its voter may be).
    time.sleep(1.0)
    leader.proc.send_signal(signal.SIGKILL)  # the Windows process itself: Wine's loader execs into it
    killed_at = time.monotonic()
    leader.proc.wait(30)
    rest = [n for n in cluster if n is not leader]
    successor, again = wait_for(rest, lambda e: e.get("event") == "leader" and e["term"] > won["term"],
                                FAILOVER_TIMEOUT)
    took = time.monotonic() - killed_at
    assert successor.id != leader.id and again["term"] > won["term"]
    time.sleep(0.5)  # stderr is read by another thread
    refused = [line for n in rest for line in n.stderr if "port refused a datagram" in line and leader.id in line]
    try:
        _, notice = wait_for([leader], lambda e: e.get("event") == "death_notice", 5)
    except AssertionError:
        notice = None  # the watchdog reports whether it sent or not: no line means no watchdog
    sent = int(notice["sent"]) if notice else 0  # type: ignore[arg-type]
    everyone = notice is not None and sent == len(rest) == int(notice["peers"])  # type: ignore[arg-type]
    path = ("death notice" if everyone else "death notice to some" if sent else
            "refused-port probe" if refused else "election timeout")
    print(f"wine: {leader.id} killed, {successor.id} leads term {again['term']} after {took:.2f} s: {path} "
          f"(watchdog: {notice})")
    if sent:
        assert notice is not None and notice["term"] == won["term"], notice
    if everyone:
        assert took < LEASE_MS / 1000, f"the death notice reached both followers, yet the election took {took:.2f} s"
    elif sent:
        # A follower without the notice keeps its promise and refuses the campaign it starts, which
        # then waits for an election timeout: no bound but the failover timeout.
        pass
    elif refused:
        assert took < ELECTION_MIN_MS / 1000, f"a refusal was logged, yet the election took {took:.2f} s"
    else:
        # The last heartbeat came at most one interval before the kill.
        assert took >= ELECTION_MIN_MS / 1000 - 0.1, f"no refusal logged, yet elected after only {took:.2f} s"


def test_ctrl_c_on_the_leader_hands_leadership_over(cluster: list[Node]) -> None:
    leader, won = wait_for(cluster, lambda e: e.get("event") == "leader", START_TIMEOUT)
    # SIGINT to Wine's process is Windows' Ctrl-C (CTRL_C_EVENT) for the console program.
    leader.proc.send_signal(signal.SIGINT)
    rest = [n for n in cluster if n is not leader]
    successor, _ = wait_for(rest, lambda e: e.get("event") == "leader" and e["term"] > won["term"], FAILOVER_TIMEOUT)
    assert leader.proc.wait(30) == 0, "\n".join(leader.stderr[-20:])
    # A handover, not a departure: before its `stopped` line the old leader knew the successor led
    # (it waits for that), which it learns only from the successor's heartbeats.
    told = [json.loads(line) for line in leader.stdout if line.startswith("{")]
    kinds = [e["event"] for e in told]
    assert "stopped" in kinds, kinds
    before_stop = told[:kinds.index("stopped")]
    assert any(e["event"] == "follower" and e.get("leader") == successor.id for e in before_stop), told[-6:]


def test_the_leader_only_command_and_the_death_notice_under_wine(windows_cli: tuple[list[str], dict[str, str]]) -> None:
    """The archive's tenure.exe with the archive's tenure-supervise.exe beside it: the runtime
    must start that helper as the supervisor (wine_command.py reads the supervisor's command
    line and refuses tenure.exe started again)."""
    argv, env = windows_cli
    out = subprocess.run(["python3", str(WINE_BED / "wine_command.py"), "--exe", argv[-1]],
                         env=env, capture_output=True, text=True, timeout=900, check=False)
    print(out.stdout, out.stderr)
    assert out.returncode == 0, f"{out.stdout}\n{out.stderr}"
    assert "SKIP" not in out.stdout, out.stdout
    assert "supervised by tenure-supervise.exe" in out.stdout, out.stdout
