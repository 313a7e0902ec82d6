"""Session services: state scoping, events, copies, errors — for every service (in memory,
SQLite, PostgreSQL)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_core import Content, Event, EventActions, Part
from agent_core.sessions.base import BaseSessionService
from agent_core.sessions.memory import InMemorySessionService
from agent_core.sessions.sqlite import SqliteSessionService
from agent_core.sessions.state import (
    ScopedDelta,
    is_temp,
    merge_state,
    split_delta,
    without_temp,
)

APP = "app"


def text_event(text: str, author: str = "user", /, **delta: Any) -> Event:
    role = "user" if author == "user" else "model"
    return Event(
        author=author,
        content=Content(role=role, parts=[Part.from_text(text)]),
        actions=EventActions(state_delta=dict(delta)),
    )


def delta_event(delta: dict[str, Any], author: str = "agent") -> Event:
    return Event(author=author, actions=EventActions(state_delta=delta))


# -- the pure scoping rules -----------------------------------------------------------------


def test_split_delta_by_prefix() -> None:
    delta = {"a": 1, "app:b": 2, "user:c": 3, "temp:d": 4, "App:e": 5, "x:y": 6}
    assert split_delta(delta) == ScopedDelta(
        app={"b": 2},
        user={"c": 3},
        session={"a": 1, "App:e": 5, "x:y": 6},
        temp={"d": 4},
    )
    assert split_delta({}) == ScopedDelta({}, {}, {}, {})


def test_merge_state_puts_prefixes_back() -> None:
    merged = merge_state({"b": 2}, {"c": 3}, {"a": 1})
    assert merged == {"a": 1, "app:b": 2, "user:c": 3}
    # split then merge gives back the stored keys as written
    delta = {"a": 1, "app:b": 2, "user:c": 3}
    scoped = split_delta(delta)
    assert merge_state(scoped.app, scoped.user, scoped.session) == delta


def test_without_temp_and_is_temp() -> None:
    delta = {"a": 1, "temp:b": 2, "app:c": 3}
    assert without_temp(delta) == {"a": 1, "app:c": 3}
    assert delta == {"a": 1, "temp:b": 2, "app:c": 3}  # not changed
    assert is_temp("temp:x") and not is_temp("tempx") and not is_temp("x")


# -- both services --------------------------------------------------------------------------


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


async def test_create_and_get(service: BaseSessionService) -> None:
    created = await service.create_session(
        app_name=APP,
        user_id="u1",
        session_id="s1",
        state={"k": 1, "app:a": "A", "user:u": [1, 2], "temp:t": "T"},
    )
    assert created.id == "s1" and created.app_name == APP and created.user_id == "u1"
    assert created.state == {"k": 1, "app:a": "A", "user:u": [1, 2], "temp:t": "T"}
    assert created.events == []
    got = await service.get_session(app_name=APP, user_id="u1", session_id="s1")
    assert got is not None
    assert got.state == {"k": 1, "app:a": "A", "user:u": [1, 2]}  # temp: never stored
    assert got.last_update_time == created.last_update_time


async def test_create_gives_fresh_ids(service: BaseSessionService) -> None:
    a = await service.create_session(app_name=APP, user_id="u")
    b = await service.create_session(app_name=APP, user_id="u")
    assert a.id and b.id and a.id != b.id


async def test_get_missing_is_none(service: BaseSessionService) -> None:
    assert await service.get_session(app_name=APP, user_id="u", session_id="nope") is None
    await service.create_session(app_name=APP, user_id="u", session_id="s")
    assert await service.get_session(app_name=APP, user_id="other", session_id="s") is None
    assert await service.get_session(app_name="other", user_id="u", session_id="s") is None


async def test_create_existing_id_is_an_error(service: BaseSessionService) -> None:
    await service.create_session(app_name=APP, user_id="u", session_id="s", state={"k": 1})
    with pytest.raises(ValueError, match="already exists"):
        await service.create_session(app_name=APP, user_id="u", session_id="s", state={"k": 2})
    got = await service.get_session(app_name=APP, user_id="u", session_id="s")
    assert got is not None and got.state == {"k": 1}
    # the same id for another user or app is another session
    await service.create_session(app_name=APP, user_id="v", session_id="s")
    await service.create_session(app_name="other", user_id="u", session_id="s")


async def test_state_scoping(service: BaseSessionService) -> None:
    s1 = await service.create_session(app_name=APP, user_id="alice", session_id="a1")
    await service.append_event(s1, delta_event({"app:theme": "dark", "user:lang": "fr", "n": 1}))
    await service.create_session(app_name=APP, user_id="alice", session_id="a2")
    await service.create_session(app_name=APP, user_id="bob", session_id="b1")
    await service.create_session(app_name="other", user_id="alice", session_id="o1")

    async def state(app: str, user: str, sid: str) -> dict[str, Any]:
        got = await service.get_session(app_name=app, user_id=user, session_id=sid)
        assert got is not None
        return got.state

    assert await state(APP, "alice", "a1") == {"app:theme": "dark", "user:lang": "fr", "n": 1}
    # user: shared by the user's sessions, session keys private
    assert await state(APP, "alice", "a2") == {"app:theme": "dark", "user:lang": "fr"}
    # app: shared by every user of the app
    assert await state(APP, "bob", "b1") == {"app:theme": "dark"}
    # nothing crosses apps
    assert await state("other", "alice", "o1") == {}

    # a later write from another user's session is seen everywhere in the app
    b1 = await service.get_session(app_name=APP, user_id="bob", session_id="b1")
    assert b1 is not None
    await service.append_event(b1, delta_event({"app:theme": "light", "user:lang": "de"}))
    assert (await state(APP, "alice", "a1"))["app:theme"] == "light"
    assert (await state(APP, "alice", "a1"))["user:lang"] == "fr"
    assert (await state(APP, "bob", "b1"))["user:lang"] == "de"


async def test_append_event_applies_delta_and_drops_temp(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="u", session_id="s")
    event = text_event("hi", **{"k": 1, "user:u": 2, "app:a": 3, "temp:t": 4})
    returned = await service.append_event(session, event)
    assert returned is event
    # the in-memory session sees everything, temp: included
    assert session.state == {"k": 1, "user:u": 2, "app:a": 3, "temp:t": 4}
    assert session.events == [event]
    # the event as stored: no temp: keys
    assert event.actions.state_delta == {"k": 1, "user:u": 2, "app:a": 3}
    got = await service.get_session(app_name=APP, user_id="u", session_id="s")
    assert got is not None
    assert got.state == {"k": 1, "user:u": 2, "app:a": 3}
    assert [e.to_dict() for e in got.events] == [event.to_dict()]
    assert got.last_update_time == event.timestamp == session.last_update_time


async def test_only_temp_delta_stores_empty_actions(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="u", session_id="s")
    event = delta_event({"temp:scratch": [1, 2, 3]})
    await service.append_event(session, event)
    assert session.state == {"temp:scratch": [1, 2, 3]}
    got = await service.get_session(app_name=APP, user_id="u", session_id="s")
    assert got is not None and got.state == {}
    assert got.events[0].actions.state_delta == {}
    assert "temp:" not in got.events[0].to_json()


async def test_partial_events_are_not_stored(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="u", session_id="s")
    partial = text_event("stream...", author="agent", k=1)
    partial.partial = True
    assert await service.append_event(session, partial) is partial
    assert session.events == [] and session.state == {}
    got = await service.get_session(app_name=APP, user_id="u", session_id="s")
    assert got is not None and got.events == [] and got.state == {}


async def test_events_keep_their_order_and_shape(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="u", session_id="s")
    call = Event(
        author="agent",
        content=Content(role="model", parts=[Part.from_function_call("f", {"x": 1}, id="c1")]),
        long_running_tool_ids={"c1"},
    )
    response = Event(
        author="agent",
        content=Content(role="user", parts=[Part.from_function_response("f", {"r": 2}, id="c1")]),
        actions=EventActions(skip_summarization=True, artifact_delta={"a.txt": 0}),
    )
    error = Event(author="agent", error_code="model.failed", error_message="boom")
    events = [text_event("one"), call, response, error, text_event("two", author="agent")]
    for event in events:
        await service.append_event(session, event)
    got = await service.get_session(app_name=APP, user_id="u", session_id="s")
    assert got is not None
    assert [e.to_dict() for e in got.events] == [e.to_dict() for e in events]


async def test_get_session_returns_a_copy(service: BaseSessionService) -> None:
    session = await service.create_session(
        app_name=APP, user_id="u", session_id="s", state={"items": [1], "user:d": {"a": 1}}
    )
    await service.append_event(session, text_event("hello", nested={"x": [1]}))
    got = await service.get_session(app_name=APP, user_id="u", session_id="s")
    assert got is not None
    got.state["items"].append(2)
    got.state["user:d"]["a"] = 99
    got.state["new"] = 1
    got.events[0].content.parts[0].text = "changed"  # type: ignore[union-attr]
    got.events[0].actions.state_delta["nested"]["x"].append(2)
    got.events.append(text_event("extra"))
    again = await service.get_session(app_name=APP, user_id="u", session_id="s")
    assert again is not None
    assert again.state == {"items": [1], "user:d": {"a": 1}, "nested": {"x": [1]}}
    assert len(again.events) == 1
    assert again.events[0].content is not None and again.events[0].content.text == "hello"
    assert again.events[0].actions.state_delta == {"nested": {"x": [1]}}


async def test_list_and_delete(service: BaseSessionService) -> None:
    s1 = await service.create_session(app_name=APP, user_id="u", session_id="s1", state={"k": 1})
    await service.append_event(s1, text_event("hi", **{"user:name": "Ann"}))
    await service.create_session(app_name=APP, user_id="u", session_id="s2")
    await service.create_session(app_name=APP, user_id="v", session_id="s3")
    listed = await service.list_sessions(app_name=APP, user_id="u")
    assert [s.id for s in listed] == ["s1", "s2"]
    assert all(s.events == [] for s in listed)
    assert listed[0].state == {"k": 1, "user:name": "Ann"}
    assert listed[1].state == {"user:name": "Ann"}
    assert await service.list_sessions(app_name=APP, user_id="nobody") == []

    await service.delete_session(app_name=APP, user_id="u", session_id="s1")
    assert await service.get_session(app_name=APP, user_id="u", session_id="s1") is None
    assert [s.id for s in await service.list_sessions(app_name=APP, user_id="u")] == ["s2"]
    # deleting what is not there is fine
    await service.delete_session(app_name=APP, user_id="u", session_id="s1")
    await service.delete_session(app_name=APP, user_id="zz", session_id="zz")
    # user state outlives the session
    s2 = await service.get_session(app_name=APP, user_id="u", session_id="s2")
    assert s2 is not None and s2.state == {"user:name": "Ann"}
    # the id can be used again, for a fresh session
    again = await service.create_session(app_name=APP, user_id="u", session_id="s1")
    assert again.state == {"user:name": "Ann"} and again.events == []


async def test_append_to_missing_session_is_an_error(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="u", session_id="s")
    await service.delete_session(app_name=APP, user_id="u", session_id="s")
    event = text_event("late", k=1)
    with pytest.raises(ValueError, match="does not exist"):
        await service.append_event(session, event)
    assert session.events == [] and session.state == {}
    assert await service.get_session(app_name=APP, user_id="u", session_id="s") is None


async def test_concurrent_tasks_lose_nothing(service: BaseSessionService) -> None:
    session = await service.create_session(app_name=APP, user_id="u", session_id="s")
    events = [text_event(f"m{i}", **{f"k{i}": i, "user:last": i}) for i in range(40)]
    await asyncio.gather(*(service.append_event(session, e) for e in events))
    got = await service.get_session(app_name=APP, user_id="u", session_id="s")
    assert got is not None
    assert sorted(e.id for e in got.events) == sorted(e.id for e in events)
    assert [e.id for e in got.events] == [e.id for e in session.events]
    assert all(got.state[f"k{i}"] == i for i in range(40))
    last = got.events[-1].actions.state_delta["user:last"]
    assert got.state["user:last"] == last  # the last committed write wins


async def test_stale_session_objects_both_land(service: BaseSessionService) -> None:
    await service.create_session(app_name=APP, user_id="u", session_id="s")
    a = await service.get_session(app_name=APP, user_id="u", session_id="s")
    b = await service.get_session(app_name=APP, user_id="u", session_id="s")
    assert a is not None and b is not None
    await service.append_event(a, text_event("from a", x=1))
    await service.append_event(b, text_event("from b", y=2))
    got = await service.get_session(app_name=APP, user_id="u", session_id="s")
    assert got is not None
    assert [e.content.text for e in got.events if e.content] == ["from a", "from b"]
    assert got.state == {"x": 1, "y": 2}


def test_in_memory_service_works_across_threads_and_loops() -> None:
    # A sync Runner.run drives its own loop in a worker thread: the service must not be
    # tied to one event loop.
    service = InMemorySessionService()
    asyncio.run(service.create_session(app_name=APP, user_id="u", session_id="s"))

    def worker(tag: str) -> None:
        async def go() -> None:
            session = await service.get_session(app_name=APP, user_id="u", session_id="s")
            assert session is not None
            await asyncio.gather(
                *(service.append_event(session, text_event(f"{tag}{i}")) for i in range(100))
            )

        asyncio.run(go())

    threads = [threading.Thread(target=worker, args=(t,)) for t in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = asyncio.run(service.get_session(app_name=APP, user_id="u", session_id="s"))
    assert got is not None and len(got.events) == 200
