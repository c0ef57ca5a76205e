"""Leader-only work that stops the moment leadership is lost.

Two styles: ``elector.while_leader(fn)`` runs ``fn(lease)`` every time this node leads and cancels
it on loss; ``async with elector.leadership() as lease:`` waits to lead, then runs the block and
raises ``tenure.LeadershipLost`` out of it if leadership ends inside. The lease carries the
fencing token (``lease.term``) and ``lease.valid`` (the leader's quorum-backed deadline).

Run ``python examples/leader_only_work.py``: three nodes in one process; the first leader is
stopped after a second, which hands leadership over.
"""

from __future__ import annotations

import asyncio
import os
from typing import List

import tenure
from tenure import Elector, Lease


async def scheduler(lease: Lease) -> None:
    """Runs while this node leads; cancelled when it stops leading."""
    tick = 0
    try:
        while True:
            if lease.valid:  # check before every irreversible step
                tick += 1
                print(f"term {lease.term}: scheduling batch {tick}")
            await asyncio.sleep(0.2)
    except asyncio.CancelledError:
        print(f"term {lease.term}: leadership lost, scheduler stopped after {tick} batches")
        raise


async def one_shot(elector: Elector) -> None:
    try:
        async with elector.leadership() as lease:
            print(f"{elector.id} leads term {lease.term}: running a one-shot job")
            await asyncio.sleep(3600)
    except tenure.LeadershipLost:
        print(f"{elector.id}: one-shot job interrupted by loss of leadership")


async def main() -> None:
    base = int(os.environ.get("EXAMPLE_BASE_PORT", "7311"))
    ids = [f"127.0.0.1:{base + i}" for i in range(3)]
    electors: List[Elector] = [Elector(i, [p for p in ids if p != i], cluster="work") for i in ids]
    for e in electors:
        e.while_leader(scheduler)
        await e.start()
    jobs = [asyncio.create_task(one_shot(e)) for e in electors]
    while not any(e.is_leader for e in electors):
        await asyncio.sleep(0.05)
    await asyncio.sleep(1.0)
    leader = next(e for e in electors if e.is_leader)
    print(f"stopping {leader.id}: it hands leadership over")
    await leader.stop()
    await asyncio.sleep(1.0)
    for e in electors:
        await e.stop()
    for job in jobs:
        job.cancel()
    await asyncio.gather(*jobs, return_exceptions=True)


if __name__ == "__main__":
    asyncio.run(main())
