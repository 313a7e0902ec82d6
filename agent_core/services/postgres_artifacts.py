"""``PostgresArtifactService``: versioned artifacts in PostgreSQL (psycopg 3)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tooling import Blob

from .._db.postgres import PostgresBacked
from .artifacts import USER_ARTIFACT_PREFIX, _scope
from .base import BaseArtifactService

if TYPE_CHECKING:
    from .._db.postgres import AsyncConnection

__all__ = ["PostgresArtifactService"]

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS agent_artifacts (
        app_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        filename TEXT NOT NULL,
        version INTEGER NOT NULL,
        mime_type TEXT NOT NULL,
        data BYTEA NOT NULL,
        PRIMARY KEY (app_name, user_id, session_id, filename, version)
    )""",
)

_WHERE_FILE = " WHERE app_name = %s AND user_id = %s AND session_id = %s AND filename = %s"


class PostgresArtifactService(PostgresBacked, BaseArtifactService):
    """Artifacts in a PostgreSQL database (versions from 0), table ``agent_artifacts``.

    The same behaviour as :class:`~agent_core.SqliteArtifactService`: concurrent saves
    of one file, from tasks or processes, each get their own version (a transaction
    advisory lock per file orders them). Connection handling, ``min_size``/``max_size``/
    ``timeout`` and closing are as for :class:`~agent_core.PostgresSessionService`.
    """

    _schema = _SCHEMA
    _thread_name = "agent_core-postgres-artifacts"

    async def save_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str, artifact: Blob
    ) -> int:
        """Store a new version of ``filename``; return its version (0 for the first)."""
        key = (app_name, user_id, _scope(session_id, filename), filename)
        mime_type, data = artifact.mime_type, artifact.data

        async def work(conn: AsyncConnection) -> int:
            await conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended("
                "current_schema() || '/artifact/' || %s || '/' || %s || '/' || %s || '/' || %s,"
                " 0))",
                key,
            )
            cur = await conn.execute("SELECT max(version) FROM agent_artifacts" + _WHERE_FILE, key)
            row = await cur.fetchone()
            version = 0 if row is None or row[0] is None else int(row[0]) + 1
            await conn.execute(
                "INSERT INTO agent_artifacts"
                " (app_name, user_id, session_id, filename, version, mime_type, data)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (*key, version, mime_type, data),
            )
            return version

        saved: int = await self._db.call(lambda: self._db.transaction(work))
        return saved

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

        async def work(conn: AsyncConnection) -> Blob | None:
            if version is None:
                cur = await conn.execute(
                    "SELECT mime_type, data FROM agent_artifacts"
                    + _WHERE_FILE
                    + " ORDER BY version DESC LIMIT 1",
                    key,
                )
            else:
                cur = await conn.execute(
                    "SELECT mime_type, data FROM agent_artifacts"
                    + _WHERE_FILE
                    + " AND version = %s",
                    (*key, version),
                )
            row = await cur.fetchone()
            return None if row is None else Blob(row[0], bytes(row[1]))

        loaded: Blob | None = await self._db.call(lambda: self._db.transaction(work))
        return loaded

    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> list[str]:
        """The session's artifact names and the user's (``user:``) ones, sorted."""

        async def work(conn: AsyncConnection) -> list[str]:
            cur = await conn.execute(
                "SELECT DISTINCT filename FROM agent_artifacts"
                " WHERE app_name = %s AND user_id = %s AND (session_id = %s"
                " OR (session_id = %s AND starts_with(filename, %s)))",
                (app_name, user_id, session_id, "", USER_ARTIFACT_PREFIX),
            )
            return sorted(filename for (filename,) in await cur.fetchall())

        keys: list[str] = await self._db.call(lambda: self._db.transaction(work))
        return keys

    async def list_versions(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> list[int]:
        """The versions of ``filename``, ascending (empty when there is none)."""
        key = (app_name, user_id, _scope(session_id, filename), filename)

        async def work(conn: AsyncConnection) -> list[int]:
            cur = await conn.execute(
                "SELECT version FROM agent_artifacts" + _WHERE_FILE + " ORDER BY version", key
            )
            return [int(v) for (v,) in await cur.fetchall()]

        versions: list[int] = await self._db.call(lambda: self._db.transaction(work))
        return versions

    async def delete_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> None:
        """Delete every version of ``filename`` (a later save starts again at 0)."""
        key = (app_name, user_id, _scope(session_id, filename), filename)

        async def work(conn: AsyncConnection) -> None:
            await conn.execute("DELETE FROM agent_artifacts" + _WHERE_FILE, key)

        await self._db.call(lambda: self._db.transaction(work))
