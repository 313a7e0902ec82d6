"""Interfaces of the artifact and memory services tools reach through ``ToolContext``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import TypeAlias

from tooling import Blob, MemoryHit

from ..sessions.base import Session

__all__ = ["BaseArtifactService", "BaseMemoryService"]


#: Filenames with this prefix belong to the user, shared by all their sessions of the app.
USER_ARTIFACT_PREFIX = "user:"

#: Where a file is filed: ``(app_name, user_id, scope, filename)``, the scope being the
#: session id, or ``""`` for the user's own (``user:``) files.
ArtifactKey: TypeAlias = tuple[str, str, str, str]


def refuse_unstorable_keys(**keys: str) -> None:
    """Raise ``ValueError`` for a key (a filename, an app, user or session id) that holds
    text no store can hold (a lone surrogate has no UTF-8 form): every artifact store
    refuses it alike, before it reaches a database."""
    for field, text in keys.items():
        if isinstance(text, str) and not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                shown = text.encode("utf-8", "backslashreplace").decode("utf-8")
                raise ValueError(
                    f"an artifact {field} must be UTF-8 text, not {shown[:80]!r} "
                    "(it holds a lone surrogate)"
                ) from None


def artifact_key(app_name: str, user_id: str, session_id: str, filename: str) -> ArtifactKey:
    """Where ``filename`` of that session is filed (a ``user:`` file under the user).

    ``ValueError`` for text no store can hold (see :func:`refuse_unstorable_keys`).
    """
    refuse_unstorable_keys(
        filename=filename, app_name=app_name, user_id=user_id, session_id=session_id
    )
    scope = "" if filename.startswith(USER_ARTIFACT_PREFIX) else session_id
    return (app_name, user_id, scope, filename)


class BaseArtifactService:
    """Versioned binary artifacts per session (versions from 0).

    A filename starting with ``user:`` names an artifact of the user rather than of the
    session: every session of that user of the app sees (and versions) the same one.
    The public methods are templates that find where a file is filed; a store implements
    the storage, in the ``_save``, ``_load``, ``_filenames``, ``_versions`` and
    ``_delete`` hooks (or overrides the public methods whole).
    """

    async def save_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str, artifact: Blob
    ) -> int:
        """Store a new version of ``filename``; return its version (0 for the first)."""
        key = artifact_key(app_name, user_id, session_id, filename)
        return await self._save(key, Blob(artifact.mime_type, artifact.data))

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
        return await self._load(artifact_key(app_name, user_id, session_id, filename), version)

    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> list[str]:
        """The session's artifact names and the user's (``user:``) ones, sorted."""
        refuse_unstorable_keys(app_name=app_name, user_id=user_id, session_id=session_id)
        return sorted(set(await self._filenames(app_name, user_id, session_id)))

    async def list_versions(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> list[int]:
        """The versions of ``filename``, ascending (empty when there is none)."""
        return await self._versions(artifact_key(app_name, user_id, session_id, filename))

    async def delete_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> None:
        """Delete every version of ``filename`` (a later save starts again at 0)."""
        await self._delete(artifact_key(app_name, user_id, session_id, filename))

    # -- the storage: what a store implements ----------------------------------------------

    async def _save(self, key: ArtifactKey, artifact: Blob) -> int:
        """Store ``artifact`` (the caller's own copy) as the next version of ``key``."""
        raise NotImplementedError(f"{type(self).__name__} does not store artifacts")

    async def _load(self, key: ArtifactKey, version: int | None) -> Blob | None:
        """That version of ``key`` (the latest when None), or None."""
        raise NotImplementedError(f"{type(self).__name__} does not load artifacts")

    async def _filenames(self, app_name: str, user_id: str, session_id: str) -> Iterable[str]:
        """The filenames filed under the session or under the user (``user:`` ones)."""
        raise NotImplementedError(f"{type(self).__name__} does not list artifacts")

    async def _versions(self, key: ArtifactKey) -> list[int]:
        """The versions of ``key``, ascending."""
        raise NotImplementedError(f"{type(self).__name__} does not list versions")

    async def _delete(self, key: ArtifactKey) -> None:
        """Delete every version of ``key`` (no error when there is none)."""
        raise NotImplementedError(f"{type(self).__name__} does not delete artifacts")


class BaseMemoryService(ABC):
    """Long-term memory: past sessions, searchable."""

    @abstractmethod
    async def add_session_to_memory(self, session: Session) -> None:
        """Remember the text of the session's events."""

    @abstractmethod
    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> list[MemoryHit]:
        """What the user's past sessions of the app say about ``query``, best first."""
