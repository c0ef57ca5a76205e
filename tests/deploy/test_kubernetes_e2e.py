"""The StatefulSets of deploy/kubernetes, run on this machine as Kubernetes would run them.

One network namespace per pod (tests/netns's `Net`: veth pairs on a bridge), the pods' stable DNS
names (`tenure-0.tenure.default.svc.cluster.local`) served by each namespace's hosts file (`ip
netns exec` bind-mounts `/etc/netns/<ns>/hosts` over `/etc/hosts`; the harness rewrites it in
place), and each pod's command line or environment taken from the rendered manifest, with
`$(POD_NAME)` and `$(POD_NAMESPACE)` expanded as the kubelet does and the state volume mapped to a
directory of the test's. The pods elect; then the leader is killed and comes back under the same
name with another IP (a rescheduled pod), and the others must find it again.

Needs root (network namespaces); skipped with the reason otherwise.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import checks
import harness
import pytest
from harness import Net, Node
from manifests import KUBERNETES, Doc, Pod, one, render

NAMESPACE = "default"
APP = KUBERNETES / "python-app" / "app.py"


def tenure_bin() -> Path:
    return Path(os.environ.get("CARGO_TARGET_DIR", harness.ROOT / "target")) / "debug" / "tenure"


def http_flags_supported() -> str | None:
    """None when the `tenure` binary has `--http` / `--ready-when`, else why not."""
    if not tenure_bin().is_file():
        return f"{tenure_bin()} is not built"
    out = subprocess.run([str(tenure_bin()), "--help"], capture_output=True, text=True, check=False).stdout
    if "--http" not in out or "--ready-when" not in out:
        return "this `tenure` has no --http/--ready-when yet"
    return None


class PodNet(Net):
    """A `Net` whose nodes are a StatefulSet's pods: named by their DNS names, started with the
    manifest's arguments (sidecar) or environment (python-app)."""

    def __init__(self, sts: Doc, http: bool) -> None:
        self.sts, self.http = sts, http
        replicas = int(sts["spec"]["replicas"])
        super().__init__(["native"] * replicas, host_names=True)
        self.pods: dict[int, Pod] = {}
        for n in self.nodes:
            pod = Pod(sts, n.index - 1, NAMESPACE)
            n.name = pod.id.rsplit(":", 1)[0]
            assert n.id == pod.id, f"the harness's port is not the manifest's: {n.id} != {pod.id}"
            self.pods[n.index] = pod
        self.write_hosts()

    def volume(self, pod: Pod, value: str) -> str:
        """A path on one of the container's volumes, mapped to a directory of this run."""
        for m in pod.container.get("volumeMounts", []):
            mount = m["mountPath"].rstrip("/")
            if value.startswith(mount + "/"):
                d = self.tmp / f"{pod.name}-{m['name']}"
                d.mkdir(exist_ok=True)
                return str(d) + value[len(mount) :]
        return value

    def command(self, n: Node) -> list[str]:
        pod = self.pods[n.index]
        if pod.how == "cli":
            args = [a.split("=", 1)[0] + "=" + self.volume(pod, a.split("=", 1)[1]) if "=" in a else a for a in pod.args]
            if not self.http:
                args = [a for a in args if not a.startswith(("--http", "--ready-when"))]
            # No application and no Kubernetes API in these namespaces: tests/deploy/test_sidecar.py
            # runs both flags against a stand-in app and a fake API server.
            args = [a for a in args if not a.startswith(("--app-health", "--pod-label"))]
            return [str(tenure_bin()), *args]
        # No Kubernetes API here either: tests/deploy/test_app_pod_label.py runs TENURE_POD_LABEL
        # against the fake API server.
        env = {k: self.volume(pod, v) for k, v in pod.env.items() if k != "TENURE_POD_LABEL"}
        return ["env", *(f"{k}={v}" for k, v in env.items()), sys.executable, str(APP)]

    def http_port(self, n: Node) -> int:
        port = self.pods[n.index].http_port
        assert port is not None
        return port

    def get(self, n: Node, path: str) -> tuple[int, str]:
        """The HTTP status and body of GET path on the pod's HTTP port, from inside its namespace
        (as the kubelet probes the pod's IP); status 0 when nothing answers."""
        code = (
            "import json, sys, urllib.request, urllib.error\n"
            "try:\n    r = urllib.request.urlopen(sys.argv[1], timeout=2); s, b = r.status, r.read()\n"
            "except urllib.error.HTTPError as e:\n    s, b = e.code, e.read()\n"
            "except OSError:\n    s, b = 0, b''\n"
            "print(json.dumps([s, b.decode('utf-8', 'replace')]))\n"
        )
        url = f"http://{n.ip}:{self.http_port(n)}{path}"
        r = subprocess.run(
            ["ip", "netns", "exec", n.ns, sys.executable, "-c", code, url],
            capture_output=True,
            text=True,
            check=False,
            timeout=10,
        )
        status, body = json.loads(r.stdout or "[0, \"\"]")
        return int(status), str(body)


def statefulset(variant: str) -> Doc:
    sts = one(render(KUBERNETES / variant), "StatefulSet")
    assert sts is not None
    return sts


def skip_unless_runnable(variant: str) -> None:
    reason = harness.unavailable_reason()
    if reason:
        pytest.skip(reason)
    if variant == "sidecar" and not tenure_bin().is_file():
        pytest.skip(f"{tenure_bin()} is not built (cargo build -p tenure-runtime --bin tenure)")
    if variant == "python-app":
        r = subprocess.run([sys.executable, "-c", "import tenure._native"], capture_output=True, check=False)
        if r.returncode != 0:
            pytest.skip("the tenure extension is not built into this Python (make python-dev)")


def assert_all_ready_one_leader(net: PodNet, timeout_s: float = 15.0) -> Node:
    """Waits for one leader that every running pod follows, then for /readyz to be 200 on every
    running pod (readiness means serving, leader or not), with the same leader and term before and
    after the probes; then every pod's /healthz is 200 and its /leader names that leader."""
    deadline = time.monotonic() + timeout_s
    last: dict[str, int] = {}
    while time.monotonic() < deadline:
        ld = net.wait_leader(timeout_s)
        term = ld.term
        live = [n for n in net.nodes if n.alive]
        last = {n.name: net.get(n, "/readyz")[0] for n in live}
        healthz = {n.name: net.get(n, "/healthz")[0] for n in live}
        views = {n.name: net.get(n, "/leader") for n in live}
        with net.lock:
            same = net.converged() is ld and ld.term == term
        if not same:  # leadership moved while we probed (a loaded machine): look again
            time.sleep(0.2)
            continue
        assert all(c == 200 for c in healthz.values()), f"/healthz: {healthz}\n{net.timeline()}"
        for n in live:
            status, body = views[n.name]
            view = json.loads(body)
            assert status == 200 and view["leader"] == ld.id and view["is_leader"] == (n is ld), (
                f"{n.name}: /leader {body}\n{net.timeline()}"
            )
        if all(c == 200 for c in last.values()):
            short = {name.split(".")[0]: code for name, code in last.items()}
            print(f"/readyz: {short} (leader {ld.name.split('.')[0]}, term {term})")
            return ld
        time.sleep(0.2)
    raise AssertionError(f"/readyz was not 200 on every running pod: {last}\n{net.timeline()}")


def memory_limit_bytes(pod: Pod) -> int:
    raw = str(pod.container["resources"]["limits"]["memory"])
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}
    for suffix, factor in units.items():
        if raw.endswith(suffix):
            return int(raw[: -len(suffix)]) * factor
    return int(raw)


def assert_within_memory_limit(net: PodNet, variant: str) -> None:
    """Each pod's election process stays under half its container's memory limit (VmRSS after
    the scenario): the manifest's limit leaves room, so the kubelet will not OOM-kill a member."""
    rss = {}
    for n in net.nodes:
        if not n.alive or n.popen is None:
            continue
        status = Path(f"/proc/{n.popen.pid}/status").read_text()
        kib = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))
        limit = memory_limit_bytes(net.pods[n.index])
        rss[n.name.split(".")[0]] = kib * 1024
        assert kib * 1024 < limit // 2, f"{n.name}: VmRSS {kib} KiB, limit {limit} bytes"
    print(f"{variant}: VmRSS " + ", ".join(f"{k} {v / (1 << 20):.1f} MiB" for k, v in rss.items()))


def run_scenario(variant: str, http: bool) -> None:
    harness.sweep_stale()
    net = PodNet(statefulset(variant), http)
    try:
        net.start_all()
        ld = assert_all_ready_one_leader(net) if http else net.wait_leader(15)
        old_ip, old_term = ld.ip, ld.term

        # The leader's pod is rescheduled: killed, back under the same name with another IP (every
        # namespace's hosts file now says so, as the headless Service's DNS would).
        net.restart(ld, new_ip=f"{harness.SUBNET}.{100 + ld.index}")
        assert ld.ip != old_ip
        new = net.wait_leader(15)
        assert new.term > old_term, net.timeline()
        print(f"\n{variant}: {ld.name} led term {old_term}; restarted at {old_ip} -> {ld.ip}; {new.name} leads term {new.term}")
        with net.lock:
            assert ld.role in ("leader", "follower") and ld.term == new.term, net.timeline()
        if http:
            new = assert_all_ready_one_leader(net)

        # The moved pod counts toward quorum: with the third pod gone, a leader of the two
        # remaining pods needs the other's votes and acknowledgements (a leader without quorum
        # steps down within election_timeout_min + heartbeat_interval = 200 ms; we wait five times
        # that, then there must be a leader the moved pod follows, or the moved pod leading).
        if new is not ld:
            other = next(n for n in net.nodes if n not in (new, ld))
            net.kill(other)
            time.sleep(5 * harness.STEP_DOWN_BOUND_MS / 1000)
            after = net.wait_leader(15)
            assert after in (new, ld), net.timeline()
            how = "still leads" if after is new and after.term == new.term else f"leads term {after.term}"
            print(f"{variant}: {other.name} killed; {after.name} {how} with the moved pod in its quorum of two")
        else:
            # The moved pod leads again: both others follow it at its new address.
            with net.lock:
                assert all(n.leader == ld.id for n in net.nodes if n is not ld), net.timeline()
        harness_checks(net)
        assert_within_memory_limit(net, variant)
        leaders = checks.leaders_by_term(net.snapshot())
        by_term = (f"{t}: {'/'.join(sorted(x.split('.')[0] for x in v))}" for t, v in sorted(leaders.items()))
        print(f"{variant}: leaders by term " + ", ".join(by_term))
    finally:
        net.close()


def harness_checks(net: PodNet) -> None:
    """One leader per term across every pod's lines (tests/netns/checks.py)."""
    problems = checks.one_leader_per_term(net.snapshot())
    assert not problems, f"{problems}\n{net.timeline()}"


def test_sidecar_pods_elect_and_find_a_pod_that_moved() -> None:
    """The manifest's arguments without --http/--ready-when, so that this runs with or without
    the runtime's HTTP endpoint; the next test runs them whole."""
    skip_unless_runnable("sidecar")
    run_scenario("sidecar", http=False)


def test_sidecar_readyz_is_200_on_every_pod() -> None:
    skip_unless_runnable("sidecar")
    reason = http_flags_supported()
    if reason:
        pytest.skip(f"/readyz not checked: {reason}")
    run_scenario("sidecar", http=True)


def test_python_app_pods_elect_serve_readyz_everywhere_and_find_a_pod_that_moved() -> None:
    skip_unless_runnable("python-app")
    run_scenario("python-app", http=True)


def delete_the_leader_pod(variant: str) -> None:
    """`kubectl delete pod` of the leader: SIGTERM, the leader hands over and exits 0, the new
    pods stay ready; the pod comes back under its name with another IP and follows."""
    harness.sweep_stale()
    net = PodNet(statefulset(variant), http=True)
    try:
        net.start_all()
        ld = assert_all_ready_one_leader(net)
        old_term = ld.term
        assert ld.popen is not None
        t = net.note(ld, "sigterm")
        ld.popen.send_signal(signal.SIGTERM)
        assert ld.popen.wait(timeout=10) == 0, f"{ld.name} did not exit 0 after SIGTERM\n{net.timeline()}"
        ld.role = "down"
        new = assert_all_ready_one_leader(net)
        assert new is not ld and new.term > old_term, net.timeline()
        lines = [x for x in net.snapshot() if x.event == "leader" and x.ts >= t]
        print(f"{variant}: SIGTERM to {ld.name.split('.')[0]}: {new.name.split('.')[0]} leads term {new.term}")
        assert lines, net.timeline()
        net.restart(ld, new_ip=f"{harness.SUBNET}.{100 + ld.index}")
        assert_all_ready_one_leader(net)
        harness_checks(net)
    finally:
        net.close()


def test_sidecar_pod_deletion_hands_leadership_over() -> None:
    skip_unless_runnable("sidecar")
    reason = http_flags_supported()
    if reason:
        pytest.skip(f"/readyz not checked: {reason}")
    delete_the_leader_pod("sidecar")


def test_python_app_pod_deletion_hands_leadership_over() -> None:
    skip_unless_runnable("python-app")
    delete_the_leader_pod("python-app")
