"""The component hosted by the PyPI ``wasmtime`` package (bindings/component/tenure_component_host.py)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tenure_component_host
from tenure_component_host import ComponentNode, ConfigError, Network, TenureError
from wasmtime import Engine, WasmtimeError
from wasmtime.component import Component


@pytest.fixture(scope="module")
def compiled() -> tuple:
    path = tenure_component_host.component_path()
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
    assert state["state"] == "leader" and state["is_leader"] is True
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
    dropped = node.inspect()["dropped_by_reason"]
    assert dropped["malformed"] == 1 and dropped["unknown_version"] == 0 and len(dropped) == 13
    with pytest.raises(TenureError) as err:
        node.transfer_leadership(2, "b")
    assert err.value.code == "not_leader"


def test_lease_duration_and_refused_reach_the_core(compiled: tuple) -> None:
    engine, component = compiled
    with pytest.raises(ConfigError) as e:
        ComponentNode(engine, component, id="a", cluster="c", bootstrap=["b", "c"], seed=1, now=0, lease_duration=151)
    # Field names as the WIT spells them.
    assert e.value.code == "lease_out_of_range" and "lease-duration (151 ms)" in str(e.value)
    assert "election-timeout-min (150 ms)" in e.value.message and "_" not in e.value.message
    node = ComponentNode(engine, component, id="a", cluster="c", bootstrap=["b", "c"], seed=1, now=0, lease_duration=120)
    node.peer_down(1, "b", "refused")  # the process is gone, the member stays
    assert node.inspect()["view_size"] == 3 and not node.inspect()["unreachable"]


def test_an_error_from_became_leader_rolls_leadership_back(compiled: tuple) -> None:
    engine, component = compiled
    node = ComponentNode(
        engine, component, id="a", cluster="solo", bootstrap=[], seed=3, now=0, min_cluster_size=1,
        on_became_leader=lambda term: "handler_failed",
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


def test_default_config_sets_only_what_the_host_changes(compiled: tuple) -> None:
    engine, component = compiled
    node = ComponentNode(engine, component, id="a", cluster="c", bootstrap=["b", "c"], seed=1, now=0)
    config = node._call("default-config", "x", "y", 9)
    fields = {k.replace("-", "_"): v for k, v in vars(config).items()}
    assert (fields["id"], fields["cluster"], fields["seed"]) == ("x", "y", 9)
    assert (fields["min_cluster_size"], fields["heartbeat_interval"], fields["max_peers"]) == (3, 50, 64)
    assert fields["pre_vote"] is True and fields["durable"] is False and fields["restored"] is None
    state = ComponentNode(
        engine, component, id="a", cluster="c", bootstrap=["b"], seed=1, now=0, min_cluster_size=2
    ).inspect()
    assert (state["min_cluster_size"], state["heartbeat_interval"]) == (2, 50)
    with pytest.raises(TypeError, match="min_clustre_size"):
        ComponentNode(engine, component, id="a", cluster="c", bootstrap=[], seed=1, now=0, min_clustre_size=2)


def test_warnings_carry_enum_codes_and_wit_field_names(compiled: tuple) -> None:
    engine, component = compiled
    node = ComponentNode(engine, component, id="a", cluster="c", bootstrap=["b"], seed=1, now=0, min_cluster_size=2)
    [(code, message)] = node.warnings()
    assert code == "small_min_cluster_size" and message.startswith("min-cluster-size is 2")


def test_one_node_per_instance(compiled: tuple) -> None:
    engine, component = compiled
    node = ComponentNode(engine, component, id="a", cluster="c", bootstrap=["b", "c"], seed=1, now=0)
    again = node._call("[constructor]node", node._call("default-config", "b", "c", 2), 0)
    with pytest.raises(ConfigError) as e:
        tenure_component_host._raise_if_error(again, ConfigError)
    assert e.value.code == "instance_in_use"
    assert node._method("id") == "a"


def test_the_built_component_carries_its_name_and_the_workspace_version(compiled: tuple) -> None:
    root = Path(__file__).resolve().parents[3]
    workspace = re.search(r'^version = "([^"]+)"', (root / "Cargo.toml").read_text(), re.MULTILINE)
    assert workspace is not None
    wasm_tools = shutil.which("wasm-tools", path=str(Path(sys.executable).parent)) or "wasm-tools"
    shown = subprocess.run(
        [wasm_tools, "metadata", "show", "--json", str(tenure_component_host.component_path())],
        check=True, capture_output=True, text=True,
    )
    meta = json.loads(shown.stdout)["component"]["metadata"]
    assert (meta["name"], meta["version"]) == ("tenure", workspace.group(1))
