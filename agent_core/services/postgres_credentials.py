"""``PostgresCredentialService``: credentials in PostgreSQL (psycopg 3), one row a key."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._db.postgres import PostgresBacked
from .credentials import CredentialRows

if TYPE_CHECKING:
    from tooling.auth import CredentialKey, StoredCredential

    from .._db.postgres import AsyncConnection

__all__ = ["PostgresCredentialService"]

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS agent_credentials (
        app_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        scheme TEXT NOT NULL,
        scopes TEXT NOT NULL,
        record TEXT NOT NULL,
        encrypted INTEGER NOT NULL,
        updated TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (app_name, user_id, scheme, scopes)
    )""",
)

_WHERE = " WHERE app_name = %s AND user_id = %s AND scheme = %s AND scopes = %s"


class PostgresCredentialService(PostgresBacked, CredentialRows):
    """Credentials in a PostgreSQL database, table ``agent_credentials`` (created on first
    use), for many processes at once.

    ``key`` encrypts the records as for :class:`~agent_core.SqliteCredentialService`
    (default: ``AGENT_CORE_CREDENTIAL_KEY``). Connection handling, ``min_size``/
    ``max_size``/``timeout`` and closing are as for
    :class:`~agent_core.PostgresSessionService`.
    """

    _schema = _SCHEMA
    _thread_name = "agent_core-postgres-credentials"

    def __init__(
        self,
        dsn: str,
        *,
        key: str | bytes | None = None,
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = 30.0,
    ) -> None:
        """Connect (lazily) to the database at ``dsn``."""
        super().__init__(dsn, min_size=min_size, max_size=max_size, timeout=timeout)
        self._set_key(key)

    async def load_credential(self, key: CredentialKey) -> StoredCredential | None:
        """The record stored for ``key``, or None."""

        async def work(conn: AsyncConnection) -> tuple[str, int] | None:
            cur = await conn.execute(
                "SELECT record, encrypted FROM agent_credentials" + _WHERE, self._columns(key)
            )
            row = await cur.fetchone()
            return None if row is None else (str(row[0]), int(row[1]))

        found: tuple[str, int] | None = await self._db.call(lambda: self._db.transaction(work))
        return None if found is None else self._decode(*found)

    async def save_credential(self, key: CredentialKey, credential: StoredCredential) -> None:
        """Store ``credential`` for ``key``, committed before returning."""
        text, encrypted = self._encode(credential)

        async def work(conn: AsyncConnection) -> None:
            await conn.execute(
                "INSERT INTO agent_credentials"
                " (app_name, user_id, scheme, scopes, record, encrypted)"
                " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (app_name, user_id, scheme, scopes)"
                " DO UPDATE SET record = excluded.record, encrypted = excluded.encrypted,"
                " updated = now()",
                (*self._columns(key), text, encrypted),
            )

        await self._db.call(lambda: self._db.transaction(work))

    async def delete_credential(self, key: CredentialKey) -> None:
        """Forget what is stored for ``key``."""

        async def work(conn: AsyncConnection) -> None:
            await conn.execute("DELETE FROM agent_credentials" + _WHERE, self._columns(key))

        await self._db.call(lambda: self._db.transaction(work))

    def __repr__(self) -> str:
        return f"PostgresCredentialService(encrypted={self.encrypted})"
