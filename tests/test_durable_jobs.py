"""Durable tool jobs in one process: pending at once, run by the job loop, delivered once,
joined, cancelled, in doubt, retried, on SQLite and PostgreSQL stores.

(Real kills of real processes are in test_durable_job_kills.py.)
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_core import (
    Agent,
    Event,
    InMemorySessionService,
    JobStatus,
    JobStore,
    PostgresJobStore,
    Runner,
    ScriptedModel,
    SqliteJobStore,
    SqliteSessionService,
    job_store_from_url,
)
from agent_core.jobs.base import JobCall
from tooling import JobOptions, ToolContext, tool

RUNS: list[dict[str, Any]] = []


@tool(durable=True)
async def make_report(topic: str, tool_context: ToolContext) -> dict[str, Any]:
    """Write a report on a topic.

    Args:
        topic: What the report is about.
    """
    RUNS.append({"topic": topic, "job": tool_context.job})
    tool_context.state["last_report"] = topic
    return {"report": f"all about {topic}"}


@tool(durable=JobOptions(dedupe="none"))
def count_words(text: str) -> int:
    """Count the words of a text.

    Args:
        text: Any text.
    """
    RUNS.append({"text": text})
    return len(text.split())


@tool(durable=True)
def build(steps: int):  # type: ignore[no-untyped-def]
    """Build in steps, yielding progress.

    Args:
        steps: How many steps.
    """
    for i in range(steps):
        yield {"done": i + 1, "of": steps}
    return {"built": steps}


@tool(durable=JobOptions(lease=0.3))
async def wait_forever(tool_context: ToolContext) -> str:
    """Wait until cancelled."""
    RUNS.append({"waiting": tool_context.job})
    await asyncio.sleep(60)
    return "never"


@pytest.fixture(autouse=True)
def _clear() -> Iterator[None]:
    RUNS.clear()
    yield
    RUNS.clear()


def call_turn(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {
        "role": "model",
        "parts": [{"functionCall": {"name": name, "args": args, "id": call_id}}],
    }


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[JobStore]:
    if request.param == "sqlite":
        made: JobStore = SqliteJobStore(tmp_path / "jobs.db")
    else:
        made = PostgresJobStore(request.getfixturevalue("postgres_dsn"))
    yield made
    await made.close()


async def events_of(runner: Runner, message: str, session: str = "s") -> list[Event]:
    return [e async for e in runner.run_async(user_id="u", session_id=session, new_message=message)]


async def session_events(runner: Runner, session: str = "s") -> list[Event]:
    found = await runner.session_service.get_session(
        app_name="app", user_id="u", session_id=session
    )
    assert found is not None
    return found.events


def final_responses(events: list[Event], call_id: str) -> list[dict[str, Any]]:
    return [
        r.response
        for e in events
        for r in e.get_function_responses()
        if r.id == call_id and not r.will_continue
    ]


async def test_a_durable_call_answers_pending_at_once_and_the_loop_delivers_it(
    store: JobStore,
) -> None:
    model = ScriptedModel(
        [
            call_turn("make_report", {"topic": "tides"}, "c1"),
            "The report is being written.",
            "Here it is: all about tides.",
        ]
    )
    runner = Runner(Agent("a", model, tools=[make_report]), app_name="app", job_store=store)
    events = await events_of(runner, "report on tides")
    call_event, pending_event, answer = events
    assert call_event.long_running_tool_ids == {"c1"}
    assert answer.content is not None and answer.content.text == "The report is being written."
    [pending] = pending_event.get_function_responses()
    assert pending.will_continue is True
    assert pending.response["status"] == "pending"
    job_id = pending.response["job_id"]
    assert job_id.startswith("job_") and RUNS == []  # nothing ran yet
    job = await runner.get_job(job_id)
    assert job is not None and job.status is JobStatus.PENDING and job.call_ids == ["c1"]

    await runner.run_jobs(until_idle=True)
    assert [r["topic"] for r in RUNS] == ["tides"]
    assert RUNS[0]["job"].job_id == job_id and RUNS[0]["job"].attempt == 1
    job = await runner.get_job(job_id)
    assert job is not None and job.status is JobStatus.SUCCEEDED
    assert job.delivered_at is not None and job.response == {"report": "all about tides"}

    stored = await session_events(runner)
    assert final_responses(stored, "c1") == [{"report": "all about tides"}]
    delivery = next(e for e in stored if final_responses([e], "c1"))
    assert delivery.author == "a" and delivery.actions.state_delta == {"last_report": "tides"}
    # job_resume="auto": the model was asked again and answered.
    assert len(model.requests) == 3
    assert (
        stored[-1].content is not None and stored[-1].content.text == "Here it is: all about tides."
    )

    await runner.run_jobs(until_idle=True)  # nothing left: delivered once
    assert final_responses(await session_events(runner), "c1") == [{"report": "all about tides"}]
    assert len(RUNS) == 1


async def test_a_second_call_with_the_same_arguments_joins_the_job() -> None:
    model = ScriptedModel(
        [
            call_turn("make_report", {"topic": "moon"}, "c1"),
            "Started.",
            call_turn("make_report", {"topic": "moon"}, "c2"),
            "Still running.",
        ]
    )
    runner = Runner(Agent("a", model, tools=[make_report]), app_name="app", job_resume="append")
    first = await events_of(runner, "moon report")
    second = await events_of(runner, "moon report again")
    job_a = first[1].get_function_responses()[0].response
    job_b = second[1].get_function_responses()[0].response
    assert job_b["job_id"] == job_a["job_id"] and job_b["joined"] is True
    await runner.run_jobs()
    assert len(RUNS) == 1
    stored = await session_events(runner)
    assert (
        final_responses(stored, "c1")
        == final_responses(stored, "c2")
        == [{"report": "all about moon"}]
    )
    assert len(model.requests) == 4  # append: no model turn after the delivery


async def test_dedupe_none_never_joins() -> None:
    model = ScriptedModel(
        [
            call_turn("count_words", {"text": "a b"}, "c1"),
            "ok",
            call_turn("count_words", {"text": "a b"}, "c2"),
            "ok",
        ]
    )
    runner = Runner(Agent("a", model, tools=[count_words]), app_name="app", job_resume="append")
    await events_of(runner, "count")
    await events_of(runner, "count again")
    await runner.run_jobs()
    assert len(RUNS) == 2
    jobs = await runner.list_jobs()
    assert len(jobs) == 2 and {j.status for j in jobs} == {JobStatus.SUCCEEDED}


async def test_progress_is_the_latest_yield_readable_from_the_store(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    model = ScriptedModel([call_turn("build", {"steps": 3}, "c1"), "building"])
    runner = Runner(
        Agent("a", model, tools=[build]),
        app_name="app",
        job_store=SqliteJobStore(path),
        job_resume="append",
    )
    events = await events_of(runner, "build")
    job_id = events[1].get_function_responses()[0].response["job_id"]
    await runner.run_jobs()
    other = SqliteJobStore(path)  # another process's view: the same file
    job = await other.get(job_id)
    assert job is not None and job.progress == {"done": 3, "of": 3}
    assert job.response == {"built": 3}
    await other.close()


async def test_cancelling_a_pending_job_delivers_job_cancelled() -> None:
    model = ScriptedModel([call_turn("make_report", {"topic": "x"}, "c1"), "ok"])
    runner = Runner(Agent("a", model, tools=[make_report]), app_name="app", job_resume="append")
    events = await events_of(runner, "go")
    job_id = events[1].get_function_responses()[0].response["job_id"]
    cancelled = await runner.cancel_job(job_id)
    assert cancelled is not None and cancelled.status is JobStatus.CANCELLED
    await runner.run_jobs()
    assert RUNS == []
    [answer] = final_responses(await session_events(runner), "c1")
    assert answer["error"]["code"] == "job.cancelled"


async def test_cancelling_a_running_async_job_stops_it() -> None:
    model = ScriptedModel([call_turn("wait_forever", {}, "c1"), "ok"])
    runner = Runner(Agent("a", model, tools=[wait_forever]), app_name="app", job_resume="append")
    events = await events_of(runner, "go")
    job_id = events[1].get_function_responses()[0].response["job_id"]
    loop = asyncio.ensure_future(runner.run_jobs(until_idle=False))
    for _ in range(100):
        if RUNS:
            break
        await asyncio.sleep(0.02)
    await runner.cancel_job(job_id)
    for _ in range(100):
        job = await runner.get_job(job_id)
        if job is not None and job.delivered_at is not None:
            break
        await asyncio.sleep(0.05)
    loop.cancel()
    job = await runner.get_job(job_id)
    assert job is not None and job.status is JobStatus.CANCELLED
    [answer] = final_responses(await session_events(runner), "c1")
    assert answer["error"]["code"] == "job.cancelled"


async def submit(
    store: JobStore, *, idempotent: bool, max_attempts: int = 3, lease: float = 0.2
) -> str:
    job, _ = await store.submit(
        key=None,
        app_name="app",
        call=JobCall("c1", "u", "s", "a"),
        tool="t",
        args={},
        fingerprint="f",
        max_attempts=max_attempts,
        idempotent=idempotent,
        lease=lease,
    )
    return job.id


async def test_a_holder_that_died_after_the_marker_leaves_a_non_idempotent_job_in_doubt(
    store: JobStore,
) -> None:
    job_id = await submit(store, idempotent=False)
    claimed = await store.claim(["t"], "dead-holder")
    assert claimed is not None and claimed.id == job_id
    assert await store.mark_started(job_id, "dead-holder")
    assert await store.claim(["t"], "live") is None  # the lease still holds
    await asyncio.sleep(0.35)
    assert await store.claim(["t"], "live") is None  # settled, never handed out again
    job = await store.get(job_id)
    assert job is not None and job.status is JobStatus.IN_DOUBT
    assert job.error_code == "tool.in_doubt" and "was not run again" in (job.error_message or "")
    assert not await store.finish(job_id, "dead-holder", status=JobStatus.SUCCEEDED, response={})
    resolved = await store.resolve(job_id, rerun=True)
    assert resolved.status is JobStatus.PENDING
    again = await store.claim(["t"], "live")
    assert again is not None and again.id == job_id


async def test_a_holder_that_died_before_the_marker_is_run_again(store: JobStore) -> None:
    job_id = await submit(store, idempotent=False)
    assert await store.claim(["t"], "dead-holder") is not None
    await asyncio.sleep(0.35)
    again = await store.claim(["t"], "live")
    assert again is not None and again.id == job_id and again.attempt == 2


async def test_an_idempotent_job_is_run_again_up_to_max_attempts(store: JobStore) -> None:
    job_id = await submit(store, idempotent=True, max_attempts=2)
    for attempt in (1, 2):
        claimed = await store.claim(["t"], f"holder-{attempt}")
        assert claimed is not None and claimed.attempt == attempt
        assert await store.mark_started(job_id, f"holder-{attempt}")
        await asyncio.sleep(0.35)
    assert await store.claim(["t"], "live") is None
    job = await store.get(job_id)
    assert job is not None and job.status is JobStatus.FAILED
    assert job.error_code == "job.attempts_exhausted"


async def test_submissions_of_one_key_make_one_job_whatever_the_concurrency(
    store: JobStore,
) -> None:
    async def one(i: int) -> tuple[str, bool]:
        job, joined = await store.submit(
            key="app\x1fu\x1fs\x1fsha256:x",
            app_name="app",
            call=JobCall(f"c{i}", "u", "s", "a"),
            tool="t",
            args={},
            fingerprint="sha256:x",
            max_attempts=1,
            idempotent=False,
            lease=5,
        )
        return job.id, joined

    results = await asyncio.gather(*(one(i) for i in range(10)))
    assert len({job_id for job_id, _ in results}) == 1
    assert sum(not joined for _, joined in results) == 1
    job = await store.get(results[0][0])
    assert job is not None and sorted(job.call_ids) == sorted(f"c{i}" for i in range(10))


async def test_four_loops_sharing_one_store_run_each_job_once(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    sessions = SqliteSessionService(tmp_path / "sessions.db")
    turns = list(
        itertools.chain.from_iterable(
            (call_turn("count_words", {"text": "w " * i}, f"c{i}"), "ok") for i in range(12)
        )
    )
    front = Runner(
        Agent("a", ScriptedModel(turns), tools=[count_words]),
        app_name="app",
        session_service=sessions,
        job_store=SqliteJobStore(path),
        job_resume="append",
    )
    for i in range(12):
        await events_of(front, f"count {i}", session=f"s{i}")
    workers = [
        Runner(
            Agent("a", ScriptedModel([]), tools=[count_words]),
            app_name="app",
            session_service=sessions,
            job_store=SqliteJobStore(path),
            job_resume="append",
        )
        for _ in range(4)
    ]
    await asyncio.gather(*(w.run_jobs() for w in workers))
    assert sorted(r["text"].count("w") for r in RUNS) == list(range(12))
    for i in range(12):
        assert final_responses(await session_events(front, f"s{i}"), f"c{i}") == [{"result": i}]


async def test_arguments_the_workers_code_refuses_fail_the_job() -> None:
    store = job_store_from_url("memory://")
    job, _ = await store.submit(
        key=None, app_name="app", call=JobCall("c1", "u", "s", "a"), tool="make_report",
        args={"subject": "renamed parameter"}, fingerprint="f", max_attempts=1,
        idempotent=False, lease=5,
    )  # fmt: skip
    sessions = InMemorySessionService()
    await sessions.create_session(app_name="app", user_id="u", session_id="s")
    runner = Runner(
        Agent("a", ScriptedModel([]), tools=[make_report]),
        app_name="app",
        session_service=sessions,
        job_store=store,
        job_resume="append",
    )
    await runner.run_jobs()
    done = await store.get(job.id)
    assert done is not None and done.status is JobStatus.FAILED
    assert done.error_code == "tool.invalid_arguments" and RUNS == []
    [answer] = final_responses(await session_events(runner), "c1")
    assert answer["error"]["code"] == "tool.invalid_arguments"


def test_job_options_are_checked() -> None:
    with pytest.raises(ValueError, match="dedupe"):
        JobOptions(dedupe="everyone")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_attempts"):
        JobOptions(max_attempts=0)
    assert make_report.long_running and make_report.durable == JobOptions()

    def plain(x: int) -> int:
        return x

    with pytest.raises(TypeError, match="durable="):
        tool(durable="yes")(plain)  # type: ignore[call-overload]


async def test_a_resolved_job_is_delivered_again_as_its_new_outcome(store: JobStore) -> None:
    model = ScriptedModel([call_turn("make_report", {"topic": "x"}, "c1"), "ok"])
    runner = Runner(
        Agent("a", model, tools=[make_report]), app_name="app", job_store=store, job_resume="append"
    )
    events = await events_of(runner, "go")
    job_id = events[1].get_function_responses()[0].response["job_id"]
    # A holder that died mid-run: the job is in doubt, and that is delivered.
    assert await store.claim(["make_report"], "dead") is not None
    assert await store.mark_started(job_id, "dead")
    await _expire(store, job_id)
    await runner.run_jobs()
    [doubt] = final_responses(await session_events(runner), "c1")
    assert doubt["error"]["code"] == "tool.in_doubt"
    # Resolved by hand: the new outcome reaches the session too.
    await runner.resolve_job(job_id, response={"report": "done by hand"})
    await runner.run_jobs()
    answers = final_responses(await session_events(runner), "c1")
    assert answers == [doubt, {"report": "done by hand"}]
    await runner.run_jobs()  # and only once
    assert len(final_responses(await session_events(runner), "c1")) == 2
    assert RUNS == []


async def _expire(store: JobStore, job_id: str) -> None:
    """Let the dead holder's lease lapse (the store's default lease is 10 s: shortened)."""
    from agent_core.jobs._sql import SqlJobStore

    assert isinstance(store, SqlJobStore)
    await store._do(lambda tx: tx.run("UPDATE {table} SET lease_until = 0 WHERE id = ?", (job_id,)))


@tool(durable=JobOptions(lease=0.3))
def long_copy(files: int, tool_context: ToolContext) -> str:
    """Copy files, saying how far it got.

    Args:
        files: How many.
    """
    for i in range(files):
        tool_context.emit_progress("stdout", f"copied {i + 1} of {files}")
    RUNS.append({"copy": "waiting"})
    while not tool_context.cancelled and RUNS[-1] != {"copy": "go"}:
        time.sleep(0.01)
    return "copied"


async def test_emitted_progress_is_on_the_job_while_it_runs() -> None:
    model = ScriptedModel([call_turn("long_copy", {"files": 1000}, "c1"), "ok"])
    runner = Runner(Agent("a", model, tools=[long_copy]), app_name="app", job_resume="append")
    events = await events_of(runner, "copy")
    job_id = events[1].get_function_responses()[0].response["job_id"]
    loop = asyncio.ensure_future(runner.run_jobs())
    try:
        seen = None
        for _ in range(200):
            job = await runner.get_job(job_id)
            seen = job.progress if job is not None else None
            if seen is not None:
                break
            await asyncio.sleep(0.02)
        # The latest chunk, while the tool still runs (it waits for "go").
        assert seen == {"stream": "stdout", "chunk": "copied 1000 of 1000"}
        job = await runner.get_job(job_id)
        assert job is not None and job.status is JobStatus.RUNNING
    finally:
        RUNS.append({"copy": "go"})
        await loop
    job = await runner.get_job(job_id)
    assert job is not None and job.status is JobStatus.SUCCEEDED
