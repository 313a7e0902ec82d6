"""Faults under the session stores: runner processes killed with SIGKILL mid-run (SQLite and
PostgreSQL), and a PostgreSQL server restarted under a running service."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _pg_server import PgServer, find_bindir

from agent_core import (
    Agent,
    Event,
    EventActions,
    Part,
    RunConfig,
    Runner,
    ScriptedModel,
    Session,
    session_service_from_url,
)
from agent_core.sessions.base import SessionStoreError
from tooling import ToolContext

WORKER = Path(__file__).parent / "_session_worker.py"
# SIGKILLs per store. PostgreSQL gets half: a fresh runner process there needs its own
# connections before its first event (~0.2 s on a loaded 2-core machine), and the two
# tests together should stay within ~40 s.
KILLS = {"sqlite": 100, "postgres": 50}
# Most runner processes are killed at a random moment within this many seconds after their
# first event; some while they start (opening the store, taking the lease).
KILL_WINDOW = 0.1
STARTING = 0.2


def fold(events: list[Event]) -> dict[str, Any]:
    state: dict[str, Any] = {}
    for event in events:
        state.update(event.actions.state_delta)
    return state


def kill_runners_at_random(url: str, tmp_path: Path, kills: int) -> set[str]:
    """Start runner processes on session ``shared`` one after another and SIGKILL each at
    a random moment; return the ids of the events they had acknowledged."""
    zygote = subprocess.Popen(
        [sys.executable, str(WORKER), "zygote", url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    rng = random.Random(13)
    logs = []
    try:
        assert zygote.stdin is not None and zygote.stdout is not None
        assert zygote.stdout.readline().strip() == "ready"
        for i in range(kills):
            log = tmp_path / f"acked-{i}.log"
            logs.append(log)
            zygote.stdin.write(f"fork {log}\n")
            zygote.stdin.flush()
            pid = int(zygote.stdout.readline())
            if rng.random() >= STARTING:
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline and not (log.exists() and log.stat().st_size):
                    time.sleep(0.001)
                time.sleep(rng.uniform(0, KILL_WINDOW))
            else:
                time.sleep(rng.uniform(0, KILL_WINDOW / 2))
            os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:  # reaped by the zygote: gone for good
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.002)
        zygote.stdin.close()
        zygote.wait(timeout=10)
    finally:
        if zygote.poll() is None:
            zygote.kill()
            zygote.wait()
    acked: set[str] = set()
    for log in logs:
        if log.exists():
            lines = log.read_text().split("\n")[:-1]  # a cut last line was never acknowledged
            for i, line in enumerate(lines):
                event_id, kind, error = line.split(" ", 2)
                assert not error, f"a killed holder's lease kept the next run out: {line}"
                # An event holding calls is yielded before it is stored (with its
                # responses): acknowledged once what follows it was yielded.
                if kind != "call" or i + 1 < len(lines):
                    acked.add(event_id)
    return acked


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_runners_killed_mid_run_lose_nothing_acknowledged(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'killed.db'}"
    else:
        url = request.getfixturevalue("postgres_dsn")
    acked = await asyncio.to_thread(kill_runners_at_random, url, tmp_path, KILLS[backend])
    service: Any = session_service_from_url(url)
    try:
        got = await service.get_session(app_name="app", user_id="u", session_id="shared")
        assert got is not None
        stored = [e.id for e in got.events]
        assert len(stored) == len(set(stored))
        assert acked <= set(stored), "an acknowledged event is missing"
        assert len(acked) > KILLS[backend]  # the runners got work done between the kills
        # State is the fold of the stored deltas, and no increment was lost: each stored
        # add_one response carries the count of the ones before it, plus one.
        assert got.state == fold(got.events)
        counts = [
            e.actions.state_delta["counter"]
            for e in got.events
            if "counter" in e.actions.state_delta
        ]
        assert counts == list(range(1, len(counts) + 1))
        # The lease is free for the next run.
        runner = Runner(
            Agent("counter", ScriptedModel(["free"])), app_name="app", session_service=service
        )
        events = [
            e
            async for e in runner.run_async(
                user_id="u",
                session_id="shared",
                new_message="hi",
                run_config=RunConfig(session_lock_timeout=5),
            )
        ]
        # A runner killed between a turn's two appends left a call without its answer:
        # the run answers it first, as interrupted (never pending), then replies.
        *answers, reply = events
        assert reply.error_code is None and reply.content is not None
        assert reply.content.text == "free"
        for answer in answers:
            [response] = answer.get_function_responses()
            assert "interrupted" in response.response["error"]["message"]
        after = await service.get_session(app_name="app", user_id="u", session_id="shared")
        assert after is not None
        called = {c.id for e in after.events for c in e.get_function_calls()}
        assert called <= {r.id for e in after.events for r in e.get_function_responses()}
    finally:
        await service.aclose()
    if backend == "sqlite":  # none half-written: the file is sound, every row reads back
        raw = sqlite3.connect(tmp_path / "killed.db")
        try:
            assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            assert raw.execute("SELECT count(*) FROM session_leases").fetchone() == (0,)
            rows = raw.execute("SELECT data FROM events ORDER BY seq").fetchall()
            assert [Event.from_json(d).id for (d,) in rows][: len(stored)] == stored
            # and the last run's: any answers to interrupted calls, its message, its reply
            assert len(rows) == len(stored) + len(events) + 1
        finally:
            raw.close()


# -- a server restarted under a running service -------------------------------------------------


@pytest.fixture
def own_postgres() -> Iterator[PgServer]:
    """A server of this test's own (it is restarted)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed")
    if find_bindir() is None:
        if os.environ.get("CI"):
            pytest.fail("no PostgreSQL binaries in CI")
        pytest.skip("no PostgreSQL binaries (initdb, pg_ctl) on this machine")
    server = PgServer.start()
    try:
        yield server
    finally:
        server.stop()


async def test_a_run_across_a_server_restart_fails_with_an_error_event(
    own_postgres: PgServer,
) -> None:
    from agent_core import PostgresSessionService

    def restart_database(tool_context: ToolContext) -> str:
        """Restart the database server."""
        tool_context.state["restarted"] = True
        own_postgres.restart()
        return "restarted"

    async with PostgresSessionService(own_postgres.dsn, timeout=20) as service:
        model = ScriptedModel([[Part.from_function_call("restart_database", {})], "never"])
        runner = Runner(
            Agent("a", model, tools=[restart_database]), app_name="app", session_service=service
        )
        events = [e async for e in runner.run_async(user_id="u", session_id="s", new_message="go")]
        assert [e.error_code for e in events] == [None, "session.unavailable"]
        assert events[0].get_function_calls()[0].name == "restart_database"
        assert "the session store failed" in (events[1].error_message or "")
        # The next operations reconnect. The call is stored with its response, so neither
        # was (nor the tool's state write): only the user's message, stored before.
        got = await service.get_session(app_name="app", user_id="u", session_id="s")
        assert got is not None
        assert [e.author for e in got.events] == ["user"]
        assert got.state == {}
        # and the lease is free again: a new run goes through.
        runner = Runner(
            Agent("a", ScriptedModel(["back"])), app_name="app", session_service=service
        )
        again = [
            e
            async for e in runner.run_async(
                user_id="u",
                session_id="s",
                new_message="again",
                run_config=RunConfig(session_lock_timeout=5),
            )
        ]
        assert [e.error_code for e in again] == [None]


async def test_appends_across_a_server_restart_are_whole_or_absent(
    own_postgres: PgServer,
) -> None:
    from agent_core import PostgresSessionService

    async with PostgresSessionService(own_postgres.dsn, max_size=4, timeout=20) as service:
        sessions: list[Session] = [
            await service.create_session(app_name="app", user_id="u", session_id=f"s{i}")
            for i in range(4)
        ]
        acked: dict[str, float] = {}  # id -> when it was acknowledged
        stop = time.monotonic() + 3.0

        async def append_until_stopped(session: Session) -> None:
            i = 0
            while time.monotonic() < stop:
                i += 1
                delta = {"n": i, f"k{i}": i, "app:last": session.id}
                event = Event(author="a", actions=EventActions(state_delta=delta))
                try:
                    await service.append_event(session, event)
                    acked[event.id] = time.monotonic()
                except SessionStoreError:
                    await asyncio.sleep(0.01)  # a broken connection: the write stored nothing

        restarting: list[float] = []

        def restart() -> None:
            restarting.append(time.monotonic())
            own_postgres.restart()
            restarting.append(time.monotonic())

        timer = threading.Timer(0.5, restart)
        timer.start()
        try:
            await asyncio.gather(*(append_until_stopped(s) for s in sessions))
        finally:
            timer.join()
        began, ended = restarting
        # the writers were at work before the restart and went on after it
        assert any(t < began for t in acked.values())
        assert any(t > ended for t in acked.values())
        stored: set[str] = set()
        for session in sessions:
            got = await service.get_session(app_name="app", user_id="u", session_id=session.id)
            assert got is not None
            stored |= {e.id for e in got.events}
            folded = fold(got.events)
            assert got.state == folded | {"app:last": got.state["app:last"]}
            numbers = [e.actions.state_delta["n"] for e in got.events]
            assert numbers == sorted(set(numbers))  # in the order they were asked for
        assert set(acked) <= stored
