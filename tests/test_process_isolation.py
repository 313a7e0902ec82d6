"""``@tool(isolation="process")``: calls in worker processes that a timeout really stops.

Workers are real processes; "gone" is checked by pid. Time limits are the issue's, with
the kill grace included, measured from the moment the caller gives up.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import _process_tools as pt

from tooling import (
    ExecutionStrategy,
    Scheduler,
    SimpleToolContext,
    ToolCall,
    ToolProgress,
    ToolResponse,
    tool,
)
from tooling._workers.processes import KILL_GRACE_S

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

RENDEZVOUS_S = 30.0  # a cold worker starts an interpreter: slow on a loaded machine


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        await asyncio.sleep(0.02)
    return not alive(pid)


def code(response: ToolResponse) -> str | None:
    return response.error.code if response.error is not None else None


@pytest.fixture
async def scheduler():
    made = Scheduler(
        [
            pt.pid,
            pt.add,
            pt.spin_with_timeout,
            pt.spin,
            pt.exit_now,
            pt.segfault,
            pt.out_of_memory,
            pt.hog,
            pt.count,
            pt.steps,
            pt.save,
            pt.custom_failure,
            pt.refuse,
            pt.picture,
            pt.square,
            pt.fork_and_spin,
            pt.fork_and_wait,
        ],
        max_processes=2,
    )
    try:
        yield made
    finally:
        made.close()


async def one(scheduler: Scheduler, name: str, args: dict[str, Any] | None = None) -> ToolResponse:
    (response,) = await scheduler.dispatch([ToolCall("c", name, args or {})])
    return response


# -- running ---------------------------------------------------------------------------------


async def test_a_call_runs_in_a_reused_worker_process(scheduler):
    first = await one(scheduler, "pid")
    second = await one(scheduler, "pid")
    assert first.error is None
    worker = first.response["result"]
    assert worker != os.getpid()
    assert second.response["result"] == worker  # warm: the same worker again
    assert (await one(scheduler, "add", {"a": 2, "b": 3})).response == {"result": 5}
    assert (await one(scheduler, "square", {"x": 7})).response == {"result": 49}


async def test_tool_run_without_a_scheduler_uses_a_shared_pool():
    assert await pt.add.run({"a": 1, "b": 1}) == {"result": 2}
    assert pt.add(1, 2) == 3  # calling the function directly stays in this process


async def test_arguments_are_validated_before_anything_crosses(scheduler):
    response = await one(scheduler, "add", {"a": "x", "b": 1})
    assert code(response) == "tool.invalid_arguments"
    assert response.error is not None and response.error.details


async def test_state_progress_call_id_and_actions_cross_the_boundary(scheduler):
    seen: list[ToolProgress] = []
    ctx = SimpleToolContext(state={"count": 40}, on_progress=seen.append, function_call_id="k1")
    body = await pt.count.run({"step": 2}, ctx)
    assert body == {"call": "k1", "count": 42}
    assert ctx.state.delta == {"count": 42}  # the worker's write, as this call's delta
    assert ctx.actions.skip_summarization is True
    assert [(p.stream, p.chunk, p.id, p.name) for p in seen] == [
        ("log", "adding 2 to 40", "k1", "count")
    ]


async def test_a_generator_streams_its_items_from_the_worker(scheduler):
    items: list[Any] = []
    async with scheduler.stream([ToolCall("g", "steps", {"n": 3})]) as updates:
        async for item in updates:
            items.append((item.final, item.response) if isinstance(item, ToolResponse) else item)
    assert items == [
        (False, {"step": 0}),
        (False, {"step": 1}),
        (False, {"step": 2}),
        (True, {"done": 3}),
    ]


async def test_blob_parts_cross_the_boundary(scheduler):
    response = await one(scheduler, "picture")
    assert response.response == {"caption": "dot", "image": {"part": 0, "mime_type": "image/png"}}
    assert [p.data for p in response.parts] == [b"\x89PNG..."]  # type: ignore[union-attr]


async def test_errors_in_the_worker_are_told_like_errors_in_a_thread(scheduler):
    refused = await one(scheduler, "refuse", {"reason": "no"})
    assert code(refused) == "demo.refused"
    assert refused.error is not None and refused.error.message == "refused: no"

    failed = await one(scheduler, "custom_failure", {"text": "secret"})
    assert code(failed) == "tool.failed"
    assert "secret" not in failed.response["error"]["message"]
    assert "CustomError" in failed.response["error"]["message"]
    assert type(failed.exception).__name__ == "CustomError"
    notes = getattr(failed.exception, "__notes__", [])
    assert any("Raised in a worker process" in n and "secret" in n for n in notes)

    exposed = Scheduler([pt.custom_failure], max_processes=1, expose_errors=True)
    try:
        told = await one(exposed, "custom_failure", {"text": "shown"})
    finally:
        exposed.close()
    assert told.response["error"]["message"] == "CustomError: shown"


async def test_a_failure_in_the_worker_is_logged_with_its_traceback(scheduler, caplog):
    with caplog.at_level(logging.WARNING, logger="tooling"):
        await one(scheduler, "custom_failure", {"text": "logged"})
    (record,) = [r for r in caplog.records if "custom_failure" in r.getMessage()]
    assert record.exc_info is not None
    assert "Raised in a worker process" in caplog.text


async def test_other_context_methods_raise_a_clear_error(scheduler):
    response = await one(scheduler, "save")
    assert code(response) == "tool.failed"
    assert isinstance(response.exception, RuntimeError)
    assert "isolation='process'" in str(response.exception)


# -- stopping --------------------------------------------------------------------------------


async def _worker_pid(scheduler: Scheduler) -> None:
    """Warm one worker, so the timed part below measures the call, not a cold start."""
    assert (await one(scheduler, "pid")).error is None


async def test_a_hung_call_times_out_its_process_dies_and_the_next_call_works(scheduler):
    await _worker_pid(scheduler)
    pids: list[int] = []
    started = time.perf_counter()
    async with scheduler.stream([ToolCall("s", "spin_with_timeout", {})]) as updates:
        async for item in updates:
            if isinstance(item, ToolProgress):
                pids.append(int(item.chunk))
            else:
                final = item
    answered = time.perf_counter() - started
    assert code(final) == "tool.timeout"
    assert "worker process was stopped" in final.response["error"]["message"]
    assert answered < 1.5 + 0.5  # the timeout is 1 s; a loaded machine gets a little slack
    (worker,) = pids
    assert await gone_within(worker, 2.0)
    assert worker not in scheduler.processes.pids
    assert (await one(scheduler, "add", {"a": 1, "b": 2})).response == {"result": 3}


async def test_cancelling_a_dispatch_kills_every_worker_within_the_grace():
    n = 5
    scheduler = Scheduler([pt.spin, pt.pid], strategy=ExecutionStrategy.PARALLEL, max_processes=n)
    try:
        await scheduler.dispatch([ToolCall(f"w{i}", "pid", {}) for i in range(n)])  # warm
        pids: list[int] = []
        cancelled_at = 0.0
        async with asyncio.timeout(RENDEZVOUS_S):
            async with scheduler.stream([ToolCall(f"s{i}", "spin", {}) for i in range(n)]) as up:
                async for item in up:
                    if isinstance(item, ToolProgress):
                        pids.append(int(item.chunk))
                    if len(pids) == n:
                        cancelled_at = time.perf_counter()
                        break  # leaving the block cancels the calls
        left = time.perf_counter() - cancelled_at
        assert left < 0.5
        assert len(set(pids)) == n
        for worker in pids:
            assert await gone_within(worker, 0.5 + KILL_GRACE_S + 0.5), worker
        assert (await one(scheduler, "pid")).error is None
    finally:
        scheduler.close()


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("exit_now", {}),
        ("segfault", {}),
        ("out_of_memory", {}),
        pytest.param(
            "hog",
            {"limit_mb": 64},
            marks=pytest.mark.skipif(sys.platform != "linux", reason="reads /proc"),
        ),
    ],
)
async def test_a_dying_or_starving_worker_fails_only_its_call(scheduler, name, args):
    batch = [
        ToolCall("before", "add", {"a": 1, "b": 1}),
        ToolCall("bad", name, args),
        ToolCall("after", "add", {"a": 2, "b": 2}),
    ]
    before, bad, after = await scheduler.dispatch(batch)
    assert before.response == {"result": 2}
    assert code(bad) == "tool.failed"
    assert after.response == {"result": 4}
    if name == "exit_now":
        assert "exited with status 1" in bad.response["error"]["message"]
    if name == "segfault":
        assert "SIGSEGV" in bad.response["error"]["message"]
    if name == "out_of_memory":
        assert isinstance(bad.exception, MemoryError)


# -- refused at decoration -------------------------------------------------------------------


def test_functions_a_worker_cannot_import_are_refused_at_decoration():
    def local(x: int) -> int:
        return x

    with pytest.raises(TypeError, match="closure"):
        tool(isolation="process")(local)
    with pytest.raises(TypeError, match="lambda"):
        tool(isolation="process", name="f")(lambda x: x)  # type: ignore[arg-type, misc]

    def in_main(x: int) -> int:
        return x

    in_main.__module__ = "__main__"
    in_main.__qualname__ = "in_main"
    with pytest.raises(TypeError, match="__main__"):
        tool(isolation="process")(in_main)
    script = (
        "from tooling import tool\n"
        "def f(x: int) -> int:\n    return x\n"
        "try:\n    tool(isolation='process')(f)\n"
        "except TypeError as e:\n    print(e)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert "is in __main__ (the script being run)" in result.stdout, result.stderr
    with pytest.raises(TypeError, match="partial"):
        tool(isolation="process", name="p")(functools.partial(pt.plain_square))

    async def coroutine(x: int) -> int:
        return x

    coroutine.__qualname__ = "coroutine"
    with pytest.raises(TypeError, match="sync function"):
        tool(isolation="process")(coroutine)

    class Store:
        def get(self, key: str) -> str:
            return key

    with pytest.raises(TypeError, match="method"):
        tool(isolation="process")(Store.get)
    with pytest.raises(ValueError, match="isolation must be"):
        tool(isolation="subinterpreter")(pt.plain_square)  # type: ignore[call-overload]


# -- in an agent run -------------------------------------------------------------------------


async def test_an_agent_run_uses_the_runners_warm_workers_and_keeps_state_writes():
    from agent_core import Agent, Part, Runner, ScriptedModel

    turns = [
        [Part.from_function_call("pid", {})],
        # count asks to skip summarization: the run ends with this turn's responses.
        [Part.from_function_call("pid", {}), Part.from_function_call("count", {"step": 2})],
    ]
    runner = Runner(Agent("a", ScriptedModel(turns), tools=[pt.count, pt.pid]), app_name="app")
    try:
        events = [
            e
            async for e in runner.run_async(user_id="u", session_id="s", new_message="go")
            if not e.partial
        ]
        responses = [r.response for e in events for r in e.get_function_responses()]
        # The second turn's call found the worker the first turn started.
        assert responses[0] == responses[1]
        assert responses[2] == {"call": responses[2]["call"], "count": 2}
        session = await runner.session_service.get_session(
            app_name="app", user_id="u", session_id="s"
        )
        assert session is not None and session.state["count"] == 2
        worker = responses[0]["result"]
    finally:
        await runner.aclose()
    assert await gone_within(worker, 0.5 + KILL_GRACE_S + 0.5)


def test_inspect_says_a_tool_runs_in_a_worker_process():
    from tooling._scheduling.planning import scheduling_of

    described = scheduling_of(pt.add)
    assert described["isolation"] == "process"
    assert "worker process" in described["summary"]


def test_a_module_run_with_python_m_finds_its_tools_by_name():
    root = Path(__file__).resolve().parent.parent
    result = subprocess.run(
        [sys.executable, "-m", "examples.isolated_tools"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "{'result': 1229}" in result.stdout
    assert "tool.timeout" in result.stdout
    assert "{'result': 25}" in result.stdout


TOOL_FILE = """
from tooling import tool

from .helpers import double


@tool(isolation="process")
def twice(x: int) -> int:
    \"\"\"Double a number, in a worker.\"\"\"
    return double(x)
"""


async def test_a_tool_file_loaded_by_path_is_loaded_the_same_way_in_the_worker(tmp_path):
    from tooling.cli import load_file

    (tmp_path / "helpers.py").write_text("def double(x: int) -> int:\n    return 2 * x\n")
    (tmp_path / "my_tools.py").write_text(TOOL_FILE)
    module = load_file(tmp_path / "my_tools.py")
    assert module.__name__.startswith("_tooling_loaded_")  # a made-up name
    scheduler = Scheduler([module.twice], max_processes=1)
    try:
        assert (await one(scheduler, "twice", {"x": 21})).response == {"result": 42}
    finally:
        scheduler.close()


# -- the clock, and a worker's children -----------------------------------------------------


async def test_the_clock_starts_when_the_tool_starts_not_while_its_module_imports():
    import _process_slow_import as slow

    scheduler = Scheduler([slow.quick], max_processes=1)
    try:
        # A cold worker: an interpreter starts and imports the module (2 s) before the
        # tool runs; its 1.5 s limit is the tool's own time.
        (response,) = await scheduler.dispatch([ToolCall("q", "quick", {})])
        assert response.error is None, response.response
        assert response.response == {"result": "quick"}
    finally:
        scheduler.close()


async def test_waiting_for_a_worker_has_its_own_bound():
    from tooling._workers.processes import ProcessPool

    pool = ProcessPool(1, start_timeout=1.0)
    scheduler = Scheduler([pt.nap], processes=pool, timeout=30, strategy=ExecutionStrategy.PARALLEL)
    try:
        await scheduler.dispatch([ToolCall("warm", "nap", {"seconds": 0})])
        busy, waiting = await scheduler.dispatch(
            [ToolCall("busy", "nap", {"seconds": 4}), ToolCall("wait", "nap", {"seconds": 0})]
        )
        assert busy.response == {"result": 4.0}  # its own 30 s limit
        assert code(waiting) == "tool.timeout"
        assert "was not started" in waiting.response["error"]["message"]
    finally:
        scheduler.close()
        pool.shutdown()


async def _child_of(scheduler: Scheduler, name: str) -> tuple[int, int, asyncio.Task[Any]]:
    """Starts ``name``; the worker's pid, its child's pid, and the dispatch's task."""
    seen: asyncio.Queue[str] = asyncio.Queue()

    async def run() -> ToolResponse:
        async with scheduler.stream([ToolCall("f", name, {})]) as updates:
            async for item in updates:
                if isinstance(item, ToolProgress):
                    seen.put_nowait(item.chunk)
                else:
                    return item
        raise AssertionError("no final response")

    task = asyncio.create_task(run())
    worker, child = map(int, (await asyncio.wait_for(seen.get(), RENDEZVOUS_S)).split())
    return worker, child, task


async def test_a_timeout_stops_the_workers_children_too(scheduler):
    worker, child, task = await _child_of(scheduler, "fork_and_spin")
    final = await asyncio.wait_for(task, RENDEZVOUS_S)
    assert code(final) == "tool.timeout"
    assert await gone_within(worker, RENDEZVOUS_S)
    assert await gone_within(child, RENDEZVOUS_S)


async def test_a_worker_killed_from_outside_ends_its_call_and_its_children(scheduler):
    import signal

    worker, child, task = await _child_of(scheduler, "fork_and_wait")
    os.kill(worker, signal.SIGKILL)
    # The child still holds the worker's pipe: the call ends all the same, well before
    # the child's 120 s sleep would.
    final = await asyncio.wait_for(task, RENDEZVOUS_S)
    assert code(final) == "tool.failed"
    assert "SIGKILL" in final.response["error"]["message"]
    assert await gone_within(child, RENDEZVOUS_S)
