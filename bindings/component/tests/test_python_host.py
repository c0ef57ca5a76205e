"""The component hosted by the PyPI ``wasmtime`` package (bindings/component/examples/component_host.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from wasmtime import Engine, WasmtimeError
from wasmtime.component import Component

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import component_host
from component_host import ComponentNode, ConfigError, Network, TenureError


@pytest.fixture(scope="module")
def compiled() -> tuple:
    path = component_host.component_path()
    assert path.exists(), f"{path} is missing: run `make component` first"
    engine = Engine()
    return engine, Component.from_file(engine, str(path))


def test_three_nodes_elect_and_fail_over(compiled: tuple) -> None:
    engine, component = compiled
    net = Network(component, engine, ["a", "b", "c"])
    net.run_until(1000)
    leaders = net.leaders()
    assert len(leaders) == 1
    leader = leaders[0]
    term = net.nodes[leader].term
    for node_id, node in net.nodes.items():
        assert node.term == term
        assert node.leader == leader
        assert node.role == ("leader" if node_id == leader else "follower")
    state = net.nodes[leader].inspect()
    assert state["state"] == "leader" and state["leader"] is True
    assert (state["view_size"], state["quorum"]) == (3, 2)

    net.down.add(leader)
    net.run_until(1500)
    survivors = net.leaders()
    assert len(survivors) == 1 and survivors[0] != leader
    assert net.nodes[survivors[0]].term > term
    assert len(net.leaders_by_term) >= 2


def test_errors_are_typed(compiled: tuple) -> None:
    engine, component = compiled
    with pytest.raises(ConfigError) as e:
        ComponentNode(engine, component, id="a", cluster="", bootstrap=["b"], seed=1, now=0)
    assert e.value.code == "empty_id"
    node = ComponentNode(engine, component, id="a", cluster="c", bootstrap=["b", "c"], seed=1, now=0)
    assert node.handle_message(1, "b", b"junk") == "malformed"
    assert node.inspect()["dropped_by_reason"] and dict(node.inspect()["dropped_by_reason"])["malformed"] == 1
    with pytest.raises(TenureError) as err:
        node.transfer_leadership(2, "b")
    assert err.value.code == "not_leader"


def test_lease_duration_and_refused_reach_the_core(compiled: tuple) -> None:
    engine, component = compiled
    with pytest.raises(ConfigError) as e:
        ComponentNode(engine, component, id="a", cluster="c", bootstrap=["b", "c"], seed=1, now=0, lease_duration=151)
    assert e.value.code == "lease_out_of_range" and "lease_duration (151 ms)" in str(e.value)
    node = ComponentNode(engine, component, id="a", cluster="c", bootstrap=["b", "c"], seed=1, now=0, lease_duration=120)
    node.peer_down(1, "b", "refused")  # the process is gone, the member stays
    assert node.inspect()["view_size"] == 3 and not node.inspect()["unreachable"]


def test_an_error_from_became_leader_rolls_leadership_back(compiled: tuple) -> None:
    engine, component = compiled
    node = ComponentNode(
        engine, component, id="a", cluster="solo", bootstrap=[], seed=3, now=0, min_cluster_size=1,
        on_became_leader=lambda term: "cannot start the scheduler",
    )
    node.take_outputs()
    assert node.wakeup is not None
    node.handle_timeout(node.wakeup)
    kinds = [o[0] for o in node.take_outputs()]
    assert kinds.index("became_leader") < kinds.index("became_follower")
    assert not node.is_leader
    assert node.inspect()["confirm_denied"] == 1


def test_a_raising_callback_surfaces_and_the_instance_stays_stopped(compiled: tuple) -> None:
    engine, component = compiled

    def explode(term: int) -> str:
        raise RuntimeError("callback exploded")

    node = ComponentNode(
        engine, component, id="a", cluster="solo", bootstrap=[], seed=3, now=0, min_cluster_size=1,
        on_became_leader=explode,
    )
    assert node.wakeup is not None
    with pytest.raises(RuntimeError, match="callback exploded"):
        node.handle_timeout(node.wakeup)
    # The trapped instance refuses to run again rather than continuing in an unknown state.
    with pytest.raises(WasmtimeError):
        node.handle_timeout(node.wakeup + 1000)
