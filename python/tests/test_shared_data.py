"""Replays the shared cross-host data (tests/vectors, tests/scenarios): same bytes as every host."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
from conftest import ROOT

import tenure
from tenure import (
    BecameFollower,
    BecameLeader,
    Config,
    ConfirmLeader,
    DurableState,
    Message,
    Node,
    Output,
    PeerJoined,
    PeerLeft,
    Persist,
    Send,
    wire,
)

VECTORS = ROOT / "tests" / "vectors"
SCENARIOS = ROOT / "tests" / "scenarios"
SCENARIO_FILES = sorted(SCENARIOS.glob("*.json"))


def _key(hex_or_none: Optional[str]) -> Optional[bytes]:
    return None if hex_or_none is None else bytes.fromhex(hex_or_none)


def _message(m: wire.WireMessage) -> Dict[str, Any]:
    d: Dict[str, Any] = {"kind": m.kind}
    if isinstance(m, (wire.PreVoteReply, wire.VoteReply)):
        d["granted"] = m.granted
    elif isinstance(m, wire.Vote):
        d["transfer"] = m.transfer
    elif isinstance(m, wire.Heartbeat):
        d["sent_at"] = m.sent_at
    elif isinstance(m, wire.HeartbeatAck):
        d["echo"] = m.echo
    elif isinstance(m, wire.App):
        d["seq"] = m.seq
        d["payload_hex"] = m.payload.hex()
    elif isinstance(m, wire.Hello):
        d["version"] = m.version
        d["reply"] = m.reply
    return d


def _build_message(d: Dict[str, Any]) -> wire.WireMessage:
    kind = d["kind"]
    table: Dict[str, Any] = {
        "pre_vote": lambda: wire.PreVote(),
        "pre_vote_reply": lambda: wire.PreVoteReply(d["granted"]),
        "vote": lambda: wire.Vote(d["transfer"]),
        "vote_reply": lambda: wire.VoteReply(d["granted"]),
        "heartbeat": lambda: wire.Heartbeat(d["sent_at"]),
        "heartbeat_ack": lambda: wire.HeartbeatAck(d["echo"]),
        "timeout_now": lambda: wire.TimeoutNow(),
        "app": lambda: wire.App(bytes.fromhex(d["payload_hex"]), d["seq"]),
        "hello": lambda: wire.Hello(d["version"], d["reply"]),
        "death_notice": lambda: wire.DeathNotice(),
    }
    result: wire.WireMessage = table[kind]()
    return result


def _load(path: Path) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def test_message_vectors_decode_and_re_encode_byte_identically() -> None:
    path = VECTORS / "messages.json"
    if not path.exists():
        pytest.skip("tests/vectors/messages.json does not exist yet (recorded by tenure-sim)")
    vectors = _load(path)
    assert vectors, "messages.json is empty"
    kinds = set()
    for v in vectors:
        key = _key(v.get("key_hex"))
        data = bytes.fromhex(v["hex"])
        receiver = v.get("receiver")
        env = wire.decode(data, key, receiver)
        want = v["envelope"]
        got = {
            "cluster": env.cluster,
            "from": env.sender,
            "term": env.term,
            "incarnation": env.incarnation,
            "message": _message(env.message),
        }
        assert got == want, v["name"]
        rebuilt = wire.Envelope(
            want["cluster"], want["from"], want["term"], _build_message(want["message"]), want["incarnation"]
        )
        assert wire.encode(rebuilt, key, receiver).hex() == v["hex"], v["name"]
        if key is not None:
            # The tag covers the receiver: the same bytes do not authenticate at another node.
            with pytest.raises(tenure.DecodeError) as e:
                wire.decode(data, key, receiver + "x")
            assert e.value.reason == "bad_mac"
        kinds.add(env.message.kind)
    assert len(kinds) == 10, f"every message kind has a vector: {sorted(kinds)}"


def test_invalid_vectors_are_dropped_with_their_reason() -> None:
    path = VECTORS / "invalid.json"
    if not path.exists():
        pytest.skip("tests/vectors/invalid.json does not exist yet (recorded by tenure-sim)")
    for v in _load(path):
        config = Config(id=v["node_id"], cluster=v["cluster"], key=_key(v.get("key_hex")))
        node = Node(config, now=0, seed=1)
        with pytest.raises(tenure.DecodeError) as info:
            node.handle_message(1, v["from"], bytes.fromhex(v["hex"]))
        assert info.value.reason.value == v["reason"], v["name"]
        assert node.dropped(v["reason"]) == 1 and node.inspect()["dropped_by_reason"][v["reason"]] == 1


def output_json(o: Output) -> Dict[str, Any]:
    """An output in the scenario files' JSON shape."""
    if isinstance(o, Send):
        return {"type": "send", "to": o.to, "hex": o.data.hex()}
    if isinstance(o, Persist):
        return {"type": "persist", "term": o.term, "voted_for": o.voted_for}
    if isinstance(o, BecameLeader):
        return {"type": "event", "event": "became_leader", "term": o.term}
    if isinstance(o, BecameFollower):
        return {"type": "event", "event": "became_follower", "term": o.term, "leader": o.leader}
    if isinstance(o, PeerJoined):
        return {"type": "event", "event": "peer_joined", "peer": o.peer}
    if isinstance(o, PeerLeft):
        return {"type": "event", "event": "peer_left", "peer": o.peer}
    if isinstance(o, ConfirmLeader):
        return {"type": "event", "event": "confirm_leader", "term": o.term}
    if isinstance(o, Message):
        return {"type": "event", "event": "message", "from": o.sender, "hex": o.payload.hex()}
    raise AssertionError(f"unknown output {o!r}")


def apply(node: Node, at: int, inp: Dict[str, Any]) -> str:
    """Applies one scenario input; returns "ok" or the error's stable code."""
    kind = inp["kind"]
    try:
        if kind == "timeout":
            node.handle_timeout(at)
        elif kind == "message":
            node.handle_message(at, inp["from"], bytes.fromhex(inp["hex"]))
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
            raise AssertionError(f"unknown input kind {kind!r}")
    except tenure.TenureError as e:
        return e.code
    return "ok"


def replay(path: Path) -> int:
    s = _load(path)
    c = s["config"]
    config = Config(
        id=c["id"],
        cluster=c["cluster"],
        bootstrap=tuple(c["bootstrap"]),
        min_cluster_size=c["min_cluster_size"],
        election_timeout_min=c["election_timeout_min"],
        election_timeout_max=c["election_timeout_max"],
        heartbeat_interval=c["heartbeat_interval"],
        ghost_ttl=c["ghost_ttl"],
        pre_vote=c["pre_vote"],
        confirm_leader=c["confirm_leader"],
        durable=c["durable"],
        key=_key(c["key_hex"]),
        # Fields added after the first files; absent ones keep the defaults.
        admit_unknown_peers=c.get("admit_unknown_peers", False),
        max_peers=c.get("max_peers", Config.max_peers),
        max_clock_drift_ppm=c.get("max_clock_drift_ppm", Config.max_clock_drift_ppm),
        incarnation=c.get("incarnation"),
        value=c.get("value"),
        priority=c.get("priority", 0),
        never_lead=c.get("never_lead", False),
        preempt_after=c.get("preempt_after"),
        observer=c.get("observer", False),
        observer_peers=tuple(c.get("observer_peers", ())),
    )
    r = s.get("restored")
    restored = None if r is None else DurableState(r["term"], r["voted_for"])
    node = Node(config, now=s["start_ms"], seed=s["seed"], restored=restored)
    initial: List[Dict[str, Any]] = [output_json(o) for o in node.drain()]
    if "initial_outputs" in s:
        assert initial == s["initial_outputs"], f"{path.name}: outputs after construction"
    for i, step in enumerate(s["steps"]):
        where = f"{path.name} step {i} (at {step['at']}, {step['input']['kind']})"
        assert apply(node, step["at"], step["input"]) == step["result"], where
        assert [output_json(o) for o in node.drain()] == step["outputs"], where
        assert node.poll_timeout() == step["next_deadline"], where
    final = s.get("final")
    if final is not None:
        got = {
            "role": node.role.value,
            "term": node.term,
            "leader": node.leader,
            "voted_for": node.voted_for,
            "value": node.leader_value,
        }
        assert got == {k: final.get(k) for k in got}, f"{path.name}: final state"
    return len(s["steps"])


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=[p.stem for p in SCENARIO_FILES])
def test_scenario_replays_byte_identically(path: Path) -> None:
    assert replay(path) > 0


def test_scenarios_exist() -> None:
    if not SCENARIO_FILES:
        pytest.skip("tests/scenarios has no .json files yet (recorded by tenure-sim): nothing to replay")
