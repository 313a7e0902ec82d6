"""Credential stores beside the session stores: SQLite here, PostgreSQL in
``postgres_credentials``; both keep one row per (app, user, scheme, scopes).

A row holds what ``tooling.auth`` stores for a key (tokens, a pending authorization) as
JSON, encrypted with Fernet (the ``cryptography`` package, extra ``[auth]``) when a key
is given (``key=``, else the ``AGENT_CORE_CREDENTIAL_KEY`` environment variable). A row
written encrypted is never read without the key; a plain row is read with or without
one, and written encrypted from then on.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from .._db.sqlite import DEFAULT_BUSY_TIMEOUT, SqliteBacked

if TYPE_CHECKING:
    import sqlite3

    from tooling.auth import CredentialKey, StoredCredential

__all__ = ["SqliteCredentialService"]

#: The environment variable a credential store reads its encryption key from.
KEY_ENV = "AGENT_CORE_CREDENTIAL_KEY"


class CredentialRows:
    """What both stores share: the row's columns for a key, and the record's text in and
    out of the database (encrypted when a key was given)."""

    def _set_key(self, key: str | bytes | None) -> None:
        key = key if key is not None else os.environ.get(KEY_ENV) or None
        self._fernet: Any = None
        if key is None:
            return
        try:
            from cryptography.fernet import Fernet
        except ImportError:  # pragma: no cover - the [auth] extra is missing
            raise ImportError(
                "encrypted credentials need the cryptography package: "
                "pip install 'agent-tooling[auth]'"
            ) from None
        try:
            self._fernet = Fernet(key)
        except (ValueError, TypeError):
            raise ValueError(
                "the credential key is not a Fernet key (32 url-safe base64-encoded bytes; "
                "make one with cryptography.fernet.Fernet.generate_key())"
            ) from None

    @property
    def encrypted(self) -> bool:
        """Whether records are written encrypted."""
        return self._fernet is not None

    @staticmethod
    def _columns(key: CredentialKey) -> tuple[str, str, str, str]:
        return (key.app_name, key.user_id, key.scheme, " ".join(key.scopes))

    def _encode(self, record: StoredCredential) -> tuple[str, int]:
        text = record.to_secret_json()
        if self._fernet is None:
            return text, 0
        return self._fernet.encrypt(text.encode()).decode("ascii"), 1

    def _decode(self, text: str, encrypted: int) -> StoredCredential:
        from tooling.auth import CredentialServiceError, StoredCredential

        if encrypted:
            if self._fernet is None:
                raise CredentialServiceError(
                    f"stored credentials are encrypted: give key= or set {KEY_ENV}"
                )
            from cryptography.fernet import InvalidToken

            try:
                text = self._fernet.decrypt(text.encode("ascii")).decode()
            except InvalidToken:
                raise CredentialServiceError(
                    "a stored credential cannot be decrypted with the key given"
                ) from None
        return StoredCredential.from_secret_json(text)


_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS credentials (
        app_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        scheme TEXT NOT NULL,
        scopes TEXT NOT NULL,
        record TEXT NOT NULL,
        encrypted INTEGER NOT NULL,
        updated REAL NOT NULL,
        PRIMARY KEY (app_name, user_id, scheme, scopes)
    )""",
)

_WHERE = " WHERE app_name = ? AND user_id = ? AND scheme = ? AND scopes = ?"


class SqliteCredentialService(SqliteBacked, CredentialRows):
    """Credentials in a SQLite file (table ``credentials``; it may share the file of a
    :class:`~agent_core.SqliteSessionService`).

    ``key``: a Fernet key to encrypt the records with (default: the
    ``AGENT_CORE_CREDENTIAL_KEY`` environment variable; none: plain JSON, readable by
    whoever reads the file). A save is committed before it returns, so a rotated refresh
    token survives the process. Close it with :meth:`close` or :meth:`aclose`, or use it
    as a (sync or async) context manager.
    """

    _schema = _SCHEMA
    _thread_name = "agent_core-credentials"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        key: str | bytes | None = None,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    ) -> None:
        """Open (or create) the database at ``path``."""
        super().__init__(path, busy_timeout=busy_timeout)
        self._set_key(key)

    async def load_credential(self, key: CredentialKey) -> StoredCredential | None:
        """The record stored for ``key``, or None."""

        def work(conn: sqlite3.Connection) -> tuple[str, int] | None:
            row = conn.execute(
                "SELECT record, encrypted FROM credentials" + _WHERE, self._columns(key)
            ).fetchone()
            return None if row is None else (str(row[0]), int(row[1]))

        found = await self._db.read(work)
        return None if found is None else self._decode(*found)

    async def save_credential(self, key: CredentialKey, credential: StoredCredential) -> None:
        """Store ``credential`` for ``key``, committed before returning."""
        text, encrypted = self._encode(credential)

        def work(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO credentials"
                " (app_name, user_id, scheme, scopes, record, encrypted, updated)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (app_name, user_id, scheme, scopes)"
                " DO UPDATE SET record = excluded.record, encrypted = excluded.encrypted,"
                " updated = excluded.updated",
                (*self._columns(key), text, encrypted, time.time()),
            )

        await self._db.write(work)

    async def delete_credential(self, key: CredentialKey) -> None:
        """Forget what is stored for ``key``."""

        def work(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM credentials" + _WHERE, self._columns(key))

        await self._db.write(work)

    def __repr__(self) -> str:
        return f"SqliteCredentialService({self.path!r}, encrypted={self.encrypted})"
