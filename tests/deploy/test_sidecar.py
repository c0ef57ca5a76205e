"""The sidecar's deployment helpers, on real `tenure` processes on loopback:

- `--pod-label KEY` against a fake Kubernetes API server (HTTPS with its own CA, as a cluster's):
  the leader's pod alone ends up `KEY=true`, each process patches its own pod only, with the
  service account's current token, and a graceful stop clears the label before the process exits.
- `--app-health URL`: a leader whose application stops answering steps down, and a peer whose
  application answers takes over.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
TENURE = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug" / "tenure"
KEY = "tenure/leader"
NAMESPACE = "shop"


def free_udp_ports(n: int) -> list[int]:
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


class Proc:
    """One `tenure run` whose JSON lines are collected on a thread."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.p = subprocess.Popen(
            [str(TENURE), "run", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "TENURE_LOG": "warn", **env},
        )
        self.lines: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            with self.lock:
                self.lines.append(json.loads(line))

    def events(self, name: str) -> list[dict[str, Any]]:
        with self.lock:
            return [e for e in self.lines if e["event"] == name]

    def role(self) -> str | None:
        with self.lock:
            roles = [e["event"] for e in self.lines if e["event"] in ("leader", "follower", "stopped")]
        return roles[-1] if roles else None

    def stop(self) -> int:
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            return self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return self.p.wait()


def cluster(extra: list[list[str]], env: list[dict[str, str]]) -> list[Proc]:
    ids = [f"127.0.0.1:{p}" for p in free_udp_ports(len(extra))]
    procs = []
    for i, me in enumerate(ids):
        peers = [f"--peer={p}" for p in ids if p != me]
        timing = ["--election-timeout-min=150", "--election-timeout-max=300", "--heartbeat-interval=30"]
        procs.append(Proc([f"--id={me}", *peers, "--cluster=sidecar", *timing, *extra[i]], env[i]))
    return procs


def wait_for(what: str, pred: Any, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def one_leader(procs: list[Proc]) -> Proc:
    def leaders() -> list[Proc] | None:
        found = [p for p in procs if p.p.poll() is None and p.role() == "leader"]
        return found if len(found) == 1 else None

    return wait_for("one leader", leaders)[0]


@pytest.fixture(autouse=True)
def built() -> None:
    if not TENURE.is_file():
        pytest.skip(f"{TENURE} is not built (make test-deploy builds it)")
    out = subprocess.run([str(TENURE), "--help"], capture_output=True, text=True, check=False).stdout
    if "--pod-label" not in out:
        pytest.skip("this `tenure` has no --pod-label")


# ----- --pod-label against a fake API server ----------------------------------------------------


def openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def make_ca_and_server_cert(d: Path) -> tuple[Path, Path, Path]:
    """A CA (as kube-root-ca.crt) and the API server's certificate for 127.0.0.1, signed by it."""
    ca_key, ca, key, csr, cert = (d / n for n in ("ca.key", "ca.crt", "server.key", "server.csr", "server.crt"))
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", str(ca_key), "-out", str(ca), "-days", "1", "-subj", "/CN=fake-kube-ca")
    openssl("req", "-new", *ec, "-keyout", str(key), "-out", str(csr), "-subj", "/CN=kubernetes")
    ext = d / "ext.cnf"
    ext.write_text("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial",
            "-out", str(cert), "-days", "1", "-extfile", str(ext))
    return ca, cert, key


class FakeApi:
    """Answers `PATCH /api/v1/namespaces/NS/pods/NAME` (merge patches of labels) and records them."""

    def __init__(self, cert: Path, key: Path) -> None:
        self.requests: list[dict[str, Any]] = []
        self.labels: dict[str, str] = {}
        self.fail_with: int | None = None
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_PATCH(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                req = {
                    "path": self.path,
                    "auth": self.headers.get("Authorization"),
                    "type": self.headers.get("Content-Type"),
                    "body": json.loads(body),
                    "at": time.monotonic(),
                }
                api.requests.append(req)
                if api.fail_with is not None:
                    self.send_response(api.fail_with)
                    out = json.dumps({"kind": "Status", "message": "the fake API server refuses"}).encode()
                else:
                    pod = self.path.rsplit("/", 1)[1]
                    api.labels[pod] = req["body"]["metadata"]["labels"][KEY]
                    self.send_response(200)
                    out = json.dumps({"kind": "Pod", "metadata": {"name": pod}}).encode()
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(cert), str(key))
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[FakeApi, Path]]:
    ca, cert, key = make_ca_and_server_cert(tmp_path)
    sa = tmp_path / "serviceaccount"
    sa.mkdir()
    (sa / "ca.crt").write_bytes(ca.read_bytes())
    (sa / "token").write_text("token-1\n")
    fake = FakeApi(cert, key)
    yield fake, sa
    fake.close()


def pod_env(fake: FakeApi, i: int) -> dict[str, str]:
    return {
        "KUBERNETES_SERVICE_HOST": "127.0.0.1",
        "KUBERNETES_SERVICE_PORT": str(fake.port),
        "POD_NAME": f"tenure-{i}",
        "POD_NAMESPACE": NAMESPACE,
    }


def test_the_leaders_pod_alone_is_labelled_and_a_graceful_stop_clears_it(api: tuple[FakeApi, Path]) -> None:
    fake, sa = api
    flags = [f"--pod-label={KEY}", f"--service-account={sa}"]
    procs = cluster([flags] * 3, [pod_env(fake, i) for i in range(3)])
    try:
        leader = one_leader(procs)
        li = procs.index(leader)
        want = {f"tenure-{i}": ("true" if i == li else "false") for i in range(3)}
        wait_for(f"labels {want}", lambda: fake.labels == want)
        for i, p in enumerate(procs):
            mine = [r for r in fake.requests if r["path"] == f"/api/v1/namespaces/{NAMESPACE}/pods/tenure-{i}"]
            assert mine and mine[0]["body"] == {"metadata": {"labels": {KEY: "false"}}}, "cleared first"
        assert {r["path"].rsplit("/", 1)[1] for r in fake.requests} == set(want)
        assert all(r["type"] == "application/merge-patch+json" and r["auth"] == "Bearer token-1" for r in fake.requests)

        # Handing over (no stop): the old leader's pod is unlabelled, the new one's labelled.
        assert leader.p.stdin is not None
        leader.p.stdin.write("transfer\n")
        leader.p.stdin.flush()
        leader = wait_for("another leader", lambda: next((p for p in procs if p.role() == "leader" and p is not leader), None))
        li = procs.index(leader)
        want = {f"tenure-{i}": ("true" if i == li else "false") for i in range(3)}
        wait_for(f"labels {want} after the transfer", lambda: fake.labels == want)

        # The kubelet rotates the projected token: the next request carries the new one.
        (sa / "token").write_text("token-2\n")
        seen = len(fake.requests)
        assert leader.stop() == 0
        # Cleared before the process exited (the stop hands over, then writes false).
        assert fake.labels[f"tenure-{li}"] == "false"
        rest = [p for i, p in enumerate(procs) if i != li]
        new = one_leader(rest)
        ni = procs.index(new)
        want = {f"tenure-{i}": ("true" if i == ni else "false") for i in range(3)}
        wait_for(f"labels {want}", lambda: fake.labels == want)
        assert all(r["auth"] == "Bearer token-2" for r in fake.requests[seen:])
    finally:
        for p in procs:
            p.stop()


def test_a_refusing_api_is_reported_once_and_retried_until_written(api: tuple[FakeApi, Path]) -> None:
    fake, sa = api
    fake.fail_with = 403
    flags = [f"--pod-label={KEY}", f"--service-account={sa}"]
    procs = cluster([flags] * 3, [pod_env(fake, i) for i in range(3)])
    try:
        leader = one_leader(procs)
        wait_for("a pod_label_failed warning", lambda: [w for w in leader.events("warning") if w["code"] == "pod_label_failed"])
        time.sleep(0.8)
        warned = [w for w in leader.events("warning") if w["code"] == "pod_label_failed"]
        assert len(warned) == 1, warned
        assert "403" in warned[0]["message"] and "refuses" in warned[0]["message"]
        fake.fail_with = None
        li = procs.index(leader)
        wait_for("the leader's label", lambda: fake.labels.get(f"tenure-{li}") == "true", timeout=15)
        wait_for("pod_label_recovered", lambda: [w for w in leader.events("warning") if w["code"] == "pod_label_recovered"])
    finally:
        for p in procs:
            p.stop()


def test_pod_label_refuses_a_bad_key_or_a_missing_environment(tmp_path: Path) -> None:
    base = ["run", "--id=127.0.0.1:7001", "--peer=127.0.0.1:7002", "--cluster=c"]
    r = subprocess.run([str(TENURE), *base, "--pod-label=Tenure/Leader"], capture_output=True, text=True, check=False)
    assert r.returncode == 2 and '"Tenure/Leader"' in r.stderr, r.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBERNETES_", "POD_"))}
    r = subprocess.run([str(TENURE), *base, f"--pod-label={KEY}", f"--service-account={tmp_path}"],
                       capture_output=True, text=True, check=False, env=env)
    assert r.returncode == 2 and "KUBERNETES_SERVICE_HOST" in r.stderr, r.stderr


# ----- --app-health -------------------------------------------------------------------------------


class App:
    """A stand-in application: GET /healthz answers 200 while `healthy`, else 503."""

    def __init__(self) -> None:
        self.healthy = True
        app = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200 if app.healthy else 503)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/healthz"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def test_a_leader_whose_app_stops_answering_steps_down_for_a_healthy_peer() -> None:
    apps = [App() for _ in range(3)]
    procs = cluster([[f"--app-health={a.url}", "--app-health-interval=50"] for a in apps], [{}] * 3)
    try:
        leader = one_leader(procs)
        li = procs.index(leader)
        term = leader.events("leader")[-1]["term"]
        apps[li].healthy = False
        began = time.monotonic()
        wait_for("app_unhealthy", lambda: [w for w in leader.events("warning") if w["code"] == "app_unhealthy"])
        new = wait_for(
            "a healthy peer leads",
            lambda: next((p for i, p in enumerate(procs) if i != li and p.role() == "leader"), None),
        )
        assert new.events("leader")[-1]["term"] > term
        took = time.monotonic() - began
        # While its app is down the old leader does not keep (or win back) leadership.
        time.sleep(1.0)
        assert leader.role() != "leader", leader.lines[-5:]
        assert all(p.p.poll() is None for p in procs), "nobody exits over an unhealthy app"
        apps[li].healthy = True
        wait_for("app_recovered", lambda: [w for w in leader.events("warning") if w["code"] == "app_recovered"])
        print(f"leader's app down -> healthy peer leads: {took * 1000:.0f} ms")
    finally:
        for p in procs:
            p.stop()


def test_app_health_refuses_a_url_that_is_not_http() -> None:
    base = ["run", "--id=127.0.0.1:7001", "--peer=127.0.0.1:7002", "--cluster=c"]
    r = subprocess.run([str(TENURE), *base, "--app-health=https://127.0.0.1/healthz"],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 2 and "https://127.0.0.1/healthz" in r.stderr, r.stderr
