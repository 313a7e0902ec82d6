"""A PostgreSQL connection pool on one dedicated event loop, for the Postgres services.

Every service built on PostgreSQL owns a :class:`PostgresDatabase`: a thread running
its own event loop, where psycopg's :class:`~psycopg_pool.AsyncConnectionPool` lives and
every piece of database work runs. Callers on any event loop (a sync ``Runner.run``
drives a fresh loop per run) reach it through :meth:`PostgresDatabase.call`, so the pool
is never tied to a loop that has ended. Work that has started runs to its end (commit or
rollback) even when the awaiting task is cancelled.

The pool checks a connection before handing it out and replaces broken ones, so after a
server restart the next operations reconnect. A connection that breaks during an
operation (or a server that cannot be reached within the pool's timeout) raises
:class:`~agent_core.sessions.base.SessionStoreError`; the transaction it was in is rolled
back by the server, so nothing of it is stored. Tables are created on first use, in one
transaction that holds an advisory lock, so several processes starting at once on a fresh
database do not trip over each other's ``CREATE TABLE``.

psycopg is imported when a Postgres service is built, not before.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from tooling.integration import Closing

from ..sessions.base import SessionStoreError

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import AsyncConnectionPool

    AsyncConnection: TypeAlias = psycopg.AsyncConnection[tuple[Any, ...]]

__all__: list[str] = []

T = TypeVar("T")

# The advisory lock (an arbitrary, fixed number) that creating the tables holds.
_SCHEMA_LOCK = 0x6167656E745F636F
# Transactions that lost a deadlock or a serialization race are tried again, this often.
_ATTEMPTS = 5


class PostgresDatabase:
    """A PostgreSQL database reached through a pool living on its own event loop thread.

    ``schema`` is a list of idempotent statements (``CREATE TABLE IF NOT EXISTS ...``)
    run once, in one transaction, before the first piece of work. Pool connections are
    in autocommit mode: :meth:`transaction` opens an explicit transaction around work.
    """

    def __init__(
        self,
        dsn: str,
        schema: Sequence[str],
        *,
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = 30.0,
        thread_name: str = "agent_core-postgres",
    ) -> None:
        try:
            import psycopg  # noqa: F401
            import psycopg_pool  # noqa: F401
        except ImportError as exc:
            raise ImportError(
                f"the PostgreSQL services need psycopg 3 and its pool ({exc}): "
                "pip install 'agent-tooling[postgres]'"
            ) from exc
        self.dsn = dsn
        self._schema = tuple(schema)
        self._min_size = min_size
        self.max_size = max_size
        self._timeout = timeout
        self._thread_name = thread_name
        self._state_lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pool: AsyncConnectionPool[AsyncConnection] | None = None
        self._opening: asyncio.Future[AsyncConnectionPool[AsyncConnection]] | None = None
        self._closed = False

    # -- on the database loop -------------------------------------------------------------

    async def pool(self) -> AsyncConnectionPool[AsyncConnection]:
        """The open pool, the tables created (on the database loop only)."""
        if self._pool is not None:
            return self._pool
        if self._opening is None or (self._opening.done() and self._opening.exception()):
            self._opening = asyncio.ensure_future(self._open())
        return await asyncio.shield(self._opening)

    async def _open(self) -> AsyncConnectionPool[AsyncConnection]:
        from psycopg_pool import AsyncConnectionPool

        pool: AsyncConnectionPool[AsyncConnection] = AsyncConnectionPool(
            self.dsn,
            min_size=self._min_size,
            max_size=self.max_size,
            timeout=self._timeout,
            kwargs={"autocommit": True},
            check=AsyncConnectionPool.check_connection,
            open=False,
            name=self._thread_name,
        )
        await pool.open()
        try:
            async with pool.connection() as conn, conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                for statement in self._schema:
                    await conn.execute(statement)
        except BaseException:
            await pool.close()
            raise
        self._pool = pool
        return pool

    async def transaction(
        self, work: Callable[[AsyncConnection], Awaitable[T]], *, explicit: bool = True
    ) -> T:
        """Run ``work(conn)`` in a transaction on a pool connection (on the database loop);
        a lost deadlock or serialization race is tried again. ``explicit=False``: work that
        is one statement, its own transaction."""
        pool = await self.pool()
        async with pool.connection() as conn:
            return await in_transaction(conn, work, explicit=explicit)

    # -- from any thread ------------------------------------------------------------------

    def _database_loop(self) -> asyncio.AbstractEventLoop:
        with self._state_lock:
            if self._closed:
                raise RuntimeError("the PostgreSQL service is closed")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name=self._thread_name, daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def submit(self, work: Callable[[], Coroutine[Any, Any, T]]) -> concurrent.futures.Future[T]:
        """Start ``work()`` on the database loop; database errors become
        :class:`SessionStoreError`."""
        return asyncio.run_coroutine_threadsafe(_store_errors(work()), self._database_loop())

    async def call(self, work: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run ``work()`` on the database loop and await its result from any loop.

        Once started it runs to its end even if the awaiting task is cancelled."""
        return await asyncio.shield(asyncio.wrap_future(self.submit(work)))

    async def _shut(self) -> None:
        opening, self._opening = self._opening, None
        if self._pool is None and opening is not None and not opening.done():
            opening.cancel()
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    def _begin_close(
        self,
    ) -> tuple[concurrent.futures.Future[None] | None, threading.Thread | None]:
        with self._state_lock:
            if self._closed:
                return None, None
            self._closed = True
            loop, thread = self._loop, self._thread
        if loop is None:
            return None, None
        done = asyncio.run_coroutine_threadsafe(self._shut(), loop)
        done.add_done_callback(lambda _: loop.call_soon_threadsafe(loop.stop))
        return done, thread

    def close(self) -> None:
        """Close the pool and stop the database loop (blocks; idempotent)."""
        done, thread = self._begin_close()
        if done is not None:
            done.result()
        if thread is not None:
            thread.join()

    async def aclose(self) -> None:
        """:meth:`close` without blocking the event loop."""
        done, _ = self._begin_close()
        if done is not None:
            await asyncio.wrap_future(done)


async def in_transaction(
    conn: AsyncConnection, work: Callable[[AsyncConnection], Awaitable[T]], *, explicit: bool = True
) -> T:
    """``work(conn)`` in a transaction on ``conn`` (``explicit=False``: ``work`` is one
    statement, its own transaction in autocommit mode); a lost deadlock or serialization
    race (the server rolled it back) is tried again."""
    import psycopg.errors

    for attempt in range(_ATTEMPTS):
        try:
            if not explicit:
                return await work(conn)
            async with conn.transaction():
                return await work(conn)
        except (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure):
            if attempt == _ATTEMPTS - 1:
                raise
            await asyncio.sleep(0.001 * 2**attempt)
    raise AssertionError("unreachable")


async def _store_errors(work: Awaitable[T]) -> T:
    import psycopg.errors

    try:
        return await work
    except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
        if isinstance(exc, psycopg.errors.LockNotAvailable):
            raise
        raise SessionStoreError(f"{type(exc).__name__}: {exc}") from exc


class PostgresBacked(Closing):
    """What every Postgres-backed service shares: its database, closing, context managers."""

    _schema: Sequence[str] = ()
    _thread_name: str = "agent_core-postgres"

    def __init__(
        self, dsn: str, *, min_size: int = 1, max_size: int = 10, timeout: float = 30.0
    ) -> None:
        self._db = PostgresDatabase(
            dsn,
            self._schema,
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            thread_name=self._thread_name,
        )

    @property
    def dsn(self) -> str:
        """The connection string."""
        return self._db.dsn

    @property
    def max_size(self) -> int:
        """The most connections the pool opens (a run holding a lease keeps one)."""
        return self._db.max_size

    def close(self) -> None:
        """Close the connection pool (blocks; idempotent)."""
        self._db.close()

    async def aclose(self) -> None:
        """Close the connection pool without blocking the event loop."""
        await self._db.aclose()
