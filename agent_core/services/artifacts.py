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
from .base import USER_ARTIFACT_PREFIX, ArtifactKey, BaseArtifactService

if TYPE_CHECKING:
    import sqlite3

__all__ = ["USER_ARTIFACT_PREFIX", "InMemoryArtifactService", "SqliteArtifactService"]


class InMemoryArtifactService(BaseArtifactService):
    """Artifacts in memory (versions from 0); gone when the process ends.

    Stored and returned ``Blob``s are copies. Safe to share between tasks and threads:
    every operation runs under one ``threading.Lock`` without awaiting.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (app_name, user_id, scope, filename) -> versions; scope is a session id or "".
        self._artifacts: dict[tuple[str, str, str, str], list[Blob]] = {}

    async def _save(self, key: ArtifactKey, artifact: Blob) -> int:
        with self._lock:
            versions = self._artifacts.setdefault(key, [])
            versions.append(artifact)
            return len(versions) - 1

    async def _load(self, key: ArtifactKey, version: int | None) -> Blob | None:
        with self._lock:
            return pick_version(self._artifacts.get(key), version)

    async def _filenames(self, app_name: str, user_id: str, session_id: str) -> list[str]:
        with self._lock:
            return [
                filename
                for (app, user, scope, filename), versions in self._artifacts.items()
                if app == app_name
                and user == user_id
                and versions
                and (scope == session_id or filename.startswith(USER_ARTIFACT_PREFIX))
            ]

    async def _versions(self, key: ArtifactKey) -> list[int]:
        with self._lock:
            return list(range(len(self._artifacts.get(key, []))))

    async def _delete(self, key: ArtifactKey) -> None:
        with self._lock:
            self._artifacts.pop(key, None)


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

    async def _save(self, key: ArtifactKey, artifact: Blob) -> int:
        def work(conn: sqlite3.Connection) -> int:
            (latest,) = conn.execute(
                "SELECT max(version) FROM artifacts" + _WHERE_FILE, key
            ).fetchone()
            version = 0 if latest is None else int(latest) + 1
            conn.execute(
                "INSERT INTO artifacts"
                " (app_name, user_id, session_id, filename, version, mime_type, data)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (*key, version, artifact.mime_type, artifact.data),
            )
            return version

        return await self._db.write(work)

    async def _load(self, key: ArtifactKey, version: int | None) -> Blob | None:
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

    async def _filenames(self, app_name: str, user_id: str, session_id: str) -> list[str]:
        def work(conn: sqlite3.Connection) -> list[str]:
            rows = conn.execute(
                "SELECT DISTINCT filename FROM artifacts"
                " WHERE app_name = ? AND user_id = ? AND (session_id = ?"
                " OR (session_id = '' AND substr(filename, 1, ?) = ?))",
                (app_name, user_id, session_id, len(USER_ARTIFACT_PREFIX), USER_ARTIFACT_PREFIX),
            )
            return [filename for (filename,) in rows]

        return await self._db.read(work)

    async def _versions(self, key: ArtifactKey) -> list[int]:
        def work(conn: sqlite3.Connection) -> list[int]:
            rows = conn.execute(
                "SELECT version FROM artifacts" + _WHERE_FILE + " ORDER BY version", key
            )
            return [int(v) for (v,) in rows]

        return await self._db.read(work)

    async def _delete(self, key: ArtifactKey) -> None:
        def work(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM artifacts" + _WHERE_FILE, key)

        await self._db.write(work)
