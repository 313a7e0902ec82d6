"""The Sessions part of the inspector: sessions, their events page by page, and chat.

``GET /api/sessions`` lists every session of the app (all users) with its last update
and the calls still waiting; ``GET /api/sessions/{user}/{id}?offset=&limit=&state_at=``
gives a page of events in the wire shape, the session's state, what is pending and, when
asked, the state as the events up to index ``state_at`` left it (``since=`` a last update
time already seen answers ``{"unchanged": true}`` cheaply, for polling); ``POST
/api/sessions/{user}/{id}/messages`` (``{"text": ...}`` or ``{"content": {...}}`` in the
wire shape) runs the agent and streams its events as server-sent events.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tooling.web import EventStream, HttpError, Reply, Request, WebServer

from .._content import Content
from .._events import Event
from .._invocation.requests import Waiting
from .._runner import RunConfig, Runner
from ..sessions.base import BaseSessionService, Session

__all__ = [
    "pending_calls",
    "state_at",
]

MAX_PAGE = 1000
_LOADED = 8


@dataclass
class SessionsApi:
    """The sessions of one app, and the runner that adds to them."""

    runner: Runner
    run_config: RunConfig = field(default_factory=RunConfig)
    _pending: dict[tuple[str, str], tuple[float, list[dict[str, Any]]]] = field(
        default_factory=dict
    )
    # The sessions loaded last, by (user, id): (last update, session, pending calls). A
    # page of a session not updated since it was loaded costs no load.
    _loaded: OrderedDict[tuple[str, str], tuple[float, Session, list[dict[str, Any]]]] = field(
        default_factory=OrderedDict
    )

    @property
    def service(self) -> BaseSessionService:
        return self.runner.session_service

    @property
    def app_name(self) -> str:
        return self.runner.app_name

    async def _load(
        self, user_id: str, session_id: str, updated: float | None
    ) -> tuple[Session, list[dict[str, Any]]] | None:
        """The session and its pending calls; from the cache when ``updated`` matches."""
        key = (user_id, session_id)
        cached = self._loaded.get(key)
        if cached is not None and updated is not None and cached[0] == updated:
            self._loaded.move_to_end(key)
            return cached[1], cached[2]
        session = await self.service.get_session(
            app_name=self.app_name, user_id=user_id, session_id=session_id
        )
        if session is None:
            self._loaded.pop(key, None)
            return None
        pending = pending_calls(session.events)
        self._loaded[key] = (session.last_update_time, session, pending)
        self._loaded.move_to_end(key)
        while len(self._loaded) > _LOADED:
            self._loaded.popitem(last=False)
        return session, pending

    async def _updated(self, user_id: str, session_id: str) -> float | None:
        """The session's last update time, or None (no such session)."""
        listed = await self.service.list_sessions(app_name=self.app_name, user_id=user_id)
        return next((s.last_update_time for s in listed if s.id == session_id), None)

    async def sessions(self) -> list[dict[str, Any]]:
        """Every session of the app, most recently updated first."""
        rows = await _all_sessions(self.service, self.app_name)
        out: list[dict[str, Any]] = []
        for user_id, session_id, updated in rows:
            cached = self._pending.get((user_id, session_id))
            if cached is None or cached[0] != updated:
                loaded = await self._load(user_id, session_id, updated)
                pending = loaded[1] if loaded is not None else []
                self._pending[(user_id, session_id)] = (updated, pending)
            else:
                pending = cached[1]
            out.append(
                {
                    "user_id": user_id,
                    "id": session_id,
                    "last_update_time": updated,
                    "pending": pending,
                }
            )
        out.sort(key=lambda s: (-s["last_update_time"], s["user_id"], s["id"]))
        return out

    async def page(
        self,
        user_id: str,
        session_id: str,
        offset: int,
        limit: int,
        at: int | None,
        since: float | None = None,
    ) -> dict[str, Any]:
        """A page of the session's events, with its state and what is pending.

        With ``since`` (a ``last_update_time`` the caller has seen), a session not updated
        since is answered ``{"unchanged": true}`` without loading its events.
        """
        updated = await self._updated(user_id, session_id)
        if since is not None and updated == since:
            return {"user_id": user_id, "id": session_id, "unchanged": True}
        loaded = await self._load(user_id, session_id, updated)
        if loaded is None:
            raise HttpError(404, f"no session {session_id!r} for user {user_id!r}")
        session, pending = loaded
        events = session.events
        body: dict[str, Any] = {
            "user_id": user_id,
            "id": session_id,
            "last_update_time": session.last_update_time,
            "total": len(events),
            "offset": offset,
            "events": [e.to_dict() for e in events[offset : offset + limit]],
            "state": session.state,
            "pending": pending,
        }
        if at is not None:
            if not 0 <= at < len(events):
                raise HttpError(400, f"state_at must be an event index below {len(events)}")
            body["state_at"] = state_at(events, at)
        return body

    async def send(
        self, user_id: str, session_id: str, message: str | Content
    ) -> AsyncIterator[tuple[str, Any]]:
        """Run the agent on ``message``; yield each event (wire shape), then ``done``."""
        count = 0
        async for event in self.runner.run_async(
            user_id=user_id,
            session_id=session_id,
            new_message=message,
            run_config=self.run_config,
        ):
            count += 1
            yield "event", event.to_dict()
        yield "done", {"events": count}


async def _all_sessions(service: BaseSessionService, app_name: str) -> list[tuple[str, str, float]]:
    """``(user, session id, last update)`` of every session of the app, any user."""
    found = await service.list_sessions(app_name=app_name, user_id=None)
    return [(s.user_id, s.id, s.last_update_time) for s in found]


def pending_calls(events: Sequence[Event]) -> list[dict[str, Any]]:
    """Calls still waiting: confirmation or credential requests not answered, and
    long-running calls without a final response. Each is ``{"id", "name", "args"}``."""
    history = list(events)
    waiting = Waiting(history)
    open_ids = {r.id for r in waiting.open_requests()}
    open_ids |= {c.call.id or "" for c in waiting.open_long_running()}
    return [
        {"id": call.id, "name": call.name, "args": call.args}
        for event in history
        if not event.partial
        for call in event.get_function_calls()
        if call.id in open_ids
    ]


def state_at(events: Sequence[Event], index: int) -> dict[str, Any]:
    """The state the events up to ``index`` (included) wrote, delta after delta.

    State given when the session was created is not in any event, so it is not shown.
    """
    state: dict[str, Any] = {}
    for event in events[: index + 1]:
        for key, value in event.actions.state_delta.items():
            state[key] = copy.deepcopy(value)
    return state


def _message(body: Any) -> str | Content:
    if not isinstance(body, Mapping):
        raise HttpError(400, "the body must be a JSON object")
    if isinstance(body.get("text"), str) and body["text"].strip():
        return str(body["text"])
    content = body.get("content")
    if isinstance(content, Mapping):
        try:
            return Content.from_dict(dict(content))
        except Exception:  # any shape at all may come: our words, not Python's
            raise HttpError(400, f"content is not a valid Content: {_SHAPES}") from None
    raise HttpError(400, f"the body must be {_SHAPES}")


_SHAPES = (
    '{"text": "..."} or {"content": {"role": "user", "parts": [{"text": "..."}, ...]}} '
    "(parts in the event wire shape)"
)


async def _events_only(items: AsyncIterator[tuple[str, Any]]) -> dict[str, Any]:
    return {"events": [data async for kind, data in items if kind == "event"]}


def add_session_routes(server: WebServer, apps: Mapping[str, SessionsApi]) -> None:
    """Serve the sessions API for ``apps`` (``?app=`` picks one, the first by default)."""

    def pick(request: Request) -> SessionsApi:
        app = request.query.get("app")
        if not app:
            return next(iter(apps.values()))
        if app not in apps:
            raise HttpError(404, f"no app named {app!r}")
        return apps[app]

    def list_sessions(request: Request) -> Reply:
        return Reply({"sessions": server.run(pick(request).sessions())})

    def one_session(request: Request) -> Reply:
        at_text = request.query.get("state_at")
        at = request.int_query("state_at", 0) if at_text not in (None, "") else None
        since_text = request.query.get("since")
        try:
            since = float(since_text) if since_text else None
        except ValueError:
            raise HttpError(400, f"since must be a number, got {since_text!r}") from None
        return Reply(
            server.run(
                pick(request).page(
                    request.params["user"],
                    request.params["id"],
                    request.int_query("offset", 0),
                    request.int_query("limit", 200, high=MAX_PAGE),
                    at,
                    since,
                )
            )
        )

    def send(request: Request) -> EventStream | Reply:
        api = pick(request)
        message = _message(request.json())
        user, sid = request.params["user"], request.params["id"]
        if request.wants_json:  # one JSON object: {"events": [...]}
            return Reply(server.run(_events_only(api.send(user, sid, message))))
        return server.stream(lambda: api.send(user, sid, message))

    server.route("GET", "/api/sessions", list_sessions)
    server.route("GET", r"/api/sessions/(?P<user>[^/]+)/(?P<id>[^/]+)", one_session)
    server.route("POST", r"/api/sessions/(?P<user>[^/]+)/(?P<id>[^/]+)/messages", send)
