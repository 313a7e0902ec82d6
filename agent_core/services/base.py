"""Interfaces of the artifact and memory services tools reach through ``ToolContext``."""

from __future__ import annotations

from abc import ABC, abstractmethod

from tooling import Blob, MemoryHit

from ..sessions.base import Session

__all__ = ["BaseArtifactService", "BaseMemoryService"]


class BaseArtifactService(ABC):
    """Versioned binary artifacts per session (versions from 0)."""

    @abstractmethod
    async def save_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str, artifact: Blob
    ) -> int:
        """Store a new version of ``filename``; return its version."""

    @abstractmethod
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

    @abstractmethod
    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> list[str]:
        """The artifact names of the session, sorted."""

    @abstractmethod
    async def list_versions(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> list[int]:
        """The versions of ``filename``, ascending."""

    @abstractmethod
    async def delete_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> None:
        """Delete every version of ``filename``."""


class BaseMemoryService(ABC):
    """Long-term memory: past sessions, searchable."""

    @abstractmethod
    async def add_session_to_memory(self, session: Session) -> None:
        """Remember the text of the session's events."""

    @abstractmethod
    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> list[MemoryHit]:
        """What the user's past sessions of the app say about ``query``, best first."""
