"""The shared tests/scenarios replayed through the component hosted by the PyPI ``wasmtime``
package: the same outputs, byte for byte, as every other host."""

from __future__ import annotations

import json
import runpy
from pathlib import Path
from typing import Any

import pytest
import tenure_component_host
from tenure_component_host import ComponentNode, TenureError
from wasmtime import Engine
from wasmtime.component import Component

SCENARIOS = sorted((Path(__file__).resolve().parents[3] / "tests" / "scenarios").glob("*.json"))


@pytest.fixture(scope="module")
def compiled() -> tuple:
    path = tenure_component_host.component_path()
    assert path.exists(), f"{path} is missing: run `make component` first"
    engine = Engine()
    return engine, Component.from_file(engine, str(path))


# The core's options (the generated table every host reads), passed through under their own
# names; `key` is the one the files spell otherwise (`key_hex`).
_TABLES = runpy.run_path(str(Path(__file__).resolve().parents[3] / "python" / "tenure" / "_tables.py"))
_OPTIONS = tuple(o for o in _TABLES["CONFIG_OPTIONS"] if o != "key")


def _output(o: tuple) -> Any:
    kind = o[0]
    if kind == "send":
        return {"type": "send", "to": o[1], "hex": o[2].hex()}
    if kind == "persist":
        return {"type": "persist", "term": o[1], "voted_for": o[2]}
    if kind in ("became_leader", "confirm_leader"):
        return {"type": "event", "event": kind, "term": o[1]}
    if kind == "became_follower":
        return {"type": "event", "event": kind, "term": o[1], "leader": o[2]}
    if kind in ("peer_joined", "peer_left"):
        return {"type": "event", "event": kind, "peer": o[1]}
    if kind == "message":
        return {"type": "event", "event": kind, "from": o[1], "hex": o[2].hex()}
    return None  # set_wakeup: checked through poll_timeout


def _apply(node: ComponentNode, at: int, inp: dict[str, Any]) -> str:
    """Feeds one scenario input; returns "ok", a drop reason or an error code."""
    kind = inp["kind"]
    try:
        if kind == "timeout":
            node.handle_timeout(at)
        elif kind == "message":
            return node.handle_message(at, inp["from"], bytes.fromhex(inp["hex"])) or "ok"
        elif kind == "join":
            node.join(at, inp["peer"])
        elif kind == "leave":
            node.leave(at, inp["peer"])
        elif kind == "peer_down":
            node.peer_down(at, inp["peer"], inp["reason"])
        elif kind == "confirm":
            node.confirm_leader(at, inp["term"], inp["granted"])
        elif kind == "leader_failed":
            node.leader_handler_failed(at, inp["term"])
        elif kind == "transfer":
            node.transfer_leadership(at, inp["peer"])
        elif kind == "broadcast":
            node.broadcast(at, bytes.fromhex(inp["hex"]))
        elif kind == "proclaim":
            node.proclaim(at, inp["value"])
        else:
            raise AssertionError(f"unknown input kind {kind}")
    except TenureError as e:
        return e.code
    return "ok"


@pytest.mark.skipif(not SCENARIOS, reason="no tests/scenarios/*.json yet")
@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_scenario_replays_byte_for_byte(compiled: tuple, path: Path) -> None:
    engine, component = compiled
    s: dict[str, Any] = json.loads(path.read_text())
    c = s["config"]
    restored = s["restored"]
    node = ComponentNode(
        engine,
        component,
        id=c["id"],
        cluster=c["cluster"],
        bootstrap=c["bootstrap"],
        seed=s["seed"],
        now=s["start_ms"],
        durable=c["durable"],
        key=bytes.fromhex(c["key_hex"]) if c["key_hex"] else None,
        restored=None if restored is None else (restored["term"], restored["voted_for"]),
        confirm="defer",
        confirm_leader=c["confirm_leader"],
        # Absent ones (fields the files gained later, a lease_duration left to the core) keep the
        # component's defaults.
        **{k: c[k] for k in _OPTIONS if c.get(k) is not None},
    )
    node.take_outputs()
    for i, step in enumerate(s["steps"]):
        at, inp = step["at"], step["input"]
        result = _apply(node, at, inp)
        where = f"{path.name} step {i} ({inp['kind']} at {at})"
        assert result == step["result"], where
        outputs: list[Any] = [o for o in map(_output, node.take_outputs()) if o is not None]
        assert outputs == step["outputs"], where
        assert node.poll_timeout == step["next_deadline"], where
    final = s.get("final")
    if final is not None:
        assert (node.role, node.term, node.leader, node.voted_for, node.leader_value) == (
            final["role"], final["term"], final["leader"], final["voted_for"], final.get("value")
        )
