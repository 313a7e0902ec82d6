"""Artifact services (in memory and SQLite) and the in-memory memory service."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_core import Content, Event, Part
from agent_core.services.artifacts import InMemoryArtifactService, SqliteArtifactService
from agent_core.services.base import BaseArtifactService
from agent_core.services.memory import InMemoryMemoryService
from agent_core.sessions.base import Session
from agent_core.sessions.sqlite import SqliteSessionService
from tooling import Blob, MemoryHit

APP = "app"
WHERE: dict[str, Any] = {"app_name": APP, "user_id": "u", "session_id": "s"}


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def artifacts(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "memory":
        yield InMemoryArtifactService()
        return
    if request.param == "sqlite":
        svc: Any = SqliteArtifactService(tmp_path / "artifacts.db")
    else:
        from agent_core.services.postgres_artifacts import PostgresArtifactService

        svc = PostgresArtifactService(request.getfixturevalue("postgres_dsn"))
    try:
        yield svc
    finally:
        await svc.aclose()


# -- artifacts ------------------------------------------------------------------------------


async def test_versions_from_zero_and_latest(artifacts: BaseArtifactService) -> None:
    for i in range(3):
        blob = Blob("text/plain", f"v{i}".encode())
        assert await artifacts.save_artifact(**WHERE, filename="a.txt", artifact=blob) == i
    assert await artifacts.load_artifact(**WHERE, filename="a.txt") == Blob("text/plain", b"v2")
    assert await artifacts.load_artifact(**WHERE, filename="a.txt", version=0) == Blob(
        "text/plain", b"v0"
    )
    assert await artifacts.load_artifact(**WHERE, filename="a.txt", version=3) is None
    assert await artifacts.load_artifact(**WHERE, filename="a.txt", version=-1) is None
    assert await artifacts.load_artifact(**WHERE, filename="missing") is None
    assert await artifacts.list_versions(**WHERE, filename="a.txt") == [0, 1, 2]
    assert await artifacts.list_versions(**WHERE, filename="missing") == []


async def test_binary_data_and_mime_types_round_trip(artifacts: BaseArtifactService) -> None:
    data = bytes(range(256)) * 100
    await artifacts.save_artifact(**WHERE, filename="img", artifact=Blob("image/png", data))
    await artifacts.save_artifact(**WHERE, filename="img", artifact=Blob("image/jpeg", b""))
    assert await artifacts.load_artifact(**WHERE, filename="img", version=0) == Blob(
        "image/png", data
    )
    assert await artifacts.load_artifact(**WHERE, filename="img") == Blob("image/jpeg", b"")


async def test_list_keys_sorted_and_scoped(artifacts: BaseArtifactService) -> None:
    blob = Blob("text/plain", b"x")
    for name in ("b.txt", "a.txt", "c.bin", "a.txt"):
        await artifacts.save_artifact(**WHERE, filename=name, artifact=blob)
    await artifacts.save_artifact(
        app_name=APP, user_id="u", session_id="t", filename="z", artifact=blob
    )
    await artifacts.save_artifact(
        app_name=APP, user_id="v", session_id="s", filename="y", artifact=blob
    )
    await artifacts.save_artifact(
        app_name="o", user_id="u", session_id="s", filename="w", artifact=blob
    )
    assert await artifacts.list_artifact_keys(**WHERE) == ["a.txt", "b.txt", "c.bin"]
    assert await artifacts.list_artifact_keys(app_name=APP, user_id="u", session_id="t") == ["z"]
    assert await artifacts.list_artifact_keys(app_name=APP, user_id="u", session_id="x") == []
    # another session's artifact is not reachable from this one
    assert await artifacts.load_artifact(**WHERE, filename="z") is None


async def test_user_artifacts_are_shared_by_the_users_sessions(
    artifacts: BaseArtifactService,
) -> None:
    blob = Blob("text/plain", b"profile")
    assert await artifacts.save_artifact(**WHERE, filename="user:profile", artifact=blob) == 0
    other: dict[str, Any] = {"app_name": APP, "user_id": "u", "session_id": "t"}
    assert await artifacts.load_artifact(**other, filename="user:profile") == blob
    assert await artifacts.save_artifact(**other, filename="user:profile", artifact=blob) == 1
    await artifacts.save_artifact(**other, filename="own", artifact=blob)
    assert await artifacts.list_artifact_keys(**WHERE) == ["user:profile"]
    assert await artifacts.list_artifact_keys(**other) == ["own", "user:profile"]
    stranger: dict[str, Any] = {"app_name": APP, "user_id": "v", "session_id": "s"}
    assert await artifacts.load_artifact(**stranger, filename="user:profile") is None


async def test_delete_artifact(artifacts: BaseArtifactService) -> None:
    blob = Blob("text/plain", b"x")
    await artifacts.save_artifact(**WHERE, filename="a", artifact=blob)
    await artifacts.save_artifact(**WHERE, filename="a", artifact=blob)
    await artifacts.save_artifact(**WHERE, filename="b", artifact=blob)
    await artifacts.delete_artifact(**WHERE, filename="a")
    assert await artifacts.load_artifact(**WHERE, filename="a") is None
    assert await artifacts.list_versions(**WHERE, filename="a") == []
    assert await artifacts.list_artifact_keys(**WHERE) == ["b"]
    await artifacts.delete_artifact(**WHERE, filename="never")  # no error
    assert await artifacts.save_artifact(**WHERE, filename="a", artifact=blob) == 0


async def test_concurrent_saves_get_distinct_versions(artifacts: BaseArtifactService) -> None:
    versions = await asyncio.gather(
        *(
            artifacts.save_artifact(
                **WHERE, filename="log", artifact=Blob("text/plain", str(i).encode())
            )
            for i in range(20)
        )
    )
    assert sorted(versions) == list(range(20))
    for i, version in enumerate(versions):
        loaded = await artifacts.load_artifact(**WHERE, filename="log", version=version)
        assert loaded == Blob("text/plain", str(i).encode())


async def test_stored_blobs_are_copies(artifacts: BaseArtifactService) -> None:
    blob = Blob("text/plain", b"one")
    await artifacts.save_artifact(**WHERE, filename="a", artifact=blob)
    blob.mime_type = "changed"
    loaded = await artifacts.load_artifact(**WHERE, filename="a")
    assert loaded == Blob("text/plain", b"one")
    assert loaded is not None
    loaded.mime_type = "changed too"
    assert await artifacts.load_artifact(**WHERE, filename="a") == Blob("text/plain", b"one")


@pytest.mark.parametrize("field", ["filename", "app_name", "user_id", "session_id"])
async def test_text_no_store_can_hold_is_refused_alike_by_every_service(
    artifacts: BaseArtifactService, field: str
) -> None:
    where = {**WHERE, "filename": "a.txt", field: "bad\ud800name"}
    blob = Blob("text/plain", b"x")
    with pytest.raises(ValueError, match=f"artifact {field}.*UTF-8"):
        await artifacts.save_artifact(**where, artifact=blob)
    with pytest.raises(ValueError, match=f"artifact {field}.*UTF-8"):
        await artifacts.load_artifact(**where)
    with pytest.raises(ValueError, match=f"artifact {field}.*UTF-8"):
        await artifacts.list_versions(**where)
    with pytest.raises(ValueError, match=f"artifact {field}.*UTF-8"):
        await artifacts.delete_artifact(**where)
    if field != "filename":
        with pytest.raises(ValueError, match=f"artifact {field}.*UTF-8"):
            await artifacts.list_artifact_keys(**{k: where[k] for k in WHERE})
    # The service is still usable.
    assert await artifacts.save_artifact(**WHERE, filename="a.txt", artifact=blob) == 0


async def test_sqlite_artifacts_persist_and_share_the_sessions_file(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    async with SqliteSessionService(path) as sessions, SqliteArtifactService(path) as store:
        await sessions.create_session(app_name=APP, user_id="u", session_id="s")
        await store.save_artifact(**WHERE, filename="a", artifact=Blob("text/plain", b"1"))
        await store.save_artifact(**WHERE, filename="a", artifact=Blob("text/plain", b"2"))
    with SqliteArtifactService(str(path)) as reopened:
        assert await reopened.list_versions(**WHERE, filename="a") == [0, 1]
        assert await reopened.load_artifact(**WHERE, filename="a") == Blob("text/plain", b"2")
        assert await reopened.save_artifact(**WHERE, filename="a", artifact=Blob("x/y", b"")) == 2
    async with SqliteSessionService(path) as sessions:
        assert await sessions.get_session(app_name=APP, user_id="u", session_id="s") is not None


# -- memory ---------------------------------------------------------------------------------


def session(sid: str, *texts: tuple[str, str, float], user: str = "u", app: str = APP) -> Session:
    events = [
        Event(
            author=author,
            content=Content(role="user" if author == "user" else "model", parts=[Part(text=text)]),
            timestamp=ts,
        )
        for author, text, ts in texts
    ]
    return Session(id=sid, app_name=app, user_id=user, events=events)


async def test_memory_search_hits_and_fields() -> None:
    memory = InMemoryMemoryService()
    await memory.add_session_to_memory(
        session(
            "s1",
            ("user", "My favourite colour is Blue.", 10.0),
            ("agent", "Noted: blue it is!", 11.0),
            ("user", "And I like cats", 12.0),
        )
    )
    hits = await memory.search_memory(app_name=APP, user_id="u", query="BLUE")
    assert hits == [
        MemoryHit(text="Noted: blue it is!", author="agent", session_id="s1", timestamp=11.0),
        MemoryHit(
            text="My favourite colour is Blue.", author="user", session_id="s1", timestamp=10.0
        ),
    ]
    assert await memory.search_memory(app_name=APP, user_id="u", query="dogs") == []
    assert await memory.search_memory(app_name=APP, user_id="u", query="  ?! ") == []
    # whole words only
    assert await memory.search_memory(app_name=APP, user_id="u", query="blu") == []


async def test_memory_ranking_matches_then_recency() -> None:
    memory = InMemoryMemoryService()
    await memory.add_session_to_memory(
        session("old", ("user", "red apples and green pears", 1.0), ("user", "red wine", 2.0))
    )
    await memory.add_session_to_memory(
        session("new", ("user", "green tea", 5.0), ("user", "red green apples", 3.0))
    )
    hits = await memory.search_memory(app_name=APP, user_id="u", query="red green apples")
    assert [h.text for h in hits] == [
        "red green apples",  # 3 words, newer
        "red apples and green pears",  # 3 words
        "green tea",  # 1 word, newest
        "red wine",  # 1 word
    ]


async def test_memory_skips_partial_and_textless_events_and_is_per_user() -> None:
    memory = InMemoryMemoryService()
    s = session("s1", ("user", "hello world", 1.0), ("agent", "hello again", 2.0))
    s.events[1].partial = True
    s.events.append(Event(author="agent", timestamp=3.0))  # no content
    s.events.append(
        Event(
            author="agent",
            content=Content(role="model", parts=[Part.from_function_call("hello", {})]),
            timestamp=4.0,
        )
    )
    await memory.add_session_to_memory(s)
    await memory.add_session_to_memory(session("s2", ("user", "hello bob", 5.0), user="bob"))
    await memory.add_session_to_memory(session("s3", ("user", "hello app", 6.0), app="other"))
    hits = await memory.search_memory(app_name=APP, user_id="u", query="hello")
    assert [h.text for h in hits] == ["hello world"]


async def test_memory_adding_a_session_again_replaces_it() -> None:
    memory = InMemoryMemoryService()
    s = session("s1", ("user", "first note", 1.0))
    await memory.add_session_to_memory(s)
    s.events.append(Event(author="user", content=Content("user", [Part(text="second note")])))
    s.events[-1].timestamp = 2.0
    await memory.add_session_to_memory(s)
    hits = await memory.search_memory(app_name=APP, user_id="u", query="note")
    assert [h.text for h in hits] == ["second note", "first note"]
