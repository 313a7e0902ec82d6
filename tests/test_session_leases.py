"""One writer per session, from any process: leases, ``session.busy``, create races, and N
processes adding to one counter — with every service (in memory, SQLite, PostgreSQL)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from agent_core import (
    Agent,
    Event,
    EventActions,
    InMemorySessionService,
    Part,
    RunConfig,
    Runner,
    ScriptedModel,
    SessionExistsError,
    SqliteSessionService,
)
from agent_core.sessions.base import BaseSessionService, SessionBusyError
from tooling import ToolContext

APP = "app"
WORKER = Path(__file__).parent / "_session_worker.py"

Factory = Callable[[], Any]


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def make_service(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Factory]:
    """Builds services on one store (each its own connections), closed at the end."""
    made: list[Any] = []
    memory = InMemorySessionService()

    def make() -> Any:
        if request.param == "memory":
            return memory  # a store no other service reaches
        if request.param == "sqlite":
            svc: Any = SqliteSessionService(tmp_path / "s.db")
        else:
            from agent_core import PostgresSessionService

            svc = PostgresSessionService(request.getfixturevalue("postgres_dsn"))
        made.append(svc)
        return svc

    yield make
    for svc in made:
        await svc.aclose()


def lease(service: BaseSessionService, session_id: str = "s", timeout: float = 5.0) -> Any:
    return service.lease(app_name=APP, user_id="u", session_id=session_id, timeout=timeout)


def counting_runner(service: BaseSessionService, runs: int = 1) -> Runner:
    def add_one(tool_context: ToolContext) -> int:
        """Add one to the counter."""
        n = int(tool_context.state.get("counter", 0)) + 1
        tool_context.state["counter"] = n
        return n

    turns: list[object] = []
    for _ in range(runs):
        turns += [[Part.from_function_call("add_one", {})], "added"]
    agent = Agent("counter", ScriptedModel(turns), tools=[add_one])
    return Runner(agent, app_name=APP, session_service=service)


async def run_once(runner: Runner, session_id: str = "s", **config: Any) -> list[Event]:
    return [
        e
        async for e in runner.run_async(
            user_id="u",
            session_id=session_id,
            new_message="add one",
            run_config=RunConfig(**config),
        )
    ]


# -- create ---------------------------------------------------------------------------------


async def test_sixteen_concurrent_creates_make_one_session(make_service: Factory) -> None:
    services = [make_service() for _ in range(16)]
    results = await asyncio.gather(
        *(
            s.create_session(app_name=APP, user_id="u", session_id="one", state={"n": i})
            for i, s in enumerate(services)
        ),
        return_exceptions=True,
    )
    made = [r for r in results if not isinstance(r, BaseException)]
    errors = [r for r in results if isinstance(r, BaseException)]
    assert len(made) == 1 and len(errors) == 15
    assert all(isinstance(e, SessionExistsError) and isinstance(e, ValueError) for e in errors)
    assert all("already exists" in str(e) for e in errors)
    listed = await services[0].list_sessions(app_name=APP, user_id="u")
    assert [s.id for s in listed] == ["one"]
    assert listed[0].state == made[0].state  # the winner's initial state, nobody else's


# -- the lease ------------------------------------------------------------------------------


async def test_a_held_session_ends_the_run_with_session_busy(make_service: Factory) -> None:
    holder, other = make_service(), make_service()
    await holder.create_session(app_name=APP, user_id="u", session_id="s")
    runner = counting_runner(other)
    async with lease(holder):
        started = time.monotonic()
        events = await run_once(runner, session_lock_timeout=0.3)
        waited = time.monotonic() - started
    assert [e.error_code for e in events] == ["session.busy"]
    assert "in use by another run" in (events[0].error_message or "")
    assert 0.25 <= waited < 10
    got = await holder.get_session(app_name=APP, user_id="u", session_id="s")
    assert got is not None and got.events == [] and got.state == {}  # wrote nothing
    # Given back: the next run goes through.
    events = await run_once(runner, session_lock_timeout=5)
    assert [e.error_code for e in events] == [None, None, None]
    got = await holder.get_session(app_name=APP, user_id="u", session_id="s")
    assert got is not None and got.state == {"counter": 1} and len(got.events) == 4


async def test_a_busy_run_on_a_missing_session_creates_nothing(make_service: Factory) -> None:
    holder, other = make_service(), make_service()
    async with lease(holder, "new"):
        events = await run_once(counting_runner(other), "new", session_lock_timeout=0)
    assert [e.error_code for e in events] == ["session.busy"]
    assert await holder.get_session(app_name=APP, user_id="u", session_id="new") is None


async def test_the_lease_of_one_session_never_holds_up_another(make_service: Factory) -> None:
    holder, other = make_service(), make_service()
    async with lease(holder, "s1", timeout=0):
        started = time.monotonic()
        events = await run_once(counting_runner(other), "s2", session_lock_timeout=0)
        assert time.monotonic() - started < 10
    assert [e.error_code for e in events] == [None, None, None]


async def test_a_waiting_run_goes_on_when_the_lease_is_given_back(make_service: Factory) -> None:
    holder, other = make_service(), make_service()
    await holder.create_session(app_name=APP, user_id="u", session_id="s")
    async with lease(holder):
        waiting = asyncio.ensure_future(run_once(counting_runner(other), session_lock_timeout=30))
        await asyncio.sleep(0.2)
        assert not waiting.done()
        # what the holder writes meanwhile is read by the waiting run, not overwritten
        session = await holder.get_session(app_name=APP, user_id="u", session_id="s")
        assert session is not None
        delta = EventActions(state_delta={"counter": 41})
        await holder.append_event(session, Event(author="other", actions=delta))
    events = await waiting
    assert [e.error_code for e in events] == [None, None, None]
    got = await holder.get_session(app_name=APP, user_id="u", session_id="s")
    assert got is not None and got.state["counter"] == 42


async def test_concurrent_runs_in_one_process_take_turns(make_service: Factory) -> None:
    runners = [counting_runner(make_service(), runs=3) for _ in range(4)]
    await runners[0].session_service.create_session(app_name=APP, user_id="u", session_id="s")

    async def three(runner: Runner) -> None:
        for _ in range(3):
            events = await run_once(runner)
            assert [e.error_code for e in events] == [None, None, None]

    await asyncio.gather(*(three(r) for r in runners))
    got = await runners[0].session_service.get_session(app_name=APP, user_id="u", session_id="s")
    assert got is not None and got.state["counter"] == 12
    assert_runs_do_not_interleave(got.events)


def assert_runs_do_not_interleave(events: list[Event]) -> None:
    seen: list[str] = []
    for event in events:
        if not seen or seen[-1] != event.invocation_id:
            assert event.invocation_id not in seen, "two runs interleaved"
            seen.append(event.invocation_id)


async def test_a_cancelled_wait_for_the_lease_holds_nothing(make_service: Factory) -> None:
    holder, other = make_service(), make_service()
    async with lease(holder):
        waiting = asyncio.ensure_future(run_once(counting_runner(other), session_lock_timeout=30))
        await asyncio.sleep(0.2)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
    async with lease(holder, timeout=5):  # free again
        pass
    async with lease(other, timeout=5):
        pass


# -- SQLite's lease row ---------------------------------------------------------------------


async def test_sqlite_lease_of_an_ended_process_is_taken_at_once(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import asyncio, sys\n"
            "from agent_core import SqliteSessionService\n"
            "async def main():\n"
            "    s = SqliteSessionService(sys.argv[1], lease_ttl=3600)\n"
            "    async with s.lease(app_name='app', user_id='u', session_id='s', timeout=5):\n"
            "        print('held', flush=True)\n"
            "        await asyncio.sleep(3600)\n"
            "asyncio.run(main())\n",
            str(path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        async with SqliteSessionService(path) as service:
            with pytest.raises(SessionBusyError):
                async with lease(service, timeout=0.2):
                    pass
            holder.kill()
            holder.wait()
            async with lease(service, timeout=0.5):  # its holder is gone: no waiting an hour
                pass
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


_STEAL = (
    "import asyncio, os, sys\n"
    "from agent_core import SqliteSessionService\n"
    "async def main():\n"
    "    s = SqliteSessionService(sys.argv[1])\n"
    "    await s.lease(app_name='app', user_id='u', session_id='s', timeout=5).__aenter__()\n"
    "    os._exit(0)  # holding it\n"
    "asyncio.run(main())\n"
)


async def test_sqlite_lease_lapses_and_a_late_holder_stores_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with SqliteSessionService(path, lease_ttl=0.3) as slow:
        session = await slow.create_session(app_name=APP, user_id="u", session_id="s")
        async with lease(slow):
            # The holder's loop stalls (no renewals) for longer than the lease lasts, and
            # another process takes the lapsed lease meanwhile.
            time.sleep(0.4)
            subprocess.run([sys.executable, "-c", _STEAL, str(path)], check=True)
            with pytest.raises(ConnectionError, match="lapsed"):
                await slow.append_event(
                    session, Event(author="a", actions=EventActions(state_delta={"x": 1}))
                )
        got = await slow.get_session(app_name=APP, user_id="u", session_id="s")
        assert got is not None and got.events == [] and got.state == {}
        # the run that met it ends with an error event
        async with lease(slow, timeout=0):  # the stealer is gone: free
            pass


async def test_sqlite_lease_is_renewed_while_a_run_holds_it(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with (
        SqliteSessionService(path, lease_ttl=0.3) as holder,
        SqliteSessionService(path) as other,
    ):
        async with lease(holder):
            await asyncio.sleep(1.0)  # more than three lifetimes
            with pytest.raises(SessionBusyError):
                async with lease(other, timeout=0.1):
                    pass


# -- N processes, one counter ----------------------------------------------------------------


def count_in_processes(url: str, processes: int, runs: int) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), "count", url, str(runs)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)},
        )
        for _ in range(processes)
    ]
    try:
        for proc in procs:  # all are up: start them together
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready", proc.stderr and proc.stderr.read()
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in procs:
            _, err = proc.communicate(timeout=180)
            assert proc.returncode == 0, err
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


async def check_counter(service: BaseSessionService, expected: int) -> None:
    got = await service.get_session(app_name=APP, user_id="u", session_id="shared")
    assert got is not None
    assert got.state["counter"] == expected  # not one increment lost
    assert len(got.events) == 4 * expected
    assert_runs_do_not_interleave(got.events)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_n_processes_adding_one_leave_exactly_n(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    processes, runs = 8, 2
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'counter.db'}"
    else:
        url = request.getfixturevalue("postgres_dsn")
    await asyncio.to_thread(count_in_processes, url, processes, runs)
    from agent_core import session_service_from_url

    service: Any = session_service_from_url(url)
    try:
        await check_counter(service, processes * runs)
    finally:
        await service.aclose()
