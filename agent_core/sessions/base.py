"""``Session`` and the session service interface."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from .._events import Event

__all__ = ["BaseSessionService", "Session"]


@dataclass(slots=True)
class Session:
    """A conversation: its events in order and its state.

    ``state`` is the merged view the agents see: the app's ``app:`` keys, the user's
    ``user:`` keys and the session's own keys (``temp:`` keys live only for the
    invocation that wrote them and are never stored).
    """

    id: str
    app_name: str
    user_id: str
    state: dict[str, Any] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    last_update_time: float = 0.0


class BaseSessionService(ABC):
    """Where sessions live. All methods are async and keyword-only."""

    @abstractmethod
    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str | None = None,
        state: dict[str, Any] | None = None,
    ) -> Session:
        """Create a session (a fresh id when ``session_id`` is None); ``state`` is its
        initial state, scoped by prefix like any delta (``temp:`` keys appear in the
        returned session only). An id the user already has in the app raises
        ``ValueError``."""

    @abstractmethod
    async def get_session(self, *, app_name: str, user_id: str, session_id: str) -> Session | None:
        """The session with its events and merged state, or None.

        The result is the caller's own copy: changing it changes nothing stored."""

    @abstractmethod
    async def list_sessions(self, *, app_name: str, user_id: str) -> list[Session]:
        """The user's sessions of the app (events may be left out)."""

    @abstractmethod
    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete a session and its events (no error if it does not exist)."""

    @abstractmethod
    async def append_event(self, session: Session, event: Event) -> Event:
        """Store ``event`` and apply its ``actions.state_delta``, as one transaction.

        The delta merges key by key (the last committed write of a key wins) into the
        app, user or session scope its prefix names; ``temp:`` keys are applied to the
        in-memory ``session.state`` only and never stored. ``session.events``,
        ``session.state`` and ``session.last_update_time`` are updated in place (with
        this event only: what other writers appended meanwhile is kept in the store,
        not read back), and ``event.actions.state_delta`` is replaced by a new dict
        without its ``temp:`` keys, as stored. Partial events are not stored (returned
        as is). Appending to a session that does not exist raises ``ValueError``.
        """
