"""The asyncio runtime: one node per process over UDP, with callbacks.

Run three of these in three terminals::

    python examples/asyncio_runtime.py 127.0.0.1:7001 127.0.0.1:7002 127.0.0.1:7003
    python examples/asyncio_runtime.py 127.0.0.1:7002 127.0.0.1:7001 127.0.0.1:7003
    python examples/asyncio_runtime.py 127.0.0.1:7003 127.0.0.1:7001 127.0.0.1:7002

or ``python examples/asyncio_runtime.py --demo`` to run all three in one process for a few seconds.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import List, Optional

import tenure


def on_leader(term: int) -> None:
    # A plain function runs in a worker thread: it may block without stalling heartbeats.
    print(f"I lead term {term}: start the singleton work")


async def on_follower(term: int, leader: Optional[str]) -> None:
    print(f"term {term}: following {leader or 'nobody yet'}: stop the singleton work")


async def run_node(me: str, peers: List[str], seconds: Optional[float]) -> None:
    async with tenure.Elector(me, peers, cluster="example", on_leader=on_leader, on_follower=on_follower) as elector:
        if seconds is None:
            await asyncio.Event().wait()  # until Ctrl-C
        await asyncio.sleep(seconds or 0)
        print(elector.id, elector.role.value, "term", elector.term)


async def demo() -> None:
    base = int(os.environ.get("EXAMPLE_BASE_PORT", "7301"))
    ids = [f"127.0.0.1:{base + i}" for i in range(3)]
    await asyncio.gather(*(run_node(i, [p for p in ids if p != i], 2.0) for i in ids))


if __name__ == "__main__":
    if sys.argv[1:] == ["--demo"]:
        asyncio.run(demo())
    else:
        asyncio.run(run_node(sys.argv[1], sys.argv[2:], None))
