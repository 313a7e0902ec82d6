"""``PostgresSessionService``: sessions, events and state in PostgreSQL (psycopg 3)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .._db.encoding import EncodedDelta, decode_state, event_json
from .._db.postgres_leases import LeasedPostgres
from .._events import Event
from .base import BaseSessionService, Session, SessionExistsError
from .state import merge_state

if TYPE_CHECKING:
    import psycopg

    from .._db.postgres import AsyncConnection

    AsyncCursor = psycopg.AsyncCursor[tuple[Any, ...]]

__all__ = ["PostgresSessionService"]

# As in SQLite: state key by key (app and user keys without their prefix), values and
# events as JSON text. Each session counts its events (``last_seq``): an append bumps the
# count under the session row's lock, so the sequence is the per-session commit order.
# The tables are prefixed, as they may share a database (and its default schema) with
# other applications' tables.
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS agent_sessions (
        app_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        id TEXT NOT NULL,
        created BIGSERIAL,
        create_time DOUBLE PRECISION NOT NULL,
        update_time DOUBLE PRECISION NOT NULL,
        last_seq BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (app_name, user_id, id)
    )""",
    """CREATE TABLE IF NOT EXISTS agent_events (
        app_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        id TEXT NOT NULL,
        timestamp DOUBLE PRECISION NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (app_name, user_id, session_id, seq)
    )""",
    """CREATE TABLE IF NOT EXISTS agent_session_state (
        app_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (app_name, user_id, session_id, key)
    )""",
    """CREATE TABLE IF NOT EXISTS agent_user_state (
        app_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (app_name, user_id, key)
    )""",
    """CREATE TABLE IF NOT EXISTS agent_app_state (
        app_name TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (app_name, key)
    )""",
)

_UPSERT_APP = """INSERT INTO agent_app_state (app_name, key, value) VALUES (%s, %s, %s)
    ON CONFLICT (app_name, key) DO UPDATE SET value = excluded.value"""
_UPSERT_USER = """INSERT INTO agent_user_state (app_name, user_id, key, value)
    VALUES (%s, %s, %s, %s)
    ON CONFLICT (app_name, user_id, key) DO UPDATE SET value = excluded.value"""
_UPSERT_SESSION = """INSERT INTO agent_session_state (app_name, user_id, session_id, key, value)
    VALUES (%s, %s, %s, %s, %s)
    ON CONFLICT (app_name, user_id, session_id, key) DO UPDATE SET value = excluded.value"""
_WHERE_SESSION = " WHERE app_name = %s AND user_id = %s AND session_id = %s"

# Appending is one statement, so one round trip and its own transaction: bump the
# session's count (taking its row lock: appends to one session commit one at a time, in
# sequence), insert the event under that number, upsert each key of the delta (in sorted
# order, so two appends writing the same keys wait for each other instead of
# deadlocking). When the session does not exist nothing is written and no row returns.
_APPEND = """WITH s AS (
    UPDATE agent_sessions SET update_time = greatest(update_time, %(ts)s),
        last_seq = last_seq + 1
    WHERE app_name = %(app)s AND user_id = %(user)s AND id = %(sid)s
    RETURNING last_seq
), e AS (
    INSERT INTO agent_events (app_name, user_id, session_id, seq, id, timestamp, data)
    SELECT %(app)s, %(user)s, %(sid)s, last_seq, %(eid)s, %(ts)s, %(data)s FROM s
    RETURNING seq
), a AS (
    INSERT INTO agent_app_state (app_name, key, value)
    SELECT %(app)s, k, v FROM unnest(%(ak)s::text[], %(av)s::text[]) AS d (k, v)
    WHERE EXISTS (SELECT FROM s) ORDER BY k
    ON CONFLICT (app_name, key) DO UPDATE SET value = excluded.value
), u AS (
    INSERT INTO agent_user_state (app_name, user_id, key, value)
    SELECT %(app)s, %(user)s, k, v FROM unnest(%(uk)s::text[], %(uv)s::text[]) AS d (k, v)
    WHERE EXISTS (SELECT FROM s) ORDER BY k
    ON CONFLICT (app_name, user_id, key) DO UPDATE SET value = excluded.value
), o AS (
    INSERT INTO agent_session_state (app_name, user_id, session_id, key, value)
    SELECT %(app)s, %(user)s, %(sid)s, k, v
    FROM unnest(%(ok)s::text[], %(ov)s::text[]) AS d (k, v)
    WHERE EXISTS (SELECT FROM s) ORDER BY k
    ON CONFLICT (app_name, user_id, session_id, key) DO UPDATE SET value = excluded.value
)
SELECT seq FROM e"""


# Reading a session is one statement, so one round trip and one snapshot: its row, its
# own state, the app's and the user's state (as arrays of [key, value]) and its events in
# commit order. No session, no row.
_READ = """SELECT s.update_time,
    ARRAY(SELECT ARRAY[key, value] FROM agent_session_state
        WHERE app_name = %(app)s AND user_id = %(user)s AND session_id = %(sid)s),
    ARRAY(SELECT ARRAY[key, value] FROM agent_app_state WHERE app_name = %(app)s),
    ARRAY(SELECT ARRAY[key, value] FROM agent_user_state
        WHERE app_name = %(app)s AND user_id = %(user)s),
    ARRAY(SELECT data FROM agent_events
        WHERE app_name = %(app)s AND user_id = %(user)s AND session_id = %(sid)s ORDER BY seq)
FROM agent_sessions s WHERE s.app_name = %(app)s AND s.user_id = %(user)s AND s.id = %(sid)s"""


def _columns(pairs: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    ordered = sorted(pairs)
    return [k for k, _ in ordered], [v for _, v in ordered]


async def _write_delta(
    conn: AsyncConnection, encoded: EncodedDelta, app_name: str, user_id: str, session_id: str
) -> None:
    # Keys in sorted order: two transactions upserting the same keys lock them in the same
    # order, so they wait for each other instead of deadlocking.
    async with conn.cursor() as cur:
        if encoded.app:
            await cur.executemany(_UPSERT_APP, [(app_name, k, v) for k, v in sorted(encoded.app)])
        if encoded.user:
            await cur.executemany(
                _UPSERT_USER, [(app_name, user_id, k, v) for k, v in sorted(encoded.user)]
            )
        if encoded.session:
            await cur.executemany(
                _UPSERT_SESSION,
                [(app_name, user_id, session_id, k, v) for k, v in sorted(encoded.session)],
            )


class _SharedState:
    """The app's and the user's state, asked for now and read later (in a pipeline the
    queries go out together)."""

    def __init__(self, app: AsyncCursor, user: AsyncCursor) -> None:
        self.app, self.user = app, user

    @classmethod
    async def ask(cls, conn: AsyncConnection, app_name: str, user_id: str) -> _SharedState:
        app = await conn.execute(
            "SELECT key, value FROM agent_app_state WHERE app_name = %s", (app_name,)
        )
        user = await conn.execute(
            "SELECT key, value FROM agent_user_state WHERE app_name = %s AND user_id = %s",
            (app_name, user_id),
        )
        return cls(app, user)

    async def read(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return decode_state(await self.app.fetchall()), decode_state(await self.user.fetchall())


async def _shared_state(
    conn: AsyncConnection, app_name: str, user_id: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    return await (await _SharedState.ask(conn, app_name, user_id)).read()


async def _snapshot(conn: AsyncConnection) -> None:
    await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")


class PostgresSessionService(LeasedPostgres, BaseSessionService):
    """Sessions, events and state in a PostgreSQL database (psycopg 3, its async pool).

    The same interface and behaviour as :class:`~agent_core.SqliteSessionService`:
    appending an event stores it and applies its state delta in one transaction; ``app:``,
    ``user:`` and session state merge key by key (the last committed write of a key
    wins); events load in the order they were committed, per session. The tables
    (``agent_sessions``, ``agent_events``, ``agent_*_state``, in the connection's current
    schema) are created on first use. ``dsn`` is a libpq connection string or URL
    (``postgresql://user@host/db``, ``?options=-csearch_path%3Dmyschema`` picks a schema).

    One writer per session: :meth:`lease` takes a session-level advisory lock on a
    connection of its own, which the run's writes then use; the server frees it when
    that connection ends, so a killed holder never leaves a session locked.

    All database work runs on one event loop thread dedicated to this service, so the
    service can be used from any event loop or thread. ``min_size``/``max_size`` size
    the pool (a run holding a lease keeps one connection); ``timeout`` is how long an
    operation waits for a connection (a server that is down) before it fails with
    :class:`~agent_core.sessions.base.SessionStoreError`. Close it with :meth:`close`
    or :meth:`aclose`, or use it as a (sync or async) context manager.
    """

    _schema = _SCHEMA
    _thread_name = "agent_core-postgres-sessions"

    def __init__(
        self, dsn: str, *, min_size: int = 1, max_size: int = 10, timeout: float = 30.0
    ) -> None:
        super().__init__(dsn, min_size=min_size, max_size=max_size, timeout=timeout)

    # -- the interface --------------------------------------------------------------------

    async def _create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        state: dict[str, Any],
        created_at: float,
    ) -> Session:
        encoded = EncodedDelta(state)
        sid = session_id

        async def work(conn: AsyncConnection) -> Session:
            cur = await conn.execute(
                "INSERT INTO agent_sessions (app_name, user_id, id, create_time, update_time)"
                " VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING 1",
                (app_name, user_id, sid, created_at, created_at),
            )
            if await cur.fetchone() is None:
                raise SessionExistsError(
                    f"session {sid!r} already exists for user {user_id!r} of app {app_name!r}"
                )
            await _write_delta(conn, encoded, app_name, user_id, sid)
            app, user = await _shared_state(conn, app_name, user_id)
            return Session(
                id=sid,
                app_name=app_name,
                user_id=user_id,
                state=merge_state(app, user, encoded.own_state()),
                last_update_time=created_at,
            )

        session: Session = await self._db.call(lambda: self._write((app_name, user_id, sid), work))
        return session

    async def get_session(self, *, app_name: str, user_id: str, session_id: str) -> Session | None:
        """The session with its events (in commit order) and merged state, or None."""
        key = (app_name, user_id, session_id)

        async def work(conn: AsyncConnection) -> Session | None:
            cur = await conn.execute(_READ, {"app": app_name, "user": user_id, "sid": session_id})
            row = await cur.fetchone()
            if row is None:
                return None
            update_time, own, app, user, data = row
            return Session(
                id=session_id,
                app_name=app_name,
                user_id=user_id,
                state=merge_state(decode_state(app), decode_state(user), decode_state(own)),
                events=[Event.from_dict(json.loads(d)) for d in data],
                last_update_time=float(update_time),
            )

        found: Session | None = await self._db.call(
            lambda: self._write(key, work, one_statement=True)
        )
        return found

    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> list[Session]:
        """The sessions of the app in creation order (the user's, or every user's when
        ``user_id`` is None), with merged state, no events."""
        where, args = (
            (" WHERE app_name = %s", (app_name,))
            if user_id is None
            else (" WHERE app_name = %s AND user_id = %s", (app_name, user_id))
        )

        async def work(conn: AsyncConnection) -> list[Session]:
            async with conn.pipeline():
                await _snapshot(conn)
                heads = await conn.execute(
                    "SELECT user_id, id, update_time FROM agent_sessions"
                    + where
                    + " ORDER BY created",
                    args,
                )
                own_rows = await conn.execute(
                    "SELECT user_id, session_id, key, value FROM agent_session_state" + where,
                    args,
                )
                user_rows = await conn.execute(
                    "SELECT user_id, key, value FROM agent_user_state" + where, args
                )
                app_rows = await conn.execute(
                    "SELECT key, value FROM agent_app_state WHERE app_name = %s", (app_name,)
                )
                rows = await heads.fetchall()
                own: dict[tuple[str, str], dict[str, Any]] = {}
                for user, sid, key, value in await own_rows.fetchall():
                    own.setdefault((user, sid), {})[key] = json.loads(value)
                users: dict[str, dict[str, Any]] = {}
                for user, key, value in await user_rows.fetchall():
                    users.setdefault(user, {})[key] = json.loads(value)
                app = decode_state(await app_rows.fetchall())
            return [
                Session(
                    id=sid,
                    app_name=app_name,
                    user_id=user,
                    state=merge_state(app, users.get(user, {}), own.get((user, sid), {})),
                    last_update_time=float(update_time),
                )
                for user, sid, update_time in rows
            ]

        listed: list[Session] = await self._db.call(lambda: self._db.transaction(work))
        return listed

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete a session, its events and its own state (no error if it does not exist)."""
        key = (app_name, user_id, session_id)

        async def work(conn: AsyncConnection) -> None:
            await conn.execute("DELETE FROM agent_events" + _WHERE_SESSION, key)
            await conn.execute("DELETE FROM agent_session_state" + _WHERE_SESSION, key)
            await conn.execute(
                "DELETE FROM agent_sessions WHERE app_name = %s AND user_id = %s AND id = %s", key
            )

        await self._db.call(lambda: self._write(key, work))

    async def _append_event(
        self, session: Session, event: Event, state_delta: dict[str, Any]
    ) -> None:
        """One statement, so one round trip and its own transaction (see ``_APPEND``): it
        bumps the session's event count (locking its row: appends to one session commit
        one at a time, in sequence), inserts the event and upserts each key of the delta;
        it reads nothing else, so events other writers appended meanwhile are kept. A
        state value that is not JSON-serializable raises ``TypeError`` and stores
        nothing."""
        encoded = EncodedDelta(state_delta)
        data = event_json(event, state_delta)
        key = (session.app_name, session.user_id, session.id)
        app_name, user_id, sid = key

        ak, av = _columns(encoded.app)
        uk, uv = _columns(encoded.user)
        ok, ov = _columns(encoded.session)
        params = {
            "app": app_name,
            "user": user_id,
            "sid": sid,
            "ts": event.timestamp,
            "eid": event.id,
            "data": data,
            "ak": ak,
            "av": av,
            "uk": uk,
            "uv": uv,
            "ok": ok,
            "ov": ov,
        }

        async def work(conn: AsyncConnection) -> None:
            cur = await conn.execute(_APPEND, params)
            if await cur.fetchone() is None:
                raise ValueError(
                    f"session {sid!r} of user {user_id!r} of app {app_name!r} does not exist"
                )

        await self._db.call(lambda: self._write(key, work, one_statement=True))
