"""``SqliteJobStore``: jobs in a SQLite file, shared by the processes of one machine
(and ``InMemoryJobStore``: the same rules on a private in-memory database)."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ._sql import SqlJobStore

__all__ = ["InMemoryJobStore", "SqliteJobStore"]

# The database's clock, in seconds since the epoch (julianday has sub-second precision).
_NOW = "((julianday('now') - 2440587.5) * 86400.0)"


class SqliteJobStore(SqlJobStore):
    """Jobs in the SQLite file at ``path`` (created when missing): every process of this
    machine using the file sees the same jobs; writes are serialized by SQLite's lock
    (``BEGIN IMMEDIATE``), so a job is claimed by one process at a time."""

    now_sql = _NOW

    def __init__(self, path: str | Path, *, table: str = "agent_jobs") -> None:
        super().__init__(table=table)
        self.path = str(path)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(
            self.path, check_same_thread=False, isolation_level=None, timeout=30.0
        )
        if self.path != ":memory:":
            self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA busy_timeout=30000")
        self.create_tables()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Any]:
        """A cursor inside one SQLite transaction, committed when the block ends."""
        with self._lock:
            cursor = self._conn.cursor()
            cursor.execute("BEGIN IMMEDIATE")
            try:
                yield cursor
            except BaseException:
                cursor.execute("ROLLBACK")
                raise
            cursor.execute("COMMIT")

    async def close(self) -> None:
        """Close the database file."""
        with self._lock:
            self._conn.close()

    def __repr__(self) -> str:
        return f"SqliteJobStore({self.path!r})"


class InMemoryJobStore(SqliteJobStore):
    """Jobs in this process's memory: they do not survive it (for tests and one-process
    apps); the same rules as the database stores."""

    def __init__(self) -> None:
        super().__init__(":memory:")

    def __repr__(self) -> str:
        return "InMemoryJobStore()"
