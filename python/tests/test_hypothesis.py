"""Random sequences of API calls with random and garbage arguments: the interpreter never crashes
and only documented exceptions come out (TypeError, OverflowError, ValueError, tenure.TenureError)."""

from __future__ import annotations

from typing import Any, List

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import tenure
from tenure import Config, FenceChecker, Node, PeerDownReason, Role, wire

DOCUMENTED = (TypeError, OverflowError, ValueError, tenure.TenureError)
PEERS = ["b", "c", "d", "e"]

garbage = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    st.text(max_size=20),
    st.binary(max_size=40),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
times = st.integers(min_value=0, max_value=10**6)
peer_ids = st.one_of(st.sampled_from([*PEERS, "a"]), st.text(max_size=300))


def call(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except DOCUMENTED:
        pass


class NodeMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.now = 0
        self.node = Node(Config(id="a", cluster="c", bootstrap=("b", "c")), now=0, seed=0)
        self.peer = Node(Config(id="b", cluster="c", bootstrap=("a", "c")), now=0, seed=1)
        self.sent: List[bytes] = []

    @initialize(seed=st.integers(min_value=0, max_value=2**64 - 1), durable=st.booleans(), key=st.booleans())
    def setup(self, seed: int, durable: bool, key: bool) -> None:
        k = b"k" if key else None
        self.node = Node(Config(id="a", cluster="c", bootstrap=("b", "c"), durable=durable, key=k), now=0, seed=seed)
        self.peer = Node(Config(id="b", cluster="c", bootstrap=("a", "c"), key=k), now=0, seed=seed ^ 1)

    def drain(self) -> None:
        for out in self.node.drain():
            assert isinstance(out, (tenure.Send, tenure.Persist, tenure.Event))
            if isinstance(out, tenure.Send):
                self.sent.append(out.data)
                if out.to == "b":
                    call(self.peer.handle_message, self.now, "a", out.data)
            elif isinstance(out, tenure.ConfirmLeader):
                call(self.node.confirm_leader, self.now, out.term, True)
        for out in self.peer.drain():
            if isinstance(out, tenure.Send) and out.to == "a":
                call(self.node.handle_message, self.now, "b", out.data)
            elif isinstance(out, tenure.ConfirmLeader):
                call(self.peer.confirm_leader, self.now, out.term, True)

    @rule(dt=st.integers(min_value=0, max_value=400))
    def advance(self, dt: int) -> None:
        self.now += dt
        self.node.handle_timeout(self.now)
        self.peer.handle_timeout(self.now)
        self.drain()

    @rule(data=st.binary(max_size=200), sender=peer_ids)
    def random_bytes(self, data: bytes, sender: str) -> None:
        call(self.node.handle_message, self.now, sender, data)
        self.drain()

    @precondition(lambda self: bool(self.sent))
    @rule(i=st.integers(min_value=0), flip=st.integers(min_value=0), bit=st.integers(min_value=0, max_value=7))
    def mutated_real_message(self, i: int, flip: int, bit: int) -> None:
        data = bytearray(self.sent[i % len(self.sent)])
        if data:
            data[flip % len(data)] ^= 1 << bit
        call(self.node.handle_message, self.now, "b", bytes(data))
        self.drain()

    @rule(method=st.sampled_from(["handle_message", "handle_timeout", "join", "leave", "peer_down",
                                  "confirm_leader", "leader_handler_failed", "transfer_leadership",
                                  "broadcast", "dropped", "poll_output"]),
          args=st.lists(garbage, max_size=5))  # fmt: skip
    def garbage_call(self, method: str, args: List[Any]) -> None:
        call(getattr(self.node, method), *args)
        self.drain()

    @rule(peer=peer_ids, reason=st.one_of(st.sampled_from([r.value for r in PeerDownReason]), garbage))
    def membership(self, peer: str, reason: Any) -> None:
        call(self.node.join, self.now, peer)
        call(self.node.peer_down, self.now, peer, reason)
        call(self.node.leave, self.now, peer)
        self.drain()

    @rule(term=st.integers(min_value=-5, max_value=2**64 + 5), granted=garbage)
    def confirm_and_fail(self, term: int, granted: Any) -> None:
        call(self.node.confirm_leader, self.now, term, granted)
        call(self.node.leader_handler_failed, self.now, term)
        call(self.node.transfer_leadership, self.now, "b")
        self.drain()

    @rule(payload=st.one_of(st.binary(max_size=100), garbage))
    def broadcast(self, payload: Any) -> None:
        call(self.node.broadcast, self.now, payload)
        self.drain()

    @rule(args=st.lists(garbage, max_size=3))
    def garbage_everywhere_else(self, args: List[Any]) -> None:
        call(wire.decode, *args)
        call(wire.encode, *args)
        call(FenceChecker, *args)
        call(lambda *a: FenceChecker().check(*a), *args)
        call(lambda *a: Node(*a), *args)
        call(
            lambda *a: Node(Config(id="a", cluster="c"), now=a[0] if a else 0, seed=a[1] if len(a) > 1 else None), *args
        )

    @invariant()
    def state_is_consistent(self) -> None:
        node = self.node
        assert node.role in set(Role)
        assert node.is_leader == (node.role is Role.LEADER)
        info = node.inspect()
        assert info["term"] == node.term and info["state"] == node.role.value
        if node.is_leader:
            assert node.fencing_token == node.term and node.leader == "a"


NodeMachine.TestCase.settings = settings(
    max_examples=150, stateful_step_count=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
TestNodeMachine = NodeMachine.TestCase
