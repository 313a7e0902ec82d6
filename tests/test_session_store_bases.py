"""What the session stores share: listing every user's sessions, and the base's
create/append templates around a store that implements only its storage."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_core import Agent, Content, Event, EventActions, Part, Runner, ScriptedModel
from agent_core.services.base import ArtifactKey, BaseArtifactService
from agent_core.sessions.base import BaseSessionService, Session, SessionExistsError
from agent_core.sessions.memory import InMemorySessionService
from agent_core.sessions.sqlite import SqliteSessionService
from tooling import Blob

APP = "app"


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def service(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "memory":
        yield InMemorySessionService()
        return
    if request.param == "sqlite":
        svc: Any = SqliteSessionService(tmp_path / "sessions.db")
    else:
        from agent_core.sessions.postgres import PostgresSessionService

        svc = PostgresSessionService(request.getfixturevalue("postgres_dsn"))
    try:
        yield svc
    finally:
        await svc.aclose()


def delta_event(**delta: Any) -> Event:
    return Event(author="agent", actions=EventActions(state_delta=dict(delta)))


async def test_listing_without_a_user_gives_every_users_sessions_in_creation_order(
    service: BaseSessionService,
) -> None:
    await service.create_session(app_name=APP, user_id="u", session_id="a", state={"k": 1})
    await service.create_session(app_name=APP, user_id="v", session_id="b")
    await service.create_session(app_name="other", user_id="u", session_id="c")
    await service.create_session(app_name=APP, user_id="u", session_id="d")
    await service.create_session(app_name=APP, user_id="v", session_id="a")
    session = await service.get_session(app_name=APP, user_id="v", session_id="b")
    assert session is not None
    await service.append_event(session, delta_event(**{"user:name": "Vi", "app:mode": "x"}))

    listed = await service.list_sessions(app_name=APP, user_id=None)
    assert [(s.user_id, s.id) for s in listed] == [("u", "a"), ("v", "b"), ("u", "d"), ("v", "a")]
    assert all(s.events == [] for s in listed)
    assert [s.state for s in listed] == [
        {"k": 1, "app:mode": "x"},
        {"user:name": "Vi", "app:mode": "x"},
        {"app:mode": "x"},
        {"user:name": "Vi", "app:mode": "x"},
    ]
    everyone = await service.list_sessions(app_name=APP)
    assert [(s.user_id, s.id) for s in everyone] == [(s.user_id, s.id) for s in listed]
    assert [s.id for s in await service.list_sessions(app_name=APP, user_id="v")] == ["b", "a"]

    await service.delete_session(app_name=APP, user_id="u", session_id="a")
    await service.create_session(app_name=APP, user_id="u", session_id="a")
    listed = await service.list_sessions(app_name=APP)
    assert [(s.user_id, s.id) for s in listed] == [("v", "b"), ("u", "d"), ("v", "a"), ("u", "a")]


class DictStore(BaseSessionService):
    """A store written against the templates: only its storage, in plain dicts."""

    def __init__(self) -> None:
        self.sessions: dict[tuple[str, str, str], Session] = {}
        self.stored_deltas: list[dict[str, Any]] = []

    async def _create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        state: dict[str, Any],
        created_at: float,
    ) -> Session:
        key = (app_name, user_id, session_id)
        if key in self.sessions:
            raise SessionExistsError(f"session {session_id!r} exists")
        self.sessions[key] = Session(
            session_id, app_name, user_id, dict(state), last_update_time=created_at
        )
        return copy.deepcopy(self.sessions[key])

    async def _append_event(
        self, session: Session, event: Event, state_delta: dict[str, Any]
    ) -> None:
        stored = self.sessions.get((session.app_name, session.user_id, session.id))
        if stored is None:
            raise ValueError("no such session")
        self.stored_deltas.append(dict(state_delta))
        stored.state.update(state_delta)
        stored.events.append(event)

    async def get_session(self, *, app_name: str, user_id: str, session_id: str) -> Session | None:
        found = self.sessions.get((app_name, user_id, session_id))
        return copy.deepcopy(found)

    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> list[Session]:
        return [
            copy.deepcopy(s)
            for (app, user, _), s in self.sessions.items()
            if app == app_name and user_id in (None, user)
        ]

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        self.sessions.pop((app_name, user_id, session_id), None)


async def test_a_store_implementing_only_its_storage_gets_ids_temp_keys_and_updates() -> None:
    store = DictStore()
    session = await store.create_session(
        app_name=APP, user_id="u", state={"k": 1, "temp:scratch": 2}
    )
    assert session.id.startswith("s")
    assert session.state == {"k": 1, "temp:scratch": 2}  # temp: in the returned session only
    assert store.sessions[(APP, "u", session.id)].state == {"k": 1}

    partial = Event(author="agent", partial=True, actions=EventActions(state_delta={"p": 1}))
    assert await store.append_event(session, partial) is partial
    assert store.stored_deltas == []

    event = delta_event(a=1, **{"temp:t": 3})
    await store.append_event(session, event)
    assert store.stored_deltas == [{"a": 1}]
    assert event.actions.state_delta == {"a": 1}
    assert session.state == {"k": 1, "temp:scratch": 2, "a": 1, "temp:t": 3}
    assert session.events == [event]
    assert session.last_update_time >= event.timestamp

    gone = Session("nope", APP, "u")
    with pytest.raises(ValueError):
        await store.append_event(gone, delta_event(b=2))
    assert gone.events == [] and gone.state == {}


async def test_a_runner_runs_on_a_store_written_against_the_templates() -> None:
    store = DictStore()
    runner = Runner(
        Agent("echo", ScriptedModel(["Hello."]), output_key="said"),
        app_name=APP,
        session_service=store,
    )
    events = [
        e
        async for e in runner.run_async(
            user_id="u", session_id="s1", new_message=Content("user", [Part.from_text("hi")])
        )
    ]
    assert events[-1].content is not None and events[-1].content.text == "Hello."
    assert store.sessions[(APP, "u", "s1")].state == {"said": "Hello."}


class DictArtifacts(BaseArtifactService):
    """An artifact store written against the templates: only its storage."""

    def __init__(self) -> None:
        self.files: dict[ArtifactKey, list[Blob]] = {}

    async def _save(self, key: ArtifactKey, artifact: Blob) -> int:
        self.files.setdefault(key, []).append(artifact)
        return len(self.files[key]) - 1

    async def _load(self, key: ArtifactKey, version: int | None) -> Blob | None:
        versions = self.files.get(key, [])
        if not versions:
            return None
        return versions[-1] if version is None else versions[version]

    async def _filenames(self, app_name: str, user_id: str, session_id: str) -> list[str]:
        return [
            name
            for (app, user, scope, name) in self.files
            if app == app_name and user == user_id and scope in (session_id, "")
        ]

    async def _versions(self, key: ArtifactKey) -> list[int]:
        return list(range(len(self.files.get(key, []))))

    async def _delete(self, key: ArtifactKey) -> None:
        self.files.pop(key, None)


async def test_an_artifact_store_implementing_only_its_storage_files_user_artifacts_once() -> None:
    store = DictArtifacts()
    where = {"app_name": APP, "user_id": "u"}
    given = Blob("text/plain", b"v0")
    assert (
        await store.save_artifact(**where, session_id="s1", filename="a.txt", artifact=given) == 0
    )
    assert (
        await store.save_artifact(
            **where, session_id="s1", filename="a.txt", artifact=Blob("text/plain", b"v1")
        )
        == 1
    )
    assert store.files[(APP, "u", "s1", "a.txt")][0] is not given  # stored as a copy
    for session_id in ("s1", "s2"):
        saved = await store.save_artifact(
            **where, session_id=session_id, filename="user:prefs", artifact=given
        )
        assert saved == (0 if session_id == "s1" else 1)  # one file, shared by both
    assert list(store.files) == [(APP, "u", "s1", "a.txt"), (APP, "u", "", "user:prefs")]

    assert await store.list_artifact_keys(**where, session_id="s1") == ["a.txt", "user:prefs"]
    assert await store.list_artifact_keys(**where, session_id="s2") == ["user:prefs"]
    latest = await store.load_artifact(**where, session_id="s1", filename="a.txt")
    assert latest == Blob("text/plain", b"v1")
    assert await store.list_versions(**where, session_id="s2", filename="user:prefs") == [0, 1]
    await store.delete_artifact(**where, session_id="s2", filename="user:prefs")
    assert await store.list_artifact_keys(**where, session_id="s1") == ["a.txt"]
