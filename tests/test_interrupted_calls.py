"""A call stored without its answer (the session store failed between the turn's two
appends, or the process stopped there) is answered by the next run with an error saying it
was interrupted and may have run: never a "pending" stand-in, which tells the model to wait
for a result that will never come. Tested against a real PostgreSQL server restarted right
between the two appends, and restarted at random under a stream of runs."""

from __future__ import annotations

import asyncio
import os
import random
import threading
from collections.abc import AsyncGenerator, Iterator
from typing import Any

import pytest
from _pg_server import PgServer, find_bindir

from agent_core import (
    Agent,
    BaseLlm,
    Content,
    Event,
    LlmRequest,
    LlmResponse,
    Part,
    PostgresSessionService,
    RunConfig,
    Runner,
    ScriptedModel,
    SqliteSessionService,
)
from agent_core.sessions.base import BaseSessionService, Session
from tooling import ToolContext

APP, USER = "app", "u"


@pytest.fixture
def own_postgres() -> Iterator[PgServer]:
    """A server of this test's own: it is restarted."""
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


def responses_sent(request: LlmRequest) -> list[dict[str, Any]]:
    return [
        p.function_response.response
        for c in request.contents
        for p in c.parts
        if p.function_response is not None
    ]


def unanswered_calls(events: list[Event]) -> list[str]:
    """Calls of the session with no final response stored after them (none long-running)."""
    answered: dict[str, int] = {}
    for i, e in enumerate(events):
        for r in e.get_function_responses():
            if r.id and not r.will_continue:
                answered[r.id] = i
    return [
        c.id or ""
        for i, e in enumerate(events)
        for c in e.get_function_calls()
        if answered.get(c.id or "", -1) <= i and c.id not in (e.long_running_tool_ids or ())
    ]


class RestartAfterCalls(PostgresSessionService):
    """The real store, with the real server restarted right after an event holding tool
    calls was stored: the turn's next append meets a server that went away."""

    def __init__(self, dsn: str, server: PgServer) -> None:
        super().__init__(dsn, timeout=20)
        self.server = server
        self.armed = True

    async def append_event(self, session: Session, event: Event) -> Event:
        stored = await super().append_event(session, event)
        if self.armed and event.get_function_calls():
            self.armed = False
            await asyncio.to_thread(self.server.restart)
        return stored


async def test_a_restart_between_a_call_and_its_answer_is_answered_as_interrupted(
    own_postgres: PgServer,
) -> None:
    ran: list[str] = []

    def charge(amount: int, tool_context: ToolContext) -> dict[str, Any]:
        """Charge the customer's card."""
        ran.append("charged")
        tool_context.state["charged"] = amount
        return {"charged": amount}

    model = ScriptedModel(
        [[Part.from_function_call("charge", {"amount": 5})], "unreached", "I see."]
    )
    async with RestartAfterCalls(own_postgres.dsn, own_postgres) as service:
        runner = Runner(Agent("shop", model, tools=[charge]), app_name=APP, session_service=service)
        first = [e async for e in runner.run_async(user_id=USER, session_id="s", new_message="pay")]
        assert ran == ["charged"]
        assert first[-1].error_code == "session.unavailable"
        stored = await service.get_session(app_name=APP, user_id=USER, session_id="s")
        assert stored is not None
        [call_id] = unanswered_calls(stored.events)  # the failure this is about

        second = [
            e async for e in runner.run_async(user_id=USER, session_id="s", new_message="and?")
        ]
    assert [e.error_code for e in second] == [None, None]
    answer = second[0].get_function_responses()
    assert [(r.id, r.name) for r in answer] == [(call_id, "charge")]
    error = answer[0].response["error"]
    assert answer[0].response["status"] == "error"
    assert "interrupted" in error["message"] and "may have run" in error["message"]
    # The model is told so, right after its call, and never "pending".
    told = responses_sent(model.requests[1])
    assert told == [answer[0].response]
    assert "pending" not in str(model.requests[1].contents)
    assert ran == ["charged"]  # nothing ran a second time

    async with PostgresSessionService(own_postgres.dsn) as service:
        again = await service.get_session(app_name=APP, user_id=USER, session_id="s")
    assert again is not None
    assert unanswered_calls(again.events) == []
    authors = [
        (e.author, bool(e.get_function_calls()), bool(e.get_function_responses()))
        for e in again.events
    ]
    assert authors == [
        ("user", False, False),
        ("shop", True, False),
        ("shop", False, True),  # the interrupted call's answer, before the next message
        ("user", False, False),
        ("shop", False, False),
    ]


class Clerk(BaseLlm):
    """Calls ``tick`` for each user message, then says it is done; records what it saw."""

    def __init__(self) -> None:
        super().__init__("clerk")
        self.requests: list[LlmRequest] = []

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request)
        last = llm_request.contents[-1]
        if any(p.function_response is not None for p in last.parts):
            yield LlmResponse(content=Content(role="model", parts=[Part.from_text("done")]))
        else:
            yield LlmResponse(
                content=Content(role="model", parts=[Part.from_function_call("tick", {})])
            )


async def test_a_stream_of_runs_across_server_restarts_never_leaves_a_call_pending(
    own_postgres: PgServer,
) -> None:
    ticks = 0

    def tick(tool_context: ToolContext) -> int:
        """Count one."""
        nonlocal ticks
        ticks += 1
        return ticks

    model = Clerk()
    stop = threading.Event()
    restarts = 0

    def restart_at_random() -> None:
        nonlocal restarts
        rng = random.Random(20)
        while not stop.wait(rng.uniform(0.3, 0.8)):
            own_postgres.restart()
            restarts += 1

    restarter = threading.Thread(target=restart_at_random, daemon=True)
    sessions = [f"s{i}" for i in range(3)]
    failed = 0
    async with PostgresSessionService(own_postgres.dsn, timeout=20) as service:
        runner = Runner(Agent("clerk", model, tools=[tick]), app_name=APP, session_service=service)
        config = RunConfig(session_lock_timeout=20)
        restarter.start()
        try:
            # Until a restart has landed under a run (how soon depends on the machine's
            # speed), bounded in runs.
            for n in range(400):
                try:
                    async for event in runner.run_async(
                        user_id=USER,
                        session_id=sessions[n % 3],
                        new_message=f"m{n}",
                        run_config=config,
                    ):
                        failed += event.error_code == "session.unavailable"
                except ConnectionError:
                    failed += 1
                if restarts >= 3 and n >= 30 and failed >= 1:
                    break
        finally:
            stop.set()
            await asyncio.to_thread(restarter.join)
        # One run on each session after the last restart answers whatever was left.
        for sid in sessions:
            async for event in runner.run_async(
                user_id=USER, session_id=sid, new_message="last", run_config=config
            ):
                assert event.error_code is None
        for sid in sessions:
            got = await service.get_session(app_name=APP, user_id=USER, session_id=sid)
            assert got is not None
            assert unanswered_calls(got.events) == []
    assert restarts >= 1 and failed >= 1  # the restarts did land under runs
    for request in model.requests:
        for response in responses_sent(request):
            assert response.get("status") != "pending", response


async def test_long_running_and_confirmation_calls_still_wait(tmp_path: Any) -> None:
    """What legitimately waits (a confirmation, a long-running job) is not 'interrupted'."""
    from tooling import tool

    @tool(require_confirmation=True)
    def delete(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    @tool(long_running=True)
    def start_job(name: str) -> None:
        """Start a job; its result comes later."""
        return None

    model = ScriptedModel(
        [
            [
                Part.from_function_call("delete", {"path": "a"}),
                Part.from_function_call("start_job", {"name": "j"}),
            ],
            "Waiting.",
        ]
    )
    service: BaseSessionService = SqliteSessionService(tmp_path / "s.db")
    runner = Runner(
        Agent("ops", model, tools=[delete, start_job]), app_name=APP, session_service=service
    )
    [e async for e in runner.run_async(user_id=USER, session_id="s", new_message="go")]
    before = await service.get_session(app_name=APP, user_id=USER, session_id="s")
    assert before is not None
    [e async for e in runner.run_async(user_id=USER, session_id="s", new_message="status?")]
    after = await service.get_session(app_name=APP, user_id=USER, session_id="s")
    assert after is not None
    added = after.events[len(before.events) :]
    assert not any(
        "interrupted" in str(r.response) for e in added for r in e.get_function_responses()
    )
