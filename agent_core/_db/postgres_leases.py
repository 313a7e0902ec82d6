"""One writer per session on PostgreSQL: a session-level advisory lock held on a
connection of its own, which the run's writes then use.

``LeasedPostgres`` is what :class:`~agent_core.PostgresSessionService` builds on: its
:meth:`~LeasedPostgres.lease` takes the lock (waiting up to a timeout, in one round trip)
and :meth:`~LeasedPostgres._write` runs a session's work on the lease's connection when
this service holds the lease, else on a pool connection, one piece at a time per session.
The server frees the lock when the connection ends, so a killed holder never leaves a
session locked.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

from ..sessions.errors import SessionBusyError
from ..sessions.lease import busy_message, local_lease
from .postgres import PostgresBacked, in_transaction

if TYPE_CHECKING:
    from .postgres import AsyncConnection

__all__: list[str] = []

# The advisory lock of a session: one 64-bit number from the schema and the session's key.
_LOCK_KEY = "hashtextextended(current_schema() || '/' || %s, 0)"


class _Held:
    """A lease held through this service: its connection (holding the advisory lock),
    which the run's writes use, one at a time."""

    __slots__ = ("conn", "lock")

    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn
        self.lock = asyncio.Lock()


class LeasedPostgres(PostgresBacked):
    """A Postgres-backed service whose sessions have one writer at a time (see above)."""

    def __init__(
        self, dsn: str, *, min_size: int = 1, max_size: int = 10, timeout: float = 30.0
    ) -> None:
        super().__init__(dsn, min_size=min_size, max_size=max_size, timeout=timeout)
        # (app, user, session id) -> the lease held through this service (database loop only)
        self._held: dict[tuple[str, str, str], _Held] = {}
        # (app, user, session id) -> [lock, users]: writes without a lease, one at a time
        self._writing: dict[tuple[str, str, str], list[Any]] = {}

    # -- the lease ------------------------------------------------------------------------

    def lease(
        self, *, app_name: str, user_id: str, session_id: str, timeout: float
    ) -> AbstractAsyncContextManager[None]:
        """Hold the session's advisory lock; wait up to ``timeout`` seconds for it, then
        raise :class:`~agent_core.sessions.base.SessionBusyError`."""
        return self._lease((app_name, user_id, session_id), timeout)

    @asynccontextmanager
    async def _lease(self, key: tuple[str, str, str], timeout: float) -> AsyncIterator[None]:
        deadline = time.monotonic() + timeout
        async with local_lease((id(self), *key), timeout):
            started = self._db.submit(lambda: self._take(key, deadline - time.monotonic()))
            try:
                took = await asyncio.shield(asyncio.wrap_future(started))
            except asyncio.CancelledError:
                # Taken after all? Give it back once the attempt ends.
                started.add_done_callback(
                    lambda f: (
                        f.cancelled()
                        or f.exception() is not None
                        or self._db.submit(lambda: self._give_back(key))
                    )
                )
                raise
            if not took:
                raise SessionBusyError(busy_message(key, timeout))
            try:
                yield
            finally:
                await self._db.call(lambda: self._give_back(key))

    async def _take(self, key: tuple[str, str, str], timeout: float) -> bool:
        import psycopg.errors

        pool = await self._db.pool()
        conn = await pool.getconn()
        lock_key = json.dumps(key)
        try:
            if timeout <= 0:
                cur = await conn.execute(f"SELECT pg_try_advisory_lock({_LOCK_KEY})", (lock_key,))
                row = await cur.fetchone()
                took = bool(row and row[0])
            else:
                # One statement, so one round trip and its own transaction: were the
                # wait to time out, the statement fails and its lock_timeout setting is
                # undone with it (the target list is evaluated left to right).
                ms = f"{max(1, int(timeout * 1000))}ms"
                try:
                    await conn.execute(
                        "SELECT set_config('lock_timeout', %s, false),"
                        f" pg_advisory_lock({_LOCK_KEY}), set_config('lock_timeout', '0', false)",
                        (ms, lock_key),
                    )
                    took = True
                except psycopg.errors.LockNotAvailable:
                    took = False
        except BaseException:
            await pool.putconn(conn)
            raise
        if not took:
            await pool.putconn(conn)
            return False
        self._held[key] = _Held(conn)
        return True

    async def _give_back(self, key: tuple[str, str, str]) -> None:
        held = self._held.pop(key, None)
        if held is None:
            return
        pool = await self._db.pool()
        async with held.lock:
            try:
                await held.conn.execute("SELECT pg_advisory_unlock_all()")
            except Exception:
                await held.conn.close()  # a broken connection: the server freed the lock
            await pool.putconn(held.conn)

    async def _write(
        self, key: tuple[str, str, str], work: Any, *, one_statement: bool = False
    ) -> Any:
        """``work`` in a transaction on the lease's connection when this service holds
        the session's lease (a run needs no other connection), else on a pool connection
        (on the database loop).

        Work on one session through this service goes one piece at a time, so writes
        commit in the order they were asked for and their callers hear back in that
        order. ``one_statement`` work is its own transaction (no BEGIN/COMMIT)."""
        held = self._held.get(key)
        if held is not None:
            async with held.lock:
                return await in_transaction(held.conn, work, explicit=not one_statement)
        waiting = self._writing.get(key)
        if waiting is None:
            waiting = self._writing[key] = [asyncio.Lock(), 0]
        waiting[1] += 1
        try:
            async with waiting[0]:
                return await self._db.transaction(work, explicit=not one_statement)
        finally:
            waiting[1] -= 1
            if waiting[1] == 0:
                del self._writing[key]
