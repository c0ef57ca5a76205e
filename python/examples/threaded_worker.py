"""Leader election in threaded code (a Flask/Django/Celery-style worker) with tenure.SyncElector.

Three electors in one process elect a leader; the leader runs batches while its lease is valid,
then stops (handing leadership over) and another node takes over with a higher term, the fencing
token. Run: ``python examples/threaded_worker.py``.
"""

from __future__ import annotations

import socket
import threading
from typing import Callable, List

import tenure


def free_ports(n: int) -> List[int]:
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def main() -> None:
    ids = [f"127.0.0.1:{p}" for p in free_ports(3)]

    def announce(me: str) -> Callable[[int], None]:
        return lambda term: print(f"{me} leads term {term} (on {threading.current_thread().name})")

    electors = [
        tenure.SyncElector(
            me,
            [p for p in ids if p != me],
            cluster="threaded-demo",
            on_leader=announce(me),
            election_timeout_min=150,
            election_timeout_max=300,
            heartbeat_interval=30,
        )
        for me in ids
    ]
    try:
        first = None
        while first is None:
            first = next((e for e in electors if e.wait_leader(timeout_ms=50) is not None), None)
        with first.leading(timeout_ms=5000) as lease:
            for batch in range(3):
                lease.check()  # valid when handed over; raises LeadershipLost once it is not
                print(f"batch {batch} written with fencing token {lease.term}")
        first.stop(handover_timeout_ms=2000)
        others = [e for e in electors if e is not first]
        second = None
        while second is None:
            second = next((e for e in others if e.wait_leader(timeout_ms=50) is not None), None)
        print(f"handed over: {second.id} leads term {second.term} > {lease.term}")
    finally:
        for e in electors:
            e.stop(handover_timeout_ms=0)


if __name__ == "__main__":
    main()
