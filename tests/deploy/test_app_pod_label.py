"""The python-app variant's leader Service: app.py's runtime labels the leader's own pod
(``TENURE_POD_LABEL`` → ``tenure.Elector(pod_label=...)``), exactly as the sidecar's ``--pod-label``
does, against the same fake Kubernetes API server (HTTPS with its own CA): the leader's pod alone
ends up ``KEY=true``, each process patches its own pod only, and SIGTERM clears the label before
the process exits while a peer takes over (and is labelled)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from manifests import KUBERNETES
from test_sidecar import (
    KEY,
    NAMESPACE,
    FakeApi,
    free_udp_ports,
    make_ca_and_server_cert,
    wait_for,
)

tenure = pytest.importorskip("tenure", reason="the tenure extension is not built (make python-dev)")

APP = KUBERNETES / "python-app" / "app.py"


@pytest.fixture(autouse=True)
def labelling_build() -> None:
    try:
        tenure.Elector("127.0.0.1:7001", ["127.0.0.1:7002"], cluster="c", pod_label=KEY)
    except tenure.TenureError as e:
        if "kubernetes" in str(e):
            pytest.skip("the tenure extension was built without the kubernetes feature (make python-dev builds it)")
        raise


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


class App:
    """One ``python app.py`` (the image's entrypoint) whose JSON lines are collected."""

    def __init__(self, env: dict[str, str]) -> None:
        self.p = subprocess.Popen(
            [sys.executable, str(APP)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, **env},
        )
        self.lines: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            with self.lock:
                self.lines.append(json.loads(line))

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


def test_the_python_apps_leader_pod_alone_is_labelled_and_sigterm_clears_it(api: tuple[FakeApi, Path]) -> None:
    fake, sa = api
    ids = [f"127.0.0.1:{p}" for p in free_udp_ports(3)]
    apps = [
        App(
            {
                "TENURE_ID": me,
                "TENURE_PEERS": ",".join(ids),
                "TENURE_CLUSTER": "python-app",
                "TENURE_HTTP": "127.0.0.1:0",
                "TENURE_POD_LABEL": KEY,
                "TENURE_SERVICE_ACCOUNT": str(sa),
                "KUBERNETES_SERVICE_HOST": "127.0.0.1",
                "KUBERNETES_SERVICE_PORT": str(fake.port),
                "POD_NAME": f"tenure-py-{i}",
                "POD_NAMESPACE": NAMESPACE,
            }
        )
        for i, me in enumerate(ids)
    ]

    def one_leader(among: list[App]) -> App:
        def leaders() -> list[App] | None:
            found = [a for a in among if a.p.poll() is None and a.role() == "leader"]
            return found if len(found) == 1 else None

        found: list[App] = wait_for("one leader", leaders)
        return found[0]

    try:
        leader = one_leader(apps)
        li = apps.index(leader)
        want = {f"tenure-py-{i}": ("true" if i == li else "false") for i in range(3)}
        wait_for(f"labels {want}", lambda: fake.labels == want)
        for i in range(3):
            mine = [r for r in fake.requests if r["path"] == f"/api/v1/namespaces/{NAMESPACE}/pods/tenure-py-{i}"]
            assert mine and mine[0]["body"] == {"metadata": {"labels": {KEY: "false"}}}, "cleared first"
        assert all(r["type"] == "application/merge-patch+json" and r["auth"] == "Bearer token-1" for r in fake.requests)

        # SIGTERM (a rolling update): the leader hands over and clears its label before it exits.
        assert leader.stop() == 0
        assert fake.labels[f"tenure-py-{li}"] == "false"
        rest = [a for i, a in enumerate(apps) if i != li]
        new = one_leader(rest)
        ni = apps.index(new)
        want = {f"tenure-py-{i}": ("true" if i == ni else "false") for i in range(3)}
        wait_for(f"labels {want} after the handover", lambda: fake.labels == want)
    finally:
        for a in apps:
            a.stop()
