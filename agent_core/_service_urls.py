"""Session, artifact and credential services, and job stores, named by a URL:
``memory://``, ``sqlite:///path``, ``postgresql://...``.

``sqlite:`` URLs read as SQLAlchemy's do (and so as google-adk's ``db_url``):
``sqlite:///sessions.db`` is a path relative to the working directory,
``sqlite:////var/lib/app.db`` an absolute one, ``sqlite://`` or ``sqlite:///:memory:``
a private in-memory database. ``postgresql://`` (also ``postgres://`` and
``postgresql+psycopg://``) URLs go to psycopg as they are, the driver suffix dropped;
psycopg is imported only then. Their query may also size the service's connection pool:
``max_size`` (connections, 10 by default; a run holding a session's lease keeps one),
``min_size`` and ``timeout`` (seconds an operation waits for a connection), as in
``postgresql://agent@db/app?max_size=50``; these are taken off before the URL reaches
psycopg, the rest of the query (``sslmode``, ``options``, ...) is passed on.
"""

from __future__ import annotations

import urllib.parse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tooling.auth import CredentialService

    from .jobs.base import JobStore
    from .services.base import BaseArtifactService
    from .sessions.base import BaseSessionService

__all__ = [
    "artifact_service_from_url",
    "credential_service_from_url",
    "job_store_from_url",
    "session_service_from_url",
]

_POSTGRES_SCHEMES = ("postgresql", "postgres")


def _split(url: str) -> tuple[str, str]:
    """(kind, where): kind is "memory", "sqlite" or "postgresql"; where is the file path
    or the DSN."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise ValueError(
            f"not a service URL: {url!r} (use memory://, sqlite:///path or postgresql://...)"
        )
    scheme = scheme.lower()
    base, _, _driver = scheme.partition("+")
    if scheme == "memory":
        return "memory", ""
    if scheme == "sqlite":
        if rest in ("", "/", "/:memory:"):
            return "sqlite", ":memory:"
        if not rest.startswith("/"):
            raise ValueError(f"a sqlite URL has no host: sqlite:///path, not {url!r}")
        return "sqlite", rest[1:]
    if base in _POSTGRES_SCHEMES:
        return "postgresql", f"postgresql://{rest}"
    raise ValueError(
        f"unknown scheme {scheme!r} in {url!r} (use memory://, sqlite:///path or postgresql://...)"
    )


#: Query parameters of a ``postgresql://`` URL that size the pool, and how they are read.
_POOL_OPTIONS = {"max_size": int, "min_size": int, "timeout": float}


def _pool_options(dsn: str) -> tuple[str, dict[str, Any]]:
    """``dsn`` without its pool options, and the options (``max_size=50`` -> 50)."""
    parts = urllib.parse.urlsplit(dsn)
    kept: list[tuple[str, str]] = []
    options: dict[str, Any] = {}
    for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
        read = _POOL_OPTIONS.get(name)
        if read is None:
            kept.append((name, value))
            continue
        try:
            options[name] = read(value)
        except ValueError:
            raise ValueError(f"{name}={value!r} in a postgresql URL is not a number") from None
        if options[name] < (0 if name == "min_size" else 1) and name != "timeout":
            raise ValueError(f"{name} in a postgresql URL must be at least 1, not {value}")
    if "min_size" in options and options["min_size"] > options.get("max_size", 10):
        raise ValueError("min_size in a postgresql URL is above its max_size")
    query = urllib.parse.urlencode(kept)
    return urllib.parse.urlunsplit(parts._replace(query=query)), options


def session_service_from_url(url: str) -> BaseSessionService:
    """The session service ``url`` names (see the module docs for the forms)."""
    kind, where = _split(url)
    if kind == "memory":
        from .sessions.memory import InMemorySessionService

        return InMemorySessionService()
    if kind == "sqlite":
        from .sessions.sqlite import SqliteSessionService

        return SqliteSessionService(where)
    from .sessions.postgres import PostgresSessionService

    dsn, pool = _pool_options(where)
    return PostgresSessionService(dsn, **pool)


def job_store_from_url(url: str) -> JobStore:
    """The job store ``url`` names (the same forms as the session services'):
    ``memory://``, ``sqlite:///path``, ``postgresql://...``."""
    kind, where = _split(url)
    if kind == "memory":
        from .jobs.sqlite import InMemoryJobStore

        return InMemoryJobStore()
    if kind == "sqlite":
        from .jobs.sqlite import SqliteJobStore

        return SqliteJobStore(where)
    from .jobs.postgres import PostgresJobStore

    dsn, pool = _pool_options(where)
    return PostgresJobStore(dsn, **({"max_size": pool["max_size"]} if "max_size" in pool else {}))


def artifact_service_from_url(url: str) -> BaseArtifactService:
    """The artifact service ``url`` names (see the module docs for the forms)."""
    kind, where = _split(url)
    if kind == "memory":
        from .services.artifacts import InMemoryArtifactService

        return InMemoryArtifactService()
    if kind == "sqlite":
        from .services.artifacts import SqliteArtifactService

        return SqliteArtifactService(where)
    from .services.postgres_artifacts import PostgresArtifactService

    dsn, pool = _pool_options(where)
    return PostgresArtifactService(dsn, **pool)


def credential_service_from_url(url: str, *, key: str | bytes | None = None) -> CredentialService:
    """The credential service ``url`` names (see the module docs for the forms).

    ``key``: a Fernet key to encrypt stored tokens with (default: the
    ``AGENT_CORE_CREDENTIAL_KEY`` environment variable); not used by ``memory://``.
    """
    kind, where = _split(url)
    if kind == "memory":
        from tooling.auth import InMemoryCredentialService

        return InMemoryCredentialService()
    if kind == "sqlite":
        from .services.credentials import SqliteCredentialService

        return SqliteCredentialService(where, key=key)
    from .services.postgres_credentials import PostgresCredentialService

    dsn, pool = _pool_options(where)
    return PostgresCredentialService(dsn, key=key, **pool)
