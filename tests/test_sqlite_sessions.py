"""SqliteSessionService: persistence, WAL, its own thread, several processes on one file."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from agent_core import Content, Event, EventActions, Part
from agent_core.sessions.sqlite import SqliteSessionService
from tooling import Blob, FileRef, ToolProgress

APP = "app"


def text_event(text: str, author: str = "user", /, **delta: Any) -> Event:
    return Event(
        author=author,
        content=Content(role="user" if author == "user" else "model", parts=[Part.from_text(text)]),
        actions=EventActions(state_delta=dict(delta)),
    )


def rich_events() -> list[Event]:
    """Events using every field the wire shape has."""
    return [
        text_event("hello", **{"user:name": "Ann", "temp:scratch": 1}),
        Event(
            author="helper",
            invocation_id="inv-1",
            content=Content(
                role="model",
                parts=[
                    Part(text="thinking", thought=True),
                    Part.from_function_call("lookup", {"q": "x", "n": [1, 2]}, id="c1"),
                    Part.from_function_call("slow", {}, id="c2"),
                ],
            ),
            long_running_tool_ids={"c2"},
            finish_reason="STOP",
        ),
        Event(
            author="helper",
            invocation_id="inv-1",
            content=Content(
                role="user",
                parts=[
                    Part(
                        function_response=Part.from_function_response(
                            "lookup", {"result": {"part": 0, "mime_type": "image/png"}}, id="c1"
                        ).function_response
                    ),
                    Part(inline_data=Blob("image/png", b"\x89PNG\x00\xff")),
                    Part(file_data=FileRef("gs://b/f.pdf", "application/pdf")),
                ],
            ),
            actions=EventActions(
                skip_summarization=True,
                state_delta={"app:count": 3, "done": True, "none": None, "f": 1.5},
                artifact_delta={"report.pdf": 2},
                transfer_to_agent="other",
                escalate=True,
                requested_tool_confirmations={"c1": {"hint": "ok?"}},
                requested_auth_configs={"c2": {"scheme": "oauth2"}},
            ),
        ),
        Event(
            author="helper",
            progress=ToolProgress(id="c2", name="slow", stream="stdout", chunk="50%", dropped=0),
        ),
        Event(author="helper", error_code="model.failed", error_message="ünïcode 🙂"),
    ]


async def test_persists_across_a_new_service(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    events = rich_events()
    async with SqliteSessionService(path) as service:
        session = await service.create_session(
            app_name=APP, user_id="u", session_id="s", state={"k": "v", "temp:t": 0}
        )
        for event in events:
            await service.append_event(session, event)
        expected_state = dict(session.state)
        expected_time = session.last_update_time
    del expected_state["temp:t"], expected_state["temp:scratch"]

    with SqliteSessionService(str(path)) as reopened:
        got = await reopened.get_session(app_name=APP, user_id="u", session_id="s")
        assert got is not None
        assert [e.to_dict() for e in got.events] == [e.to_dict() for e in events]
        assert (
            got.state
            == expected_state
            == {
                "k": "v",
                "user:name": "Ann",
                "app:count": 3,
                "done": True,
                "none": None,
                "f": 1.5,
            }
        )
        assert got.last_update_time == expected_time
        # and it keeps working
        await reopened.append_event(got, text_event("more", k="w"))
        listed = await reopened.list_sessions(app_name=APP, user_id="u")
        assert [s.id for s in listed] == ["s"] and listed[0].state["k"] == "w"


async def test_temp_keys_and_partial_events_never_reach_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with SqliteSessionService(path) as service:
        session = await service.create_session(
            app_name=APP, user_id="u", session_id="s", state={"temp:seed": "SEED"}
        )
        await service.append_event(session, text_event("x", **{"temp:secret": "SECRET", "a": 1}))
        partial = text_event("PARTIALTEXT", author="agent", b=2)
        partial.partial = True
        await service.append_event(session, partial)
    raw = sqlite3.connect(path)
    try:
        dump = "\n".join(raw.iterdump())
        (count,) = raw.execute("SELECT count(*) FROM events").fetchone()
    finally:
        raw.close()
    assert count == 1
    for needle in ("temp:", "SECRET", "SEED", "PARTIALTEXT"):
        assert needle not in dump


async def test_wal_mode_and_one_dedicated_thread(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with SqliteSessionService(path) as service:
        await service.create_session(app_name=APP, user_id="u", session_id="s")
        names = await asyncio.gather(
            *(service._db.read(lambda conn: threading.current_thread().name) for _ in range(5))
        )
        assert len(set(names)) == 1 and names[0] != threading.current_thread().name
        assert names[0].startswith("agent_core-sessions")
        mode = await service._db.read(lambda conn: conn.execute("PRAGMA journal_mode").fetchone())
        timeout = await service._db.read(
            lambda conn: conn.execute("PRAGMA busy_timeout").fetchone()
        )
    assert mode == ("wal",)
    assert timeout[0] >= 1000


async def test_non_json_state_stores_nothing(tmp_path: Path) -> None:
    async with SqliteSessionService(tmp_path / "s.db") as service:
        session = await service.create_session(app_name=APP, user_id="u", session_id="s")
        bad = text_event("x", ok=1, bad=object())
        with pytest.raises(TypeError, match="bad"):
            await service.append_event(session, bad)
        with pytest.raises(TypeError, match="app:obj"):
            await service.create_session(
                app_name=APP, user_id="u", session_id="t", state={"app:obj": {1, 2}}
            )
        assert session.events == [] and session.state == {}
        got = await service.get_session(app_name=APP, user_id="u", session_id="s")
        assert got is not None and got.events == [] and got.state == {}
        assert await service.get_session(app_name=APP, user_id="u", session_id="t") is None


async def test_close_and_use_after_close(tmp_path: Path) -> None:
    service = SqliteSessionService(tmp_path / "s.db")
    await service.create_session(app_name=APP, user_id="u", session_id="s")
    service.close()
    service.close()  # idempotent
    await service.aclose()
    with pytest.raises(RuntimeError, match="closed"):
        await service.get_session(app_name=APP, user_id="u", session_id="s")
    # never opened: closing is still fine
    SqliteSessionService(tmp_path / "t.db").close()


async def test_cancelled_before_it_runs_stores_nothing(tmp_path: Path) -> None:
    async with SqliteSessionService(tmp_path / "s.db") as service:
        session = await service.create_session(app_name=APP, user_id="u", session_id="s")
        gate = threading.Event()
        blocker = asyncio.ensure_future(service._db.read(lambda conn: gate.wait(10)))
        task = asyncio.ensure_future(service.append_event(session, text_event("never", k=1)))
        await asyncio.sleep(0.05)
        task.cancel()
        await asyncio.sleep(0.05)  # the cancellation reaches the queued job
        gate.set()
        await blocker
        with pytest.raises(asyncio.CancelledError):
            await task
        got = await service.get_session(app_name=APP, user_id="u", session_id="s")
        assert got is not None and got.events == [] and got.state == {}
        assert session.events == []


async def test_two_services_on_one_file(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with SqliteSessionService(path) as one, SqliteSessionService(path) as two:
        await one.create_session(app_name=APP, user_id="u", session_id="s")
        a = await one.get_session(app_name=APP, user_id="u", session_id="s")
        b = await two.get_session(app_name=APP, user_id="u", session_id="s")
        assert a is not None and b is not None
        await asyncio.gather(
            *(one.append_event(a, text_event(f"a{i}", **{f"a{i}": i})) for i in range(20)),
            *(two.append_event(b, text_event(f"b{i}", **{f"b{i}": i})) for i in range(20)),
        )
        got = await two.get_session(app_name=APP, user_id="u", session_id="s")
        assert got is not None and len(got.events) == 40 and len(got.state) == 40
        with pytest.raises(ValueError, match="already exists"):
            await two.create_session(app_name=APP, user_id="u", session_id="s")


async def test_memory_database(tmp_path: Path) -> None:
    async with SqliteSessionService(":memory:") as service:
        session = await service.create_session(app_name=APP, user_id="u", session_id="s")
        await service.append_event(session, text_event("hi", k=1))
        got = await service.get_session(app_name=APP, user_id="u", session_id="s")
        assert got is not None and len(got.events) == 1 and got.state == {"k": 1}


_WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from agent_core._content import Content, Part
    from agent_core._events import Event, EventActions
    from agent_core.sessions.sqlite import SqliteSessionService

    path, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])

    async def main():
        async with SqliteSessionService(path) as service:
            session = await service.get_session(app_name="app", user_id="u", session_id="s")
            print("ready", flush=True)
            sys.stdin.readline()
            for i in range(count):
                event = Event(
                    author=tag,
                    content=Content(role="model", parts=[Part.from_text(f"{tag}:{i}")]),
                    actions=EventActions(state_delta={
                        f"{tag}": i, f"user:{tag}": i, f"app:{tag}": i,
                        "last": tag, "app:last": tag,
                    }),
                )
                await service.append_event(session, event)

    asyncio.run(main())
    """
)


def test_several_processes_append_to_one_session(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    script = tmp_path / "writer.py"
    script.write_text(_WRITER)

    async def setup() -> None:
        async with SqliteSessionService(path) as service:
            await service.create_session(app_name=APP, user_id="u", session_id="s")

    asyncio.run(setup())
    tags = [f"p{i}" for i in range(4)]
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(path), tag, "50"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in tags
    ]
    try:
        for proc in procs:  # all have opened the database: start them together
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in procs:
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    async def check() -> None:
        async with SqliteSessionService(path) as service:
            got = await service.get_session(app_name=APP, user_id="u", session_id="s")
        assert got is not None
        assert len(got.events) == 200
        for tag in tags:
            mine = [e.content.text for e in got.events if e.author == tag and e.content]
            assert mine == [f"{tag}:{i}" for i in range(50)]  # each process's own order
            # key by key: every process's keys landed, in each scope
            assert got.state[tag] == got.state[f"user:{tag}"] == got.state[f"app:{tag}"] == 49
        # a key all of them wrote: the last committed write wins
        assert got.state["last"] == got.state["app:last"] == got.events[-1].author

    asyncio.run(check())
    raw = sqlite3.connect(path)
    try:
        rows = raw.execute("SELECT data FROM events ORDER BY seq").fetchall()
    finally:
        raw.close()
    assert len(rows) == 200 and all(json.loads(r[0])["author"] in tags for r in rows)


_OPENER = textwrap.dedent(
    """
    import asyncio, sys
    from agent_core._events import Event, EventActions
    from agent_core.sessions.sqlite import SqliteSessionService

    path, tag = sys.argv[1], sys.argv[2]

    async def main():
        async with SqliteSessionService(path) as service:
            session = await service.create_session(app_name="app", user_id="u", session_id=tag)
            for i in range(20):
                delta = {"app:" + tag: i}
                await service.append_event(
                    session, Event(author=tag, actions=EventActions(state_delta=delta))
                )

    asyncio.run(main())
    """
)


def test_several_processes_create_a_fresh_database_at_once(tmp_path: Path) -> None:
    # No file yet: the processes race to switch it to WAL and create the tables.
    path = tmp_path / "fresh.db"
    script = tmp_path / "opener.py"
    script.write_text(_OPENER)
    tags = ["a", "b", "c"]
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(path), tag], stderr=subprocess.PIPE, text=True
        )
        for tag in tags
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err

    async def check() -> None:
        async with SqliteSessionService(path) as service:
            listed = await service.list_sessions(app_name=APP, user_id="u")
            assert sorted(s.id for s in listed) == tags
            assert listed[0].state == {f"app:{tag}": 19 for tag in tags}
            for tag in tags:
                got = await service.get_session(app_name=APP, user_id="u", session_id=tag)
                assert got is not None and len(got.events) == 20

    asyncio.run(check())
