"""Artifact services: versioned ``Blob``s per session, in memory or in SQLite.

A filename starting with ``user:`` names an artifact of the user rather than of the
session: every session of that user of the app sees (and versions) the same one, and it
is listed among each of their sessions' artifacts.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from tooling import Blob
from tooling.integration import pick_version

from .._db.sqlite import SqliteBacked
from .base import BaseArtifactService

if TYPE_CHECKING:
    import sqlite3

__all__ = ["USER_ARTIFACT_PREFIX", "InMemoryArtifactService", "SqliteArtifactService"]

#: Filenames with this prefix belong to the user, shared by all their sessions of the app.
USER_ARTIFACT_PREFIX = "user:"

# The "session" an artifact of the user is filed under.
_USER_SCOPE = ""


def _scope(session_id: str, filename: str) -> str:
    return _USER_SCOPE if filename.startswith(USER_ARTIFACT_PREFIX) else session_id


class InMemoryArtifactService(BaseArtifactService):
    """Artifacts in memory (versions from 0); gone when the process ends.

    Stored and returned ``Blob``s are copies. Safe to share between tasks and threads:
    every operation runs under one ``threading.Lock`` without awaiting.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (app_name, user_id, scope, filename) -> versions; scope is a session id or "".
        self._artifacts: dict[tuple[str, str, str, str], list[Blob]] = {}

    async def save_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str, artifact: Blob
    ) -> int:
        """Store a new version of ``filename``; return its version (0 for the first)."""
        blob = Blob(artifact.mime_type, artifact.data)
        with self._lock:
            versions = self._artifacts.setdefault(
                (app_name, user_id, _scope(session_id, filename), filename), []
            )
            versions.append(blob)
            return len(versions) - 1

    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        filename: str,
        version: int | None = None,
    ) -> Blob | None:
        """That version (the latest when None), or None."""
        with self._lock:
            versions = self._artifacts.get(
                (app_name, user_id, _scope(session_id, filename), filename)
            )
            return pick_version(versions, version)

    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> list[str]:
        """The session's artifact names and the user's (``user:``) ones, sorted."""
        with self._lock:
            return sorted(
                filename
                for (app, user, scope, filename), versions in self._artifacts.items()
                if app == app_name
                and user == user_id
                and versions
                and (scope == session_id or filename.startswith(USER_ARTIFACT_PREFIX))
            )

    async def list_versions(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> list[int]:
        """The versions of ``filename``, ascending (empty when there is none)."""
        with self._lock:
            versions = self._artifacts.get(
                (app_name, user_id, _scope(session_id, filename), filename), []
            )
            return list(range(len(versions)))

    async def delete_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> None:
        """Delete every version of ``filename`` (a later save starts again at 0)."""
        with self._lock:
            self._artifacts.pop((app_name, user_id, _scope(session_id, filename), filename), None)


_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS artifacts (
        app_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        filename TEXT NOT NULL,
        version INTEGER NOT NULL,
        mime_type TEXT NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (app_name, user_id, session_id, filename, version)
    )""",
)

_WHERE_FILE = " WHERE app_name = ? AND user_id = ? AND session_id = ? AND filename = ?"


class SqliteArtifactService(SqliteBacked, BaseArtifactService):
    """Artifacts in a SQLite database file (versions from 0).

    The table (``artifacts``) may live in the same file as a
    :class:`~agent_core.SqliteSessionService`'s tables. The same rules apply: WAL
    journal, a busy timeout, writes in ``BEGIN IMMEDIATE`` transactions (so concurrent
    saves, from tasks or processes, each get their own version), all database work on
    one thread dedicated to this service. Close it with :meth:`close` or :meth:`aclose`,
    or use it as a (sync or async) context manager.
    """

    _schema = _SCHEMA
    _thread_name = "agent_core-artifacts"

    async def save_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str, artifact: Blob
    ) -> int:
        """Store a new version of ``filename``; return its version (0 for the first)."""
        key = (app_name, user_id, _scope(session_id, filename), filename)
        mime_type, data = artifact.mime_type, artifact.data

        def work(conn: sqlite3.Connection) -> int:
            (latest,) = conn.execute(
                "SELECT max(version) FROM artifacts" + _WHERE_FILE, key
            ).fetchone()
            version = 0 if latest is None else int(latest) + 1
            conn.execute(
                "INSERT INTO artifacts"
                " (app_name, user_id, session_id, filename, version, mime_type, data)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (*key, version, mime_type, data),
            )
            return version

        return await self._db.write(work)

    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        filename: str,
        version: int | None = None,
    ) -> Blob | None:
        """That version (the latest when None), or None."""
        key = (app_name, user_id, _scope(session_id, filename), filename)

        def work(conn: sqlite3.Connection) -> Blob | None:
            if version is None:
                row = conn.execute(
                    "SELECT mime_type, data FROM artifacts"
                    + _WHERE_FILE
                    + " ORDER BY version DESC LIMIT 1",
                    key,
                ).fetchone()
            else:
                row = conn.execute(
                    "SELECT mime_type, data FROM artifacts" + _WHERE_FILE + " AND version = ?",
                    (*key, version),
                ).fetchone()
            return None if row is None else Blob(row[0], bytes(row[1]))

        return await self._db.read(work)

    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> list[str]:
        """The session's artifact names and the user's (``user:``) ones, sorted."""

        def work(conn: sqlite3.Connection) -> list[str]:
            rows = conn.execute(
                "SELECT DISTINCT filename FROM artifacts"
                " WHERE app_name = ? AND user_id = ? AND (session_id = ?"
                " OR (session_id = ? AND substr(filename, 1, ?) = ?))",
                (
                    app_name,
                    user_id,
                    session_id,
                    _USER_SCOPE,
                    len(USER_ARTIFACT_PREFIX),
                    USER_ARTIFACT_PREFIX,
                ),
            )
            return sorted(filename for (filename,) in rows)

        return await self._db.read(work)

    async def list_versions(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> list[int]:
        """The versions of ``filename``, ascending (empty when there is none)."""
        key = (app_name, user_id, _scope(session_id, filename), filename)

        def work(conn: sqlite3.Connection) -> list[int]:
            rows = conn.execute(
                "SELECT version FROM artifacts" + _WHERE_FILE + " ORDER BY version", key
            )
            return [int(v) for (v,) in rows]

        return await self._db.read(work)

    async def delete_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> None:
        """Delete every version of ``filename`` (a later save starts again at 0)."""
        key = (app_name, user_id, _scope(session_id, filename), filename)

        def work(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM artifacts" + _WHERE_FILE, key)

        await self._db.write(work)
