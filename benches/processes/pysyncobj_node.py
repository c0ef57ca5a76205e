"""One PySyncObj node that prints tenure's JSON event lines on every role change, so the process
benchmark can measure it exactly as it measures tenure's runtimes.

usage: pysyncobj_node.py SELF_ADDR PEER,PEER,... default|fast
"""

from __future__ import annotations

import json
import signal
import sys
import time

from pysyncobj import SyncObj, SyncObjConf

LEADER = 2  # pysyncobj's _RAFT_STATE.LEADER


def main() -> None:
    self_addr, peers, profile = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
    holder: dict[str, SyncObj] = {}

    def line(event: str) -> None:
        obj = holder.get("obj")
        term = obj.raftCurrentTerm if obj is not None else 0
        print(
            json.dumps(
                {
                    "ts_ms": int(time.time() * 1000),
                    "id": self_addr,
                    "event": event,
                    "term": term,
                }
            ),
            flush=True,
        )

    def on_state(_old: int, new: int) -> None:
        line("leader" if new == LEADER else "follower")

    # "fast" is close to tenure's defaults: 150-300 ms election timeout; 40 ms heartbeats, because
    # PySyncObj requires raftMinTimeout > 3 x appendEntriesPeriod.
    timing = (
        {"raftMinTimeout": 0.15, "raftMaxTimeout": 0.3, "appendEntriesPeriod": 0.04}
        if profile == "fast"
        else {}
    )
    conf = SyncObjConf(onStateChanged=on_state, **timing)
    holder["obj"] = SyncObj(self_addr, peers, conf=conf)
    line("started")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
