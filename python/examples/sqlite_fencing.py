"""A fenced write to SQLite: the leader's term (the fencing token) is checked against the highest
term the database has seen, inside the same transaction as the write, so a deposed leader that
still believes it leads cannot write after its successor has.

Run ``python examples/sqlite_fencing.py``: it shows an accepted write by the leader of term 5, then a
refused write from a stale leader of term 4, and a refused write by another node claiming term 5.
With a live cluster, pass ``lease.term`` and ``elector.id`` from leader-only work (see
``leader_only_work.py``).
"""

from __future__ import annotations

import sqlite3
from typing import Optional, Tuple

from tenure import FenceChecker, FenceVerdict

SCHEMA = """
CREATE TABLE IF NOT EXISTS fence (resource TEXT PRIMARY KEY, term INTEGER NOT NULL, leader TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS report (day TEXT PRIMARY KEY, body TEXT NOT NULL, term INTEGER NOT NULL);
"""


def fenced_write(db: sqlite3.Connection, term: int, leader: str, day: str, body: str) -> FenceVerdict:
    """Writes the day's report if (term, leader) passes the fence; one transaction for both."""
    with db:  # commits on success, rolls back on any exception
        db.execute("BEGIN IMMEDIATE")  # take the write lock before reading the fence
        row: Optional[Tuple[int, str]] = db.execute(
            "SELECT term, leader FROM fence WHERE resource = 'report'"
        ).fetchone()
        checker = FenceChecker(row)
        verdict = checker.check(term, leader)
        if not verdict.accepted:
            return verdict  # nothing written; the transaction ends without changes
        highest = checker.highest
        assert highest is not None
        db.execute(
            "INSERT INTO fence (resource, term, leader) VALUES ('report', ?, ?) "
            "ON CONFLICT(resource) DO UPDATE SET term = excluded.term, leader = excluded.leader",
            highest,
        )
        db.execute(
            "INSERT INTO report (day, body, term) VALUES (?, ?, ?) "
            "ON CONFLICT(day) DO UPDATE SET body = excluded.body, term = excluded.term",
            (day, body, term),
        )
        return verdict


def main() -> None:
    db = sqlite3.connect(":memory:", isolation_level=None)  # explicit BEGIN/COMMIT
    db.executescript(SCHEMA)
    print("leader of term 5:", fenced_write(db, 5, "127.0.0.1:7001", "2026-12-02", "all green").value)
    print("stale leader of term 4:", fenced_write(db, 4, "127.0.0.1:7002", "2026-12-02", "stale").value)
    print("another node in term 5:", fenced_write(db, 5, "127.0.0.1:7003", "2026-12-02", "dup").value)
    print("stored:", db.execute("SELECT day, body, term FROM report").fetchall())


if __name__ == "__main__":
    main()
