"""The sans-IO layer: three nodes in one process, an in-memory network and a simulated clock.

You bring the transport and the time; the node tells you what to send, what to store and what
happened. Run: ``python examples/sans_io.py``.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

import tenure
from tenure import BecameFollower, BecameLeader, Config, ConfirmLeader, Node, Persist, Send

IDS = ["alpha", "beta", "gamma"]


def main() -> None:
    nodes: Dict[str, Node] = {
        node_id: Node(Config(id=node_id, cluster="example", bootstrap=tuple(IDS)), now=0, seed=i)
        for i, node_id in enumerate(IDS)
    }
    in_flight: List[Tuple[int, str, str, bytes]] = []  # (deliver_at, from, to, bytes)
    now = 0

    def drain(node_id: str) -> None:
        node = nodes[node_id]
        for out in node.drain():  # after EVERY input, in order
            if isinstance(out, Send):
                in_flight.append((now + 1, node_id, out.to, out.data))  # 1 ms of latency
            elif isinstance(out, Persist):
                pass  # with durable=True: store (out.term, out.voted_for) before sending anything after it
            elif isinstance(out, ConfirmLeader):
                node.confirm_leader(now, out.term, True)
                drain(node_id)
            elif isinstance(out, BecameLeader):
                print(f"{now:>5} ms  {node_id} leads term {out.term}")
            elif isinstance(out, BecameFollower) and out.leader is not None:
                print(f"{now:>5} ms  {node_id} follows {out.leader} in term {out.term}")

    crashed = ""
    while now < 2000:
        deadlines = [n.poll_timeout() for i, n in nodes.items() if i != crashed]
        candidates = [t for t in deadlines if t is not None] + [m[0] for m in in_flight]
        now = max(now, min(candidates))
        for msg in [m for m in in_flight if m[0] <= now]:
            in_flight.remove(msg)
            _, src, dst, data = msg
            if crashed in (src, dst):
                continue
            try:
                nodes[dst].handle_message(now, src, data)
            except tenure.DecodeError as e:
                print(f"dropped: {e.reason}")
            drain(dst)
        for node_id, node in nodes.items():
            deadline = node.poll_timeout()
            if node_id != crashed and deadline is not None and deadline <= now:
                node.handle_timeout(now)
                drain(node_id)
        leader = next((i for i, n in nodes.items() if n.is_leader and i != crashed), None)
        if now >= 1000 and not crashed and leader is not None:
            crashed = leader
            print(f"{now:>5} ms  {leader} crashes")
    survivor = next(i for i, n in nodes.items() if n.is_leader and i != crashed)
    print(f"leader at the end: {survivor}, term {nodes[survivor].term}")


if __name__ == "__main__":
    main()
