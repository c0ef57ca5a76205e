"""Every command line behaves the same: the conformance scenario (see scenario.py) run against
the Rust `tenure`, `python -m tenure`, the Node.js `tenure` and `tenure-wasmtime`, compared line by
line with the Rust one after normalising times and ports. `make test-conformance` builds them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scenario import Trace, differences, run_scenario, runtime_command


@pytest.fixture(scope="module")
def reference() -> Trace:
    return run_scenario("native")


def test_the_reference_run_tells_the_whole_story(reference: Trace) -> None:
    """The scenario did what it says, so that an agreement between runtimes means something."""
    assert set(reference.nodes) == {"A", "B", "C", "B#2", "W", "L", "A#2"}
    assert reference.exits == {"A": -9, "B": 0, "W": 0, "L": 0, "A#2": 0}, (
        "A was SIGKILLed; every other run stopped by SIGTERM exited 0"
    )
    events = {
        label: [(e["event"], e.get("term"), e.get("code")) for e in lines]
        for label, lines in reference.nodes.items()
    }
    assert ("leader", 1, None) in events["A"] and ("leader", 3, None) in events["A"]
    assert ("leader", 2, None) in events["B"]
    assert ("warning", None, "bad_control_line") in events["C"]
    assert ("warning", None, "not_leader") in events["C"]
    assert events["B#2"][0] == ("started", 3, None), (
        "B restarts in the term its state file holds"
    )
    # After A's SIGKILL the survivors elect: W leads term 4, L and A's second run follow it.
    assert events["W"][0] == ("leader", 4, None), events["W"]
    for label in ("L", "A#2"):
        assert any(
            e["event"] == "follower" and e["term"] == 4 and e["leader"] == "W"
            for e in reference.nodes[label]
        ), (label, reference.nodes[label])
    assert events["A#2"][0] == ("started", 3, None), (
        "A restarts from the state file of its killed run"
    )
    # No leader exists below 3 members (min_cluster_size): term 1 proves both others resolved the
    # hostname peer.
    assert reference.hostname_node in ("A", "B", "C")
    assert reference.oneshots["unknown option"]["status"] == 2
    assert reference.oneshots["bad id"]["status"] == 2
    assert reference.oneshots["unknown option"]["stderr"].count("\n") == 1, (
        "a usage error is one line"
    )


@pytest.mark.parametrize("kind", ["python", "node", "wasmtime"])
def test_every_command_line_prints_the_same_lines(reference: Trace, kind: str) -> None:
    diffs = differences(reference, run_scenario(kind))
    assert not diffs, "\n".join(diffs)


def test_a_divergent_runtime_is_caught(reference: Trace) -> None:
    """The comparison can fail: the Rust command line behind a shim that renames one warning code
    (`bad_control_line` -> `usage`, as one runtime did before the shared runtime) is reported."""
    shim = [
        sys.executable,
        str(Path(__file__).resolve().parent / "perturb.py"),
        "bad_control_line",
        "usage",
    ]
    diffs = differences(
        reference, run_scenario("perturbed", cmd=shim + runtime_command("native"))
    )
    assert len(diffs) == 1, diffs
    assert (
        "node C" in diffs[0]
        and '"usage"' in diffs[0]
        and '"bad_control_line"' in diffs[0]
    )
