"""Tools that misbehave: hang, exit, swallow cancellation, raise odd things, return or store
what JSON cannot hold. Each misbehaviour is that call's failure alone; the host survives,
the thread count stays bounded, deadlines hold, and a developer sees the traceback.

Hung tools wait on events released when the test ends (the ``gate`` fixture); no
assertion depends on the machine's speed beyond generous bounds.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tooling import (
    BaseTool,
    ExecutionStrategy,
    Scheduler,
    SimpleToolContext,
    ToolCall,
    ToolContext,
    ToolError,
    ToolResponse,
    tool,
)

AUTO = ExecutionStrategy.AUTO
PARALLEL = ExecutionStrategy.PARALLEL
SEQUENTIAL = ExecutionStrategy.SEQUENTIAL
HANG_S = 60.0
SOON_S = 10.0


@pytest.fixture
def gate() -> Iterator[Callable[[], threading.Event]]:
    """Make events that hung tools wait on; all are set when the test ends."""
    made: list[threading.Event] = []

    def make() -> threading.Event:
        event = threading.Event()
        made.append(event)
        return event

    yield make
    for event in made:
        event.set()


def code(response: ToolResponse) -> str | None:
    return response.error.code if response.error is not None else None


def pool_threads(scheduler: Scheduler) -> int:
    prefix = scheduler.pool._name + "-"
    return sum(t.name.startswith(prefix) for t in threading.enumerate())


# -- hung sync tools: the thread cap ----------------------------------------------------------


@pytest.mark.parametrize("strategy", [PARALLEL, AUTO])
async def test_one_turn_of_many_hung_calls_keeps_pool_threads_under_the_cap(gate, strategy):
    release = gate()

    @tool(timeout=0.2, read_only=True, concurrency_safe=True)
    def hang(i: int) -> int:
        release.wait(HANG_S)
        return i

    scheduler = Scheduler([hang], strategy=strategy, max_threads=4)
    peak = 0
    stop = threading.Event()

    def watch() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, pool_threads(scheduler))
            time.sleep(0.001)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        responses = await scheduler.dispatch(
            [ToolCall(f"h{i}", "hang", {"i": i}) for i in range(300)]
        )
    finally:
        stop.set()
        watcher.join()
    peak = max(peak, pool_threads(scheduler))
    assert peak <= 2 * 4
    assert {code(r) for r in responses} <= {"tool.timeout", "tool.failed"}
    assert [r.id for r in responses] == [f"h{i}" for i in range(300)]


async def test_a_sync_call_finding_the_cap_reached_fails_saying_why_and_works_again_later(gate):
    release = gate()

    @tool(timeout=0.1)
    def hang() -> str:
        release.wait(HANG_S)
        return "late"

    @tool
    def quick() -> str:
        return "ok"

    scheduler = Scheduler([hang, quick], strategy=PARALLEL, max_threads=2)
    await scheduler.dispatch([ToolCall(f"h{i}", "hang", {}) for i in range(2)])
    assert scheduler.pool.saturated()
    (refused,) = await scheduler.dispatch([ToolCall("q", "quick", {})])
    assert code(refused) == "tool.failed"
    assert "still running" in refused.response["error"]["message"]
    release.set()
    for _ in range(int(SOON_S / 0.01)):
        if not scheduler.pool.saturated():
            break
        await asyncio.sleep(0.01)
    (ok,) = await scheduler.dispatch([ToolCall("q", "quick", {})])
    assert ok.response == {"result": "ok"}
    # The threads that were abandoned came back to the pool or ended: still under the cap.
    assert pool_threads(scheduler) <= 2 * 2


# -- SystemExit is a failure, never the end of the host ----------------------------------------


def _exit_sync() -> str:
    sys.exit(3)


async def _exit_async() -> str:
    sys.exit("bye")


def _exit_gen() -> Iterator[str]:
    yield "first"
    sys.exit(1)


def _argparse_tool(flags: str) -> str:
    parser = argparse.ArgumentParser(prog="x", exit_on_error=False)
    parser.add_argument("--count", type=int, required=True)
    parser.parse_args(flags.split())  # missing --count: argparse calls sys.exit(2)
    return "parsed"


@pytest.mark.parametrize(
    "make",
    [
        lambda: tool(_exit_sync),
        lambda: tool(_exit_async),
        lambda: tool(_exit_sync, run_in_thread=False),
        lambda: tool(_exit_gen, long_running=True),
        lambda: tool(_argparse_tool),
    ],
    ids=["sync", "async", "inline", "generator", "argparse"],
)
async def test_sys_exit_in_a_tool_is_tool_failed(make, capsys):
    t = make()
    args: dict[str, Any] = {"flags": ""} if t.name == "_argparse_tool" else {}
    with pytest.raises(ToolError) as raised:
        await t.run(args)
    assert raised.value.code == "tool.failed"
    assert "SystemExit" in raised.value.message
    (response,) = await Scheduler([t]).dispatch([ToolCall("c", t.name, args)])
    assert code(response) == "tool.failed"
    assert isinstance(response.exception, SystemExit)


async def test_sys_exit_in_a_hand_written_tool_is_tool_failed():
    class Exits(BaseTool):
        name = "exits"
        description = "Exits."
        parameters_json_schema = {"type": "object", "properties": {}}

        async def run(self, args: Any, ctx: ToolContext | None = None) -> dict[str, Any]:
            raise SystemExit(4)

    (response,) = await Scheduler([Exits()]).dispatch([ToolCall("c", "exits", {})])
    assert code(response) == "tool.failed"


# -- deadlines hold whatever the tool does -----------------------------------------------------


async def test_an_async_tool_that_swallows_cancellation_still_times_out_on_time():
    done = asyncio.Event()
    swallowed: list[bool] = []

    @tool(timeout=0.5)
    async def stubborn() -> str:
        while not done.is_set():
            try:
                await asyncio.sleep(HANG_S)
            except asyncio.CancelledError:
                swallowed.append(True)  # and carry on regardless
        return "finished anyway"

    @tool
    async def fine() -> str:
        return "ok"

    scheduler = Scheduler([stubborn, fine], strategy=PARALLEL)
    # The tool never ends until ``done``: the dispatch answering at all, with it still
    # running, shows the deadline did not wait for it (a hang would fail the wait_for).
    slow, ok = await asyncio.wait_for(
        scheduler.dispatch([ToolCall("s", "stubborn", {}), ToolCall("f", "fine", {})]),
        SOON_S,
    )
    still_running = not done.is_set()
    done.set()
    assert still_running
    assert code(slow) == "tool.timeout"
    assert "0.5 s" in slow.response["error"]["message"]
    assert ok.response == {"result": "ok"}
    assert swallowed  # it was asked to stop


async def test_an_async_tool_that_swallows_cancellation_and_returns_is_not_a_success():
    @tool(timeout=0.2)
    async def returns_anyway() -> str:
        try:
            await asyncio.sleep(HANG_S)
        except asyncio.CancelledError:
            pass
        return "pretend success"

    (response,) = await Scheduler([returns_anyway]).dispatch([ToolCall("r", "returns_anyway", {})])
    assert code(response) == "tool.timeout"


async def test_cancelling_a_dispatch_is_not_held_up_by_a_tool_that_swallows_cancellation():
    done = asyncio.Event()
    entered = asyncio.Event()

    @tool(timeout=30)
    async def stubborn() -> str:
        entered.set()
        while not done.is_set():
            try:
                await asyncio.sleep(HANG_S)
            except asyncio.CancelledError:
                pass
        return "x"

    scheduler = Scheduler([stubborn])
    task = asyncio.create_task(scheduler.dispatch([ToolCall("s", "stubborn", {})]))
    await entered.wait()
    task.cancel()
    # The tool swallows every cancel and never ends until ``done``: the cancelled
    # dispatch ending at all shows it was not held up (a hang would fail the wait_for).
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(asyncio.shield(task), SOON_S)
    done.set()


# -- BaseException: the same type under every strategy ----------------------------------------


class Abort(BaseException):
    """Not an Exception: propagates, unwrapped."""


@pytest.mark.parametrize("strategy", [AUTO, PARALLEL, SEQUENTIAL])
@pytest.mark.parametrize("sync", [True, False])
async def test_a_base_exception_from_a_tool_comes_out_bare_under_every_strategy(strategy, sync):
    if sync:

        def abort() -> str:
            raise Abort("stop")

        aborting = tool(abort, read_only=True, concurrency_safe=True)
    else:

        async def abort() -> str:
            raise Abort("stop")

        aborting = tool(abort, read_only=True, concurrency_safe=True)

    @tool(read_only=True, concurrency_safe=True)
    async def other() -> str:
        await asyncio.sleep(0.01)
        return "ok"

    scheduler = Scheduler([aborting, other], strategy=strategy)
    with pytest.raises(Abort):
        await scheduler.dispatch([ToolCall("a", "abort", {}), ToolCall("o", "other", {})])


# -- what cannot become JSON -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (10**5000, "digits"),
        ({"n": [1, -(10**4400)]}, "digits"),
        ("\ud800", "surrogate"),
        ({"text": "ok \udfff"}, "surrogate"),
        ({"bad \ud801 key": 1}, "surrogate"),
        ([{"deep": {"deeper": "x\ud800"}}], "surrogate"),
    ],
    ids=["big-int", "nested-big-int", "surrogate", "nested-surrogate", "key", "deep"],
)
@pytest.mark.parametrize("sync", [True, False])
async def test_a_result_json_cannot_hold_is_tool_failed_saying_what(value, said, sync):
    if sync:

        def give() -> Any:
            return value

        t = tool(give)
    else:

        async def give() -> Any:
            return value

        t = tool(give)
    with pytest.raises(ToolError) as raised:
        await t.run({})
    assert raised.value.code == "tool.failed"
    assert said in raised.value.message
    (response,) = await Scheduler([t]).dispatch([ToolCall("g", "give", {})])
    assert code(response) == "tool.failed"
    assert said in response.response["error"]["message"]


async def test_a_generator_update_json_cannot_hold_is_tool_failed():
    @tool(long_running=True)
    def gen() -> Iterator[Any]:
        yield {"ok": 1}
        yield {"bad": 10**5000}

    (response,) = await Scheduler([gen]).dispatch([ToolCall("g", "gen", {})])
    assert code(response) == "tool.failed"
    assert "digits" in response.response["error"]["message"]


async def test_large_but_encodable_values_pass():
    @tool
    def fine() -> dict[str, Any]:
        return {"n": 10**4000, "nan": float("nan"), "text": "é ✓ 😀"}

    result = await fine.run({})
    assert result["n"] == 10**4000 and result["nan"] is None and result["text"] == "é ✓ 😀"


# -- state values must be JSON ------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        datetime.datetime(2026, 1, 1),
        {1, 2},
        (1, 2),
        {"nested": [datetime.date(2026, 1, 1)]},
        {1: "int key"},
        float("nan"),
        float("inf"),
        b"bytes",
        10**5000,
        "\ud800",
        {"k": "\udfff"},
        object(),
    ],
    ids=lambda v: type(v).__name__,
)
def test_a_state_value_that_is_not_json_is_refused_at_the_write(value):
    ctx = SimpleToolContext(caller="t")
    with pytest.raises(TypeError, match="JSON"):
        ctx.state["k"] = value
    with pytest.raises(TypeError, match="JSON"):
        ctx.state.update({"k": value})
    with pytest.raises(TypeError, match="JSON"):
        ctx.state.setdefault("fresh", value)
    assert "k" not in ctx.state and "fresh" not in ctx.state


def test_json_state_values_are_accepted():
    ctx = SimpleToolContext(caller="t")
    value = {"a": [1, 2.5, "x", True, None, {"b": []}], "c": {}, "big": 10**4000}
    ctx.state["k"] = value
    ctx.state["temp:n"] = 1
    assert ctx.state["k"] == value


def test_a_cyclic_state_value_is_refused():
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    ctx = SimpleToolContext(caller="t")
    with pytest.raises(TypeError, match="JSON"):
        ctx.state["k"] = cyclic


async def test_a_tool_writing_a_non_json_state_value_is_tool_failed():
    @tool
    def remember(tool_context: ToolContext) -> str:
        tool_context.state["when"] = datetime.datetime(2026, 1, 1)
        return "ok"

    (response,) = await Scheduler([remember]).dispatch([ToolCall("r", "remember", {})])
    assert code(response) == "tool.failed"
    assert isinstance(response.exception, TypeError)


# -- a developer sees what broke ----------------------------------------------------------------


def _crash() -> str:
    return {}["missing"]  # type: ignore[no-any-return]


async def _crash_async() -> str:
    return {}["missing"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("func", [_crash, _crash_async], ids=["sync", "async"])
async def test_every_tool_failed_is_logged_with_its_traceback(func, caplog):
    crash = tool(func, name="crash")
    caplog.set_level(logging.WARNING, logger="tooling")
    (response,) = await Scheduler([crash]).dispatch([ToolCall("c", "crash", {})])
    assert code(response) == "tool.failed"
    records = [r for r in caplog.records if r.name == "tooling" and r.levelno == logging.WARNING]
    assert len(records) == 1
    record = records[0]
    assert "crash" in record.getMessage() and "KeyError" in record.getMessage()
    assert record.exc_info is not None and isinstance(record.exc_info[1], KeyError)
    text = caplog.text
    assert "Traceback" in text and func.__name__ in text  # the frame where it broke


async def test_tool_run_outside_a_scheduler_logs_its_failure_too(caplog):
    crash = tool(_crash, name="crash")
    caplog.set_level(logging.WARNING, logger="tooling")
    with pytest.raises(ToolError):
        await crash.run({})
    assert any(r.exc_info and isinstance(r.exc_info[1], KeyError) for r in caplog.records)


async def test_a_hand_written_tool_failure_is_logged(caplog):
    class Broken(BaseTool):
        name = "broken"
        description = "Breaks."
        parameters_json_schema = {"type": "object", "properties": {}}

        async def run(self, args: Any, ctx: ToolContext | None = None) -> dict[str, Any]:
            raise ZeroDivisionError("secret")

    caplog.set_level(logging.WARNING, logger="tooling")
    (response,) = await Scheduler([Broken()]).dispatch([ToolCall("b", "broken", {})])
    assert code(response) == "tool.failed"
    assert "secret" not in response.response["error"]["message"]
    assert any(r.exc_info and isinstance(r.exc_info[1], ZeroDivisionError) for r in caplog.records)


async def test_expected_errors_are_not_logged_as_failures(caplog):
    @tool
    def refuses(n: int) -> str:
        raise ToolError("no such order", code="orders.not_found")

    caplog.set_level(logging.WARNING, logger="tooling")
    await Scheduler([refuses]).dispatch(
        [ToolCall("a", "refuses", {"n": 1}), ToolCall("b", "refuses", {"n": "x"})]
    )
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


# -- arguments that are not an object, for any tool --------------------------------------------


class Recorder(BaseTool):
    """A hand-written tool that records what it was given."""

    name = "recorder"
    description = "Records its arguments."
    parameters_json_schema = {"type": "object", "properties": {}}

    def __init__(self) -> None:
        self.seen: list[Any] = []

    async def run(self, args: Any, ctx: ToolContext | None = None) -> dict[str, Any]:
        self.seen.append(args)
        return {"ok": True}


@pytest.mark.parametrize("args", [[1, 2], 3, None, True, 2.5], ids=repr)
async def test_arguments_that_are_not_an_object_never_reach_a_hand_written_tool(args):
    recorder = Recorder()
    (response,) = await Scheduler([recorder]).dispatch([ToolCall("c", "recorder", args)])
    assert code(response) == "tool.invalid_arguments"
    assert "JSON object" in response.response["error"]["message"]
    assert recorder.seen == []
