"""A service that embeds tenure (the Python package) instead of running the sidecar.

Configured from the environment the StatefulSet in this directory sets:

- ``TENURE_ID``: this pod's ``HOST:PORT`` (``$(POD_NAME).<service>.<namespace>.svc.cluster.local:7946``)
- ``TENURE_PEERS``: every member's ``HOST:PORT``, comma-separated (this pod's own id may be listed:
  it is skipped, so every pod gets the same list)
- ``TENURE_CLUSTER``: the cluster id; ``TENURE_STATE_FILE``: the state file on the pod's volume
- ``HTTP_PORT``: the probes' port (default 8080): ``/readyz`` answers 200 on the leader only
  (leading with a valid lease, as the sidecar's ``--ready-when leader``),
  ``/healthz`` 200 while the node runs, ``/leader`` the node's view as JSON

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
    http_port: int


def settings_from_env(env: Mapping[str, str]) -> Settings:
    """Reads the settings; a missing or bad value raises ``ValueError`` naming the variable."""

    def need(name: str) -> str:
        value = env.get(name, "").strip()
        if not value:
            raise ValueError(f"{name} is not set")
        return value

    peers = [p.strip() for p in need("TENURE_PEERS").split(",") if p.strip()]
    raw_port = env.get("HTTP_PORT", "8080")
    try:
        port = int(raw_port)
    except ValueError:
        raise ValueError(f"HTTP_PORT must be a port number, got {raw_port!r}") from None
    if not 0 < port < 65536:
        raise ValueError(f"HTTP_PORT must be a port number, got {raw_port!r}")
    return Settings(
        id=need("TENURE_ID"),
        peers=peers,
        cluster=need("TENURE_CLUSTER"),
        state_file=env.get("TENURE_STATE_FILE") or None,
        http_port=port,
    )


def log(node_id: str, event: str, **fields: object) -> None:
    line = {"ts_ms": int(time.time() * 1000), "id": node_id, "event": event, **fields}
    print(json.dumps(line, separators=(",", ":")), flush=True)


def respond(elector: tenure.Elector, path: str) -> tuple[int, dict[str, object]]:
    """The status and JSON body for one probe or query."""
    running = elector.running
    if path == "/healthz":
        return (200 if running else 503), {"running": running}
    if path == "/readyz":
        # As the sidecar's --ready-when leader: leading with an unexpired, quorum-backed lease.
        lease = elector.lease
        ready = running and elector.is_leader and lease is not None and lease.valid
        return (200 if ready else 503), {"ready": ready, "role": elector.role.value}
    if path == "/leader":
        return 200, {
            "id": elector.id,
            "leader": elector.leader,
            "term": elector.term,
            "is_leader": elector.is_leader,
            "role": elector.role.value,
        }
    return 404, {"error": f"no such path: {path}"}


async def serve_http(elector: tenure.Elector, port: int) -> asyncio.AbstractServer:
    """A minimal HTTP/1.0 responder for the kubelet's probes (GET only, one request per
    connection)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await asyncio.wait_for(reader.readline(), timeout=5)
            parts = request.decode("latin-1").split()
            if len(parts) >= 2 and parts[0] == "GET":
                status, body = respond(elector, parts[1].split("?", 1)[0])
            else:
                status, body = 405, {"error": "GET only"}
            payload = json.dumps(body).encode()
            reason = {200: "OK", 404: "Not Found", 405: "Method Not Allowed", 503: "Service Unavailable"}[status]
            writer.write(
                f"HTTP/1.0 {status} {reason}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode()
                + payload
            )
            await writer.drain()
        except (TimeoutError, ConnectionError):
            pass
        finally:
            writer.close()

    return await asyncio.start_server(handle, host="0.0.0.0", port=port)


async def leader_work(lease: tenure.Lease) -> None:
    """The singleton job. Replace with yours; pass ``lease.term`` to anything that must reject a
    deposed leader (the fencing token)."""
    while True:
        if lease.valid:
            pass  # one unit of leader-only work, fenced with lease.term
        await asyncio.sleep(1)


async def main(settings: Settings) -> None:
    node_id = settings.id
    elector = tenure.Elector(
        settings.id,
        settings.peers,
        cluster=settings.cluster,
        state_file=settings.state_file,
        on_leader=lambda term: log(node_id, "leader", term=term),
        on_follower=lambda term, leader: log(node_id, "follower", term=term, leader=leader),
        on_peer_joined=lambda peer: log(node_id, "peer_joined", peer=peer),
        on_peer_left=lambda peer: log(node_id, "peer_left", peer=peer),
        on_warning=lambda code, message: log(node_id, "warning", code=code, message=message),
    )
    elector.while_leader(leader_work)
    await elector.start()
    log(node_id, "started", term=elector.term, bound=elector.bound_addr)
    server = await serve_http(elector, settings.http_port)
    try:
        await elector.run_until_signal()
    finally:
        server.close()
        log(node_id, "stopped", term=elector.term)


if __name__ == "__main__":
    try:
        config = settings_from_env(os.environ)
    except ValueError as e:
        print(f"app.py: {e}", file=sys.stderr)
        sys.exit(2)
    asyncio.run(main(config))
