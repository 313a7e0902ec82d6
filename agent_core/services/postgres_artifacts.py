"""``PostgresArtifactService``: versioned artifacts in PostgreSQL (psycopg 3)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tooling import Blob

from .._db.postgres import PostgresBacked
from .base import USER_ARTIFACT_PREFIX, ArtifactKey, BaseArtifactService

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

    async def _save(self, key: ArtifactKey, artifact: Blob) -> int:
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
                (*key, version, artifact.mime_type, artifact.data),
            )
            return version

        saved: int = await self._db.call(lambda: self._db.transaction(work))
        return saved

    async def _load(self, key: ArtifactKey, version: int | None) -> Blob | None:
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

    async def _filenames(self, app_name: str, user_id: str, session_id: str) -> list[str]:
        async def work(conn: AsyncConnection) -> list[str]:
            cur = await conn.execute(
                "SELECT DISTINCT filename FROM agent_artifacts"
                " WHERE app_name = %s AND user_id = %s AND (session_id = %s"
                " OR (session_id = '' AND starts_with(filename, %s)))",
                (app_name, user_id, session_id, USER_ARTIFACT_PREFIX),
            )
            return [filename for (filename,) in await cur.fetchall()]

        names: list[str] = await self._db.call(lambda: self._db.transaction(work))
        return names

    async def _versions(self, key: ArtifactKey) -> list[int]:
        async def work(conn: AsyncConnection) -> list[int]:
            cur = await conn.execute(
                "SELECT version FROM agent_artifacts" + _WHERE_FILE + " ORDER BY version", key
            )
            return [int(v) for (v,) in await cur.fetchall()]

        versions: list[int] = await self._db.call(lambda: self._db.transaction(work))
        return versions

    async def _delete(self, key: ArtifactKey) -> None:
        async def work(conn: AsyncConnection) -> None:
            await conn.execute("DELETE FROM agent_artifacts" + _WHERE_FILE, key)

        await self._db.call(lambda: self._db.transaction(work))
