"""The API conformance story through the Python package: ``python story_python.py async|sync``
prints the story's normalised records as one JSON list (see story.md). The asyncio
:class:`tenure.Elector` and the threaded :class:`tenure.SyncElector` each run the whole story; only
what is idiomatic differs (``while_leader`` tasks vs ``on_leader`` callbacks)."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import tenure

Record = list[Any]
TIMEOUT = 20.0
# The fields of inspect() that are configuration defaults every host must share.
DEFAULT_FIELDS = ("heartbeat_interval", "election_timeout_min", "election_timeout_max", "ghost_ttl", "min_cluster_size")


def free_ids(n: int) -> list[str]:
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ids = [f"127.0.0.1:{s.getsockname()[1]}" for s in socks]
    for s in socks:
        s.close()
    return ids


BAD_INPUTS: list[tuple[str, dict[str, Any]]] = [
    ("id", {"id": "nope"}),
    ("peer", {"peers": ["127.0.0.1"]}),
    ("timeouts", {"election_timeout_min": 500, "election_timeout_max": 400}),
    ("cluster", {"cluster": ""}),
    ("heartbeat_interval", {"heartbeat_interval": 0}),
]


def code_of(e: BaseException) -> str:
    return e.code if isinstance(e, tenure.TenureError) else type(e).__name__


def defaults_record(inspect: dict[str, Any]) -> Record:
    return ["defaults", {k: inspect[k] for k in DEFAULT_FIELDS}]


# ----------------------------------------------------------------------------------------------
# asyncio Elector
# ----------------------------------------------------------------------------------------------


async def async_story() -> list[Record]:
    out: list[Record] = []
    ids = free_ids(3)
    for name, bad in BAD_INPUTS:
        args: dict[str, Any] = {"id": ids[0], "peers": ids[1:], "cluster": "api", **bad}
        try:
            e = tenure.Elector(args.pop("id"), args.pop("peers"), **args)
            await e.start()
            await e.stop()
            out.append(["bad_input", name, None])
        except Exception as err:  # noqa: BLE001 - the code is the record
            out.append(["bad_input", name, code_of(err)])

    # Cluster 1: leader work that fails twice, then succeeds.
    attempts: list[int] = []
    warned: list[str] = []

    async def work(lease: tenure.Lease) -> None:
        attempts.append(lease.term)
        if len(attempts) <= 2:
            raise RuntimeError(f"attempt {len(attempts)} fails")
        await lease.wait_lost()

    electors = [
        tenure.Elector(i, [p for p in ids if p != i], cluster="api", on_warning=lambda c, m: warned.append(c))
        for i in ids
    ]
    for e in electors:
        e.while_leader(work)
        await e.start()
    leader = await _async_leader(electors)
    out.append(["leader_elected"])
    out.append(defaults_record(leader.inspect()))
    deadline = time.monotonic() + TIMEOUT
    while len(attempts) < 3 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    out.append(["work", "attempts_until_success", len(attempts), "same_term", len(set(attempts)) == 1])
    leader = await _async_leader(electors)
    lease = leader.lease
    assert lease is not None
    await lease.wait_valid()
    out.append(["lease", "before_pause", lease.valid])
    await asyncio.sleep(0.5)
    out.append(["lease", "after_pause", lease.valid])
    old = leader
    old.transfer_leadership()
    new = await _async_leader(electors, exclude=old)
    out.append(["transfer", "new_leader", new is not old, "old_lease_valid", lease.valid])
    out.append(["warned", "leader_work_failed", "leader_work_failed" in warned])
    try:
        old.transfer_leadership()
        out.append(["bad_call", "transfer_by_follower", None])
    except Exception as err:  # noqa: BLE001
        out.append(["bad_call", "transfer_by_follower", code_of(err)])
    await new.stop()
    rest = [e for e in electors if e is not new]
    after = await _async_leader(rest)
    out.append(["graceful_stop", "successor", after is not new])
    for e in rest:
        await e.stop()

    # Cluster 2: leader work that always fails.
    ids = free_ids(3)

    async def always(lease: tenure.Lease) -> None:
        raise RuntimeError("always fails")

    electors = [tenure.Elector(i, [p for p in ids if p != i], cluster="api2") for i in ids]
    for e in electors:
        e.while_leader(always)
        await e.start()
    deadline = time.monotonic() + TIMEOUT
    # Two of three stopped leave no quorum: the third can never lead, so never fail, again.
    while sum(not e.running for e in electors) < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    codes = [code_of(e.error) if e.error is not None else ("still_running" if e.running else None) for e in electors]
    for e in electors:
        await e.stop()
    out.append(["always_fails", sorted(codes, key=str)])
    return out


async def _async_leader(electors: list[tenure.Elector], exclude: Any = None) -> tenure.Elector:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        for e in electors:
            if e is not exclude and e.running and e.is_leader:
                return e
        await asyncio.sleep(0.02)
    raise TimeoutError("no leader")


# ----------------------------------------------------------------------------------------------
# SyncElector
# ----------------------------------------------------------------------------------------------


def sync_story() -> list[Record]:
    out: list[Record] = []
    ids = free_ids(3)
    for name, bad in BAD_INPUTS:
        args: dict[str, Any] = {"id": ids[0], "peers": ids[1:], "cluster": "api", **bad}
        try:
            e = tenure.SyncElector(args.pop("id"), args.pop("peers"), **args)
            e.stop()
            out.append(["bad_input", name, None])
        except Exception as err:  # noqa: BLE001
            out.append(["bad_input", name, code_of(err)])

    attempts: list[int] = []
    warned: list[str] = []
    lock = threading.Lock()

    def on_leader(term: int) -> None:
        with lock:
            attempts.append(term)
            n = len(attempts)
        if n <= 2:
            raise RuntimeError(f"attempt {n} fails")

    electors = [
        tenure.SyncElector(
            i, [p for p in ids if p != i], cluster="api", on_leader=on_leader, on_warning=lambda c, m: warned.append(c)
        )
        for i in ids
    ]
    leader = _sync_leader(electors)
    out.append(["leader_elected"])
    out.append(defaults_record(leader.inspect()))
    _wait(lambda: len(attempts) >= 3)
    out.append(["work", "attempts_until_success", len(attempts), "same_term", len(set(attempts)) == 1])
    leader = _sync_leader(electors)
    lease = leader.wait_leader(int(TIMEOUT * 1000))
    assert lease is not None
    _wait(lambda: lease.valid)
    out.append(["lease", "before_pause", lease.valid])
    time.sleep(0.5)
    out.append(["lease", "after_pause", lease.valid])
    old = leader
    old.transfer_leadership()
    new = _sync_leader(electors, exclude=old)
    out.append(["transfer", "new_leader", new is not old, "old_lease_valid", lease.valid])
    out.append(["warned", "leader_work_failed", "leader_work_failed" in warned])
    try:
        old.transfer_leadership()
        out.append(["bad_call", "transfer_by_follower", None])
    except Exception as err:  # noqa: BLE001
        out.append(["bad_call", "transfer_by_follower", code_of(err)])
    new.stop()
    rest = [e for e in electors if e is not new]
    after = _sync_leader(rest)
    out.append(["graceful_stop", "successor", after is not new])
    for e in rest:
        e.stop()

    ids = free_ids(3)

    def always(term: int) -> None:
        raise RuntimeError("always fails")

    electors = [tenure.SyncElector(i, [p for p in ids if p != i], cluster="api2", on_leader=always) for i in ids]
    # Two of three stopped leave no quorum: the third can never lead, so never fail, again.
    _wait(lambda: sum(not e.running for e in electors) >= 2)
    codes = [code_of(e.error) if e.error is not None else ("still_running" if e.running else None) for e in electors]
    for e in electors:
        e.stop()
    out.append(["always_fails", sorted(codes, key=str)])
    return out


def _wait(ok: Callable[[], bool]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not ok() and time.monotonic() < deadline:
        time.sleep(0.02)


def _sync_leader(electors: list[tenure.SyncElector], exclude: Any = None) -> tenure.SyncElector:
    found: list[tenure.SyncElector] = []
    _wait(lambda: bool(found.extend(e for e in electors if e is not exclude and e.running and e.is_leader) or found))
    if not found:
        raise TimeoutError("no leader")
    return found[0]


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "async"
    records = asyncio.run(async_story()) if mode == "async" else sync_story()
    print(json.dumps(records))
