"""One SQLite connection on one dedicated thread, for the SQLite-backed services.

Every service built on SQLite owns a :class:`SqliteDatabase`: a single-thread executor
whose thread opens the connection (WAL journal, a busy timeout) and runs every piece of
database work, so the event loop never blocks on the disk or on another process's lock
and the connection is only ever touched by the thread that created it. Writes run in
``BEGIN IMMEDIATE`` transactions (the write lock is taken up front, so two writers never
deadlock upgrading a read lock; a writer waits up to the busy timeout for another
process's write to end). Reads run in a deferred transaction so that they see one
consistent snapshot.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from tooling.integration import Closing

if TYPE_CHECKING:
    import sqlite3

__all__: list[str] = []

T = TypeVar("T")

#: How long, in seconds, a transaction waits for another connection's lock by default.
DEFAULT_BUSY_TIMEOUT = 30.0


class SqliteDatabase:
    """A SQLite database file reached through one connection on one worker thread.

    ``schema`` is a list of idempotent statements (``CREATE TABLE IF NOT EXISTS ...``)
    run in one ``BEGIN IMMEDIATE`` transaction when the connection opens, on first use.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        schema: Sequence[str],
        *,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
        thread_name: str = "agent_core-sqlite",
    ) -> None:
        if busy_timeout < 0:
            raise ValueError("busy_timeout must not be negative")
        self.path = os.fspath(path)
        self._schema = tuple(schema)
        self._busy_timeout = busy_timeout
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=thread_name)
        self._conn: sqlite3.Connection | None = None
        self._state_lock = threading.Lock()
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    # -- on the worker thread -------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._open()
        return self._conn

    def _open(self) -> sqlite3.Connection:
        import sqlite3  # here, not at import: `import agent_core` need not load it

        # isolation_level=None: no implicit transactions; we issue BEGIN/COMMIT ourselves.
        conn = sqlite3.connect(self.path, timeout=self._busy_timeout, isolation_level=None)
        try:
            # The busy timeout first, so that switching to WAL waits for other openers.
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            # NORMAL is safe with WAL: a crash of the process loses nothing committed; a
            # power loss may lose the last commits but never corrupts the database.
            conn.execute("PRAGMA synchronous = NORMAL")
            self._transaction(conn, "BEGIN IMMEDIATE", self._create_schema)
        except BaseException:
            conn.close()
            raise
        return conn

    def _create_schema(self, conn: sqlite3.Connection) -> None:
        for statement in self._schema:
            conn.execute(statement)

    @staticmethod
    def _transaction(
        conn: sqlite3.Connection, begin: str, work: Callable[[sqlite3.Connection], T]
    ) -> T:
        conn.execute(begin)
        try:
            result = work(conn)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return result

    def _run(self, begin: str, work: Callable[[sqlite3.Connection], T]) -> T:
        return self._transaction(self._connection(), begin, work)

    def _close_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    # -- from any thread ------------------------------------------------------------------

    def _submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        with self._state_lock:
            if self._closed:
                raise RuntimeError(f"the SQLite database {self.path!r} is closed")
            return self._executor.submit(fn, *args)

    async def write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work(conn)`` on the database thread in a ``BEGIN IMMEDIATE`` transaction.

        It commits when ``work`` returns and rolls back when it raises. If the awaiting
        task is cancelled before the work has started, it never runs; once started, it
        runs to its end (commit or rollback) whatever happens to the awaiting task.
        """
        return await asyncio.wrap_future(self._submit(self._run, "BEGIN IMMEDIATE", work))

    async def read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work(conn)`` on the database thread in a read transaction (one snapshot)."""
        return await asyncio.wrap_future(self._submit(self._run, "BEGIN", work))

    def _begin_close(self) -> Future[None] | None:
        with self._state_lock:
            if self._closed:
                return None
            self._closed = True
            # Queued after any work already submitted, which still runs.
            return self._executor.submit(self._close_connection)

    def close(self) -> None:
        """Finish the work already submitted, close the connection and stop the thread.

        Blocks until done. Calling it again does nothing.
        """
        done = self._begin_close()
        self._executor.shutdown(wait=True)
        if done is not None:
            done.result()

    async def aclose(self) -> None:
        """:meth:`close` without blocking the event loop."""
        done = self._begin_close()
        try:
            if done is not None:
                await asyncio.wrap_future(done)
        finally:
            self._executor.shutdown(wait=False)


class SqliteBacked(Closing):
    """What every SQLite-backed service shares: its database, closing, context managers."""

    _schema: Sequence[str] = ()
    _thread_name: str = "agent_core-sqlite"

    def __init__(
        self, path: str | os.PathLike[str], *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT
    ) -> None:
        self._db = SqliteDatabase(
            path, self._schema, busy_timeout=busy_timeout, thread_name=self._thread_name
        )

    @property
    def path(self) -> str:
        """The database file."""
        return self._db.path

    def close(self) -> None:
        """Finish pending work and close the database (blocks; idempotent)."""
        self._db.close()

    async def aclose(self) -> None:
        """Finish pending work and close the database without blocking the event loop."""
        await self._db.aclose()
