"""A real mixed-language tenure cluster on 127.0.0.1: the README's `make demo`, and the library the
end-to-end tests drive.

Five OS processes over UDP with one cluster id -- two `python -m tenure run`, two Node.js
`tenure run`, one `tenure-wasmtime run` -- each printing the shared JSON event lines. This module
starts them, merges their event streams, injects faults (SIGKILL, SIGTERM, SIGSTOP/SIGCONT,
leadership transfers through the shared stdin control lines), measures how long the cluster was
leaderless after each, and checks that no two processes ever led the same term.

Standard library only, so that it runs before anything else is installed into the venv.
"""

from __future__ import annotations

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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = "e2e"

# Timing the processes run with: the defaults (150-300 ms election timeout, 50 ms heartbeats).
ELECTION_TIMEOUT_MAX_MS = 300


def now_ms() -> int:
    return int(time.time() * 1000)


def free_udp_ports(n: int) -> list[int]:
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def runtime_command(kind: str) -> list[str]:
    """The command that starts one node of a runtime kind (before `run ...`)."""
    if kind == "python":
        venv_python = ROOT / ".venv" / "bin" / "python"
        return [
            str(venv_python if venv_python.exists() else sys.executable),
            "-m",
            "tenure",
        ]
    if kind == "node":
        pkg = json.loads((ROOT / "node" / "package.json").read_text())
        bin_field = pkg["bin"]
        rel = (
            bin_field if isinstance(bin_field, str) else next(iter(bin_field.values()))
        )
        return [shutil.which("node") or "node", str(ROOT / "node" / rel)]
    if kind == "native":
        # The Rust `tenure` binary: TENURE_NATIVE, else the debug or release build.
        if os.environ.get("TENURE_NATIVE"):
            return [os.environ["TENURE_NATIVE"]]
        target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
        for profile in ("debug", "release"):
            exe = target / profile / "tenure"
            if exe.exists():
                return [str(exe)]
        raise FileNotFoundError(
            "the tenure binary is not built (cargo build -p tenure-runtime --bin tenure)"
        )
    if kind == "wasmtime":
        if os.environ.get("TENURE_WASMTIME"):
            return [os.environ["TENURE_WASMTIME"]]
        for profile in ("debug", "release"):
            exe = ROOT / "target" / profile / "tenure-wasmtime"
            if exe.exists():
                return [str(exe)]
        raise FileNotFoundError("tenure-wasmtime is not built (make component-host)")
    raise ValueError(f"unknown runtime kind {kind!r}")


@dataclass
class Event:
    ts_ms: int
    id: str
    event: str
    term: int | None = None
    leader: str | None = None
    raw: dict = field(default_factory=dict)


@dataclass
class Proc:
    kind: str
    id: str
    args: list[str]
    popen: subprocess.Popen | None = None
    role: str = "starting"
    term: int = 0
    leader: str | None = None
    stopped: bool = False
    paused: bool = False


class Cluster:
    """Starts, watches and breaks a cluster of runtime processes."""

    def __init__(
        self,
        kinds: list[str],
        key: bytes | None = None,
        extra: list[tuple[str, bytes]] | None = None,
        on_event: Callable[[Cluster, Event], None] | None = None,
        options: list[str] | None = None,
    ) -> None:
        # State files live on tmpfs where there is one: the runtimes fsync term and vote before
        # every dependent send, and a busy CI disk's fsync latency is not what this measures.
        shm = Path("/dev/shm")
        self.tmp = Path(
            tempfile.mkdtemp(prefix="tenure-e2e-", dir=shm if shm.is_dir() else None)
        )
        ports = free_udp_ports(len(kinds) + len(extra or []))
        ids = [f"127.0.0.1:{p}" for p in ports]
        self.members = ids[: len(kinds)]
        self.procs: dict[str, Proc] = {}
        self.events: list[Event] = []
        self.lines: queue.Queue[tuple[str, str | None]] = queue.Queue()
        self.on_event = on_event
        self.options = list(options or [])
        for kind, pid in zip(kinds, self.members):
            self.procs[pid] = Proc(kind, pid, self._args(pid, self.members, key))
        # Outsiders: nodes that list the members but are not listed by them (e.g. a wrong key).
        for (kind, their_key), pid in zip(extra or [], ids[len(kinds) :]):
            self.procs[pid] = Proc(
                kind, pid, self._args(pid, self.members + [pid], their_key)
            )

    def _args(self, pid: str, members: list[str], key: bytes | None) -> list[str]:
        safe = pid.replace(":", "_")
        args = [
            "run",
            "--id",
            pid,
            "--cluster",
            CLUSTER,
            "--state-file",
            str(self.tmp / f"{safe}.state"),
        ]
        for m in members:
            if m != pid:
                args += ["--peer", m]
        args += self.options
        if key is not None:
            key_file = self.tmp / f"{safe}.key"
            key_file.write_bytes(key)
            args += ["--key-file", str(key_file)]
        return args

    # ----- processes ------------------------------------------------------------------------

    def start(self, pid: str) -> None:
        p = self.procs[pid]
        cmd = self.command(p)
        # stderr goes to a file per process (kept for post-mortems); Popen holds its own handle.
        with open(self.tmp / f"{pid.replace(':', '_')}.stderr", "ab") as stderr:
            p.popen = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                bufsize=1,
            )
        p.stopped = False
        p.paused = False
        p.role = "starting"
        threading.Thread(target=self._reader, args=(pid, p.popen), daemon=True).start()

    def command(self, p: Proc) -> list[str]:
        """The command line of one process (the benchmarks override it for a peer library)."""
        return runtime_command(p.kind) + p.args

    def start_all(self, timeout_s: float = 60.0) -> None:
        """Starts every process and waits until each has printed `started` (a wasmtime host
        compiles the component first, which takes seconds in a debug build)."""
        for pid in self.procs:
            self.start(pid)
        if not self.wait_for(
            lambda: all(p.role != "starting" for p in self.procs.values()), timeout_s
        ):
            slow = [p.id for p in self.procs.values() if p.role == "starting"]
            raise RuntimeError(f"processes did not start: {slow}")

    def _reader(self, pid: str, popen: subprocess.Popen) -> None:
        assert popen.stdout is not None
        for line in popen.stdout:
            self.lines.put((pid, line))
        self.lines.put((pid, None))

    def send_control(self, pid: str, line: str) -> None:
        p = self.procs[pid]
        if p.popen and p.popen.stdin and p.popen.poll() is None:
            try:
                p.popen.stdin.write(line + "\n")
                p.popen.stdin.flush()
            except (BrokenPipeError, OSError):
                pass

    def signal(self, pid: str, sig: int) -> int:
        """Sends a signal; returns the wall-clock ms at which it was sent."""
        p = self.procs[pid]
        assert p.popen is not None
        t = now_ms()
        p.popen.send_signal(sig)
        if sig == signal.SIGSTOP:
            p.paused = True
        elif sig == signal.SIGCONT:
            p.paused = False
        elif sig in (signal.SIGKILL, signal.SIGTERM):
            if sig == signal.SIGKILL:
                p.role = "killed"
            try:
                p.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.popen.kill()
                p.popen.wait()
            p.stopped = True
            if sig == signal.SIGTERM:
                p.role = "stopped"
        return t

    def close(self) -> None:
        for p in self.procs.values():
            if p.popen and p.popen.poll() is None:
                try:
                    p.popen.send_signal(signal.SIGCONT)
                    p.popen.kill()
                    p.popen.wait(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    pass
        shutil.rmtree(self.tmp, ignore_errors=True)

    # ----- events -----------------------------------------------------------------------------

    def pump(self, timeout_s: float) -> None:
        """Processes event lines for up to `timeout_s` seconds (returns early when idle)."""
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            try:
                pid, line = self.lines.get(timeout=min(remaining, 0.05))
            except queue.Empty:
                continue
            if line is None:
                continue
            try:
                raw = json.loads(line)
            except json.JSONDecodeError:
                continue
            ev = Event(
                raw.get("ts_ms", now_ms()),
                raw.get("id", pid),
                raw.get("event", "?"),
                raw.get("term"),
                raw.get("leader"),
                raw,
            )
            p = self.procs.get(ev.id)
            if p is not None:
                if ev.event == "leader":
                    p.role, p.term, p.leader = "leader", ev.term or 0, ev.id
                elif ev.event == "follower":
                    p.role, p.term, p.leader = "follower", ev.term or 0, ev.leader
                elif ev.event == "started":
                    p.role, p.term = "follower", ev.term or 0
                elif ev.event == "stopped":
                    p.role = "stopped"
            self.events.append(ev)
            if self.on_event:
                self.on_event(self, ev)

    def wait_for(self, pred: Callable[[], bool], timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if pred():
                return True
            self.pump(0.02)
        return pred()

    def current_leader(self) -> str | None:
        live = [
            p
            for p in self.procs.values()
            if p.role == "leader" and not p.stopped and not p.paused
        ]
        return max(live, key=lambda p: p.term).id if live else None

    def leader_events(self) -> list[Event]:
        return [e for e in self.events if e.event == "leader"]

    def first_leader_after(
        self, t_ms: int, min_term: int, exclude: str | None = None
    ) -> Event | None:
        for e in self.leader_events():
            if e.ts_ms >= t_ms and (e.term or 0) >= min_term and e.id != exclude:
                return e
        return None

    def leaders_by_term(self) -> dict[int, set[str]]:
        out: dict[int, set[str]] = {}
        for e in self.leader_events():
            out.setdefault(e.term or 0, set()).add(e.id)
        return out

    def violations(self) -> list[str]:
        return [
            f"term {t}: {sorted(ids)}"
            for t, ids in sorted(self.leaders_by_term().items())
            if len(ids) > 1
        ]

    def inspect(self, pid: str, timeout_s: float = 3.0) -> dict | None:
        before = len(self.events)
        self.send_control(pid, "inspect")
        found: list[dict] = []

        def got() -> bool:
            for e in self.events[before:]:
                if e.event == "inspect" and e.id == pid:
                    found.append(e.raw.get("state", {}))
                    return True
            return False

        return found[0] if self.wait_for(got, timeout_s) else None


# ----- the scripted run ---------------------------------------------------------------------------


@dataclass
class FaultResult:
    fault: str
    target: str
    kind: str
    leaderless_ms: int | None
    new_leader: str | None
    new_kind: str | None
    term: int | None


@dataclass
class Report:
    faults: list[FaultResult]
    leaders_by_term: dict[int, set[str]]
    kinds_led: set[str]
    violations: list[str]
    stopped_leader_stepped_down: bool
    stopped_leader_led_foreign_term: bool
    kinds: dict[str, str]


KINDS = ["python", "python", "node", "node", "wasmtime"]


def run_faults(c: Cluster, log: Callable[[str], None]) -> Report:
    """The fault schedule of `make demo` and the e2e test."""
    faults: list[FaultResult] = []
    kinds = {pid: p.kind for pid, p in c.procs.items()}

    def record(
        fault: str, target: str, t0: int, min_term: int, exclude: str | None
    ) -> FaultResult:
        ok = c.wait_for(
            lambda: c.first_leader_after(t0, min_term, exclude) is not None, 5.0
        )
        ev = c.first_leader_after(t0, min_term, exclude) if ok else None
        r = FaultResult(
            fault,
            target,
            kinds[target],
            (ev.ts_ms - t0) if ev else None,
            ev.id if ev else None,
            kinds.get(ev.id) if ev else None,
            ev.term if ev else None,
        )
        faults.append(r)
        took = (
            f"{r.leaderless_ms} ms" if r.leaderless_ms is not None else "NO NEW LEADER"
        )
        log(
            f"{fault} of {target} ({kinds[target]}): leaderless {took}, new leader {r.new_leader} ({r.new_kind}) term {r.term}"
        )
        return r

    def settle() -> str:
        c.wait_for(lambda: c.current_leader() is not None, 5.0)
        c.pump(0.3)
        leader = c.current_leader()
        if leader is None:
            raise RuntimeError("the cluster has no leader")
        return leader

    leader = settle()
    log(f"first leader: {leader} ({kinds[leader]}) in term {c.procs[leader].term}")

    # A transfer into each runtime kind, so that Python, Node.js and the component each lead.
    for kind in ("python", "node", "wasmtime"):
        leader = settle()
        if kinds[leader] == kind:
            continue
        target = next(
            pid
            for pid, k in kinds.items()
            if k == kind and pid in c.members and not c.procs[pid].stopped
        )
        term = c.procs[leader].term
        t0 = now_ms()
        log(f"transfer {leader} ({kinds[leader]}) -> {target} ({kind})")
        c.send_control(leader, f"transfer {target}")
        record("transfer", leader, t0, term + 1, None)

    # SIGKILL the leader three times, restarting it each time.
    for _ in range(3):
        leader = settle()
        term = c.procs[leader].term
        t0 = c.signal(leader, signal.SIGKILL)
        log(f"SIGKILL {leader} ({kinds[leader]})")
        record("SIGKILL", leader, t0, term + 1, leader)
        c.start(leader)
        c.wait_for(lambda pid=leader: c.procs[pid].role in ("follower", "leader"), 60.0)

    # SIGSTOP the leader past its election timeout, then SIGCONT: it must step down.
    leader = settle()
    term = c.procs[leader].term
    t0 = c.signal(leader, signal.SIGSTOP)
    log(f"SIGSTOP {leader} ({kinds[leader]}) for {3 * ELECTION_TIMEOUT_MAX_MS} ms")
    record("SIGSTOP", leader, t0, term + 1, leader)
    c.pump(3 * ELECTION_TIMEOUT_MAX_MS / 1000)
    t_cont = c.signal(leader, signal.SIGCONT)
    stepped = c.wait_for(
        lambda: any(
            e.id == leader and e.event == "follower" and e.ts_ms >= t_cont
            for e in c.events
        ),
        5.0,
    )
    log(f"SIGCONT {leader}: {'stepped down' if stepped else 'DID NOT STEP DOWN'}")
    led_terms_by_others = {
        t for t, ids in c.leaders_by_term().items() if ids - {leader}
    }
    foreign = any(
        e.id == leader and e.ts_ms >= t0 and e.term in led_terms_by_others
        for e in c.leader_events()
    )

    # SIGTERM the leader: a graceful handover, measured from its step-down to the new leader.
    leader = settle()
    term = c.procs[leader].term
    t_sig = now_ms()
    c.signal(leader, signal.SIGTERM)
    log(f"SIGTERM {leader} ({kinds[leader]})")
    c.wait_for(lambda: c.first_leader_after(t_sig, term + 1, leader) is not None, 5.0)
    handed = [
        e
        for e in c.events
        if e.id == leader and e.event == "follower" and e.ts_ms >= t_sig
    ]
    t0 = handed[0].ts_ms if handed else t_sig
    record("SIGTERM", leader, t0, term + 1, leader)
    c.start(leader)
    c.wait_for(lambda: c.procs[leader].role in ("follower", "leader"), 60.0)
    c.pump(0.5)

    led = {
        kinds[pid]
        for ids in c.leaders_by_term().values()
        for pid in ids
        if pid in kinds
    }
    return Report(
        faults, c.leaders_by_term(), led, c.violations(), stepped, foreign, kinds
    )


# ----- the terminal view -------------------------------------------------------------------------


class View:
    """A live table (one row per node) above a timeline of role changes."""

    def __init__(self, c: Cluster, live: bool) -> None:
        self.c = c
        self.live = live
        self.t_start = now_ms()
        self.timeline: list[str] = []
        self.last_draw = 0.0

    def log(self, text: str) -> None:
        self.add(f"{(now_ms() - self.t_start) / 1000:7.3f}s  ** {text}")

    def add(self, line: str) -> None:
        self.timeline.append(line)
        if not self.live:
            print(line, flush=True)
        self.draw()

    def on_event(self, c: Cluster, e: Event) -> None:
        kind = c.procs[e.id].kind if e.id in c.procs else "?"
        t = f"{(e.ts_ms - self.t_start) / 1000:7.3f}s"
        if e.event == "leader":
            self.add(f"{t}  {e.id} ({kind}) leads term {e.term}")
        elif e.event == "follower":
            self.add(
                f"{t}  {e.id} ({kind}) follows {e.leader or 'nobody'} in term {e.term}"
            )
        elif e.event in ("started", "stopped"):
            self.add(f"{t}  {e.id} ({kind}) {e.event}")
        self.draw()

    def draw(self, force: bool = False) -> None:
        if not self.live or (not force and time.monotonic() - self.last_draw < 0.1):
            return
        self.last_draw = time.monotonic()
        rows = [
            f"{'runtime':<9} {'id':<16} {'role':<10} {'term':>5}  leader it follows"
        ]
        for p in self.c.procs.values():
            role = "paused" if p.paused else p.role
            rows.append(
                f"{p.kind:<9} {p.id:<16} {role:<10} {p.term:>5}  {p.leader or '-'}"
            )
        out = (
            "\x1b[H\x1b[2J"
            + "\n".join(rows)
            + "\n\n"
            + "\n".join(self.timeline[-25:])
            + "\n"
        )
        sys.stdout.write(out)
        sys.stdout.flush()


def summary(r: Report) -> str:
    lines = [
        "",
        "fault      node              runtime    leaderless   new leader (runtime)        term",
    ]
    for f in r.faults:
        ms = f"{f.leaderless_ms} ms" if f.leaderless_ms is not None else "none!"
        lines.append(
            f"{f.fault:<10} {f.target:<17} {f.kind:<10} {ms:>10}   {f.new_leader!s:<16} ({f.new_kind})  {f.term}"
        )
    lines.append("")
    lines.append(
        "leader per term: "
        + ", ".join(
            f"{t}={'/'.join(sorted(ids))}"
            for t, ids in sorted(r.leaders_by_term.items())
        )
    )
    lines.append("runtimes that led: " + ", ".join(sorted(r.kinds_led)))
    lines.append(
        f"paused leader stepped down after SIGCONT: {'yes' if r.stopped_leader_stepped_down else 'NO'}"
    )
    lines.append(
        "one leader per term: "
        + ("ok" if not r.violations else "VIOLATED " + "; ".join(r.violations))
    )
    return "\n".join(lines)


def main() -> int:
    live = sys.stdout.isatty() and os.environ.get("CI") is None
    c = Cluster(KINDS)
    view = View(c, live)
    c.on_event = view.on_event
    try:
        view.log(
            f"starting 5 processes: {', '.join(f'{p.kind} {p.id}' for p in c.procs.values())}"
        )
        c.start_all()
        report = run_faults(c, view.log)
    finally:
        c.close()
    view.draw(force=True)
    print(summary(report))
    bad = report.violations or any(f.leaderless_ms is None for f in report.faults)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
