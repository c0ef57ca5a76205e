"""Shared helpers for the tenure Python tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

import tenure
from tenure import BecameFollower, BecameLeader, Config, ConfirmLeader, Node, Persist, Send

ROOT = Path(__file__).resolve().parents[2]
PYTHON_DIR = ROOT / "python"


class SimNet:
    """An in-memory network of sans-IO nodes driven by a simulated clock (no sleeps)."""

    def __init__(self, n: int = 3, latency: int = 1, **config: object) -> None:
        self.ids = [f"n{i}" for i in range(1, n + 1)]
        self.now = 0
        self.latency = latency
        self.nodes: Dict[str, Node] = {}
        self.down: set[str] = set()
        self.in_flight: List[Tuple[int, str, str, bytes]] = []
        self.leaders: Dict[int, set[str]] = {}
        self.events: List[Tuple[int, str, object]] = []
        self.persisted: Dict[str, Persist] = {}
        for i, node_id in enumerate(self.ids):
            cfg = Config(id=node_id, cluster="sim", bootstrap=tuple(self.ids), **config)  # type: ignore[arg-type]
            self.nodes[node_id] = Node(cfg, now=0, seed=1000 + i)

    def drain(self, node_id: str) -> None:
        node = self.nodes[node_id]
        while True:
            out = node.poll_output()
            if out is None:
                return
            if isinstance(out, Send):
                self.in_flight.append((self.now + self.latency, node_id, out.to, out.data))
            elif isinstance(out, Persist):
                self.persisted[node_id] = out
            else:
                self.events.append((self.now, node_id, out))
                if isinstance(out, ConfirmLeader):
                    node.confirm_leader(self.now, out.term, True)
                elif isinstance(out, BecameLeader):
                    self.leaders.setdefault(out.term, set()).add(node_id)

    def step(self) -> bool:
        """Advances to the next message delivery or deadline; False when nothing is scheduled."""
        times = [t for t, *_ in self.in_flight]
        for node_id, node in self.nodes.items():
            if node_id in self.down:
                continue
            d = node.poll_timeout()
            if d is not None:
                times.append(d)
        if not times:
            return False
        self.now = max(self.now, min(times))
        due = [m for m in self.in_flight if m[0] <= self.now]
        self.in_flight = [m for m in self.in_flight if m[0] > self.now]
        for _, src, dst, data in due:
            if dst in self.down or src in self.down or dst not in self.nodes:
                continue
            try:
                self.nodes[dst].handle_message(self.now, src, data)
            except tenure.DecodeError:
                pass
            self.drain(dst)
        for node_id, node in self.nodes.items():
            if node_id in self.down:
                continue
            d = node.poll_timeout()
            if d is not None and d <= self.now:
                node.handle_timeout(self.now)
                self.drain(node_id)
        return True

    def run_until(self, t: int) -> None:
        while self.now < t:
            if not self.step():
                self.now = t

    def leader(self) -> Optional[str]:
        leaders = [i for i, n in self.nodes.items() if i not in self.down and n.is_leader]
        assert len(leaders) <= 1 or len({self.nodes[i].term for i in leaders}) == len(leaders)
        return max(leaders, key=lambda i: self.nodes[i].term) if leaders else None

    def follower_events(self, node_id: str) -> List[BecameFollower]:
        return [e for _, i, e in self.events if i == node_id and isinstance(e, BecameFollower)]


@pytest.fixture
def sim() -> SimNet:
    net = SimNet(3)
    for node_id in net.ids:
        net.drain(node_id)
    return net


def python_exe() -> str:
    return sys.executable


def env_with_package() -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def free_udp_ports(n: int) -> List[int]:
    """n distinct UDP ports that were free a moment ago on 127.0.0.1."""
    import socket

    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()
