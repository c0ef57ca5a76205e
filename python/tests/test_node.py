"""Unit tests of the sans-IO layer: the native Node, its types, errors and helpers."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from conftest import SimNet

import tenure
from tenure import (
    BecameFollower,
    BecameLeader,
    Config,
    ConfirmLeader,
    DropReason,
    DurableState,
    FenceChecker,
    FenceVerdict,
    Message,
    Node,
    PeerDownReason,
    PeerJoined,
    PeerLeft,
    Persist,
    Role,
    Send,
    wire,
)

INSPECT_KEYS = {
    "state", "is_leader", "leader", "term", "voted_for", "term_changed_at", "cluster", "view_size",
    "quorum", "min_cluster_size", "peers", "declared", "bootstrap", "unreachable", "ghost_ttl",
    "votes_granted", "votes_count", "election_timer_armed", "heartbeat_timer_armed",
    "heartbeat_in_last", "heartbeat_out_last", "election_timeout_min", "election_timeout_max",
    "heartbeat_interval", "dropped_by_reason", "send_failing_peers", "confirm_denied",
    "last_denied_at",
}  # fmt: skip


def make(node_id: str = "a", peers: tuple[str, ...] = ("b", "c"), **kw: object) -> Node:
    return Node(Config(id=node_id, cluster="c", bootstrap=peers, **kw), now=0, seed=7)  # type: ignore[arg-type]


def test_new_node_is_a_follower_with_a_deadline() -> None:
    n = make()
    assert n.role is Role.FOLLOWER
    assert n.term == 0 and n.leader is None and not n.is_leader
    assert n.view == ["a", "b", "c"] and n.quorum == 2
    deadline = n.poll_timeout()
    assert deadline is not None and 150 <= deadline <= 300
    assert n.drain() == []
    assert repr(n) == '<tenure.Node id="a" cluster="c" role=follower term=0>'


def test_too_small_view_is_unclustered() -> None:
    n = make(peers=("b",))
    assert n.role is Role.UNCLUSTERED
    assert n.poll_timeout() is None
    n.join(0, "c")
    assert n.role is Role.FOLLOWER
    assert n.drain() == [PeerJoined("c"), BecameFollower(0, None)]


def test_timeout_sends_pre_votes_that_decode() -> None:
    n = make()
    t = n.poll_timeout()
    assert t is not None
    n.handle_timeout(t)
    out = n.drain()
    assert [type(o) for o in out] == [Send, Send]
    assert {o.to for o in out if isinstance(o, Send)} == {"b", "c"}
    env = wire.decode(out[0].data)  # type: ignore[union-attr]
    # The incarnation is this run's own (drawn from the seed): every other field is fixed.
    assert env == wire.Envelope("c", "a", 1, wire.PreVote(), incarnation=env.incarnation)


def test_a_simulated_cluster_elects_one_leader_and_fails_over(sim: SimNet) -> None:
    sim.run_until(1000)
    first = sim.leader()
    assert first is not None
    term = sim.nodes[first].term
    others = [i for i in sim.ids if i != first]
    for i in others:
        assert sim.nodes[i].leader == first
    # Every follower was told about the leader through BecameFollower events.
    assert any(e.leader == first for e in sim.follower_events(others[0]))
    sim.down.add(first)
    crash = sim.now
    sim.run_until(crash + 1000)
    second = sim.leader()
    assert second is not None and second != first
    assert sim.nodes[second].term > term
    elected_at = min(t for t, i, e in sim.events if i == second and isinstance(e, BecameLeader) and t > crash)
    assert elected_at - crash <= 300 + 50
    assert all(len(v) == 1 for v in sim.leaders.values()), sim.leaders


def test_transfer_hands_over_in_one_round_trip(sim: SimNet) -> None:
    sim.run_until(1000)
    first = sim.leader()
    assert first is not None
    target = next(i for i in sim.ids if i != first)
    sim.nodes[first].transfer_leadership(sim.now, target)
    t0 = sim.now
    sim.drain(first)
    assert not sim.nodes[first].is_leader
    sim.run_until(t0 + 20)
    assert sim.leader() == target


def test_transfer_target_is_the_cores_choice_of_an_answered_reachable_peer(sim: SimNet) -> None:
    assert make().transfer_target() is None  # nobody has answered yet
    sim.run_until(1000)
    first = sim.leader()
    assert first is not None
    leader = sim.nodes[first]
    others = [i for i in sim.ids if i != first]
    target = leader.transfer_target()
    assert target in others
    leader.peer_down(sim.now, target, PeerDownReason.NO_CONNECTION)
    sim.drain(first)
    rest = [i for i in others if i != target]
    assert leader.transfer_target() == rest[0]
    leader.peer_down(sim.now, rest[0], PeerDownReason.NO_CONNECTION)
    sim.drain(first)
    assert leader.transfer_target() is None


def test_confirm_gate_denial_withholds_leadership() -> None:
    n = make(peers=("b",), min_cluster_size=1)
    n2 = Node(Config(id="b", cluster="c", bootstrap=("a",), min_cluster_size=1), now=0, seed=1)
    # With min_cluster_size 1 and view 2, quorum is 2: a needs b's vote. Drive by hand.
    now = n.poll_timeout()
    assert now is not None
    n.handle_timeout(now)
    for out in n.drain():
        assert isinstance(out, Send)
        n2.handle_message(now, "a", out.data)
    replies = n2.drain()
    for out in replies:
        if isinstance(out, Send):
            n.handle_message(now, "b", out.data)
    outs = n.drain()
    for out in outs:
        if isinstance(out, Send):
            n2.handle_message(now, "a", out.data)
    for out in n2.drain():
        if isinstance(out, Send):
            n.handle_message(now, "b", out.data)
    outs = n.drain()
    confirms = [o for o in outs if isinstance(o, ConfirmLeader)]
    assert len(confirms) == 1
    term = confirms[0].term
    n.confirm_leader(now, term, False)
    assert not n.is_leader
    assert n.inspect()["confirm_denied"] == 1
    with pytest.raises(tenure.NoPendingConfirmError) as info:
        n.confirm_leader(now, term, True)
    assert info.value.code == "no_pending_confirm"
    assert str(term) in str(info.value)


def test_leader_handler_failed_rolls_back(sim: SimNet) -> None:
    sim.run_until(1000)
    leader = sim.leader()
    assert leader is not None
    node = sim.nodes[leader]
    with pytest.raises(tenure.NotLeaderInTermError):
        node.leader_handler_failed(sim.now, node.term + 5)
    node.leader_handler_failed(sim.now, node.term)
    assert not node.is_leader
    assert any(isinstance(o, BecameFollower) for o in node.drain())


def test_durable_node_persists_before_sending_and_restores() -> None:
    n = make(durable=True, pre_vote=False)
    t = n.poll_timeout()
    assert t is not None
    n.handle_timeout(t)
    out = n.drain()
    assert isinstance(out[0], Persist)
    assert out[0] == Persist(1, "a") and out[0].state == DurableState(1, "a")
    assert all(isinstance(o, Send) for o in out[1:])
    restored = Node(
        Config(id="a", cluster="c", bootstrap=("b", "c"), durable=True), now=0, restored=DurableState(5, "b")
    )
    assert restored.term == 5 and restored.voted_for == "b"


def test_broadcast_delivers_message_events(sim: SimNet) -> None:
    sim.nodes["n1"].broadcast(sim.now, b"hello")
    sim.drain("n1")
    sim.run_until(sim.now + 5)
    got = [(i, e) for _, i, e in sim.events if isinstance(e, Message)]
    assert sorted(got, key=lambda x: x[0]) == [("n2", Message("n1", b"hello")), ("n3", Message("n1", b"hello"))]
    with pytest.raises(tenure.PayloadTooLargeError) as info:
        sim.nodes["n1"].broadcast(sim.now, b"x" * 70000)
    assert info.value.code == "payload_too_large"
    with pytest.raises(TypeError):
        sim.nodes["n1"].broadcast(sim.now, "text")  # type: ignore[arg-type]


def test_membership_calls_and_their_errors() -> None:
    n = make()
    n.join(1, "d")
    assert n.drain() == [PeerJoined("d")]
    n.join(1, "d")  # idempotent
    assert n.drain() == []
    n.leave(2, "d")
    assert n.drain() == [PeerLeft("d")]
    n.peer_down(3, "c", PeerDownReason.REFUSED)  # the process is gone, the member stays
    assert n.view == ["a", "b", "c"] and n.inspect()["unreachable"] == {}
    n.peer_down(3, "c", "refused")
    n.peer_down(3, "c", PeerDownReason.NO_CONNECTION)
    assert "c" in n.inspect()["unreachable"]
    n.peer_down(3, "b", "terminated")
    assert n.view == ["a", "c"]
    with pytest.raises(tenure.UnknownPeerError) as unknown:
        n.leave(4, "zz")
    assert unknown.value.code == "unknown_peer" and '"zz"' in str(unknown.value)
    with pytest.raises(tenure.InvalidPeerError) as invalid:
        n.join(4, "")
    assert invalid.value.code == "invalid_peer"
    with pytest.raises(tenure.NotLeaderError) as not_leader:
        n.transfer_leadership(4, "c")
    assert not_leader.value.code == "not_leader"
    with pytest.raises(ValueError, match="unknown peer-down reason"):
        n.peer_down(4, "c", "asleep")
    with pytest.raises(TypeError):
        n.peer_down(4, "c", 3)  # type: ignore[arg-type]


def test_dropped_messages_raise_decode_error_and_are_counted() -> None:
    n = make()
    with pytest.raises(tenure.DecodeError) as info:
        n.handle_message(1, "b", b"garbage")
    assert info.value.reason is DropReason.MALFORMED and info.value.code == "malformed"
    other = wire.encode(wire.Envelope("other", "b", 1, wire.PreVote()))
    with pytest.raises(tenure.DecodeError) as info:
        n.handle_message(1, "b", other)
    assert info.value.reason is DropReason.WRONG_CLUSTER
    spoofed = wire.encode(wire.Envelope("c", "b", 1, wire.PreVote()))
    with pytest.raises(tenure.DecodeError) as info:
        n.handle_message(1, "c", spoofed)
    assert info.value.reason is DropReason.SENDER_MISMATCH
    with pytest.raises(tenure.DecodeError) as info:
        n.handle_message(1, "b", b"x" * 70000)
    assert info.value.reason is DropReason.OVERSIZED
    assert n.dropped(DropReason.MALFORMED) == 1 and n.dropped("wrong_cluster") == 1
    counts = n.inspect()["dropped_by_reason"]
    assert counts["sender_mismatch"] == 1 and counts["oversized"] == 1
    assert isinstance(info.value, tenure.TenureError) and isinstance(info.value, ValueError)


def test_the_sender_is_read_afresh_whenever_it_changes() -> None:
    # The binding reuses the text of the last sender when given the same or an equal str.
    n = make()
    from_b = wire.encode(wire.Envelope("c", "b", 1, wire.PreVote()))
    from_c = wire.encode(wire.Envelope("c", "c", 1, wire.PreVote()))
    n.handle_message(1, "b", from_b)
    n.handle_message(1, "".join(["b"]), from_b)
    n.handle_message(1, "".join(["c"]), from_c)
    with pytest.raises(tenure.DecodeError) as info:
        n.handle_message(1, "c", from_b)
    assert info.value.reason is DropReason.SENDER_MISMATCH

    class Liar(str):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = str.__hash__

    # A str subclass is never trusted to compare equal: its own text is read.
    n.handle_message(1, "b", from_b)
    with pytest.raises(tenure.DecodeError) as info:
        n.handle_message(1, Liar("c"), from_b)
    assert info.value.reason is DropReason.SENDER_MISMATCH


def test_authenticated_cluster_drops_unauthenticated_messages() -> None:
    n = make(key=b"secret")
    plain = wire.encode(wire.Envelope("c", "b", 1, wire.PreVote()))
    with pytest.raises(tenure.DecodeError) as info:
        n.handle_message(1, "b", plain)
    assert info.value.reason is DropReason.BAD_MAC
    for_c = wire.encode(wire.Envelope("c", "b", 1, wire.PreVote()), b"secret", "c")
    with pytest.raises(tenure.DecodeError) as info:
        n.handle_message(1, "b", for_c)
    assert info.value.reason is DropReason.BAD_MAC, "a message made for another node"
    tagged = wire.encode(wire.Envelope("c", "b", 1, wire.PreVote()), b"secret", "a")
    n.handle_message(1, "b", tagged)
    with pytest.raises(TypeError, match="receiver"):
        wire.encode(wire.Envelope("c", "b", 1, wire.PreVote()), b"secret")
    str_key = Config(id="a", cluster="c", key="secret")
    assert str_key.key == b"secret"


def test_inspect_has_every_spec_key() -> None:
    info = make().inspect()
    assert INSPECT_KEYS <= set(info)
    assert info["state"] == "follower" and info["bootstrap"] == ["b", "c"]
    assert set(info["dropped_by_reason"]) == {r.value for r in DropReason}


def test_config_validation_errors_and_warnings() -> None:
    v = Config(id="a", cluster="c", election_timeout_min=200).validate()
    assert (v.election_timeout_min, v.election_timeout_max) == (200, 400)
    assert v.lease_duration == 200  # default: election_timeout_min
    v = Config(id="a", cluster="c", lease_duration=120).validate()
    assert v.lease_duration == 120 and v.lease_span < 120
    v = Config(id="a", cluster="c", min_cluster_size=2, heartbeat_interval=60).validate()
    assert [w.code for w in v.warnings] == ["small_min_cluster_size", "slow_heartbeat"]
    assert make(min_cluster_size=1).warnings[0].code == "small_min_cluster_size"
    cases = [
        ({"cluster": ""}, "empty_id", "cluster"),
        ({"election_timeout_min": 0}, "zero_timeout", "election_timeout_min"),
        ({"election_timeout_min": 500, "election_timeout_max": 400}, "min_above_max", "500"),
        ({"heartbeat_interval": 150}, "heartbeat_not_below_election_timeout", "heartbeat_interval"),
        ({"min_cluster_size": 0}, "zero_min_cluster_size", "min_cluster_size"),
        ({"key": b""}, "empty_key", "key"),
        ({"id": "x" * 300}, "id_too_long", "id"),
        ({"lease_duration": 151}, "lease_out_of_range", "lease_duration (151 ms)"),
        ({"lease_duration": 50}, "lease_out_of_range", "lease_duration (50 ms)"),
        ({"lease_duration": 0}, "zero_timeout", "lease_duration"),
    ]
    for kw, code, mentions in cases:
        args: dict[str, object] = {"id": "a", "cluster": "c", **kw}
        with pytest.raises(tenure.ConfigError) as info:
            Node(Config(**args), now=0)  # type: ignore[arg-type]
        assert info.value.code == code
        assert mentions in str(info.value)


def test_wrong_argument_types_raise_type_error() -> None:
    n = make()
    with pytest.raises(TypeError):
        n.handle_timeout("soon")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        n.handle_message(1, "b", "text")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        n.join(1, 5)  # type: ignore[arg-type]
    with pytest.raises(OverflowError):
        n.handle_timeout(-1)
    with pytest.raises(TypeError, match="heartbeat_interval"):
        Node(Config(id="a", cluster="c", heartbeat_interval="x"), now=0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="bootstrap"):
        Config(id="a", cluster="c", bootstrap="b,c")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Node("not a config", now=0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Node(Config(id="a", cluster="c"))  # type: ignore[call-arg]


def test_events_are_frozen_dataclasses() -> None:
    e = BecameFollower(3, "b")
    assert dataclasses.astuple(e) == (3, "b")
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.term = 4  # type: ignore[misc]
    assert isinstance(e, tenure.Event) and not isinstance(Send("a", b""), tenure.Event)
    assert hash(BecameLeader(1)) == hash(BecameLeader(1))


def test_fence_checker() -> None:
    f = FenceChecker()
    assert f.highest is None
    assert f.check(4, "a") is FenceVerdict.ACCEPTED and FenceVerdict.ACCEPTED.accepted
    assert f.check(3, "b") is FenceVerdict.STALE
    assert f.check(4, "b") is FenceVerdict.ALREADY_FENCED
    assert f.check(4, "a") is FenceVerdict.ACCEPTED
    assert f.check(5, "b") is FenceVerdict.ACCEPTED
    assert f.highest == (5, "b")
    g = FenceChecker((5, "b"))
    assert g.check(5, "c") is FenceVerdict.ALREADY_FENCED and not FenceVerdict.ALREADY_FENCED.accepted


def test_durable_state_text_format() -> None:
    assert DurableState(42, "127.0.0.1:7001").encode() == '{"term":42,"voted_for":"127.0.0.1:7001"}\n'
    assert DurableState(0).encode() == '{"term":0,"voted_for":null}\n'
    # An id of "-" is a vote, not "no vote" (the old one-line format lost it).
    assert DurableState.decode(DurableState(5, "-").encode()) == DurableState(5, "-")
    assert DurableState.decode("42 127.0.0.1:7001\n") == DurableState(42, "127.0.0.1:7001")
    assert DurableState.decode("x y") is None


def test_wire_round_trips_every_message_kind() -> None:
    messages = [
        wire.PreVote(), wire.PreVoteReply(True), wire.Vote(True), wire.VoteReply(False),
        wire.Heartbeat(123), wire.HeartbeatAck(99), wire.TimeoutNow(), wire.App(b"\x01\x02"),
    ]  # fmt: skip
    for m in messages:
        for key in (None, b"k"):
            env = wire.Envelope("c", "a", 7, m)
            assert wire.decode(wire.encode(env, key, "b"), key, "b") == env
    with pytest.raises(tenure.DecodeError) as info:
        wire.decode(wire.encode(wire.Envelope("c", "a", 1, wire.TimeoutNow()), b"k1", "b"), b"k2", "b")
    assert info.value.reason is DropReason.BAD_MAC
    with pytest.raises(TypeError):
        wire.encode("nope")  # type: ignore[arg-type]


def test_python_m_tenure_help() -> None:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "tenure", "--help"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0
    assert out.stdout.startswith("usage: python -m tenure run --id HOST:PORT")
    bad = subprocess.run([sys.executable, "-m", "tenure", "run", "--bogus", "1"], capture_output=True, text=True,
                         timeout=30)  # fmt: skip
    assert bad.returncode == 2 and "--bogus" in bad.stderr


def test_version() -> None:
    assert tenure.__version__ == "0.1.0"


def test_python_m_tenure_run_reports_warnings_key_file_and_errors(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    from conftest import free_udp_ports

    a, b = (f"127.0.0.1:{p}" for p in free_udp_ports(2))
    key = tmp_path / "key"
    key.write_bytes(b"secret\n")
    args = [sys.executable, "-m", "tenure", "run", "--id", a, "--peer", b, "--cluster", "x"]
    proc = subprocess.Popen(
        [*args, "--min-cluster-size", "1", "--key-file", str(key)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        started = json.loads(proc.stdout.readline())  # the runtime's first event
        assert started["event"] == "started" and started["term"] == 0 and started["id"] == a
        warning = json.loads(proc.stdout.readline())
        assert warning["event"] == "warning" and warning["code"] == "small_min_cluster_size"
        proc.send_signal(signal.SIGTERM)
        rest = [json.loads(line) for line in proc.stdout]
        assert proc.wait(10) == 0
        assert rest[-1]["event"] == "stopped"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    missing = subprocess.run([*args, "--key-file", str(tmp_path / "nope")], capture_output=True, text=True, timeout=30)
    assert missing.returncode != 0 and "nope" in missing.stderr
    bad = subprocess.run([*args, "--heartbeat-interval", "500"], capture_output=True, text=True, timeout=30)
    assert bad.returncode != 0 and "heartbeat_interval" in bad.stderr


def test_ack_to_the_sender_reuses_its_str_and_stays_a_plain_str() -> None:
    """``drain`` hands back the sender's own ``str`` as ``Send.to`` (no new string per ack), but
    never a caller's ``str`` subclass instance, and the right peer after the sender changes."""

    class Peer(str):
        pass

    ids = ("a", "b", "c")
    node = Node(Config(id="b", cluster="c", bootstrap=ids), now=0, seed=1)
    node.drain()
    sender = "".join(["a"])  # a fresh, non-interned str

    def beat(sent_at: int, frm: str = "a") -> bytes:
        return wire.encode(wire.Envelope("c", frm, 1, wire.Heartbeat(sent_at)))

    def acks_of(outputs: Sequence[object]) -> list[Send]:
        # The first message from a peer is also answered with a Hello (wire versions): not an ack.
        return [o for o in outputs if isinstance(o, Send) and wire.decode(o.data).message.kind != "hello"]

    node.handle_message(1, sender, beat(1))
    acks = acks_of(node.drain())
    assert [a.to for a in acks] == ["a"] and acks[0].to is sender
    node.handle_message(2, Peer("a"), beat(2))
    (ack,) = acks_of(node.drain())
    assert ack.to == "a" and type(ack.to) is str
    node.handle_message(3, "a", beat(3))
    node.handle_timeout(10_000)  # campaigns: sends to both peers, not only the last sender
    sends = [o for o in node.drain() if isinstance(o, Send)]
    assert sorted({s.to for s in sends}) == ["a", "c"]
    assert all(type(s.to) is str for s in sends)


def test_the_leaders_value_reaches_every_member_and_proclaim_changes_it() -> None:
    sim = SimNet(value="http://first")
    sim.run_until(1000)
    leader = sim.leader()
    assert leader is not None
    assert {i: n.leader_value for i, n in sim.nodes.items()} == {i: "http://first" for i in sim.ids}
    assert sim.nodes[leader].inspect()["leader_value"] == "http://first"
    sim.nodes[leader].proclaim(sim.now, "http://second")
    sim.drain(leader)
    sim.run_until(sim.now + 5)
    assert all(n.leader_value == "http://second" for n in sim.nodes.values())
    follower = next(i for i in sim.ids if i != leader)
    with pytest.raises(tenure.NotLeaderError):
        sim.nodes[follower].proclaim(sim.now, "x")
    with pytest.raises(tenure.ConfigError, match="257 bytes") as info:
        sim.nodes[leader].proclaim(sim.now, "v" * 257)
    assert info.value.code == "value_too_long"
    with pytest.raises(tenure.ConfigError, match="257 bytes"):
        Config(id="a", cluster="c", value="v" * 257).validate()


def test_priorities_and_witnesses_reach_the_core_and_the_wire() -> None:
    sim = SimNet()
    ranks: dict[str, dict[str, object]] = {"n1": {"never_lead": True}, "n3": {"priority": 7}}
    for i, node_id in enumerate(sim.ids):
        cfg = Config(id=node_id, cluster="sim", bootstrap=tuple(sim.ids), **ranks.get(node_id, {}))  # type: ignore[arg-type]
        sim.nodes[node_id] = Node(cfg, now=0, seed=1000 + i)
    sim.run_until(5000)
    # n3 has the highest priority: it leads (first, or by a preemption); the witness never does.
    assert sim.leader() == "n3"
    assert all("n1" not in ids for ids in sim.leaders.values())
    # The leader hears every member, so it knows every rank (a follower knows those it talks to).
    state = sim.nodes["n3"].inspect()
    assert state["priority"] == 7 and state["never_lead"] is False
    assert state["peer_priorities"] == {"n1": {"priority": 0, "never_lead": True}}
    message = wire.Priority(7, never_lead=True, reply=False)
    env = wire.Envelope("sim", "n3", 2, message, incarnation=5)
    assert wire.decode(wire.encode(env)).message == message
    with pytest.raises(tenure.ConfigError, match="preempt_after"):
        Config(id="a", cluster="c", preempt_after=2**40).validate()
