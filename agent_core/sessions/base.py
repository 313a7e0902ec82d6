"""``Session`` and the session service interface."""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

from .._events import Event
from .._ids import new_id, now
from .errors import AlreadyExistsError, SessionBusyError, SessionExistsError, SessionStoreError
from .state import TEMP_PREFIX, without_temp

__all__ = [
    "AlreadyExistsError",
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
    """Where sessions live. All methods are async and keyword-only.

    :meth:`create_session` and :meth:`append_event` are templates: what every store does
    around its storage (fresh ids, ``temp:`` keys kept out of the store, the caller's
    session updated in place) is done here, and a store implements only the storage, in
    :meth:`_create_session` and :meth:`_append_event` (a store may instead override the
    two public methods whole).
    """

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
        initial = dict(state or {})
        session = await self._create_session(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id if session_id is not None else new_id("s"),
            state=without_temp(initial),
            created_at=now(),
        )
        session.state.update((k, v) for k, v in initial.items() if k.startswith(TEMP_PREFIX))
        return session

    async def _create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        state: dict[str, Any],
        created_at: float,
    ) -> Session:
        """Store a new session with ``state`` (no ``temp:`` keys; the caller's dict, to
        copy if kept) and return it with its merged state and no events. An id taken
        raises :class:`SessionExistsError`."""
        raise NotImplementedError(f"{type(self).__name__} does not create sessions")

    @abstractmethod
    async def get_session(self, *, app_name: str, user_id: str, session_id: str) -> Session | None:
        """The session with its events and merged state, or None.

        The result is the caller's own copy: changing it changes nothing stored."""

    @abstractmethod
    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> list[Session]:
        """The sessions of the app in creation order: the user's, or every user's when
        ``user_id`` is None (events may be left out)."""

    @abstractmethod
    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete a session and its events (no error if it does not exist)."""

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
        if event.partial:
            return event
        delta = event.actions.state_delta
        stored_delta = without_temp(delta)
        await self._append_event(session, event, stored_delta)
        if len(stored_delta) != len(delta):
            event.actions.state_delta = stored_delta
        session.state.update(delta)
        session.events.append(event)
        session.last_update_time = max(session.last_update_time, event.timestamp)
        return event

    async def _append_event(
        self, session: Session, event: Event, state_delta: dict[str, Any]
    ) -> None:
        """Store ``event`` with ``state_delta`` (its delta without ``temp:`` keys) as its
        delta, and apply that delta to the stored state, in one transaction. A session
        that does not exist raises ``ValueError`` and nothing is stored."""
        raise NotImplementedError(f"{type(self).__name__} does not store events")

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
