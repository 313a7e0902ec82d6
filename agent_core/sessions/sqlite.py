"""``SqliteSessionService``: sessions, events and state persisted in a SQLite file."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

from .._db.encoding import EncodedDelta, decode_state, event_json
from .._db.sqlite import DEFAULT_BUSY_TIMEOUT, SqliteBacked
from .._events import Event
from .base import BaseSessionService, Session, SessionBusyError, SessionExistsError
from .lease import LeaseLostError, busy_message, local_lease, poll_until
from .state import merge_state

if TYPE_CHECKING:
    import sqlite3

__all__ = ["SqliteSessionService"]

logger = logging.getLogger("agent_core")

# State is stored key by key, so that a delta merges key by key: the last committed
# write of a key wins and writes of different keys never overwrite each other. App and
# user keys are stored without their prefix. Values and events are JSON text.
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS sessions (
        app_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        id TEXT NOT NULL,
        create_time REAL NOT NULL,
        update_time REAL NOT NULL,
        PRIMARY KEY (app_name, user_id, id)
    )""",
    """CREATE TABLE IF NOT EXISTS events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        app_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        id TEXT NOT NULL,
        timestamp REAL NOT NULL,
        data TEXT NOT NULL
    )""",
    """CREATE INDEX IF NOT EXISTS events_by_session
        ON events (app_name, user_id, session_id, seq)""",
    """CREATE TABLE IF NOT EXISTS session_state (
        app_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (app_name, user_id, session_id, key)
    )""",
    """CREATE TABLE IF NOT EXISTS user_state (
        app_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (app_name, user_id, key)
    )""",
    """CREATE TABLE IF NOT EXISTS app_state (
        app_name TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (app_name, key)
    )""",
    # A session's lease while a run holds it: who, and until when (renewed by the
    # holder; a lease past its expiry, or whose holder process is gone, may be taken).
    """CREATE TABLE IF NOT EXISTS session_leases (
        app_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        holder TEXT NOT NULL,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        expires REAL NOT NULL,
        PRIMARY KEY (app_name, user_id, session_id)
    )""",
)

_WHERE_LEASE = " WHERE app_name = ? AND user_id = ? AND session_id = ?"
_TAKE_LEASE = """INSERT INTO session_leases
    (app_name, user_id, session_id, holder, host, pid, expires) VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (app_name, user_id, session_id) DO UPDATE SET
    holder = excluded.holder, host = excluded.host, pid = excluded.pid,
    expires = excluded.expires"""
_RENEW_LEASE = "UPDATE session_leases SET expires = ?" + _WHERE_LEASE + " AND holder = ?"
_HOST = socket.gethostname()

_UPSERT_APP = """INSERT INTO app_state (app_name, key, value) VALUES (?, ?, ?)
    ON CONFLICT (app_name, key) DO UPDATE SET value = excluded.value"""
_UPSERT_USER = """INSERT INTO user_state (app_name, user_id, key, value) VALUES (?, ?, ?, ?)
    ON CONFLICT (app_name, user_id, key) DO UPDATE SET value = excluded.value"""
_UPSERT_SESSION = """INSERT INTO session_state (app_name, user_id, session_id, key, value)
    VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (app_name, user_id, session_id, key) DO UPDATE SET value = excluded.value"""


def _write_delta(
    conn: sqlite3.Connection, encoded: EncodedDelta, app_name: str, user_id: str, session_id: str
) -> None:
    if encoded.app:
        conn.executemany(_UPSERT_APP, [(app_name, k, v) for k, v in encoded.app])
    if encoded.user:
        conn.executemany(_UPSERT_USER, [(app_name, user_id, k, v) for k, v in encoded.user])
    if encoded.session:
        conn.executemany(
            _UPSERT_SESSION, [(app_name, user_id, session_id, k, v) for k, v in encoded.session]
        )


def _shared_state(
    conn: sqlite3.Connection, app_name: str, user_id: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    app = decode_state(
        conn.execute("SELECT key, value FROM app_state WHERE app_name = ?", (app_name,))
    )
    user = decode_state(
        conn.execute(
            "SELECT key, value FROM user_state WHERE app_name = ? AND user_id = ?",
            (app_name, user_id),
        )
    )
    return app, user


def _process_gone(host: str, pid: int) -> bool:
    """Whether the lease holder's process has ended (only known for this host)."""
    if host != _HOST:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:  # a killed process its parent has not reaped yet is a zombie: gone too
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return False


class SqliteSessionService(SqliteBacked, BaseSessionService):
    """Sessions, events and state in a SQLite database file (stdlib ``sqlite3``).

    Several services, in this process or others, may use one file at once: the database
    runs in WAL mode, every write is a ``BEGIN IMMEDIATE`` transaction that waits up to
    ``busy_timeout`` seconds for another writer, and appending an event stores the event
    and its state delta in one transaction, so no event is lost and state merges key by
    key (the last committed write of a key wins). Events keep the order they were
    committed in. ``temp:`` keys and partial events are never stored.

    All database work runs on one thread dedicated to this service (the connection lives
    there), never on the event loop. Values in state must be JSON-serializable (a tuple
    comes back as a list); events are stored as ``Event.to_dict()`` JSON.

    One writer per session: a run holds the session's lease (:meth:`lease`), a row in
    the ``session_leases`` table naming its holder, with an expiry the holder renews
    every ``lease_ttl / 3`` seconds and with each event it stores. A lease whose holder
    process has ended (on this host), or whose expiry has passed, may be taken by the
    next run; a holder that finds its lease taken over stores nothing more and its run
    ends with an error event. Leases of other sessions never hold a run up.

    Close it with :meth:`close` or :meth:`aclose`, or use it as a (sync or async)
    context manager. ``path`` may be ``":memory:"`` for a private, unshared database.
    """

    _schema = _SCHEMA
    _thread_name = "agent_core-sessions"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
        lease_ttl: float = 10.0,
    ) -> None:
        if lease_ttl <= 0:
            raise ValueError("lease_ttl must be positive")
        super().__init__(path, busy_timeout=busy_timeout)
        self.lease_ttl = lease_ttl
        # The leases held through this service: (app, user, session id) -> holder token.
        self._held: dict[tuple[str, str, str], str] = {}
        self._store_key: object = (
            ("sqlite", os.path.realpath(self.path)) if self.path != ":memory:" else id(self)
        )

    # -- the lease ------------------------------------------------------------------------

    def lease(
        self, *, app_name: str, user_id: str, session_id: str, timeout: float
    ) -> AbstractAsyncContextManager[None]:
        """Hold the session's lease row (see the class docs); wait up to ``timeout``
        seconds for it, then raise :class:`~agent_core.sessions.base.SessionBusyError`."""
        return self._lease((app_name, user_id, session_id), timeout)

    @asynccontextmanager
    async def _lease(self, key: tuple[str, str, str], timeout: float) -> AsyncIterator[None]:
        deadline = time.monotonic() + timeout
        async with local_lease((self._store_key, *key), timeout):
            token = uuid.uuid4().hex
            ttl = self.lease_ttl

            def take(conn: sqlite3.Connection) -> bool:
                row = conn.execute(
                    "SELECT host, pid, expires FROM session_leases" + _WHERE_LEASE, key
                ).fetchone()
                at = time.time()
                if row is not None and row[2] > at and not _process_gone(row[0], row[1]):
                    return False
                conn.execute(_TAKE_LEASE, (*key, token, _HOST, os.getpid(), at + ttl))
                return True

            async def try_once() -> bool:
                return await self._db.write(take)

            await poll_until(
                try_once, deadline, lambda: SessionBusyError(busy_message(key, timeout))
            )
            self._held[key] = token
            renewing = asyncio.ensure_future(self._keep_renewing(key, token))
            try:
                yield
            finally:
                renewing.cancel()
                if self._held.get(key) == token:
                    del self._held[key]

                def give_back(conn: sqlite3.Connection) -> None:
                    conn.execute(
                        "DELETE FROM session_leases" + _WHERE_LEASE + " AND holder = ?",
                        (*key, token),
                    )

                try:
                    await asyncio.shield(self._db.write(give_back))
                except Exception:  # it lapses by itself
                    logger.warning("could not give back the lease of session %r", key[2])

    async def _keep_renewing(self, key: tuple[str, str, str], token: str) -> None:
        def renew(conn: sqlite3.Connection) -> int:
            return conn.execute(_RENEW_LEASE, (time.time() + self.lease_ttl, *key, token)).rowcount

        while True:
            await asyncio.sleep(self.lease_ttl / 3)
            try:
                if await self._db.write(renew) == 0:
                    return  # taken over: the next write of the run finds out
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.warning("could not renew the lease of session %r", key[2], exc_info=True)

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

        def work(conn: sqlite3.Connection) -> Session:
            import sqlite3  # loaded by now: the connection exists

            try:
                conn.execute(
                    "INSERT INTO sessions (app_name, user_id, id, create_time, update_time)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (app_name, user_id, session_id, created_at, created_at),
                )
            except sqlite3.IntegrityError:
                raise SessionExistsError(
                    f"session {session_id!r} already exists for user {user_id!r} of app "
                    f"{app_name!r}"
                ) from None
            _write_delta(conn, encoded, app_name, user_id, session_id)
            app, user = _shared_state(conn, app_name, user_id)
            return Session(
                id=session_id,
                app_name=app_name,
                user_id=user_id,
                state=merge_state(app, user, encoded.own_state()),
                last_update_time=created_at,
            )

        return await self._db.write(work)

    async def get_session(self, *, app_name: str, user_id: str, session_id: str) -> Session | None:
        """The session with its events (in commit order) and merged state, or None."""

        def work(conn: sqlite3.Connection) -> Session | None:
            row = conn.execute(
                "SELECT update_time FROM sessions WHERE app_name = ? AND user_id = ? AND id = ?",
                (app_name, user_id, session_id),
            ).fetchone()
            if row is None:
                return None
            key = (app_name, user_id, session_id)
            own = decode_state(
                conn.execute(
                    "SELECT key, value FROM session_state"
                    " WHERE app_name = ? AND user_id = ? AND session_id = ?",
                    key,
                )
            )
            app, user = _shared_state(conn, app_name, user_id)
            events = [
                Event.from_dict(json.loads(data))
                for (data,) in conn.execute(
                    "SELECT data FROM events"
                    " WHERE app_name = ? AND user_id = ? AND session_id = ? ORDER BY seq",
                    key,
                )
            ]
            return Session(
                id=session_id,
                app_name=app_name,
                user_id=user_id,
                state=merge_state(app, user, own),
                events=events,
                last_update_time=float(row[0]),
            )

        return await self._db.read(work)

    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> list[Session]:
        """The sessions of the app in creation order (the user's, or every user's when
        ``user_id`` is None), with merged state, no events."""
        where, args = (
            (" WHERE app_name = ?", (app_name,))
            if user_id is None
            else (" WHERE app_name = ? AND user_id = ?", (app_name, user_id))
        )

        def work(conn: sqlite3.Connection) -> list[Session]:
            rows = conn.execute(
                "SELECT user_id, id, update_time FROM sessions"
                + where
                + " ORDER BY create_time, rowid",
                args,
            ).fetchall()
            own: dict[tuple[str, str], dict[str, Any]] = {}
            for user, sid, key, value in conn.execute(
                "SELECT user_id, session_id, key, value FROM session_state" + where, args
            ):
                own.setdefault((user, sid), {})[key] = json.loads(value)
            users: dict[str, dict[str, Any]] = {}
            for user, key, value in conn.execute(
                "SELECT user_id, key, value FROM user_state" + where, args
            ):
                users.setdefault(user, {})[key] = json.loads(value)
            app = decode_state(
                conn.execute("SELECT key, value FROM app_state WHERE app_name = ?", (app_name,))
            )
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

        return await self._db.read(work)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete a session, its events and its own state (no error if it does not exist)."""

        def work(conn: sqlite3.Connection) -> None:
            key = (app_name, user_id, session_id)
            where = " WHERE app_name = ? AND user_id = ? AND session_id = ?"
            conn.execute("DELETE FROM events" + where, key)
            conn.execute("DELETE FROM session_state" + where, key)
            conn.execute("DELETE FROM sessions WHERE app_name = ? AND user_id = ? AND id = ?", key)

        await self._db.write(work)

    async def _append_event(
        self, session: Session, event: Event, state_delta: dict[str, Any]
    ) -> None:
        """Insert the event, upsert each key of the delta into its scope's table and bump
        the session's update time, in one transaction that reads nothing else (events
        other writers appended meanwhile are kept). A state value that is not
        JSON-serializable raises ``TypeError`` and stores nothing."""
        encoded = EncodedDelta(state_delta)
        data = event_json(event, state_delta)
        app_name, user_id, sid = session.app_name, session.user_id, session.id
        token = self._held.get((app_name, user_id, sid))
        ttl = self.lease_ttl

        def work(conn: sqlite3.Connection) -> None:
            if (
                token is not None
                and (
                    conn.execute(_RENEW_LEASE, (time.time() + ttl, app_name, user_id, sid, token))
                ).rowcount
                == 0
            ):
                raise LeaseLostError(
                    f"the lease of session {sid!r} lapsed and was taken by another run"
                )
            updated = conn.execute(
                "UPDATE sessions SET update_time = max(update_time, ?)"
                " WHERE app_name = ? AND user_id = ? AND id = ?",
                (event.timestamp, app_name, user_id, sid),
            )
            if updated.rowcount == 0:
                raise ValueError(
                    f"session {sid!r} of user {user_id!r} of app {app_name!r} does not exist"
                )
            conn.execute(
                "INSERT INTO events (app_name, user_id, session_id, id, timestamp, data)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (app_name, user_id, sid, event.id, event.timestamp, data),
            )
            _write_delta(conn, encoded, app_name, user_id, sid)

        await self._db.write(work)
