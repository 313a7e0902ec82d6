"""``Scheduler`` under bad behaviour: timeouts, hung threads, cancellation, bad results.

Every tool that hangs waits on a ``threading.Event`` released when the test ends (the
``gate`` fixture), so no thread outlives the test by more than a moment. No assertion
depends on how long anything took; hangs are unbounded (until released) and timeouts
short, so the outcome never depends on the machine's speed.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_core import to_json

from tooling import (
    ExecutionStrategy,
    Scheduler,
    ToolCall,
    ToolContext,
    ToolProgress,
    ToolResponse,
    tool,
)
from tooling._workers.sync_generator import CLOSE_GRACE_S

MAX_RESPONSE_BYTES = 256 * 1024
PARALLEL = ExecutionStrategy.PARALLEL

#: A hung tool waits this long at most if, somehow, its gate is never opened.
HANG_S = 60.0
#: Generous bound for things that should happen "soon" (never reached when all is well).
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


async def eventually(condition: Callable[[], bool]) -> None:
    """Wait (on the loop) until ``condition()`` holds; fail after a generous bound."""
    for _ in range(int(SOON_S / 0.005)):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("condition not reached")


def code(response: ToolResponse) -> str | None:
    return response.error.code if response.error is not None else None


# -- timeouts ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool_timeout", "scheduler_timeout"), [(0.1, None), (None, 0.1), (0.1, 30), (30, 0.1)]
)
async def test_effective_timeout_is_the_smaller_one(tool_timeout, scheduler_timeout):
    cancelled: list[bool] = []

    @tool(timeout=tool_timeout)
    async def hang() -> str:
        try:
            await asyncio.sleep(HANG_S)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "never"

    scheduler = Scheduler([hang], timeout=scheduler_timeout)
    [response] = await scheduler.dispatch([ToolCall("h", "hang", {})])
    assert code(response) == "tool.timeout"
    message = response.response["error"]["message"]
    assert "0.1 s" in message and "cancelled" in message
    assert cancelled == [True]  # the async call was really cancelled
    assert response.id == "h" and response.final


async def test_async_timeout_is_isolated_from_other_calls():
    @tool(timeout=0.1, read_only=True, concurrency_safe=True)
    async def hang() -> str:
        await asyncio.sleep(HANG_S)
        return "never"

    @tool(read_only=True, concurrency_safe=True)
    async def quick() -> str:
        return "ok"

    responses = await Scheduler([hang, quick]).dispatch(
        [ToolCall("a", "quick", {}), ToolCall("b", "hang", {}), ToolCall("c", "quick", {})]
    )
    assert [code(r) for r in responses] == [None, "tool.timeout", None]


async def test_sync_timeout_abandons_the_thread_and_discards_the_late_result(gate, monkeypatch):
    release = gate()
    finished = threading.Event()
    thread_errors: list[Any] = []
    monkeypatch.setattr(threading, "excepthook", thread_errors.append)

    @tool(timeout=0.1)
    def hang() -> str:
        release.wait(HANG_S)
        finished.set()
        return "late"

    @tool
    def quick() -> str:
        return "ok"

    scheduler = Scheduler([hang, quick], max_threads=1)
    scheduler.pool.max_abandoned = 5  # so the one thread can be abandoned and replaced
    [response] = await scheduler.dispatch([ToolCall("h", "hang", {})])
    assert code(response) == "tool.timeout"
    message = response.response["error"]["message"]
    assert "0.1 s" in message and "may still complete" in message
    assert scheduler.pool.abandoned == 1
    assert not finished.is_set()  # still running in its abandoned thread

    # The pool replaced the slot: with max_threads=1, a following call still runs.
    [following] = await scheduler.dispatch([ToolCall("q", "quick", {})])
    assert following.response == {"result": "ok"}

    # Once released, the late result is discarded and the thread goes away.
    release.set()
    await eventually(lambda: finished.is_set() and scheduler.pool.abandoned == 0)
    assert response.response["error"]["code"] == "tool.timeout"
    assert thread_errors == []
    [again] = await scheduler.dispatch([ToolCall("q2", "quick", {})])
    assert again.response == {"result": "ok"}


async def test_sync_timeout_is_isolated_from_other_calls(gate):
    release = gate()

    @tool(timeout=0.1)
    def hang() -> str:
        release.wait(HANG_S)
        return "late"

    @tool
    def quick(i: int) -> int:
        return i

    scheduler = Scheduler([hang, quick])
    responses = await scheduler.dispatch(
        [
            ToolCall("a", "quick", {"i": 1}),
            ToolCall("b", "hang", {}),
            ToolCall("c", "quick", {"i": 3}),
        ]
    )
    assert [code(r) for r in responses] == [None, "tool.timeout", None]
    assert [responses[0].response, responses[2].response] == [{"result": 1}, {"result": 3}]


@pytest.mark.parametrize("sync", [False, True], ids=["async-gen", "sync-gen"])
async def test_timeout_covers_the_whole_stream_of_a_generator(sync, gate):
    """Every step is quick; only the stream as a whole runs past the timeout."""
    release = gate()
    yielded: list[int] = []

    if sync:

        @tool(long_running=True, timeout=0.3)
        def ticker() -> Iterator[int]:
            i = 0
            while not release.is_set():
                yielded.append(i)
                yield i
                release.wait(0.01)
                i += 1

    else:

        @tool(long_running=True, timeout=0.3)
        async def ticker() -> AsyncIterator[int]:
            i = 0
            while True:
                yielded.append(i)
                yield i
                await asyncio.sleep(0.01)
                i += 1

    scheduler = Scheduler([ticker])
    items: list[Any] = []
    async with scheduler.stream([ToolCall("t", "ticker", {})]) as updates:
        async for item in updates:
            items.append(item)
    *intermediate, final = items
    assert len(intermediate) >= 1  # it did stream before running out of time
    assert all(not i.final and i.id == "t" for i in intermediate)
    assert final.final and code(final) == "tool.timeout"
    if sync:
        assert "may still complete" in final.response["error"]["message"]


async def test_abandoned_threads_are_capped(gate):
    release = gate()
    ran: list[str] = []

    @tool(timeout=0.1)
    def hang(i: int) -> int:
        release.wait(HANG_S)
        return i

    @tool
    def quick() -> str:
        ran.append("quick")
        return "ok"

    @tool(long_running=True)
    def quick_gen() -> Iterator[str]:
        ran.append("quick_gen")
        yield "ok"

    @tool
    async def still_fine() -> str:
        return "ok"

    scheduler = Scheduler([hang, quick, quick_gen, still_fine], strategy=PARALLEL, max_threads=2)
    cap = scheduler.pool.max_abandoned
    assert cap == 2  # small because max_threads is
    hung = await scheduler.dispatch([ToolCall(f"h{i}", "hang", {"i": i}) for i in range(cap)])
    assert [code(r) for r in hung] == ["tool.timeout"] * cap
    assert scheduler.pool.abandoned == cap

    # Past the cap, sync calls are refused at once, saying why; async calls still run.
    refused, refused_gen, fine = await scheduler.dispatch(
        [
            ToolCall("q", "quick", {}),
            ToolCall("g", "quick_gen", {}),
            ToolCall("f", "still_fine", {}),
        ]
    )
    for response in (refused, refused_gen):
        assert code(response) == "tool.failed"
        message = response.response["error"]["message"]
        assert "not started" in message and "still running" in message
    assert fine.response == {"result": "ok"}
    assert ran == []

    # When the hung threads finish, sync calls run again.
    release.set()
    await eventually(lambda: scheduler.pool.abandoned == 0)
    ok, ok_gen, _ = await scheduler.dispatch(
        [
            ToolCall("q", "quick", {}),
            ToolCall("g", "quick_gen", {}),
            ToolCall("f", "still_fine", {}),
        ]
    )
    assert ok.response == {"result": "ok"} and ok_gen.response == {"result": "ok"}
    assert sorted(ran) == ["quick", "quick_gen"]


_EXIT_SCRIPT = """
import asyncio, sys, threading, time
from tooling import ExecutionStrategy, Scheduler, ToolCall, tool

@tool(timeout=0.2)
def hang() -> str:
    threading.Event().wait(120)  # never released
    return "late"

@tool(long_running=True, timeout=0.3)
def hang_gen():
    yield "first"
    threading.Event().wait(120)
    yield "late"

async def main():
    scheduler = Scheduler([hang, hang_gen], strategy=ExecutionStrategy.PARALLEL)
    responses = await scheduler.dispatch([ToolCall("a", "hang", {}), ToolCall("b", "hang_gen", {})])
    print(",".join(r.error.code for r in responses), scheduler.pool.abandoned, flush=True)

asyncio.run(main())
print("after asyncio.run", flush=True)
"""


def test_process_exits_promptly_with_a_hung_abandoned_thread(tmp_path: Path):
    script = tmp_path / "hang_and_exit.py"
    script.write_text(textwrap.dedent(_EXIT_SCRIPT))
    root = Path(__file__).resolve().parent.parent
    # The hung threads would wait 120 s; the process must not wait for them.
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["tool.timeout,tool.timeout 2", "after asyncio.run"]


# -- cancellation --------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", list(ExecutionStrategy))
async def test_cancelling_dispatch_cancels_running_calls_and_leaves_no_tasks(strategy):
    started = 0
    all_started = asyncio.Event()
    cleaned_up: list[str] = []

    @tool(read_only=True, concurrency_safe=True)
    async def wait_forever(tag: str) -> str:
        nonlocal started
        started += 1
        all_started.set()
        try:
            await asyncio.sleep(HANG_S)
        except asyncio.CancelledError:
            cleaned_up.append(f"cancelled {tag}")
            raise
        finally:
            cleaned_up.append(f"finally {tag}")
        return tag

    scheduler = Scheduler([wait_forever], strategy=strategy)
    before = asyncio.all_tasks()
    n = 1 if strategy is ExecutionStrategy.SEQUENTIAL else 3
    task = asyncio.create_task(
        scheduler.dispatch([ToolCall(f"c{i}", "wait_forever", {"tag": str(i)}) for i in range(n)])
    )
    await asyncio.wait_for(all_started.wait(), SOON_S)
    await eventually(lambda: started == n)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sorted(cleaned_up) == sorted(
        [f"cancelled {i}" for i in range(n)] + [f"finally {i}" for i in range(n)]
    )
    assert asyncio.all_tasks() == before


async def test_cancelling_dispatch_abandons_a_running_sync_call(gate):
    release = gate()
    entered = threading.Event()

    @tool
    def block() -> str:
        entered.set()
        release.wait(HANG_S)
        return "late"

    scheduler = Scheduler([block])
    before = asyncio.all_tasks()
    task = asyncio.create_task(scheduler.dispatch([ToolCall("b", "block", {})]))
    await eventually(entered.is_set)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert scheduler.pool.abandoned == 1
    assert asyncio.all_tasks() == before
    release.set()
    await eventually(lambda: scheduler.pool.abandoned == 0)


async def test_leaving_stream_early_cancels_running_calls():
    cleaned_up: list[str] = []

    @tool(read_only=True, concurrency_safe=True)
    async def chatty(tag: str, ctx: ToolContext) -> str:
        try:
            ctx.emit_progress("out", f"hello from {tag}")
            await asyncio.sleep(HANG_S)
        except asyncio.CancelledError:
            cleaned_up.append(tag)
            raise
        return tag

    scheduler = Scheduler([chatty])
    before = asyncio.all_tasks()
    first: Any = None
    async with scheduler.stream(
        [ToolCall("a", "chatty", {"tag": "a"}), ToolCall("b", "chatty", {"tag": "b"})]
    ) as items:
        async for item in items:
            first = item
            break
    assert isinstance(first, ToolProgress) and first.chunk.startswith("hello from")
    assert sorted(cleaned_up) == ["a", "b"]
    assert asyncio.all_tasks() == before


async def test_leaving_stream_on_an_exception_cancels_running_calls():
    cleaned_up: list[str] = []
    entered = asyncio.Event()

    @tool
    async def wait_forever() -> str:
        entered.set()
        try:
            await asyncio.sleep(HANG_S)
        finally:
            cleaned_up.append("finally")
        return "never"

    scheduler = Scheduler([wait_forever])
    with pytest.raises(KeyError):
        async with scheduler.stream([ToolCall("w", "wait_forever", {})]):
            await asyncio.wait_for(entered.wait(), SOON_S)
            raise KeyError("consumer failed")
    assert cleaned_up == ["finally"]


async def test_leaving_stream_early_stops_a_generator_tool():
    closed: list[str] = []

    @tool(long_running=True)
    async def ticker() -> AsyncIterator[int]:
        try:
            i = 0
            while True:
                yield i
                i += 1
                await asyncio.sleep(0)
        finally:
            closed.append("closed")

    async with Scheduler([ticker]).stream([ToolCall("t", "ticker", {})]) as items:
        async for item in items:
            if isinstance(item, ToolResponse) and item.response == {"result": 3}:
                break
    assert closed == ["closed"]


async def test_cancelling_the_consumer_while_the_stream_closes_is_not_swallowed():
    entered = asyncio.Event()
    cleaning_up = asyncio.Event()
    went_on: list[str] = []

    @tool
    async def slow_cleanup() -> str:
        entered.set()
        try:
            await asyncio.sleep(HANG_S)
        finally:
            cleaning_up.set()
            await asyncio.sleep(HANG_S)  # cleanup that awaits (cut short by a second cancel)
        return "never"

    async def consumer() -> None:
        async with Scheduler([slow_cleanup]).stream([ToolCall("s", "slow_cleanup", {})]):
            await entered.wait()
        went_on.append("after the block")  # leaving the block waits for the dispatch...

    task = asyncio.create_task(consumer())
    await asyncio.wait_for(cleaning_up.wait(), SOON_S)  # ...which is cleaning up now
    task.cancel()  # the consumer's own task is cancelled while it waits
    with pytest.raises(asyncio.CancelledError):
        await task
    assert went_on == []


async def test_leaving_stream_does_not_wait_for_a_hung_sync_generator_cleanup(gate):
    release = gate()
    yielded = 0

    @tool(long_running=True)
    def steps() -> Iterator[int]:
        nonlocal yielded
        try:
            for i in range(100_000):
                yielded += 1
                yield i
        finally:
            release.wait(HANG_S)  # cleanup that hangs

    got: list[Any] = []

    async def read_one_then_leave() -> None:
        async with Scheduler([steps]).stream([ToolCall("s", "steps", {})]) as items:
            async for item in items:
                got.append(item)
                # Stop reading until the queue is full and the generator waits at a yield.
                last = -1
                while yielded != last:
                    last = yielded
                    await asyncio.sleep(0.05)
                break

    # The hung cleanup would take HANG_S; leaving waits at most the driver's grace period.
    t0 = time.monotonic()
    await asyncio.wait_for(read_one_then_leave(), HANG_S)
    assert time.monotonic() - t0 < CLOSE_GRACE_S + 5.0
    assert len(got) == 1 and not got[0].final
    assert 0 < yielded < 100_000  # left mid-stream; the generator never ran to its end
    assert not release.is_set()  # the cleanup was still hung when we left


# -- results that cannot go to the model as they are -----------------------------------------


def too_large(kind: str) -> Any:
    if kind == "text":
        return {"data": "x" * 300_000}
    if kind == "quotes":  # JSON full of quotes: escaped again inside the cut text
        return ["ab"] * 60_000
    if kind == "control":  # each character is six bytes of JSON, seven once escaped again
        return "\x01" * 50_000
    return {"data": "é" * 150_000}  # non-ASCII: two bytes a character


@pytest.mark.parametrize("kind", ["text", "quotes", "control", "non-ascii"])
@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
async def test_oversized_response_is_cut_for_the_model(kind, sync):
    if sync:

        @tool
        def big() -> Any:
            return too_large(kind)

    else:

        @tool
        async def big() -> Any:
            return too_large(kind)

    @tool
    def small() -> str:
        return "fine"

    [response, other] = await Scheduler([big, small], strategy=PARALLEL).dispatch(
        [ToolCall("b", "big", {}), ToolCall("s", "small", {})]
    )
    whole = too_large(kind)
    expected_full = whole if isinstance(whole, dict) else {"result": whole}
    assert response.full_response == expected_full
    assert len(to_json(expected_full)) > MAX_RESPONSE_BYTES
    assert code(response) == "tool.output_too_large"
    told = response.response
    assert told["status"] == "tool.output_too_large"
    assert told["error"]["code"] == "tool.output_too_large"
    assert len(to_json(told)) <= MAX_RESPONSE_BYTES  # what the model gets fits
    assert told["partial"] and to_json(expected_full).decode().startswith(told["partial"])
    assert other.response == {"result": "fine"} and other.full_response is None


async def test_response_at_the_limit_is_not_cut():
    overhead = len(to_json({"data": ""}))

    @tool
    def exact() -> dict[str, str]:
        return {"data": "y" * (MAX_RESPONSE_BYTES - overhead)}

    [response] = await Scheduler([exact]).dispatch([ToolCall("e", "exact", {})])
    assert response.error is None and response.full_response is None
    assert len(to_json(response.response)) == MAX_RESPONSE_BYTES


async def test_oversized_intermediate_update_is_cut_too():
    @tool(long_running=True)
    async def job() -> AsyncIterator[dict[str, str]]:
        yield {"data": "z" * 300_000}
        yield {"data": "done"}

    async with Scheduler([job]).stream([ToolCall("j", "job", {})]) as items:
        got = [item async for item in items]
    first, second, final = got
    assert not first.final and len(to_json(first.response)) <= MAX_RESPONSE_BYTES
    assert first.full_response == {"data": "z" * 300_000}
    assert second.response == {"data": "done"} and final.response == {"data": "done"}


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
async def test_unserializable_result_is_a_failure_for_that_call_alone(sync):
    class Opaque:
        pass

    if sync:

        @tool
        def odd() -> Any:
            return {"value": Opaque()}

    else:

        @tool
        async def odd() -> Any:
            return {"value": Opaque()}

    @tool
    def fine() -> int:
        return 1

    responses = await Scheduler([odd, fine]).dispatch(
        [ToolCall("o", "odd", {}), ToolCall("f", "fine", {})]
    )
    assert [code(r) for r in responses] == ["tool.failed", None]
    assert responses[0].response["status"] == "error"
    told = responses[0].response
    assert json.loads(json.dumps(told)) == told  # the error itself is JSON
    assert told["error"]["code"] == "tool.failed"
    assert responses[0].exception is not None


async def test_a_context_factory_that_fails_is_a_failure_for_that_call_alone():
    @tool
    def needs_ctx(ctx: ToolContext) -> str:
        return "ran"

    def factory(call: ToolCall) -> Any:
        if call.id == "bad":
            raise RuntimeError("factory secret")
        from tooling import SimpleToolContext

        return SimpleToolContext(function_call_id=call.id)

    responses = await Scheduler([needs_ctx]).dispatch(
        [ToolCall("bad", "needs_ctx", {}), ToolCall("good", "needs_ctx", {})],
        context_factory=factory,
    )
    assert [code(r) for r in responses] == ["tool.failed", None]
    assert "factory secret" not in json.dumps(responses[0].response)
    assert isinstance(responses[0].exception, RuntimeError)
