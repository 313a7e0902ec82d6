"""AUTO scheduling beyond the flags: conflict keys, folded duplicates, waits, cancellation.

The conflict rule is checked against a model written here: tools block until the test
releases them, so after each release the set of running calls must be exactly the calls
whose earlier conflicting calls have all ended (no wall-clock thresholds).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tooling import ExecutionStrategy, Scheduler, ToolCall, ToolContext, tool
from tooling._scheduling.planning import scheduling_of

AUTO = ExecutionStrategy.AUTO
PARALLEL = ExecutionStrategy.PARALLEL
SEQUENTIAL = ExecutionStrategy.SEQUENTIAL

RENDEZVOUS_S = 10.0


# -- the conflict rule, as a model --------------------------------------------------------


class Gate:
    """Calls that started, ended, and the events that let each one end."""

    def __init__(self) -> None:
        self.started: list[int] = []
        self.ended: set[int] = set()
        self.release: dict[int, asyncio.Event] = {}

    async def hold(self, n: int) -> int:
        assert n not in self.started, f"call {n} started twice"
        self.started.append(n)
        event = self.release.setdefault(n, asyncio.Event())
        await event.wait()
        self.ended.add(n)
        return n


_gate = Gate()


@tool(conflict_key="key")
async def write(key: str, n: int) -> int:
    return await _gate.hold(n)


@tool
async def barrier(n: int) -> int:
    return await _gate.hold(n)


@tool(read_only=True, concurrency_safe=True)
async def read(n: int) -> int:
    return await _gate.hold(n)


@tool(read_only=True, concurrency_safe=True, conflict_key="key")
async def read_keyed(key: str, n: int) -> int:
    return await _gate.hold(n)


@tool(conflict_key=lambda args: None if args["key"] == "-" else f"file:{args['key']}")
async def write_fn(key: str, n: int) -> int:
    return await _gate.hold(n)


_MODEL_TOOLS = [write, barrier, read, read_keyed, write_fn]
_MODEL_SCHEDULER = Scheduler(_MODEL_TOOLS)

CALL = st.one_of(
    st.tuples(st.just("write"), st.sampled_from("ab")),
    st.tuples(st.just("barrier"), st.none()),
    st.tuples(st.just("read"), st.none()),
    st.tuples(st.just("read_keyed"), st.sampled_from("ab")),
    st.tuples(st.just("write_fn"), st.sampled_from("ab-")),
)


def model_conflict(a: tuple[str, str | None], b: tuple[str, str | None]) -> bool:
    """DESIGN.md's rule, written independently of the library."""

    def safe(c: tuple[str, str | None]) -> bool:
        return c[0] in ("read", "read_keyed")

    def key(c: tuple[str, str | None]) -> str | None:
        if c[0] in ("write", "read_keyed"):
            return c[1]
        if c[0] == "write_fn":
            return None if c[1] == "-" else f"file:{c[1]}"
        return None

    if safe(a) and safe(b):
        return False
    ka, kb = key(a), key(b)
    if ka is not None and kb is not None:
        return ka == kb
    return True


async def _settle(gate: Gate) -> None:
    """Let the loop run until nothing more starts (every step is a few loop turns)."""
    seen = -1
    while seen != len(gate.started):
        seen = len(gate.started)
        for _ in range(50):
            await asyncio.sleep(0)


@given(turn=st.lists(CALL, min_size=1, max_size=8), data=st.data())
def test_property_a_call_starts_exactly_when_its_conflicting_earlier_calls_ended(turn, data):
    global _gate
    _gate = gate = Gate()
    batch = [
        ToolCall(f"c{n}", name, {"n": n} if key is None else {"key": key, "n": n})
        for n, (name, key) in enumerate(turn)
    ]

    async def drive() -> None:
        task = asyncio.create_task(_MODEL_SCHEDULER.dispatch(batch))
        try:
            while len(gate.ended) < len(turn):
                await _settle(gate)
                running = set(gate.started) - gate.ended
                expected = {
                    n
                    for n in range(len(turn))
                    if n not in gate.ended
                    and all(m in gate.ended for m in range(n) if model_conflict(turn[m], turn[n]))
                }
                # Nothing starts before the calls it conflicts with ended, and everything
                # that may run is running (non-conflicting calls do overlap).
                assert running == expected, (turn, gate.started, gate.ended)
                pick = data.draw(st.sampled_from(sorted(running)))
                gate.release.setdefault(pick, asyncio.Event()).set()
                for _ in range(1000):
                    if pick in gate.ended:
                        break
                    await asyncio.sleep(0)
            responses = await asyncio.wait_for(task, RENDEZVOUS_S)
        finally:
            task.cancel()
        assert [r.id for r in responses] == [c.id for c in batch]
        assert [r.response for r in responses] == [{"result": n} for n in range(len(turn))]

    asyncio.run(drive())


# -- conflict keys ---------------------------------------------------------------------------


async def test_writes_to_different_keys_overlap_and_one_key_keeps_call_order():
    order: list[str] = []
    arrived: dict[str, int] = {}
    everyone = asyncio.Event()
    keys = ["a", "b", "c"]

    @tool(conflict_key="path")
    async def save(path: str, text: str) -> str:
        order.append(f"start {path} {text}")
        if text == "1":
            arrived[path] = 1
            if len(arrived) == len(keys):
                everyone.set()
            # The first write to each path waits until the first writes to every other
            # path started: only possible if they overlap.
            await asyncio.wait_for(everyone.wait(), RENDEZVOUS_S)
        order.append(f"end {path} {text}")
        return path

    batch = [ToolCall(f"{k}{t}", "save", {"path": k, "text": t}) for t in "12" for k in keys]
    responses = await Scheduler([save]).dispatch(batch)
    assert [r.error for r in responses] == [None] * 6
    for k in keys:  # the second write to a path starts after the first one ended
        assert order.index(f"end {k} 1") < order.index(f"start {k} 2")


async def test_keyed_writes_on_twenty_keys_all_run_at_once():
    running = 0
    everyone = asyncio.Event()

    @tool(conflict_key="key")
    async def nap(key: str) -> str:
        nonlocal running
        running += 1
        if running == 20:
            everyone.set()
        # Each call waits until all twenty are in: only possible if none waits for another.
        await asyncio.wait_for(everyone.wait(), RENDEZVOUS_S)
        return key

    batch = [ToolCall(f"c{i}", "nap", {"key": f"k{i}"}) for i in range(20)]
    responses = await Scheduler([nap]).dispatch(batch)
    assert [r.error for r in responses] == [None] * 20
    assert [r.response["result"] for r in responses] == [f"k{i}" for i in range(20)]


@pytest.mark.parametrize("strategy", [PARALLEL, SEQUENTIAL])
async def test_parallel_and_sequential_ignore_keys(strategy):
    running = 0
    peak = 0

    @tool(conflict_key="key")
    async def touch(key: str) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        return key

    same_key = [ToolCall(f"c{i}", "touch", {"key": "one"}) for i in range(4)]
    await Scheduler([touch], strategy=strategy).dispatch(same_key)
    assert peak == (4 if strategy is PARALLEL else 1)


async def test_a_key_function_returning_none_makes_the_call_a_barrier():
    trace: list[str] = []

    @tool(conflict_key=lambda args: args["target"] or None)
    async def put(target: str, n: int) -> int:
        trace.append(f"start {n}")
        await asyncio.sleep(0.01)
        trace.append(f"end {n}")
        return n

    batch = [
        ToolCall("c0", "put", {"target": "a", "n": 0}),
        ToolCall("c1", "put", {"target": "", "n": 1}),
        ToolCall("c2", "put", {"target": "b", "n": 2}),
    ]
    await Scheduler([put]).dispatch(batch)
    assert trace == ["start 0", "end 0", "start 1", "end 1", "start 2", "end 2"]


async def test_a_failing_key_function_is_logged_and_the_call_runs_as_a_barrier(caplog):
    def broken(args: dict[str, Any]) -> str:
        raise RuntimeError("no key today")

    @tool(conflict_key=broken)
    async def put(n: int) -> int:
        return n

    with caplog.at_level(logging.WARNING, logger="tooling"):
        responses = await Scheduler([put]).dispatch([ToolCall("c0", "put", {"n": 1})])
    assert responses[0].response == {"result": 1}
    assert "conflict_key function failed" in caplog.text


def test_conflict_key_must_name_a_parameter():
    with pytest.raises(TypeError, match="conflict_key 'paht' is not one of its parameters"):

        @tool(conflict_key="paht")
        def save(path: str) -> None: ...

    with pytest.raises(TypeError, match="parameter name or a function"):

        @tool(conflict_key=3)  # type: ignore[arg-type]
        def save2(path: str) -> None: ...


async def test_invalid_arguments_to_a_keyed_tool_fail_that_call_only():
    @tool(conflict_key="path")
    async def save(path: str) -> str:
        return path

    batch = [ToolCall("c0", "save", {"path": 3}), ToolCall("c1", "save", {"path": "x"})]
    responses = await Scheduler([save]).dispatch(batch)
    assert responses[0].error is not None
    assert responses[0].error.code == "tool.invalid_arguments"
    assert responses[1].response == {"result": "x"}


# -- what each call waited for ---------------------------------------------------------------


async def test_records_say_which_calls_each_call_waited_for_and_why():
    @tool(conflict_key="key")
    async def put(key: str) -> str:
        return key

    @tool
    async def reset() -> str:
        return "ok"

    batch = [
        ToolCall("w1", "put", {"key": "a"}),
        ToolCall("w2", "put", {"key": "b"}),
        ToolCall("w3", "put", {"key": "a"}),
        ToolCall("r", "reset", {}),
        ToolCall("w4", "put", {"key": "b"}),
    ]
    scheduler = Scheduler([put, reset])
    async with scheduler.stream(batch) as items:
        async for _ in items:
            pass
        records = items._run.records
    by_id = {r.call_id: r for r in records if r is not None}
    assert by_id["w1"].waited_for == ()
    assert by_id["w2"].waited_for == ()
    assert (by_id["w3"].waited_for, by_id["w3"].wait_reasons) == (("w1",), ("conflict_key",))
    assert by_id["r"].waited_for == ("w1", "w2", "w3")
    assert set(by_id["r"].wait_reasons) == {"barrier"}
    assert (by_id["w4"].waited_for, by_id["w4"].wait_reasons) == (("r",), ("barrier",))
    assert by_id["w3"].conflict_key == "a"
    for record in by_id.values():
        assert record.started_at is not None and record.ended_at is not None
        assert record.queued_at <= record.started_at <= record.ended_at


# -- the hint when flags are missing ---------------------------------------------------------


async def test_serialised_calls_of_a_tool_without_flags_are_pointed_out_once(caplog):
    @tool
    async def fetch(url: str) -> str:
        return url

    @tool(read_only=True)
    async def peek(url: str) -> str:
        return url

    scheduler = Scheduler([fetch, peek])
    batch = [ToolCall(f"c{i}", "fetch", {"url": str(i)}) for i in range(3)]
    with caplog.at_level(logging.INFO, logger="tooling"):
        await scheduler.dispatch([ToolCall("only", "fetch", {"url": "x"})])
        assert "fetch" not in caplog.text  # one call: nothing was serialised
        await scheduler.dispatch(batch)
        await scheduler.dispatch(batch)
        await scheduler.dispatch([ToolCall(f"p{i}", "peek", {"url": str(i)}) for i in range(2)])
    hints = [r for r in caplog.records if "ran one after the other" in r.getMessage()]
    assert [r.levelno for r in hints] == [logging.INFO, logging.INFO]
    fetch_hint, peek_hint = (r.getMessage() for r in hints)
    assert "'fetch'" in fetch_hint and "read_only=True, concurrency_safe=True" in fetch_hint
    assert "conflict_key=" in fetch_hint
    assert "'peek'" in peek_hint and "concurrency_safe=True" in peek_hint


async def test_no_hint_for_keyed_or_safe_tools(caplog):
    @tool(conflict_key="path")
    async def save(path: str) -> str:
        return path

    batch = [ToolCall(f"c{i}", "save", {"path": "same"}) for i in range(3)]
    with caplog.at_level(logging.INFO, logger="tooling"):
        await Scheduler([save]).dispatch(batch)
    assert "ran one after the other" not in caplog.text


def test_scheduling_is_described_for_inspect():
    @tool
    def plain(x: int) -> int:
        return x

    @tool(read_only=True, concurrency_safe=True)
    def safe(x: int) -> int:
        return x

    @tool(conflict_key="path")
    def keyed(path: str) -> str:
        return path

    assert scheduling_of(plain)["mode"] == "barrier"
    assert "conflict_key=" in scheduling_of(plain)["summary"]
    assert scheduling_of(safe)["mode"] == "concurrent"
    assert scheduling_of(keyed) == {
        "mode": "keyed",
        "conflict_key": "path",
        "isolation": "thread",
        "summary": scheduling_of(keyed)["summary"],
    }
    assert "parameter 'path'" in scheduling_of(keyed)["summary"]


# -- folding ------------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", list(ExecutionStrategy))
async def test_identical_idempotent_reads_run_once_and_answer_every_id(strategy):
    runs = 0

    @tool(read_only=True, idempotent=True)
    async def lookup(city: str, units: str = "metric") -> dict[str, Any]:
        nonlocal runs
        runs += 1
        return {"city": city, "units": units}

    batch = [ToolCall(f"c{i}", "lookup", {"city": "Oslo"}) for i in range(9)]
    batch.append(ToolCall("c9", "lookup", {"city": "Oslo", "units": "metric"}))  # defaults
    responses = await Scheduler([lookup], strategy=strategy).dispatch(batch)
    assert runs == 1
    assert [r.id for r in responses] == [f"c{i}" for i in range(10)]
    assert all(r.response == {"city": "Oslo", "units": "metric"} for r in responses)
    assert all(r.folded_ids == tuple(f"c{i}" for i in range(10)) for r in responses)


async def test_folded_calls_stream_one_final_each():
    @tool(read_only=True, idempotent=True)
    async def lookup(city: str) -> str:
        return city.upper()

    batch = [ToolCall(f"c{i}", "lookup", {"city": "oslo"}) for i in range(3)]
    async with Scheduler([lookup]).stream(batch) as items:
        finals = [item.id async for item in items if getattr(item, "final", False)]
    assert sorted(finals) == ["c0", "c1", "c2"]


async def test_non_idempotent_or_different_calls_are_never_folded():
    runs: list[str] = []

    @tool(read_only=True, concurrency_safe=True)
    async def peek(city: str) -> str:
        runs.append(f"peek {city}")
        return city

    @tool(read_only=True, idempotent=True)
    async def lookup(city: str) -> str:
        runs.append(f"lookup {city}")
        return city

    batch = [
        ToolCall("p0", "peek", {"city": "Oslo"}),
        ToolCall("p1", "peek", {"city": "Oslo"}),
        ToolCall("l0", "lookup", {"city": "Oslo"}),
        ToolCall("l1", "lookup", {"city": "Rome"}),
    ]
    responses = await Scheduler([peek, lookup]).dispatch(batch)
    assert sorted(runs) == ["lookup Oslo", "lookup Rome", "peek Oslo", "peek Oslo"]
    assert all(r.folded_ids == () for r in responses)


async def test_a_read_after_a_conflicting_write_is_not_folded_into_the_read_before_it():
    store = {"x": 0}

    @tool(read_only=True, idempotent=True)
    async def get(name: str) -> int:
        return store[name]

    @tool
    async def bump(name: str) -> int:
        store[name] += 1
        return store[name]

    batch = [
        ToolCall("g0", "get", {"name": "x"}),
        ToolCall("g1", "get", {"name": "x"}),
        ToolCall("b", "bump", {"name": "x"}),
        ToolCall("g2", "get", {"name": "x"}),
    ]
    responses = await Scheduler([get, bump]).dispatch(batch)
    assert [r.response["result"] for r in responses] == [0, 0, 1, 1]
    assert responses[0].folded_ids == ("g0", "g1")
    assert responses[3].folded_ids == ()


async def test_a_folded_failure_answers_every_call_with_the_error():
    runs = 0

    @tool(read_only=True, idempotent=True)
    async def lookup(city: str) -> str:
        nonlocal runs
        runs += 1
        raise ValueError("down")

    batch = [ToolCall(f"c{i}", "lookup", {"city": "Oslo"}) for i in range(3)]
    responses = await Scheduler([lookup]).dispatch(batch)
    assert runs == 1
    assert [r.error.code if r.error else None for r in responses] == ["tool.failed"] * 3


# -- cancellation reaches every call ---------------------------------------------------------


async def test_cancelling_a_dispatch_reaches_async_and_thread_calls_without_waiting():
    in_flight = threading.Barrier(3, timeout=RENDEZVOUS_S)
    saw_cancel = threading.Event()
    async_cancelled = asyncio.Event()
    started = asyncio.Event()
    release = threading.Event()  # the thread that ignores the cancel runs until this
    returned = threading.Event()

    @tool
    def polls(tool_context: ToolContext) -> str:
        in_flight.wait()
        while not tool_context.cancelled:
            time.sleep(0.01)
        saw_cancel.set()
        return "stopped early"

    @tool
    def ignores(tool_context: ToolContext) -> str:
        in_flight.wait()
        release.wait(RENDEZVOUS_S)
        returned.set()
        return "late"

    @tool
    async def sleeps() -> str:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            async_cancelled.set()
            raise
        return "late"

    scheduler = Scheduler([polls, ignores, sleeps], strategy=PARALLEL)
    batch = [ToolCall("p", "polls", {}), ToolCall("i", "ignores", {}), ToolCall("s", "sleeps", {})]
    task = asyncio.create_task(scheduler.dispatch(batch))
    await asyncio.wait_for(started.wait(), RENDEZVOUS_S)
    await asyncio.to_thread(in_flight.wait)
    task.cancel()
    try:
        with pytest.raises(asyncio.CancelledError):
            await task
        # The dispatch gave up without waiting for the thread that ignores the cancel
        # (it is still held); the async call was cancelled; the polling one saw it.
        assert not returned.is_set()
        assert async_cancelled.is_set()
        assert await asyncio.to_thread(saw_cancel.wait, RENDEZVOUS_S)
    finally:
        release.set()


async def test_a_timed_out_thread_call_sees_cancelled():
    stopped = threading.Event()

    @tool(timeout=0.2)
    def crawl(tool_context: ToolContext) -> str:
        while not tool_context.cancelled:
            time.sleep(0.01)
        stopped.set()
        return "stopped"

    responses = await Scheduler([crawl]).dispatch([ToolCall("c", "crawl", {})])
    assert responses[0].error is not None and responses[0].error.code == "tool.timeout"
    assert await asyncio.to_thread(stopped.wait, RENDEZVOUS_S)


def test_a_fresh_context_is_not_cancelled():
    from tooling import SimpleToolContext

    assert SimpleToolContext().cancelled is False
