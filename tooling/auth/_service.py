"""``CredentialService``: where tokens live between calls, runs and processes.

A service stores one :class:`StoredCredential` per :class:`CredentialKey`: the tokens
(access and refresh) and, while a user is being asked to authorize, the pending
request's ``state`` and PKCE verifier. :class:`InMemoryCredentialService` is the
default; ``agent_core`` has SQLite and PostgreSQL ones (``credential_service_from_url``),
which write :func:`dump_stored` text (optionally encrypted) and read it with
:func:`load_stored`.
"""

from __future__ import annotations

import time
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from ._credentials import AccessToken, CredentialKey

__all__ = [
    "CredentialService",
    "CredentialServiceError",
    "InMemoryCredentialService",
    "PendingAuthorization",
    "StoredCredential",
]


class CredentialServiceError(Exception):
    """A credential service failed (unreachable, a corrupt or undecryptable record).

    Its message says what failed, never a secret.
    """


class PendingAuthorization(BaseModel):
    """An authorization request a user has been sent and not yet answered."""

    model_config = ConfigDict(frozen=True)

    state: str
    code_verifier: SecretStr
    auth_config: dict[str, Any]
    """The ``authConfig`` sent with the request (the answer is found by it)."""
    created_at: float = Field(default_factory=time.time)


class StoredCredential(BaseModel):
    """What a credential service keeps for one key."""

    model_config = ConfigDict(frozen=True)

    token: AccessToken | None = None
    refresh_token: SecretStr | None = None
    issued_at: float | None = None
    pending: PendingAuthorization | None = None

    def to_secret_json(self) -> str:
        """This record as JSON text, secrets included, for a store to write (encrypted
        where it can be). Never log it."""
        return dump_stored(self)

    @classmethod
    def from_secret_json(cls, text: str | bytes) -> StoredCredential:
        """The record :meth:`to_secret_json` wrote; ``CredentialServiceError`` if the
        text is not one."""
        return load_stored(text)


def dump_stored(record: StoredCredential) -> str:
    """``record`` as JSON text, secrets included: for a store to write (encrypted when it
    can be). Never log it."""
    import json

    def secret(value: SecretStr | None) -> str | None:
        return value.get_secret_value() if value is not None else None

    token = record.token
    pending = record.pending
    return json.dumps(
        {
            "token": None
            if token is None
            else {
                "token": secret(token.token),
                "expires_at": token.expires_at,
                "scopes": list(token.scopes),
                "token_type": token.token_type,
            },
            "refresh_token": secret(record.refresh_token),
            "issued_at": record.issued_at,
            "pending": None
            if pending is None
            else {
                "state": pending.state,
                "code_verifier": secret(pending.code_verifier),
                "auth_config": pending.auth_config,
                "created_at": pending.created_at,
            },
        },
        separators=(",", ":"),
    )


def load_stored(text: str | bytes) -> StoredCredential:
    """The record :func:`dump_stored` wrote; ``CredentialServiceError`` if it is not one."""
    try:
        return StoredCredential.model_validate_json(text)
    except ValueError:
        raise CredentialServiceError("a stored credential is not readable") from None


#: A token is refreshed this many seconds before it expires (at most a quarter of its
#: lifetime, so a short-lived token is still used).
REFRESH_LEEWAY = 30.0


def use_until(record: StoredCredential) -> float:
    """When the stored token stops being handed out as it is (refreshed from then on):
    ``REFRESH_LEEWAY`` before it expires, or a quarter of its lifetime for a short one."""
    token = record.token
    if token is None:
        return 0.0
    if token.expires_at is None:
        return float("inf")
    lifetime = token.expires_at - (record.issued_at or token.expires_at - 4 * REFRESH_LEEWAY)
    return token.expires_at - min(REFRESH_LEEWAY, max(lifetime, 0.0) / 4)


@runtime_checkable
class CredentialService(Protocol):
    """Stores credentials by key. Every method is async and may raise
    ``CredentialServiceError``; a call that needs a credential then answers with an
    error (``auth.unavailable``), never an exception out of the run."""

    async def load_credential(self, key: CredentialKey) -> StoredCredential | None:
        """The record stored for ``key``, or None."""
        ...

    async def save_credential(self, key: CredentialKey, credential: StoredCredential) -> None:
        """Store ``credential`` for ``key`` (replacing what was there), durably, before
        returning."""
        ...

    async def delete_credential(self, key: CredentialKey) -> None:
        """Forget what is stored for ``key`` (nothing when there is nothing)."""
        ...


class InMemoryCredentialService:
    """Credentials in this process's memory: the default, and for tests."""

    def __init__(self) -> None:
        """An empty store."""
        self._records: dict[CredentialKey, StoredCredential] = {}

    async def load_credential(self, key: CredentialKey) -> StoredCredential | None:
        """The record stored for ``key``, or None."""
        return self._records.get(key)

    async def save_credential(self, key: CredentialKey, credential: StoredCredential) -> None:
        """Store ``credential`` for ``key``."""
        self._records[key] = credential

    async def delete_credential(self, key: CredentialKey) -> None:
        """Forget what is stored for ``key``."""
        self._records.pop(key, None)

    def __repr__(self) -> str:
        return f"InMemoryCredentialService({len(self._records)} keys)"
