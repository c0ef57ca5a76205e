"""A service that embeds tenure (the Python package) instead of running the sidecar.

Configured from the environment the StatefulSet in this directory sets:

- ``TENURE_ID``: this pod's ``HOST:PORT`` (``$(POD_NAME).<service>:7946``, completed by the pod's DNS
  search path)
- ``TENURE_PEERS``: every member's ``HOST:PORT``, comma-separated (this pod's own id may be listed:
  it is skipped, so every pod gets the same list)
- ``TENURE_CLUSTER``: the cluster id; ``TENURE_STATE_FILE``: the state file on the pod's volume
- ``TENURE_HTTP``: where the runtime serves the sidecar's endpoints (default ``0.0.0.0:8080``):
  ``/readyz`` (200 while the node runs, leader or not: ``ready_when="node"``; every pod serves),
  ``/healthz``, ``/leader`` and ``/metrics``, exactly as ``tenure run --http`` (docs/http.md)
- ``TENURE_POD_LABEL``: a label key (``tenure/leader``); while this node leads, the runtime labels
  its own pod ``KEY=true`` (``false`` otherwise) through the Kubernetes API, as the sidecar's
  ``--pod-label`` does, so that the ``tenure-py-leader`` Service follows the leader. Needs the
  pod's ``POD_NAME`` and ``POD_NAMESPACE``, a service-account token allowed to patch the pod
  (rbac.yaml), and the extension built with the ``kubernetes`` feature (this directory's image);
  ``TENURE_SERVICE_ACCOUNT``: the token's directory, if not where Kubernetes mounts it

Every election event is printed as one JSON line on stdout (``{"ts_ms", "id", "event", ...}``, the
same fields as the ``tenure`` command line's), so cluster logging can follow leadership. While it
leads, the app runs ``leader_work`` (cancelled the moment leadership is lost); SIGTERM hands
leadership over before the process exits.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass

import tenure


@dataclass(frozen=True)
class Settings:
    id: str
    peers: list[str]
    cluster: str
    state_file: str | None
    http: str
    pod_label: str | None = None
    service_account: str | None = None


def settings_from_env(env: Mapping[str, str]) -> Settings:
    """Reads the settings; a missing variable raises ``ValueError`` naming it (bad values are
    refused by :func:`make_elector` with tenure's typed errors, naming the value)."""

    def need(name: str) -> str:
        value = env.get(name, "").strip()
        if not value:
            raise ValueError(f"{name} is not set")
        return value

    return Settings(
        id=need("TENURE_ID"),
        peers=[p.strip() for p in need("TENURE_PEERS").split(",") if p.strip()],
        cluster=need("TENURE_CLUSTER"),
        state_file=env.get("TENURE_STATE_FILE") or None,
        http=env.get("TENURE_HTTP") or "0.0.0.0:8080",
        pod_label=env.get("TENURE_POD_LABEL") or None,
        service_account=env.get("TENURE_SERVICE_ACCOUNT") or None,
    )


def log(node_id: str, event: str, **fields: object) -> None:
    line = {"ts_ms": int(time.time() * 1000), "id": node_id, "event": event, **fields}
    print(json.dumps(line, separators=(",", ":")), flush=True)


def make_elector(settings: Settings) -> tenure.Elector:
    """The elector, not started yet; logs every event as a JSON line."""
    node_id = settings.id
    return tenure.Elector(
        settings.id,
        settings.peers,
        cluster=settings.cluster,
        state_file=settings.state_file,
        http=settings.http,
        ready_when="node",
        pod_label=settings.pod_label,
        service_account=settings.service_account,
        on_leader=lambda term: log(node_id, "leader", term=term),
        on_follower=lambda term, leader: log(node_id, "follower", term=term, leader=leader),
        on_peer_joined=lambda peer: log(node_id, "peer_joined", peer=peer),
        on_peer_left=lambda peer: log(node_id, "peer_left", peer=peer),
        on_warning=lambda code, message: log(node_id, "warning", code=code, message=message),
    )


async def leader_work(lease: tenure.Lease) -> None:
    """The singleton job. Replace with yours; pass ``lease.term`` to anything that must reject a
    deposed leader (the fencing token)."""
    while True:
        if lease.valid:
            pass  # one unit of leader-only work, fenced with lease.term
        await asyncio.sleep(1)


async def main(settings: Settings) -> None:
    elector = make_elector(settings)
    elector.while_leader(leader_work)
    await elector.start()
    log(settings.id, "started", term=elector.term, bound=elector.bound_addr, http=elector.http_addr)
    try:
        await elector.run_until_signal()
    finally:
        log(settings.id, "stopped", term=elector.term)


if __name__ == "__main__":
    try:
        config = settings_from_env(os.environ)
    except ValueError as e:
        print(f"app.py: {e}", file=sys.stderr)
        sys.exit(2)
    asyncio.run(main(config))
