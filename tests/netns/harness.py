"""Real tenure processes in Linux network namespaces, under real kernel network faults.

One bridge namespace (`tnx-<pid>-<run>-br`, a Linux bridge `br0`) and one namespace per node
(`tnx-<pid>-<run>-n<i>`, `eth0` = 10.77.0.<10+i>/24), joined by veth pairs. Each node's runtime runs
inside its namespace (`ip netns exec`); every JSON line it prints is recorded with the harness's
wall-clock receive time next to the line's own `ts_ms`. Faults are kernel routes and links:
blackhole routes (silent loss, one way or both), `prohibit` routes (the sender gets EACCES) and
link down/up, plus SIGKILL / SIGSTOP / SIGCONT / restart of processes.

Names carry the harness's pid, so parallel runs never collide and a crashed run's leftovers are
recognised and swept (`sweep_stale`) at the next start. `Net.close()` kills every process and
deletes every namespace (and `/etc/netns/<name>`); it runs from `finally`, `atexit` and on
SIGINT/SIGTERM.

Standard library only. Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN for `ip netns`).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "tnx-"
SUBNET = "10.77.0"
PORT = 7946
CLUSTER = "netns"
# A MAC address no interface has: a permanent neighbour entry with it loses datagrams silently
# (the bridge floods the frame, every receiver discards it), the way a failed switch port does.
SILENT_MAC = "02:00:00:00:7e:57"

# The runtimes' defaults (SPEC "Timers"); the bounds below are derived from them.
ELECTION_TIMEOUT_MIN_MS = 150
ELECTION_TIMEOUT_MAX_MS = 300
HEARTBEAT_INTERVAL_MS = 50
# docs/protocol.md "Convergence after faults": one leader within 10 x election_timeout_max.
CONVERGENCE_BOUND_MS = 10 * ELECTION_TIMEOUT_MAX_MS
# SPEC "Leader step-down": a leader without quorum evidence steps down within this.
STEP_DOWN_BOUND_MS = ELECTION_TIMEOUT_MIN_MS + HEARTBEAT_INTERVAL_MS


def now_ms() -> int:
    return int(time.time() * 1000)


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), check=check, capture_output=True, text=True)


def unavailable_reason() -> str | None:
    """Why this machine cannot run the namespace tests (None when it can)."""
    if os.geteuid() != 0:
        return "not root: network namespaces need CAP_NET_ADMIN/CAP_SYS_ADMIN (run as root)"
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is not installed"
    probe = f"{PREFIX}{os.getpid()}-probe"
    r = sh("ip", "netns", "add", probe, check=False)
    if r.returncode != 0:
        return f"`ip netns add` failed: {r.stderr.strip()}"
    try:
        r = sh("ip", "-n", probe, "link", "add", "b0", "type", "bridge", check=False)
        if r.returncode != 0:
            return f"bridges are not available: {r.stderr.strip()}"
        r = sh(
            "ip",
            "-n",
            probe,
            "link",
            "add",
            "v0",
            "type",
            "veth",
            "peer",
            "name",
            "v1",
            check=False,
        )
        if r.returncode != 0:
            return f"veth pairs are not available: {r.stderr.strip()}"
    finally:
        sh("ip", "netns", "del", probe, check=False)
    return None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale() -> list[str]:
    """Deletes `tnx-<pid>-*` namespaces (and their /etc/netns dirs) whose harness pid is gone."""
    removed = []
    out = sh("ip", "netns", "list", check=False).stdout
    for line in out.splitlines():
        name = line.split()[0] if line.split() else ""
        if not name.startswith(PREFIX):
            continue
        try:
            pid = int(name[len(PREFIX) :].split("-")[0])
        except ValueError:
            continue
        if pid != os.getpid() and _pid_alive(pid):
            continue
        if pid == os.getpid() and name in _LIVE_NAMES:
            continue
        _kill_in_netns(name)
        sh("ip", "netns", "del", name, check=False)
        shutil.rmtree(f"/etc/netns/{name}", ignore_errors=True)
        removed.append(name)
    return removed


def _kill_in_netns(name: str) -> None:
    r = sh("ip", "netns", "pids", name, check=False)
    for tok in r.stdout.split():
        try:
            os.kill(int(tok), signal.SIGKILL)
        except (ValueError, OSError):
            pass


_LIVE_NAMES: set[str] = set()
_OPEN_NETS: list[Net] = []


def _close_all() -> None:
    while _OPEN_NETS:
        _OPEN_NETS[-1].close()


atexit.register(_close_all)


def install_signal_cleanup() -> None:
    """SIGTERM/SIGHUP tear everything down and exit (SIGINT raises KeyboardInterrupt, which the
    `finally` blocks and atexit handle)."""

    def handler(signum: int, _frame: object) -> None:
        _close_all()
        raise SystemExit(128 + signum)

    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, handler)


# ----- runtimes -------------------------------------------------------------------------------


def runtime_templates() -> dict[str, str]:
    """Command templates per runtime kind (`{args}` is replaced by the node's arguments).
    `TENURE_NETNS_CMD_<KIND>` overrides one; the Python/Node/wasmtime ones are main's current
    command lines, which share `run` and the JSON lines with the native `tenure`."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    venv_py = ROOT / ".venv" / "bin" / "python"
    t = {
        "native": f"{target / 'debug' / 'tenure'} {{args}}",
        "python": f"{venv_py} -m tenure {{args}}",
        "node": f"node {ROOT / 'node' / 'bin' / 'tenure.js'} {{args}}",
        "wasmtime": f"{os.environ.get('TENURE_WASMTIME') or target / 'debug' / 'tenure-wasmtime'} {{args}}",
    }
    for kind in list(t):
        env = os.environ.get(f"TENURE_NETNS_CMD_{kind.upper()}")
        if env:
            t[kind] = env
    return t


def runtime_available(kind: str) -> str | None:
    """None when the runtime kind can be started here, else why not."""
    tmpl = runtime_templates()[kind]
    exe = shlex.split(tmpl)[0]
    if shutil.which(exe) is None and not Path(exe).is_file():
        return f"{exe} not found"
    if kind == "python":
        r = sh(exe, "-c", "import tenure._native", check=False)
        if r.returncode != 0:
            return "the tenure extension is not built into .venv (make python-dev)"
    if kind == "node" and not (ROOT / "node" / "native").exists():
        return "the Node.js addon is not built (make node-addon)"
    if (
        kind == "wasmtime"
        and not (ROOT / "target" / "component" / "tenure.wasm").exists()
    ):
        return "the component is not built (make component)"
    return None


# ----- the network and its nodes ----------------------------------------------------------------

# The leader-only command every node runs (`tenure run … -- sh ticker.sh DIR`, docs/command.md):
# it records its own life in `DIR/<leader id>-<term>-<pid>` — `env TERM LEADER`, `start NS`, a
# `t NS` tick every 5 ms (wall clock, ns), `stop NS` on SIGTERM — so checks.py can tell from the
# commands' own timestamps whether two ran at once. A SIGKILL (the supervisor's deadline kill)
# leaves the last tick as the end: at most one tick (5 ms) early.
TICKER = r"""#!/bin/sh
f="$1/$TENURE_LEADER_ID-$TENURE_TERM-$$"
echo "env $TENURE_TERM $TENURE_LEADER_ID" > "$f"
echo "start $(date +%s%N)" >> "$f"
trap 'echo "stop $(date +%s%N)" >> "$f"; exit 0' TERM
while :; do echo "t $(date +%s%N)" >> "$f"; sleep 0.005; done
"""
# The same ticker that also leaves its session and process group (`setsid`, as a daemon does) with a
# second ticker recording its own life; the guard must end it with the command.
DAEMON_TICKER = TICKER.replace(
    "while :;",
    """setsid sh -c 'f="$0-$$"; echo "env $TENURE_TERM $TENURE_LEADER_ID" > "$f"; echo "start $(date +%s%N)" >> "$f"; while :; do echo "t $(date +%s%N)" >> "$f"; sleep 0.005; done' "$1/$TENURE_LEADER_ID-$TENURE_TERM" &
while :;""",
    1,
)
# Grace between the supervisor's SIGTERM and SIGKILL of an ordered stop (`--kill-grace`).
KILL_GRACE_MS = 300


@dataclass
class Line:
    """One recorded line: the harness's receive time and the parsed JSON (or a harness note)."""

    recv_ms: int
    node: str
    data: dict
    # Wall and system-monotonic ms just before the printing process was spawned (see checks.py).
    spawn_wall_ms: int = 0
    spawn_mono_ms: int = 0

    @property
    def ts(self) -> int:
        return int(self.data.get("ts_ms", self.recv_ms))

    @property
    def event(self) -> str:
        return str(self.data.get("event", "?"))


@dataclass
class Node:
    index: int
    name: str  # short name: n1 ...
    kind: str
    ns: str
    ip: str
    popen: subprocess.Popen[str] | None = None
    role: str = "down"  # down, starting, follower, candidate, leader, stopped
    term: int = 0
    leader: str | None = None
    paused: bool = False
    host_names: bool = False
    restarts: int = 0
    spawn_wall_ms: int = 0
    spawn_mono_ms: int = 0
    stdin_lock: threading.Lock = field(default_factory=threading.Lock)
    # An observer (`--observer`): it reports the leader but never votes, campaigns or counts, so
    # every count of members (quorum, convergence, the partitions of `schedules.others`) leaves
    # it out. Members list it with `--observer-peer`.
    observer: bool = False
    # More arguments for `run` (`--priority 10`, say), before the leader-only command.
    extra: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.name}:{PORT}" if self.host_names else f"{self.ip}:{PORT}"

    @property
    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    @property
    def running(self) -> bool:
        """Alive and not stopped by SIGSTOP."""
        return self.alive and not self.paused


class Net:
    """A bridge namespace plus one namespace per node, and the processes in them."""

    def __init__(
        self,
        kinds: list[str],
        host_names: bool = False,
        daemon: bool = False,
        observer_kinds: list[str] | None = None,
        extra: dict[str, list[str]] | None = None,
    ) -> None:
        """`kinds`: the members' runtimes (n1, n2, ...); `observer_kinds`: observers' (o1, ...,
        after the members on the bridge); `extra`: more `run` arguments by node name."""
        self.run = uuid.uuid4().hex[:6]
        self.prefix = f"{PREFIX}{os.getpid()}-{self.run}"
        self.bridge_ns = f"{self.prefix}-br"
        self.tmp = Path(
            tempfile.mkdtemp(
                prefix=f"{self.prefix}-",
                dir="/dev/shm" if Path("/dev/shm").is_dir() else None,
            )
        )
        # Every node runs the leader-only ticker (TICKER) unless a subclass turns it off.
        self.commands = self.tmp / "commands"
        self.commands.mkdir()
        (self.tmp / "ticker.sh").write_text(DAEMON_TICKER if daemon else TICKER)
        self.nodes = [
            Node(
                i,
                f"n{i}",
                kind,
                f"{self.prefix}-n{i}",
                f"{SUBNET}.{10 + i}",
                host_names=host_names,
            )
            for i, kind in enumerate(kinds, start=1)
        ]
        for j, kind in enumerate(observer_kinds or [], start=1):
            i = len(kinds) + j
            self.nodes.append(
                Node(
                    i,
                    f"o{j}",
                    kind,
                    f"{self.prefix}-o{j}",
                    f"{SUBNET}.{10 + i}",
                    host_names=host_names,
                    observer=True,
                )
            )
        for n in self.nodes:
            n.extra = list((extra or {}).get(n.name, []))
        self.members = [n for n in self.nodes if not n.observer]
        self.observers = [n for n in self.nodes if n.observer]
        self.lines: list[Line] = []
        self.lock = threading.Lock()
        self.closed = False
        self.routes: dict[
            tuple[str, str], str
        ] = {}  # (ns, dst) -> silent | blackhole | prohibit
        self.cut_at: dict[
            tuple[str, str], int
        ] = {}  # (src, dst) node names -> when the route was in place
        # (wall ms, majority leader's id and term or None), every ~10 ms.
        self.samples: list[tuple[int, tuple[str, int] | None]] = []
        self._stop_sampler = threading.Event()
        _OPEN_NETS.append(self)
        try:
            self._build()
        except BaseException:
            self.close()
            raise

    # -- topology

    def _ns(self, name: str) -> None:
        _LIVE_NAMES.add(name)
        sh("ip", "netns", "add", name)
        sh("ip", "-n", name, "link", "set", "lo", "up")

    def _build(self) -> None:
        self._ns(self.bridge_ns)
        sh("ip", "-n", self.bridge_ns, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", self.bridge_ns, "link", "set", "br0", "up")
        for n in self.nodes:
            self._ns(n.ns)
            port = f"p{n.index}"
            sh(
                "ip",
                "-n",
                self.bridge_ns,
                "link",
                "add",
                port,
                "type",
                "veth",
                "peer",
                "name",
                "eth0",
                "netns",
                n.ns,
            )
            sh("ip", "-n", self.bridge_ns, "link", "set", port, "master", "br0")
            sh("ip", "-n", self.bridge_ns, "link", "set", port, "up")
            sh("ip", "-n", n.ns, "addr", "add", f"{n.ip}/24", "dev", "eth0")
            sh("ip", "-n", n.ns, "link", "set", "eth0", "up")
        self.write_hosts()

    def write_hosts(self) -> None:
        """`/etc/netns/<ns>/hosts` for every node: `ip netns exec` bind-mounts it over /etc/hosts."""
        text = "127.0.0.1 localhost\n" + "".join(
            f"{n.ip} {n.name}\n" for n in self.nodes
        )
        for n in self.nodes:
            d = Path("/etc/netns") / n.ns
            d.mkdir(parents=True, exist_ok=True)
            (d / "hosts").write_text(text)

    def node(self, name_or_id: str) -> Node:
        for n in self.nodes:
            if name_or_id in (n.name, n.id):
                return n
        raise KeyError(name_or_id)

    # -- processes

    def args(self, n: Node) -> list[str]:
        a = [
            "run",
            "--id",
            n.id,
            "--cluster",
            CLUSTER,
            "--state-file",
            str(self.tmp / f"{n.name}.state"),
        ]
        if n.host_names:
            a += ["--bind", f"{n.ip}:{PORT}"]
        for m in self.members:
            if m is not n:
                a += ["--peer", m.id]
        a += n.extra
        if n.observer:
            # An observer never leads: no leader-only command (the runtime refuses one).
            return [*a, "--observer"]
        for o in self.observers:
            a += ["--observer-peer", o.id]
        a += [
            "--kill-grace",
            str(KILL_GRACE_MS),
            "--",
            "sh",
            str(self.tmp / "ticker.sh"),
            str(self.commands),
        ]
        return a

    def command(self, n: Node) -> list[str]:
        """The command line `start` runs inside the node's namespace (a subclass may run something
        else that prints the same JSON lines, e.g. tests/deploy's pods)."""
        tmpl = runtime_templates()[n.kind]
        return shlex.split(tmpl.replace("{args}", shlex.join(self.args(n))))

    def start(self, n: Node) -> None:
        cmd = self.command(n)
        n.spawn_wall_ms, n.spawn_mono_ms = now_ms(), time.monotonic_ns() // 1_000_000
        stderr = open(self.tmp / f"{n.name}.stderr", "ab")  # noqa: SIM115 (owned by the process)
        # A process group of its own, as under a shell or a process manager, so a schedule can
        # signal the runtime's whole group (`kill -- -PGID`) without reaching the harness.
        n.popen = subprocess.Popen(
            ["ip", "netns", "exec", n.ns, *cmd],
            start_new_session=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            bufsize=1,
        )
        stderr.close()
        n.role, n.paused = "starting", False
        self.note(n, "start", kind=n.kind, cmd=cmd[0])
        spawn = (n.spawn_wall_ms, n.spawn_mono_ms)
        threading.Thread(
            target=self._reader, args=(n, n.popen, spawn), daemon=True
        ).start()

    def _reader(
        self, n: Node, popen: subprocess.Popen[str], spawn: tuple[int, int]
    ) -> None:
        assert popen.stdout is not None
        for raw in popen.stdout:
            recv = now_ms()
            try:
                data = json.loads(raw)
            except json.JSONDecodeError:
                data = {"event": "unparsed", "text": raw.rstrip("\n")}
            with self.lock:
                ev = data.get("event")
                if popen is n.popen:
                    if ev == "leader":
                        n.role, n.term, n.leader = (
                            "leader",
                            int(data.get("term", 0)),
                            n.id,
                        )
                    elif ev == "follower":
                        n.role, n.term, n.leader = (
                            "follower",
                            int(data.get("term", 0)),
                            data.get("leader"),
                        )
                    elif ev == "started":
                        n.role, n.term = "follower", int(data.get("term", 0))
                    elif ev == "stopped":
                        n.role = "stopped"
                self.lines.append(Line(recv, n.name, data, *spawn))
        with self.lock:
            if popen is n.popen:
                n.role = "down"
            self.lines.append(
                Line(
                    now_ms(),
                    n.name,
                    {"event": "exited", "harness": True, "rc": popen.wait()},
                )
            )

    def note(
        self, n: Node | None, what: str, started: int | None = None, **kw: object
    ) -> int:
        """Records a harness action in the timeline (at `started`, when it began, if given: the
        line then also says when it was complete); returns its wall-clock ms."""
        t = now_ms()
        if started is not None:
            kw["complete"], t = t, started
        with self.lock:
            self.lines.append(
                Line(
                    t,
                    n.name if n else "harness",
                    {"ts_ms": t, "event": f"fault:{what}", "harness": True, **kw},
                )
            )
        return t

    def start_all(self, timeout_s: float = 60.0) -> None:
        for n in self.nodes:
            self.start(n)
        if not self.wait_for(
            lambda: all(n.role != "starting" for n in self.nodes), timeout_s
        ):
            raise RuntimeError(
                f"processes did not start: {[n.name for n in self.nodes if n.role == 'starting']}"
            )

    def control(self, n: Node, line: str) -> None:
        if not n.running or n.popen is None or n.popen.stdin is None:
            return
        with n.stdin_lock:
            try:
                n.popen.stdin.write(line + "\n")
                n.popen.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                pass

    def _signal(self, n: Node, sig: signal.Signals, group: bool) -> None:
        if n.popen is None:
            return
        if group:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(n.popen.pid, sig)
        else:
            n.popen.send_signal(sig)

    def kill(self, n: Node, group: bool = False) -> int:
        """SIGKILL of the runtime's pid, or with `group` of its whole process group (a process
        manager's group kill: its leader-only command's supervisor is in a session of its own and
        must outlive it to end the command)."""
        t = self.note(n, "sigkill group" if group else "sigkill")
        if n.popen is not None:
            self._signal(n, signal.SIGKILL, group)
            n.popen.wait()
        n.role, n.paused = "down", False
        return t

    def watchdog_pid(self, n: Node) -> int | None:
        """The node's watchdog (its leader-only command's supervisor, `__supervise`): a child of the
        runtime's process in a session of its own."""
        if n.popen is None:
            return None
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                args = (d / "cmdline").read_bytes().split(b"\0")
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == n.popen.pid and b"__supervise" in args:
                return int(d.name)
        return None

    def kill_watchdog(self, n: Node) -> int:
        """SIGKILL of the node's watchdog alone."""
        pid = self.watchdog_pid(n)
        t = self.note(n, "sigkill watchdog", pid=pid)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return t

    def stop(self, n: Node, group: bool = False) -> int:
        """SIGSTOP of the runtime's pid, or with `group` of its process group (Ctrl-Z)."""
        t = self.note(n, "sigstop group" if group else "sigstop")
        self._signal(n, signal.SIGSTOP, group)
        n.paused = True
        return t

    def cont(self, n: Node, group: bool = False) -> int:
        t = self.note(n, "sigcont group" if group else "sigcont")
        self._signal(n, signal.SIGCONT, group)
        n.paused = False
        return t

    def restart(self, n: Node, new_ip: str | None = None) -> int:
        if n.alive:
            self.kill(n)
        if new_ip is not None:
            sh("ip", "-n", n.ns, "addr", "flush", "dev", "eth0")
            sh("ip", "-n", n.ns, "addr", "add", f"{new_ip}/24", "dev", "eth0")
            n.ip = new_ip
            self.write_hosts()
        n.restarts += 1
        t = self.note(n, "restart", ip=n.ip)
        self.start(n)
        return t

    # -- network faults

    def _routes(self, changes: list[tuple[str, str, str | None]]) -> None:
        """Applies (src, dst, kind) route changes, one `ip -batch` per namespace (kind None:
        remove). One /32 route per (namespace, destination): adding replaces another kind's."""
        per_ns: dict[str, list[str]] = {}
        for ns, ip, kind in changes:
            key = (ns, ip)
            if kind is not None:
                if (
                    kind == "silent"
                ):  # frames go to a MAC nobody has: the send succeeds, nothing arrives
                    per_ns.setdefault(ns, []).append(
                        f"neigh replace {ip} lladdr {SILENT_MAC} nud permanent dev eth0"
                    )
                else:
                    per_ns.setdefault(ns, []).append(f"route replace {kind} {ip}/32")
                old = self.routes.get(key)
                if old is not None and (old == "silent") != (kind == "silent"):
                    per_ns[ns].insert(
                        len(per_ns[ns]) - 1,
                        f"neigh del {ip} dev eth0"
                        if old == "silent"
                        else f"route del {ip}/32",
                    )
                self.routes[key] = kind
            elif key in self.routes:
                per_ns.setdefault(ns, []).append(
                    f"neigh del {ip} dev eth0"
                    if self.routes[key] == "silent"
                    else f"route del {ip}/32"
                )
                del self.routes[key]
        by_ns = {n.ns: n for n in self.nodes}
        by_ip = {n.ip: n for n in self.nodes}
        for ns, cmds in per_ns.items():
            subprocess.run(
                ["ip", "-n", ns, "-force", "-batch", "-"],
                input="\n".join(cmds) + "\n",
                check=False,
                capture_output=True,
                text=True,
            )
            done = now_ms()
            for ns2, ip, kind in changes:
                if ns2 == ns and kind is not None and ns in by_ns and ip in by_ip:
                    self.cut_at.setdefault((by_ns[ns].name, by_ip[ip].name), done)
                elif ns2 == ns and ns in by_ns and ip in by_ip:
                    self.cut_at.pop((by_ns[ns].name, by_ip[ip].name), None)

    def quorum_lost_at(self, leader: Node) -> int | None:
        """When `leader` could no longer exchange heartbeats and acks with enough peers for a
        quorum (a link counts as cut from the moment either direction's route was in place)."""
        peers = [n for n in self.members if n is not leader]
        need = (len(self.members) // 2 + 1) - 1
        cuts = sorted(
            t
            for t in (
                min(
                    self.cut_at.get((leader.name, p.name), 1 << 62),
                    self.cut_at.get((p.name, leader.name), 1 << 62),
                )
                for p in peers
            )
            if t < 1 << 62
        )
        k = len(peers) - need  # cut this many and fewer than `need` peers remain
        return cuts[k] if len(cuts) > k else None

    def drop(self, src: Node, dst: Node, kind: str = "silent") -> None:
        """Loses every datagram src sends to dst (one way). `silent`: the send succeeds and
        nothing arrives; `blackhole` and `prohibit` routes fail the send locally (EINVAL, EACCES),
        which the runtime reports as `peer_unreachable` (and `no_connection` to the core)."""
        self._routes([(src.ns, dst.ip, kind)])

    def partition(self, *groups: list[Node], kind: str = "silent") -> int:
        """Symmetric partition: nodes in different groups cannot exchange datagrams. Returns the
        wall time the fault STARTED (measurements from it are upper bounds)."""
        t = now_ms()
        changes: list[tuple[str, str, str | None]] = []
        for i, g in enumerate(groups):
            for h in groups[i + 1 :]:
                for a in g:
                    for b in h:
                        changes += [(a.ns, b.ip, kind), (b.ns, a.ip, kind)]
        self._routes(changes)
        self.note(
            None,
            "partition",
            groups=[[n.name for n in g] for g in groups],
            kind=kind,
            started=t,
        )
        return t

    def one_way(self, srcs: list[Node], dsts: list[Node], kind: str = "silent") -> int:
        t = now_ms()
        self._routes([(a.ns, b.ip, kind) for a in srcs for b in dsts])
        self.note(
            None,
            "one_way",
            src=[n.name for n in srcs],
            dst=[n.name for n in dsts],
            kind=kind,
            started=t,
        )
        return t

    def link(self, n: Node, up: bool) -> int:
        sh(
            "ip",
            "-n",
            self.bridge_ns,
            "link",
            "set",
            f"p{n.index}",
            "up" if up else "down",
        )
        return self.note(n, "link_up" if up else "link_down")

    def heal_routes(self) -> int:
        t = now_ms()
        self._routes([(ns, ip, None) for ns, ip in list(self.routes)])
        return t

    def heal(self) -> int:
        """Removes every fault; returns the wall time healing STARTED."""
        t = self.heal_routes()
        subprocess.run(
            ["ip", "-n", self.bridge_ns, "-batch", "-"],
            input="".join(f"link set p{n.index} up\n" for n in self.nodes),
            check=False,
            capture_output=True,
            text=True,
        )
        for n in self.nodes:
            if n.paused and n.alive:
                self.cont(n)
        self.note(None, "heal", started=t)
        return t

    # -- observation

    def wait_for(self, pred, timeout_s: float) -> bool:  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.lock:
                if pred():
                    return True
            time.sleep(0.01)
        with self.lock:
            return bool(pred())

    def leaders(self) -> list[Node]:
        return [n for n in self.nodes if n.running and n.role == "leader"]

    def converged(self) -> Node | None:
        """The one leader every running member agrees on, or None (call with the lock held)."""
        live = [n for n in self.members if n.running]
        leaders = [n for n in live if n.role == "leader"]
        if len(leaders) != 1:
            return None
        ld = leaders[0]
        if all(
            n is ld
            or (n.role == "follower" and n.leader == ld.id and n.term == ld.term)
            for n in live
        ):
            return ld
        return None

    def majority_leader(self) -> Node | None:
        """A running leader that a quorum of all nodes (itself included) follows in its term."""
        quorum = len(self.members) // 2 + 1
        for ld in self.leaders():
            followers = [
                n
                for n in self.members
                if n.running
                and n is not ld
                and n.role == "follower"
                and n.leader == ld.id
                and n.term == ld.term
            ]
            if len(followers) + 1 >= quorum:
                return ld
        return None

    def start_sampler(self) -> None:
        def run() -> None:
            while not self._stop_sampler.wait(0.01):
                with self.lock:
                    ld = self.majority_leader()
                    self.samples.append((now_ms(), (ld.id, ld.term) if ld else None))

        threading.Thread(target=run, daemon=True).start()

    def leaderless_ms(self, since_ms: int, term: int) -> int | None:
        """Leaderless time after a fault at since_ms that ended term `term`'s leadership: until a
        majority leader of a later term was observed (None: never within the recording)."""
        with self.lock:
            samples = [s for s in self.samples if s[0] >= since_ms]
        for t, ld in samples:
            if ld is not None and ld[1] > term:
                return t - since_ms
        return None

    def wait_leader(self, timeout_s: float = 10.0) -> Node:
        if not self.wait_for(lambda: self.converged() is not None, timeout_s):
            raise AssertionError(
                f"no converged leader within {timeout_s} s\n{self.timeline()}"
            )
        with self.lock:
            ld = self.converged()
        assert ld is not None
        return ld

    def poll_inspect(self, stop: threading.Event, every_s: float = 0.05) -> None:
        """Asks every running node for `inspect` until `stop` is set (lease observations)."""
        while not stop.wait(every_s):
            for n in self.nodes:
                self.control(n, "inspect")

    def snapshot(self) -> list[Line]:
        with self.lock:
            return list(self.lines)

    def timeline(self, since_ms: int = 0) -> str:
        """The merged timeline (inspect lines left out), ordered by timestamp."""
        out = []
        for ln in sorted(self.snapshot(), key=lambda x: (x.ts, x.recv_ms)):
            if ln.ts < since_ms or ln.event in ("inspect", "message"):
                continue
            d = {
                k: v
                for k, v in ln.data.items()
                if k not in ("ts_ms", "id", "event", "harness")
            }
            out.append(
                f"{ln.ts} {ln.node:>7} {ln.event:<14} {json.dumps(d, separators=(',', ':'))}"
            )
        return "\n".join(out)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._stop_sampler.set()
        for n in self.nodes:
            if n.popen is not None and n.popen.poll() is None:
                try:
                    n.popen.send_signal(signal.SIGCONT)
                    n.popen.kill()
                    n.popen.wait(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    pass
        for name in [self.bridge_ns, *(n.ns for n in self.nodes)]:
            _kill_in_netns(name)
            sh("ip", "netns", "del", name, check=False)
            shutil.rmtree(f"/etc/netns/{name}", ignore_errors=True)
            _LIVE_NAMES.discard(name)
        shutil.rmtree(self.tmp, ignore_errors=True)
        if self in _OPEN_NETS:
            _OPEN_NETS.remove(self)
