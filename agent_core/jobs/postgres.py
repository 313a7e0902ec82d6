"""``PostgresJobStore``: jobs in PostgreSQL, shared by processes on many machines.

A claim locks the row it takes with ``FOR UPDATE SKIP LOCKED`` (two workers never wait
on, or take, the same job); submissions of one job key are serialized with a
transaction-scoped advisory lock; leases are measured by the server's clock.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ._rows import Tx
from ._sql import SqlJobStore

__all__ = ["PostgresJobStore"]


class PostgresJobStore(SqlJobStore):
    """Jobs in the PostgreSQL database at ``dsn`` (a ``postgresql://`` URL or a libpq
    string; extra ``[postgres]``)."""

    placeholder = "%s"
    now_sql = "extract(epoch from clock_timestamp())"
    lock_suffix = "FOR UPDATE SKIP LOCKED"

    def __init__(self, dsn: str, *, table: str = "agent_jobs", max_size: int = 4) -> None:
        super().__init__(table=table)
        from psycopg_pool import ConnectionPool

        self.dsn = dsn
        self._pool = ConnectionPool(dsn, min_size=1, max_size=max_size, open=True)
        self.create_tables()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Any]:
        """A cursor inside one PostgreSQL transaction, committed when the block ends."""
        with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cursor:
            yield cursor

    def lock_key(self, tx: Tx, key: str) -> None:
        """Two submissions of one key wait for each other (one creates, one joins)."""
        tx.run("SELECT pg_advisory_xact_lock(hashtext(?))", (key,))

    async def close(self) -> None:
        """Close the connection pool."""
        self._pool.close()

    def __repr__(self) -> str:
        return f"PostgresJobStore(table={self.table!r})"
