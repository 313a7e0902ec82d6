"""Progress delivery through ``Scheduler.stream`` (and its absence under ``dispatch``).

DESIGN.md's bounds: chunks over 8 KiB are cut on a UTF-8 boundary; a call delivers at
most 1 MiB of progress, then one final marker and nothing more; the queue is bounded;
a worker thread waits at most once per run of drops, the loop thread never; each run of
drops reaches the consumer as one ``[tool progress truncated]`` marker counting the
chunks lost; the final result is never dropped. Nothing here depends on timing: floods
are checked by conservation (delivered + dropped == emitted) and memory by tracemalloc.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import tooling._scheduling.scheduler as scheduler_module
from tooling import (
    ExecutionStrategy,
    Scheduler,
    ToolCall,
    ToolContext,
    ToolProgress,
    ToolResponse,
    tool,
)
from tooling._scheduling.progress import ProgressChannel

TRUNCATED = "[tool progress truncated]"
CHUNK_LIMIT = 8 * 1024
BUDGET = 1024 * 1024
FLOOD = 10**6
#: Memory a flood of a million chunks may cost at its peak (keeping them would be ~100 MB).
PEAK_LIMIT = 20 * 1024 * 1024
RENDEZVOUS_S = 10.0

Item = ToolProgress | ToolResponse


# -- helpers -------------------------------------------------------------------------------


async def eventually(condition: Callable[[], bool]) -> None:
    """Wait (on the loop) until ``condition()`` holds; fail after a generous bound."""
    for _ in range(2000):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("condition not reached")


class Tally:
    """One call's progress as the consumer saw it."""

    def __init__(self, items: list[Item], call_id: str) -> None:
        self.items = [i for i in items if i.id == call_id]
        self.progress = [i for i in self.items if isinstance(i, ToolProgress)]
        self.chunks = [p for p in self.progress if not p.dropped]
        self.markers = [p for p in self.progress if p.dropped]
        finals = [i for i in self.items if isinstance(i, ToolResponse) and i.final]
        assert len(finals) == 1, "exactly one final response per call"
        self.final = finals[0]

    @property
    def dropped(self) -> int:
        return sum(m.dropped for m in self.markers)

    @property
    def delivered_bytes(self) -> int:
        return sum(len(c.chunk.encode()) for c in self.chunks)

    def check_markers(self) -> None:
        """Markers look right, and each run of drops gave exactly one of them."""
        for marker in self.markers:
            assert marker.chunk == TRUNCATED and marker.dropped > 0
            assert marker.stream  # the stream of the run's first lost chunk
        kinds = ["marker" if p.dropped else "chunk" for p in self.progress]
        assert ("marker", "marker") not in itertools.pairwise(kinds), "one marker per run"
        assert self.items[-1] is self.final  # nothing for the call after its final response


class _CountingCondition:
    """Wraps the channel's condition variable, counting the waits of producers."""

    def __init__(self, inner: threading.Condition, channel: CountingChannel) -> None:
        self._inner = inner
        self._channel = channel

    def wait_for(self, predicate: Callable[[], bool], timeout: float | None = None) -> bool:
        self._channel.waits += 1
        self._channel.waiting_threads.add(threading.get_ident())
        return self._inner.wait_for(predicate, timeout)

    def notify(self, n: int = 1) -> None:
        self._inner.notify(n)

    def notify_all(self) -> None:
        self._inner.notify_all()


class CountingChannel(ProgressChannel):
    made: list[CountingChannel]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.waits = 0
        self.waiting_threads: set[int] = set()
        self._room = _CountingCondition(self._room, self)  # type: ignore[assignment]
        CountingChannel.made.append(self)


@pytest.fixture
def channels(monkeypatch: pytest.MonkeyPatch) -> list[CountingChannel]:
    """The progress channels the scheduler makes during the test, counting their waits."""
    CountingChannel.made = []
    monkeypatch.setattr(scheduler_module, "ProgressChannel", CountingChannel)
    return CountingChannel.made


async def consume(
    scheduler: Scheduler, batch: list[ToolCall], *, before_reading: Callable[[], Any] | None = None
) -> list[Item]:
    async with scheduler.stream(batch) as items:
        if before_reading is not None:
            await before_reading()
        return [item async for item in items]


# -- items as they happen ------------------------------------------------------------------


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
async def test_progress_arrives_while_the_tool_runs_with_id_and_name(sync):
    seen_sync = threading.Event()
    seen_async = asyncio.Event()

    if sync:

        @tool
        def build(target: str, ctx: ToolContext) -> str:
            ctx.emit_progress("stdout", f"compiling {target}")
            assert seen_sync.wait(RENDEZVOUS_S)  # the consumer saw it: we are still running
            ctx.emit_progress("stderr", "warning: unused variable")
            return "built"

    else:

        @tool
        async def build(target: str, ctx: ToolContext) -> str:
            ctx.emit_progress("stdout", f"compiling {target}")
            await asyncio.wait_for(seen_async.wait(), RENDEZVOUS_S)
            ctx.emit_progress("stderr", "warning: unused variable")
            return "built"

    items: list[Item] = []
    async with Scheduler([build]).stream([ToolCall("b1", "build", {"target": "app"})]) as updates:
        async for item in updates:
            items.append(item)
            seen_sync.set()
            seen_async.set()
    assert items[:2] == [
        ToolProgress(id="b1", name="build", stream="stdout", chunk="compiling app"),
        ToolProgress(id="b1", name="build", stream="stderr", chunk="warning: unused variable"),
    ]
    final = items[2]
    assert isinstance(final, ToolResponse) and final.response == {"result": "built"}
    assert len(items) == 3


async def test_progress_of_concurrent_calls_carries_each_calls_id():
    @tool(read_only=True, concurrency_safe=True)
    async def step(tag: str, ctx: ToolContext) -> str:
        for i in range(5):
            ctx.emit_progress("log", f"{tag}:{i}")
            await asyncio.sleep(0)
        return tag

    @tool(read_only=True, concurrency_safe=True)
    def step_sync(tag: str, ctx: ToolContext) -> str:
        for i in range(5):
            ctx.emit_progress("log", f"{tag}:{i}")
        return tag

    batch = [
        ToolCall("a", "step", {"tag": "a"}),
        ToolCall("b", "step_sync", {"tag": "b"}),
        ToolCall("c", "step", {"tag": "c"}),
    ]
    items = await consume(Scheduler([step, step_sync]), batch)
    for call in batch:
        tally = Tally(items, call.id)
        assert [p.chunk for p in tally.progress] == [f"{call.id}:{i}" for i in range(5)]
        assert all(p.name == call.name for p in tally.progress)
        tally.check_markers()


async def test_progress_from_a_generator_tool_and_its_own_threads():
    @tool(long_running=True)
    def job(ctx: ToolContext) -> Iterator[int]:
        ctx.emit_progress("out", "starting")
        yield 1

        def helper(k: int) -> None:
            for i in range(50):
                ctx.emit_progress("worker", f"{k}-{i}")

        helpers = [threading.Thread(target=helper, args=(k,)) for k in range(3)]
        for h in helpers:
            h.start()
        for h in helpers:
            h.join()
        yield 2

    items = await consume(Scheduler([job]), [ToolCall("j", "job", {})])
    tally = Tally(items, "j")
    tally.check_markers()
    assert len(tally.chunks) + tally.dropped == 151
    assert tally.final.response == {"result": 2}
    assert tally.progress[0].chunk == "starting"


@pytest.mark.parametrize(
    ("text", "expected_bytes"),
    [
        ("a" * 10_000, CHUNK_LIMIT),
        ("é" * 5_000, CHUNK_LIMIT),  # two bytes each
        ("a" + "€" * 3_000, CHUNK_LIMIT - 1),  # three bytes each: 8192 would split one
        ("😀" * 3_000, CHUNK_LIMIT),  # four bytes each
        ("a" + "😀" * 3_000, CHUNK_LIMIT - 3),
        ("short", 5),
        ("x" * CHUNK_LIMIT, CHUNK_LIMIT),
    ],
)
async def test_chunks_over_8_kib_are_cut_on_a_utf8_boundary(text, expected_bytes):
    @tool
    def say(ctx: ToolContext) -> str:
        ctx.emit_progress("out", text)
        return "ok"

    items = await consume(Scheduler([say]), [ToolCall("s", "say", {})])
    [chunk] = Tally(items, "s").chunks
    data = chunk.chunk.encode("utf-8")
    assert len(data) == expected_bytes
    assert text.startswith(chunk.chunk)


# -- floods --------------------------------------------------------------------------------


def _emit_many(ctx: ToolContext, n: int, chunk: str = "x") -> None:
    emit = ctx.emit_progress
    for _ in itertools.repeat(None, n):
        emit("out", chunk)


def flood_tool(sync: bool, done: threading.Event) -> Any:
    if sync:

        @tool
        def flood(n: int, ctx: ToolContext) -> int:
            _emit_many(ctx, n)
            done.set()
            return n

    else:

        @tool
        async def flood(n: int, ctx: ToolContext) -> int:
            _emit_many(ctx, n)  # on the loop thread: never waits; the consumer can't read
            done.set()
            return n

    return flood


async def run_flood(sync: bool, n: int) -> tuple[Tally, list[CountingChannel]]:
    """Flood ``n`` chunks; the consumer reads nothing until the tool has finished."""
    done = threading.Event()
    made_before = len(CountingChannel.made)

    async def read_only_when_done() -> None:
        await eventually(done.is_set)

    items = await consume(
        Scheduler([flood_tool(sync, done)]),
        [ToolCall("f", "flood", {"n": n})],
        before_reading=read_only_when_done,
    )
    return Tally(items, "f"), CountingChannel.made[made_before:]


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
async def test_flood_of_a_million_chunks_is_bounded_and_counted(sync, channels):
    tally, [channel] = await run_flood(sync, FLOOD)
    assert tally.final.response == {"result": FLOOD}  # the final result is never dropped
    tally.check_markers()
    assert len(tally.chunks) + tally.dropped == FLOOD
    assert len(tally.markers) == 1  # one run of drops: the queue never had room again
    assert tally.progress[-1] is tally.markers[0]
    assert len(tally.chunks) < 10_000  # bounded by the queue, not by the flood
    # A worker thread waits once for the whole run; the loop thread never waits.
    assert channel.waits == (1 if sync else 0)
    assert threading.get_ident() not in channel.waiting_threads


#: Chunks in the larger flood of the memory test (DESIGN's 10**6 is
#: ``TOOLING_TEST_FLOOD=1000000``; tracemalloc makes that slow, and the check below does
#: not depend on the size).
MEMORY_FLOOD = int(os.environ.get("TOOLING_TEST_FLOOD", "100000"))


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
async def test_flood_memory_peak_is_bounded_whatever_the_flood(sync, channels):
    await run_flood(sync, 1_000)  # warm up: lazily built specs, threads, caches
    peaks = []
    for n in (MEMORY_FLOOD // 10, MEMORY_FLOOD):
        tracemalloc.start()
        try:
            tally, _ = await run_flood(sync, n)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert len(tally.chunks) + tally.dropped == n
        peaks.append(peak)
    small, large = peaks
    assert large < PEAK_LIMIT
    # Ten times the chunks, not ten times the memory: keeping the extra chunks would
    # take megabytes (a ToolProgress is ~100 bytes); the peaks are tens of kilobytes.
    assert large - small < 1024 * 1024, peaks


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
async def test_slow_consumer_every_chunk_is_delivered_or_counted(sync):
    n = 20_000
    if sync:

        @tool
        def chatter(n: int, ctx: ToolContext) -> int:
            for i in range(n):
                ctx.emit_progress("even" if i % 2 == 0 else "odd", str(i))
            return n

    else:

        @tool
        async def chatter(n: int, ctx: ToolContext) -> int:
            for i in range(n):
                ctx.emit_progress("even" if i % 2 == 0 else "odd", str(i))
                if i % 100 == 0:
                    await asyncio.sleep(0)
            return n

    items: list[Item] = []
    async with Scheduler([chatter]).stream([ToolCall("c", "chatter", {"n": n})]) as updates:
        async for item in updates:
            items.append(item)
            if len(items) % 300 == 0:
                await asyncio.sleep(0.08)  # longer than a producer ever waits
    tally = Tally(items, "c")
    tally.check_markers()
    assert tally.final.response == {"result": n}
    assert len(tally.chunks) + tally.dropped == n
    assert tally.markers  # the pauses did cost chunks
    delivered = [int(c.chunk) for c in tally.chunks]
    assert delivered == sorted(delivered)  # in the order emitted, gaps where dropped
    assert all(c.stream == ("even" if int(c.chunk) % 2 == 0 else "odd") for c in tally.chunks)


async def test_concurrent_floods_are_counted_per_call():
    @tool(read_only=True, concurrency_safe=True)
    def flood(n: int, ctx: ToolContext) -> int:
        _emit_many(ctx, n)
        return n

    @tool(read_only=True, concurrency_safe=True)
    async def flood_async(n: int, ctx: ToolContext) -> int:
        for _ in range(n // 1000):
            _emit_many(ctx, 1000)
            await asyncio.sleep(0)
        return n

    batch = [
        ToolCall("s1", "flood", {"n": 30_000}),
        ToolCall("s2", "flood", {"n": 30_000}),
        ToolCall("a1", "flood_async", {"n": 30_000}),
    ]
    items: list[Item] = []
    async with Scheduler([flood, flood_async]).stream(batch) as updates:
        async for item in updates:
            items.append(item)
            if len(items) % 1000 == 0:
                await asyncio.sleep(0.06)
    for call in batch:
        tally = Tally(items, call.id)
        tally.check_markers()
        assert tally.final.response == {"result": 30_000}
        assert len(tally.chunks) + tally.dropped == 30_000


# -- the per-call budget -------------------------------------------------------------------


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
async def test_budget_then_one_final_marker_and_nothing_more(sync):
    big = "b" * CHUNK_LIMIT
    n = 200  # 1.6 MiB: over the budget

    if sync:

        @tool
        def loud(ctx: ToolContext) -> str:
            for _ in range(n):
                ctx.emit_progress("out", big)
            return "done"

    else:

        @tool
        async def loud(ctx: ToolContext) -> str:
            for i in range(n):
                ctx.emit_progress("out", big)
                if i % 10 == 0:
                    await asyncio.sleep(0)
            return "done"

    @tool
    async def quiet(ctx: ToolContext) -> str:
        ctx.emit_progress("out", "still here")
        return "quiet"

    items = await consume(
        Scheduler([loud, quiet]), [ToolCall("l", "loud", {}), ToolCall("q", "quiet", {})]
    )
    tally = Tally(items, "l")
    tally.check_markers()
    assert tally.final.response == {"result": "done"}
    assert tally.delivered_bytes <= BUDGET
    # The final marker is the last progress of the call; after it, only the response.
    assert tally.progress[-1].dropped > 0
    last_marker = tally.items.index(tally.progress[-1])
    assert tally.items[last_marker + 1 :] == [tally.final]
    if not tally.markers[:-1]:  # no drops for want of room: the budget was used in full
        assert tally.delivered_bytes == BUDGET
    # Another call has its own budget.
    assert [p.chunk for p in Tally(items, "q").chunks] == ["still here"]


async def test_budget_counts_delivered_bytes_not_emitted_ones():
    kib = "k" * 1024

    @tool
    async def talk(ctx: ToolContext) -> str:
        # 2 MiB at once, on the loop thread: the queue fills and most of it is dropped. Had
        # the budget counted emitted bytes, the call would be closed by now.
        _emit_many(ctx, 2_048, kib)
        for _ in range(4_096):  # then 4 MiB at the consumer's pace
            ctx.emit_progress("out", kib)
            await asyncio.sleep(0)
        return "done"

    items = await consume(Scheduler([talk]), [ToolCall("t", "talk", {})])
    tally = Tally(items, "t")
    tally.check_markers()
    assert tally.markers[0].dropped > 0
    assert tally.delivered_bytes == BUDGET  # what was dropped did not count
    assert tally.progress[-1].dropped > 0  # the final marker
    assert tally.final.response == {"result": "done"}


# -- consumers that do not read --------------------------------------------------------------


async def test_a_consumer_that_stops_reading_does_not_block_the_tools(channels):
    finished: list[str] = []
    all_done = threading.Event()

    @tool(read_only=True, concurrency_safe=True)
    def flood(tag: str, ctx: ToolContext) -> str:
        _emit_many(ctx, 100_000)
        finished.append(tag)
        if len(finished) == 2:
            all_done.set()
        return tag

    scheduler = Scheduler([flood])
    batch = [ToolCall("a", "flood", {"tag": "a"}), ToolCall("b", "flood", {"tag": "b"})]
    async with scheduler.stream(batch) as updates:
        first = await anext(aiter(updates))
        assert isinstance(first, ToolProgress)
        # Stop reading; both tools still finish (each waits at most once per run).
        await eventually(all_done.is_set)
        rest = [item async for item in updates]
    items = [first, *rest]
    assert sorted(finished) == ["a", "b"]
    for call in batch:
        tally = Tally(items, call.id)
        tally.check_markers()
        assert len(tally.chunks) + tally.dropped == 100_000
    [channel] = channels
    assert channel.waits <= 4  # a handful of bounded waits, not one per chunk


async def test_leaving_the_block_without_reading_ends_the_dispatch():
    """A consumer that never reads, then leaves: every call ends, nothing is left behind.

    (A generator tool's intermediate responses are never dropped: they wait for room, so
    such a tool pauses at a yield until the consumer reads or leaves.)
    """
    emitted = 0
    cleaned_up: list[str] = []

    @tool(long_running=True)
    def noisy(ctx: ToolContext) -> Iterator[int]:
        nonlocal emitted
        i = 0
        try:
            while True:
                for _ in range(1000):
                    ctx.emit_progress("out", "x")
                    emitted += 1
                yield i
                i += 1
        finally:
            cleaned_up.append("noisy")

    @tool
    async def chatty(ctx: ToolContext) -> str:
        try:
            while True:
                ctx.emit_progress("out", "y")
                await asyncio.sleep(0)
        finally:
            cleaned_up.append("chatty")

    scheduler = Scheduler([noisy, chatty], strategy=ExecutionStrategy.PARALLEL)
    before = asyncio.all_tasks()
    async with scheduler.stream([ToolCall("n", "noisy", {}), ToolCall("c", "chatty", {})]):
        await eventually(lambda: emitted >= 1000)  # never reads a thing
        for _ in range(100):
            await asyncio.sleep(0)  # chatty keeps emitting on the loop, never blocked
    assert asyncio.all_tasks() == before
    await eventually(lambda: sorted(cleaned_up) == ["chatty", "noisy"])


async def test_dispatch_drops_progress_without_waiting(channels):
    @tool
    def flood(n: int, ctx: ToolContext) -> int:
        _emit_many(ctx, n)
        return n

    @tool
    async def flood_async(n: int, ctx: ToolContext) -> int:
        _emit_many(ctx, n)
        return n

    responses = await Scheduler([flood, flood_async]).dispatch(
        [ToolCall("s", "flood", {"n": 100_000}), ToolCall("a", "flood_async", {"n": 100_000})]
    )
    assert [r.response for r in responses] == [{"result": 100_000}, {"result": 100_000}]
    [channel] = channels
    assert channel.waits == 0


async def test_progress_without_a_context_parameter_is_not_needed():
    @tool
    def silent() -> str:
        return "ok"

    items = await consume(Scheduler([silent]), [ToolCall("s", "silent", {})])
    assert [type(i) for i in items] == [ToolResponse]
