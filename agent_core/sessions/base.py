"""``Session`` and the session service interface."""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

from .._events import Event
from .errors import SessionBusyError, SessionExistsError, SessionStoreError

__all__ = [
    "BaseSessionService",
    "Session",
    "SessionBusyError",
    "SessionExistsError",
    "SessionStoreError",
]


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
        :class:`SessionExistsError` (a ``ValueError``); of concurrent creates of one
        id exactly one succeeds."""

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

    def lease(
        self, *, app_name: str, user_id: str, session_id: str, timeout: float
    ) -> AbstractAsyncContextManager[None]:
        """Hold the session's lease: one writer per session, from any process.

        A run holds it from reading the session to storing its last event, so two runs
        on one session never interleave. Waits up to ``timeout`` seconds, then raises
        :class:`SessionBusyError`. Other sessions are never held up. This default is a
        lock within this process (enough for a store no other process reaches);
        services other processes share override it.
        """
        from .lease import local_lease

        return local_lease((id(self), app_name, user_id, session_id), timeout)
