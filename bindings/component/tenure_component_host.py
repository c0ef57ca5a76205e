"""Host the tenure WebAssembly component from Python with the PyPI ``wasmtime`` package.

The same ``tenure.wasm`` that the Rust host and jco load: the host supplies transport, time and
wake-ups through the ``tenure:election/host`` imports and drives the exported ``node`` resource.
Install it with ``pip install ./bindings/component`` (``make setup`` installs it, editable, into
``.venv``) and ``import tenure_component_host``.

One node per instance: the ``host`` imports carry no node identity, so each ``ComponentNode``
instantiates the component once for itself (the component refuses a second node in an instance
with ``ConfigError`` code ``instance_in_use``).

Re-entrancy rule: the ``host`` functions run while Python is inside a call into the node, so they
must never call the node (wasmtime traps if they do). They record or queue; the host acts after
the call has returned. Here every callback only appends to ``ComponentNode.outputs``.

Run ``python -m tenure_component_host`` (after ``make component``) to watch three nodes elect
over an in-memory network with a simulated clock.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wasmtime import Engine, Store
from wasmtime.component import Component, Linker, Record

PACKAGE = "tenure:election"
VERSION = "0.3.0"
DEFAULT_COMPONENT = Path(__file__).resolve().parents[2] / "target" / "component" / "tenure.wasm"


def component_path() -> Path:
    """``$TENURE_COMPONENT``, or ``target/component/tenure.wasm`` (built by ``make component``)."""
    return Path(os.environ.get("TENURE_COMPONENT", DEFAULT_COMPONENT))


class TenureError(Exception):
    """A call the node refused: ``code`` is the stable code (for example ``not_leader``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class ConfigError(TenureError):
    """The constructor refused the configuration."""


def _record(**fields: Any) -> Record:
    r = Record()
    for name, value in fields.items():
        setattr(r, name.replace("_", "-"), value)
    return r


def _kebab(name: str) -> str:
    return name.replace("_", "-")


def _snake(name: str) -> str:
    return name.replace("-", "_")


def _fields(r: Any) -> dict[str, Any]:
    return {k.replace("-", "_"): v for k, v in vars(r).items()}


def _raise_if_error(result: Any, cls: type = TenureError) -> None:
    if result is not None:
        f = _fields(result)
        raise cls(f["code"].replace("-", "_"), f["message"])


# What a callback recorded: ("send", to, bytes), ("set_wakeup", deadline), ("persist", term,
# voted_for), ("became_leader", term), ("became_follower", term, leader), ("confirm_leader",
# term), ("peer_joined", peer), ("peer_left", peer), ("message", sender, payload).
Output = tuple[Any, ...]


class ComponentNode:
    """One tenure node in its own instance of the component.

    ``confirm`` answers ``confirm-leader`` (``"grant"``, ``"deny"`` or ``"defer"``);
    ``on_became_leader`` may return a refusal (``"handler_failed"`` or ``"not_ready"``) to roll
    leadership back. ``options`` are ``config`` fields in snake_case (``min_cluster_size=1``,
    ``lease_duration=120``, ...): the rest keep the core's defaults from ``default-config``.
    """

    def __init__(
        self,
        engine: Engine,
        component: Component,
        *,
        id: str,
        cluster: str,
        bootstrap: list[str],
        seed: int,
        now: int,
        durable: bool = False,
        key: bytes | None = None,
        restored: tuple[int, str | None] | None = None,
        confirm: str = "grant",
        on_became_leader: Callable[[int], str | None] | None = None,
        **options: Any,
    ) -> None:
        self.outputs: list[Output] = []
        self.wakeup: int | None = None
        self.store = Store(engine)
        linker = Linker(engine)
        out = self.outputs

        def set_wakeup(_store: Any, deadline: int | None) -> None:
            self.wakeup = deadline
            out.append(("set_wakeup", deadline))

        def became_leader(_store: Any, term: int) -> str | None:
            out.append(("became_leader", term))
            refusal = on_became_leader(term) if on_became_leader is not None else None
            return None if refusal is None else _kebab(refusal)

        def confirm_leader(_store: Any, term: int) -> str:
            out.append(("confirm_leader", term))
            return confirm

        def persist(_store: Any, state: Any) -> None:
            f = _fields(state)
            out.append(("persist", f["term"], f["voted_for"]))

        with linker.root() as root, root.add_instance(f"{PACKAGE}/host@{VERSION}") as host:
            host.add_func("send", lambda _s, to, data: out.append(("send", to, data)))
            host.add_func("set-wakeup", set_wakeup)
            host.add_func("persist", persist)
            host.add_func("became-leader", became_leader)
            host.add_func("became-follower", lambda _s, term, leader: out.append(("became_follower", term, leader)))
            host.add_func("confirm-leader", confirm_leader)
            host.add_func("peer-joined", lambda _s, peer: out.append(("peer_joined", peer)))
            host.add_func("peer-left", lambda _s, peer: out.append(("peer_left", peer)))
            host.add_func("message", lambda _s, sender, payload: out.append(("message", sender, payload)))
        self.instance = linker.instantiate(self.store, component)
        # Exports are nested: the interface first, then its functions inside it.
        iface = self.instance.get_export_index(self.store, f"{PACKAGE}/node@{VERSION}")
        if iface is None:
            raise TenureError("not_a_tenure_component", f"the component exports no {PACKAGE}/node@{VERSION}")
        self._iface = iface
        # The core's defaults; only what the caller gives is changed.
        config = self._call("default-config", id, cluster, seed)
        fields = set(vars(config))
        config.bootstrap = list(bootstrap)
        config.durable = durable
        config.key = key
        config.restored = None if restored is None else _record(term=restored[0], voted_for=restored[1])
        for name, value in options.items():
            if _kebab(name) not in fields:
                raise TypeError(f"unknown config option {name!r}")
            setattr(config, _kebab(name), value)
        created = self._call("[constructor]node", config, now)
        if not hasattr(created, "drop"):
            _raise_if_error(created, ConfigError)
        self._node = created

    def _call(self, name: str, *args: Any) -> Any:
        index = self.instance.get_export_index(self.store, name, self._iface)
        func = self.instance.get_func(self.store, index) if index is not None else None
        assert func is not None, name
        result = func(self.store, *args)
        func.post_return(self.store)
        return result

    def _method(self, name: str, *args: Any) -> Any:
        return self._call(f"[method]node.{name}", self._node, *args)

    def handle_message(self, now: int, sender: str, data: bytes) -> str | None:
        """Feeds a datagram; returns ``None``, or the drop reason (``"malformed"``, ...)."""
        reason = self._method("handle-message", now, sender, data)
        return None if reason is None else _snake(str(reason))

    def handle_timeout(self, now: int) -> None:
        self._method("handle-timeout", now)

    def join(self, now: int, peer: str) -> None:
        _raise_if_error(self._method("join", now, peer))

    def leave(self, now: int, peer: str) -> None:
        _raise_if_error(self._method("leave", now, peer))

    def peer_down(self, now: int, peer: str, reason: str) -> None:
        """``reason``: ``"terminated"``, ``"no_connection"`` or ``"refused"``."""
        _raise_if_error(self._method("peer-down", now, peer, reason.replace("_", "-")))

    def leader_handler_failed(self, now: int, term: int) -> None:
        _raise_if_error(self._method("leader-handler-failed", now, term))

    def transfer_leadership(self, now: int, peer: str) -> None:
        _raise_if_error(self._method("transfer-leadership", now, peer))

    def broadcast(self, now: int, payload: bytes) -> None:
        _raise_if_error(self._method("broadcast", now, payload))

    def confirm_leader(self, now: int, term: int, granted: bool) -> None:
        _raise_if_error(self._method("confirm-leader", now, term, granted))

    def proclaim(self, now: int, value: str) -> None:
        """Leader only: changes the value this node proclaims (empty: none)."""
        _raise_if_error(self._method("proclaim", now, value))

    @property
    def role(self) -> str:
        return str(self._method("role"))

    @property
    def term(self) -> int:
        return int(self._method("term"))

    @property
    def leader(self) -> str | None:
        leader: str | None = self._method("leader")
        return leader

    @property
    def leader_value(self) -> str | None:
        """The value the leader proclaims, as this node knows it (its own while leading)."""
        value: str | None = self._method("leader-value")
        return value

    @property
    def voted_for(self) -> str | None:
        voted: str | None = self._method("voted-for")
        return voted

    @property
    def poll_timeout(self) -> int | None:
        deadline: int | None = self._method("poll-timeout")
        return deadline

    @property
    def is_leader(self) -> bool:
        return bool(self._method("is-leader"))

    def warnings(self) -> list[tuple[str, str]]:
        """Configuration warnings as ``(code, message)``, e.g. ``("small_min_cluster_size", ...)``."""
        return [(_snake(str(f["code"])), str(f["message"])) for f in map(_fields, self._method("warnings"))]

    def inspect(self) -> dict[str, Any]:
        """The whole election state, with SPEC's snake_case keys and drop reason names."""
        state = _fields(self._method("inspect"))
        state["dropped_by_reason"] = {_snake(str(reason)): count for reason, count in state["dropped_by_reason"]}
        return state

    def take_outputs(self) -> list[Output]:
        taken = list(self.outputs)
        self.outputs.clear()
        return taken


class Network:
    """N component nodes over an in-memory network with a simulated clock (1 ms latency)."""

    def __init__(self, component: Component, engine: Engine, ids: list[str], cluster: str = "py-sim") -> None:
        self.now = 0
        self.nodes: dict[str, ComponentNode] = {}
        self.down: set[str] = set()
        self.in_flight: list[tuple[int, str, str, bytes]] = []
        self.leaders_by_term: dict[int, str] = {}
        self.log: list[str] = []
        for i, node_id in enumerate(ids):
            self.nodes[node_id] = ComponentNode(
                engine, component, id=node_id, cluster=cluster, bootstrap=ids, seed=100 + i, now=0
            )
            self._collect(node_id)

    def _collect(self, node_id: str) -> None:
        for out in self.nodes[node_id].take_outputs():
            kind = out[0]
            if kind == "send":
                self.in_flight.append((self.now + 1, node_id, out[1], out[2]))
            elif kind == "became_leader":
                other = self.leaders_by_term.setdefault(out[1], node_id)
                assert other == node_id, f"two leaders in term {out[1]}: {other} and {node_id}"
                self.log.append(f"{self.now:>6} ms  {node_id} leads term {out[1]}")
            elif kind == "became_follower":
                self.log.append(f"{self.now:>6} ms  {node_id} follows {out[2] or 'nobody'} in term {out[1]}")

    def run_until(self, until: int) -> None:
        while True:
            times = [m[0] for m in self.in_flight]
            times += [n.wakeup for k, n in self.nodes.items() if k not in self.down and n.wakeup is not None]
            if not times or min(times) > until:
                self.now = until
                return
            self.now = max(self.now, min(times))
            due = [m for m in self.in_flight if m[0] <= self.now]
            self.in_flight = [m for m in self.in_flight if m[0] > self.now]
            for _, sender, to, data in due:
                if sender in self.down or to in self.down or to not in self.nodes:
                    continue
                assert self.nodes[to].handle_message(self.now, sender, data) is None
                self._collect(to)
            for node_id, node in self.nodes.items():
                if node_id not in self.down and node.wakeup is not None and node.wakeup <= self.now:
                    node.handle_timeout(self.now)
                    self._collect(node_id)

    def leaders(self) -> list[str]:
        return [k for k, n in self.nodes.items() if k not in self.down and n.is_leader]


def main() -> int:
    path = component_path()
    if not path.exists():
        print(f"{path} not found: run `make component` first", file=sys.stderr)
        return 1
    engine = Engine()
    component = Component.from_file(engine, str(path))
    net = Network(component, engine, ["a", "b", "c"])
    net.run_until(1000)
    leader = net.leaders()[0]
    net.log.append(f"{net.now:>6} ms  {leader} crashes")
    net.down.add(leader)
    net.run_until(2000)
    print("\n".join(net.log))
    return 0


if __name__ == "__main__":
    sys.exit(main())
