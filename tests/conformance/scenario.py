"""The cross-runtime conformance scenario: one scripted story run against each command line
(`tenure`, `python -m tenure`, the Node.js `tenure`, `tenure-wasmtime`), whose JSON event lines
are normalised and compared.

The story (3 nodes on 127.0.0.1, same options; the third node's id is a hostname,
`localhost:PORT` bound with `--bind 127.0.0.1`, so two nodes have a hostname peer to resolve):

1. All start; whoever wins term 1 is called A, the others B and C (port order).
2. `inspect` on A (times are normalised away; keys and values compared).
3. A bad control line on C, then a refused command: `transfer` on C, a follower (each answered
   by a warning line).
4. `transfer B` on A: B leads term 2.
5. C is paused (SIGSTOP), so that A is the peer B heard from most recently; SIGTERM B: the
   leader hands leadership to A and waits for it (A leads term 3); C resumes and follows A.
6. B restarts from its state file (started in term 3) and follows A.
7. SIGKILL of A, the leader: the survivors (B's second run and C) elect a leader of term 4 (its
   refused port ends their wait; every node runs with `--no-death-notice`). Which survivor wins is the protocol's choice (its rank
   among the members' ids, i.e. the random ports): from here on the winner is called W and the
   other L, and their lines after the kill are compared as W's and L's.
8. A restarts from the state file of the run that was killed (started in term 3) and follows W.
9. SIGTERM A and L (followers stop at once); W, alone, steps down (check-quorum); then SIGTERM W.

Plus the one-shot commands: `--version`, `--help` and two usage errors (exit status, stdout and
stderr compared with the program name normalised).

What legitimately differs is normalised: `ts_ms`; ports (a node's id — and for the hostname node
also its `127.0.0.1:PORT` address — becomes its label, other ports `PORT`); times inside
`inspect`; which survivor wins term 4 (each survivor's lines are cut at the kill, and the part
after it is labelled by outcome, W or L, with ids relabelled the same way). Everything else —
event kinds, fields, terms, warning codes and messages, error texts, exit statuses — must be
identical per node and in the same order.

Run directly to print the normalised traces: `python tests/conformance/scenario.py native python`.
Standard library only.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from cluster import free_udp_ports, runtime_command

CLUSTER = "conformance"
KINDS = ("native", "python", "node", "wasmtime")
# Every node: an election timeout long enough that a paused process and a loaded machine do not
# cost a leadership (check-quorum steps a leader down after election_timeout_min without evidence).
TIMING = ["--election-timeout-min", "500", "--election-timeout-max", "1000"]
# No watchdog: whether a leader's death notice is armed when it is killed depends on whether its
# peers' greetings (which say they can read one) arrived first, a race this story cannot pin down
# without changing what it tells. The notice is exercised in every runtime by the netns schedules
# and the process benchmark, and in detail by runtime/tests/watchdog.rs.
NO_NOTICE = ["--no-death-notice"]
PAUSE_S = 0.3
WAIT_S = 20.0
# Times inside `inspect` (milliseconds on the process's own monotonic clock).
INSPECT_TIMES = (
    "term_changed_at",
    "heartbeat_in_last",
    "heartbeat_out_last",
    "last_denied_at",
    "lease_deadline",
)


@dataclass
class Trace:
    """What one runtime did in the scenario, normalised."""

    kind: str
    # label ("A", "B", "C", "A#2" for a restart, "W"/"L" for the survivors after the kill) ->
    # normalised event lines, in order
    nodes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # the label of the node whose id is a hostname (A, B or C, as the elections went)
    hostname_node: str = ""
    exits: dict[str, int | None] = field(default_factory=dict)
    oneshots: dict[str, dict[str, Any]] = field(default_factory=dict)


class Normaliser:
    """Replaces what legitimately differs between runs and runtimes."""

    def __init__(self, labels: dict[str, str]) -> None:
        self.labels = labels
        alternatives = "|".join(
            re.escape(i) for i in sorted(labels, key=len, reverse=True)
        )
        self.ids = re.compile(alternatives)
        self.ports = re.compile(r"(?<=:)\d{2,5}\b")

    def text(self, s: str) -> str:
        s = self.ids.sub(lambda m: self.labels[m.group(0)], s)
        return self.ports.sub("PORT", s)

    def value(self, v: Any) -> Any:
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, dict):
            return {self.text(k): self.value(x) for k, x in v.items()}
        return v

    def event(self, raw: dict[str, Any]) -> dict[str, Any]:
        e = {k: self.value(v) for k, v in raw.items() if k != "ts_ms"}
        state = e.get("state")
        if e.get("event") == "inspect" and isinstance(state, dict):
            for k in INSPECT_TIMES:
                if state.get(k) is not None:
                    state[k] = "<time>"
            # null until a quorum has acknowledged a heartbeat of this term: how soon is timing.
            state["lease_deadline"] = "<time or null>"
            state["unreachable"] = {p: "<time>" for p in state.get("unreachable", {})}
            # Per-peer times of the last message and acknowledgement: filled in native builds only
            # (the component leaves them empty, docs/component.md), and times besides.
            state.pop("peer_heard_at", None)
            state.pop("peer_acked_at", None)
            # Lists of ids are in id (port) order, which the relabelling does not keep.
            for k, v in state.items():
                if isinstance(v, list):
                    state[k] = sorted(v)
        return e


class Proc:
    """One node process: its event lines arrive on a reader thread."""

    def __init__(
        self, label: str, cmd: list[str], args: list[str], env: dict[str, str]
    ) -> None:
        self.label = label
        self.id = label
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        # Where `seen` was cut (see `cut`): the lines from there on are labelled by outcome.
        self.cut_at: int | None = None
        self.stderr: list[str] = []
        self.popen = subprocess.Popen(
            cmd + args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            line = line.strip()
            if not line:
                continue
            try:
                self.lines.put(json.loads(line))
            except json.JSONDecodeError:
                self.lines.put({"event": "<not json>", "line": line})
        self.lines.put(None)

    def _read_err(self) -> None:
        assert self.popen.stderr is not None
        for line in self.popen.stderr:
            self.stderr.append(line.rstrip("\n"))

    def wait_for(
        self,
        pred: Callable[[dict[str, Any]], bool],
        what: str,
        timeout: float = WAIT_S,
        new: bool = False,
    ) -> dict[str, Any]:
        """Consumes lines until one matches (every line is kept in `seen`); `new`: only a line that
        has not been seen yet."""
        for e in [] if new else self.seen:
            if pred(e):
                return e
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            try:
                e = self.lines.get(timeout=max(left, 0.01))
            except queue.Empty:
                e = None
                left = -1
            if e is None:
                tail = "\n".join(self.stderr[-5:])
                raise AssertionError(
                    f"{self.label}: no {what} ({'timed out' if left < 0 else 'process ended'}); "
                    f"lines: {self.seen}\nstderr: {tail}"
                )
            self.seen.append(e)
            if pred(e):
                return e

    def cut(self) -> None:
        """Marks the end of this node's lines so far (every line it printed is read first: it is
        quiet when this is called, so a short wait collects any line still in the pipe)."""
        while True:
            try:
                e = self.lines.get(timeout=PAUSE_S)
            except queue.Empty:
                break
            if e is None:
                break
            self.seen.append(e)
        self.cut_at = len(self.seen)

    def send(self, line: str) -> None:
        assert self.popen.stdin is not None
        self.popen.stdin.write(line + "\n")
        self.popen.stdin.flush()

    def signal(self, sig: int) -> None:
        """Signals the process group (a wrapper and the runtime under it)."""
        os.killpg(self.popen.pid, sig)

    def terminate(self) -> int:
        self.signal(signal.SIGTERM)
        return self.finish()

    def finish(self) -> int:
        """Waits for the process to exit and reads the rest of its lines; its exit status."""
        code = self.popen.wait(timeout=WAIT_S)
        self._drain()
        return code

    def _drain(self) -> None:
        while True:
            try:
                e = self.lines.get(timeout=WAIT_S)
            except queue.Empty:
                return
            if e is None:
                return
            self.seen.append(e)

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.signal(signal.SIGKILL)
            self.popen.wait()


def is_event(kind: str, **fields: Any) -> Callable[[dict[str, Any]], bool]:
    return lambda e: (
        e.get("event") == kind and all(e.get(k) == v for k, v in fields.items())
    )


def run_scenario(
    kind: str, cmd: list[str] | None = None, env: dict[str, str] | None = None
) -> Trace:
    """Runs the story against one runtime; returns its normalised trace."""
    cmd = cmd or runtime_command(kind)
    env = {**os.environ, "TENURE_LOG": "off", **(env or {})}
    tmp = Path(tempfile.mkdtemp(prefix=f"tenure-conformance-{kind}-"))
    ports = free_udp_ports(3)
    # The third node's id is a hostname (resolved by the two others, which list it as a peer).
    ids = [f"127.0.0.1:{ports[0]}", f"127.0.0.1:{ports[1]}", f"localhost:{ports[2]}"]
    aliases = {f"127.0.0.1:{ports[2]}": ids[2]}
    trace = Trace(kind)
    procs: list[Proc] = []
    by_id: dict[str, Proc] = {}

    def start(node: str) -> Proc:
        args = [
            "run",
            "--id",
            node,
            "--cluster",
            CLUSTER,
            "--state-file",
            str(tmp / f"{node}.json"),
            *TIMING,
            *NO_NOTICE,
        ]
        if node.startswith("localhost:"):
            args += ["--bind", "127.0.0.1"]
        for p in ids:
            if p != node:
                args += ["--peer", p]
        proc = Proc(node, cmd, args, env)
        procs.append(proc)
        by_id[node] = proc
        proc.wait_for(is_event("started"), "started line")
        return proc

    def stop(proc: Proc) -> None:
        trace.exits[proc.label] = proc.terminate()

    try:
        for node in ids:
            start(node)
        # Whoever wins the first election is A; B and C are the others in port order.
        leader = wait_any(
            list(by_id.values()), is_event("leader", term=1), "leadership of term 1"
        )
        a = leader.label
        b, c = [i for i in ids if i != a]
        pa, pb, pc = by_id[a], by_id[b], by_id[c]
        for p in (pb, pc):
            p.wait_for(
                is_event("follower", term=1, leader=a), "A as the leader of term 1"
            )

        pa.send("inspect")
        pa.wait_for(is_event("inspect"), "inspect line")

        # Any warning answers these (its code and text are what the comparison checks).
        pc.send("reboot now")
        pc.wait_for(is_event("warning"), "a warning for a bad control line", new=True)
        pc.send("transfer")
        pc.wait_for(is_event("warning"), "a warning for a refused command", new=True)

        pa.send(f"transfer {b}")
        pb.wait_for(is_event("leader", term=2), "B leading term 2")
        for p in (pa, pc):
            p.wait_for(
                is_event("follower", term=2, leader=b), "B as the leader of term 2"
            )

        # C pauses, so that A is the peer B heard from most recently: B's graceful stop hands
        # leadership to A, whatever the timing.
        pc.signal(signal.SIGSTOP)
        time.sleep(PAUSE_S)
        pb.signal(signal.SIGTERM)
        pa.wait_for(is_event("leader", term=3), "A leading term 3 after B's handover")
        # C resumes at once (not after B's exit, however slow): A keeps its quorum.
        pc.signal(signal.SIGCONT)
        trace.exits[pb.label] = pb.finish()
        pc.wait_for(is_event("follower", term=3, leader=a), "A as the leader of term 3")

        pb2 = start(b)
        pb2.label = f"{b}#2"
        pb2.wait_for(
            is_event("follower", term=3, leader=a), "A as the leader after B's restart"
        )

        # SIGKILL of the leader: the survivors elect. Their lines so far are cut off first.
        survivors = [pb2, pc]
        for p in survivors:
            p.cut()
        pa.kill()
        pa.finish()  # the lines it printed before it died
        trace.exits[pa.label] = pa.popen.returncode
        w = wait_any(survivors, is_event("leader", term=4), "a survivor leading term 4")
        lose = pc if w is pb2 else pb2
        lose.wait_for(
            is_event("follower", term=4, leader=w.id), "W as the leader of term 4"
        )

        # A restarts from the state file of its killed run.
        pa2 = start(a)
        pa2.label = f"{a}#2"
        pa2.wait_for(
            is_event("follower", term=4, leader=w.id),
            "W as the leader after A's restart",
        )

        stop(pa2)
        trace.exits["L"] = lose.terminate()
        # Alone, W steps down (check-quorum) and then stops as a follower; stopping it while it
        # still led would race that step-down.
        w.wait_for(is_event("follower", term=4, leader=None), "W stepping down alone")
        trace.exits["W"] = w.terminate()
    finally:
        for p in procs:
            p.kill()

    labels = {a: "A", b: "B", c: "C"}
    norm = Normaliser(with_aliases(labels, aliases))
    after = Normaliser(with_aliases({a: "A", w.id: "W", lose.id: "L"}, aliases))
    for p in procs:
        # A's second run only ever knows W and L.
        n = after if p is pa2 else norm
        trace.nodes[norm.text(p.label)] = [n.event(e) for e in p.seen[: p.cut_at]]
        if p.cut_at is not None:
            name = "W" if p is w else "L"
            trace.nodes[name] = [after.event(e) for e in p.seen[p.cut_at :]]
    trace.exits = {norm.text(k): v for k, v in trace.exits.items()}
    trace.hostname_node = labels[ids[2]]
    trace.oneshots = oneshots(cmd, env, norm)
    return trace


def with_aliases(labels: dict[str, str], aliases: dict[str, str]) -> dict[str, str]:
    """`labels` plus each alias (another spelling of a node's address) under its node's label."""
    return {**labels, **{k: labels[v] for k, v in aliases.items() if v in labels}}


def wait_any(
    procs: list[Proc], pred: Callable[[dict[str, Any]], bool], what: str
) -> Proc:
    """The first of `procs` to print a matching line."""
    end = time.monotonic() + WAIT_S
    while time.monotonic() < end:
        for p in procs:
            try:
                p.wait_for(pred, what, timeout=0.05)
                return p
            except AssertionError:
                if p.popen.poll() is not None:
                    raise
    raise AssertionError(f"no {what} within {WAIT_S} s: {[p.seen for p in procs]}")


def oneshots(
    cmd: list[str], env: dict[str, str], norm: Normaliser
) -> dict[str, dict[str, Any]]:
    """`--version`, `--help` and usage errors: exit status, stdout and stderr (program name
    normalised to PROG)."""
    cases = {
        "version": ["--version"],
        "help": ["--help"],
        "unknown option": ["run", "--bogus", "1"],
        "bad id": [
            "run",
            "--id",
            "0.0.0.0:7000",
            "--peer",
            "127.0.0.1:7001",
            "--cluster",
            "c",
        ],
    }
    out: dict[str, dict[str, Any]] = {}
    for name, args in cases.items():
        r = subprocess.run(
            cmd + args,
            check=False,
            capture_output=True,
            text=True,
            env=env,
            timeout=WAIT_S,
            stdin=subprocess.DEVNULL,
        )
        prog = re.compile(r"(?:python -m tenure|tenure-wasmtime|tenure)(?=[: ])")
        out[name] = {
            "status": r.returncode,
            "stdout": norm.text(prog.sub("PROG", r.stdout)),
            "stderr": norm.text(prog.sub("PROG", r.stderr)),
        }
    return out


def differences(reference: Trace, other: Trace) -> list[str]:
    """Where `other` differs from `reference` (empty: conformant)."""
    diffs: list[str] = []
    who = f"{other.kind} vs {reference.kind}"
    if set(reference.nodes) != set(other.nodes):
        diffs.append(
            f"{who}: node runs {sorted(other.nodes)} != {sorted(reference.nodes)}"
        )
    for label in sorted(set(reference.nodes) & set(other.nodes)):
        ref, got = reference.nodes[label], other.nodes[label]
        for i in range(max(len(ref), len(got))):
            r = ref[i] if i < len(ref) else None
            g = got[i] if i < len(got) else None
            if r != g:
                diffs.append(f"{who}: node {label}, line {i + 1}: {describe(g, r)}")
                break
    for label in sorted(set(reference.exits) | set(other.exits)):
        if reference.exits.get(label) != other.exits.get(label):
            diffs.append(
                f"{who}: node {label} exit status {other.exits.get(label)} != {reference.exits.get(label)}"
            )
    for name in sorted(set(reference.oneshots) | set(other.oneshots)):
        if reference.oneshots.get(name) != other.oneshots.get(name):
            diffs.append(
                f"{who}: `{name}`: {other.oneshots.get(name)} != {reference.oneshots.get(name)}"
            )
    return diffs


def describe(got: Any, want: Any) -> str:
    """A difference between two lines, naming the fields that differ."""
    if (
        isinstance(got, dict)
        and isinstance(want, dict)
        and got.get("event") == want.get("event")
    ):
        if isinstance(got.get("state"), dict) and isinstance(want.get("state"), dict):
            got, want = got["state"], want["state"]
        keys = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
        return ", ".join(
            f"{k}: {json.dumps(got.get(k))} != {json.dumps(want.get(k))}" for k in keys
        )
    return f"{json.dumps(got)} != {json.dumps(want)}"


def main(argv: list[str]) -> int:
    kinds = argv or list(KINDS)
    traces = [run_scenario(k) for k in kinds]
    for t in traces:
        print(f"== {t.kind}")
        for label, events in t.nodes.items():
            print(f"-- {label} (exit {t.exits.get(label)})")
            for e in events:
                print("   " + json.dumps(e, sort_keys=True))
    diffs = [d for t in traces[1:] for d in differences(traces[0], t)]
    for d in diffs:
        print("DIFF " + d)
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
