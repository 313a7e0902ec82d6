"""``InMemorySessionService``: sessions kept in this process, for tests and small apps."""

from __future__ import annotations

import copy
import itertools
import threading
from typing import Any

from .._events import Event
from .base import BaseSessionService, Session, SessionExistsError
from .state import merge_state, split_delta, without_temp

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
        # (app_name, user_id, session id) -> its place in the order sessions were created.
        self._created: dict[tuple[str, str, str], int] = {}
        self._count = itertools.count()

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

    async def _create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        state: dict[str, Any],
        created_at: float,
    ) -> Session:
        scoped = split_delta(copy.deepcopy(state))
        with self._lock:
            sessions = self._sessions.setdefault((app_name, user_id), {})
            if session_id in sessions:
                raise SessionExistsError(
                    f"session {session_id!r} already exists for user {user_id!r} of app "
                    f"{app_name!r}"
                )
            if scoped.app:
                self._app_state.setdefault(app_name, {}).update(scoped.app)
            if scoped.user:
                self._user_state.setdefault((app_name, user_id), {}).update(scoped.user)
            stored = Session(
                id=session_id,
                app_name=app_name,
                user_id=user_id,
                state=scoped.session,
                last_update_time=created_at,
            )
            sessions[session_id] = stored
            self._created[(app_name, user_id, session_id)] = next(self._count)
            return self._copy_out(stored, with_events=True)

    async def get_session(self, *, app_name: str, user_id: str, session_id: str) -> Session | None:
        """A copy of the session with its events and merged state, or None."""
        with self._lock:
            stored = self._sessions.get((app_name, user_id), {}).get(session_id)
            if stored is None:
                return None
            return self._copy_out(stored, with_events=True)

    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> list[Session]:
        """The sessions of the app in creation order (the user's, or every user's when
        ``user_id`` is None), with merged state, no events."""
        with self._lock:
            if user_id is not None:
                found = list(self._sessions.get((app_name, user_id), {}).values())
            else:
                found = [
                    stored
                    for (app, _), sessions in self._sessions.items()
                    if app == app_name
                    for stored in sessions.values()
                ]
                found.sort(key=lambda s: self._created[(s.app_name, s.user_id, s.id)])
            return [self._copy_out(stored, with_events=False) for stored in found]

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete a session and its events (no error if it does not exist)."""
        with self._lock:
            sessions = self._sessions.get((app_name, user_id))
            if sessions is not None:
                sessions.pop(session_id, None)
                self._created.pop((app_name, user_id, session_id), None)
                if not sessions:
                    del self._sessions[(app_name, user_id)]

    async def _append_event(
        self, session: Session, event: Event, state_delta: dict[str, Any]
    ) -> None:
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


def _copy_event(event: Event) -> Event:
    """An independent copy of ``event``: through its JSON form, several times faster than
    ``copy.deepcopy`` and exactly what a persistent service would give back."""
    return Event.from_json(event.to_json())
