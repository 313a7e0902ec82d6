"""``InMemorySessionService``: sessions kept in this process, for tests and small apps."""

from __future__ import annotations

import copy
import threading
from typing import Any

from .._events import Event
from .._ids import new_id, now
from .base import BaseSessionService, Session, SessionExistsError
from .state import TEMP_PREFIX, merge_state, split_delta, without_temp

__all__ = ["InMemorySessionService"]


class InMemorySessionService(BaseSessionService):
    """Sessions, events and state in memory; gone when the process ends.

    App state (``app:`` keys) is shared by every user of the app, user state (``user:``
    keys) by one user's sessions, and unprefixed keys belong to their session.
    ``temp:`` keys are applied to the session object given to :meth:`append_event` and
    never stored.

    Everything handed out is a copy: mutating a returned :class:`Session` (its state,
    its events or the events' contents) never changes what is stored, and an event
    given to :meth:`append_event` is stored as a copy too.

    Safe to share between asyncio tasks and between threads (a sync ``Runner.run``
    drives its own event loop in a worker thread): every operation runs without
    awaiting under one ``threading.Lock``, which is never held across an ``await`` and
    so never blocks the event loop for longer than the copy it guards. (An
    ``asyncio.Lock`` would bind itself to the first event loop that waits on it.)
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._app_state: dict[str, dict[str, Any]] = {}
        self._user_state: dict[tuple[str, str], dict[str, Any]] = {}
        # (app_name, user_id) -> session id -> the stored session (state: its own keys).
        self._sessions: dict[tuple[str, str], dict[str, Session]] = {}

    # -- helpers (call with the lock held) ------------------------------------------------

    def _merged_state(self, stored: Session) -> dict[str, Any]:
        return merge_state(
            self._app_state.get(stored.app_name, {}),
            self._user_state.get((stored.app_name, stored.user_id), {}),
            stored.state,
        )

    def _copy_out(self, stored: Session, *, with_events: bool) -> Session:
        return Session(
            id=stored.id,
            app_name=stored.app_name,
            user_id=stored.user_id,
            state=copy.deepcopy(self._merged_state(stored)),
            events=[_copy_event(e) for e in stored.events] if with_events else [],
            last_update_time=stored.last_update_time,
        )

    # -- the interface --------------------------------------------------------------------

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str | None = None,
        state: dict[str, Any] | None = None,
    ) -> Session:
        """Create a session; ``state`` is scoped by prefix like any delta.

        ``temp:`` keys of ``state`` appear in the returned session only. A ``session_id``
        already used by this user of the app raises ``SessionExistsError``.
        """
        sid = session_id if session_id is not None else new_id("s")
        initial = dict(state or {})
        scoped = split_delta(copy.deepcopy(without_temp(initial)))
        with self._lock:
            sessions = self._sessions.setdefault((app_name, user_id), {})
            if sid in sessions:
                raise SessionExistsError(
                    f"session {sid!r} already exists for user {user_id!r} of app {app_name!r}"
                )
            if scoped.app:
                self._app_state.setdefault(app_name, {}).update(scoped.app)
            if scoped.user:
                self._user_state.setdefault((app_name, user_id), {}).update(scoped.user)
            stored = Session(
                id=sid,
                app_name=app_name,
                user_id=user_id,
                state=scoped.session,
                last_update_time=now(),
            )
            sessions[sid] = stored
            created = self._copy_out(stored, with_events=True)
        created.state.update((k, v) for k, v in initial.items() if k.startswith(TEMP_PREFIX))
        return created

    async def get_session(self, *, app_name: str, user_id: str, session_id: str) -> Session | None:
        """A copy of the session with its events and merged state, or None."""
        with self._lock:
            stored = self._sessions.get((app_name, user_id), {}).get(session_id)
            if stored is None:
                return None
            return self._copy_out(stored, with_events=True)

    async def list_sessions(self, *, app_name: str, user_id: str) -> list[Session]:
        """The user's sessions of the app in creation order, with merged state, no events."""
        with self._lock:
            return [
                self._copy_out(stored, with_events=False)
                for stored in self._sessions.get((app_name, user_id), {}).values()
            ]

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete a session and its events (no error if it does not exist)."""
        with self._lock:
            sessions = self._sessions.get((app_name, user_id))
            if sessions is not None:
                sessions.pop(session_id, None)
                if not sessions:
                    del self._sessions[(app_name, user_id)]

    async def append_event(self, session: Session, event: Event) -> Event:
        """Store a copy of ``event`` and apply its state delta, all at once.

        A partial event is returned as is. Otherwise the full delta (``temp:`` keys
        included) is applied to ``session.state``, ``event`` is appended to
        ``session.events``, and ``event.actions.state_delta`` is replaced by a new dict
        without the ``temp:`` keys, as stored. Appending to a session that does not
        exist (deleted, or from another service) raises ``ValueError``.
        """
        if event.partial:
            return event
        delta = event.actions.state_delta
        stored_event = _copy_event(event)
        stored_event.actions.state_delta = without_temp(stored_event.actions.state_delta)
        scoped = split_delta(stored_event.actions.state_delta)
        with self._lock:
            stored = self._sessions.get((session.app_name, session.user_id), {}).get(session.id)
            if stored is None:
                raise ValueError(
                    f"session {session.id!r} of user {session.user_id!r} of app "
                    f"{session.app_name!r} does not exist"
                )
            if scoped.app:
                self._app_state.setdefault(session.app_name, {}).update(scoped.app)
            if scoped.user:
                key = (session.app_name, session.user_id)
                self._user_state.setdefault(key, {}).update(scoped.user)
            stored.state.update(scoped.session)
            stored.events.append(stored_event)
            stored.last_update_time = max(stored.last_update_time, event.timestamp)
        if len(stored_event.actions.state_delta) != len(delta):
            event.actions.state_delta = without_temp(delta)
        session.state.update(delta)
        session.events.append(event)
        session.last_update_time = max(session.last_update_time, event.timestamp)
        return event


def _copy_event(event: Event) -> Event:
    """An independent copy of ``event``: through its JSON form, several times faster than
    ``copy.deepcopy`` and exactly what a persistent service would give back."""
    return Event.from_json(event.to_json())
