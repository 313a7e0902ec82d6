"""``Scheduler``: strategies, responses, threads, generator tools, confirmation, scopes, state.

Concurrency is proven without wall-clock thresholds: a rendezvous (a barrier or events,
with a generous timeout) proves that calls overlap; an in-flight counter proves they don't.
Faults (timeouts, abandoned threads, cancellation, oversized results) are in
``test_scheduler_faults.py``; progress delivery is in ``test_progress.py``.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import hashlib
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tooling import (
    BaseTool,
    Confirmation,
    ExecutionStrategy,
    Scheduler,
    SimpleToolContext,
    ToolCall,
    ToolContext,
    ToolError,
    ToolProgress,
    ToolResponse,
    tool,
)

AUTO = ExecutionStrategy.AUTO
PARALLEL = ExecutionStrategy.PARALLEL
SEQUENTIAL = ExecutionStrategy.SEQUENTIAL

#: How long a rendezvous waits for its partners before the test fails (never reached when
#: the scheduler is right).
RENDEZVOUS_S = 10.0


# -- helpers -------------------------------------------------------------------------------


class Trace:
    """Start/end events of calls, in the order they happened (thread-safe)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0

    def start(self, i: int) -> None:
        with self.lock:
            self.events.append(("start", i))
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)

    def end(self, i: int) -> None:
        with self.lock:
            self.events.append(("end", i))
            self.in_flight -= 1

    def position(self, kind: str, i: int) -> int:
        return self.events.index((kind, i))

    def started(self) -> list[int]:
        return [i for kind, i in self.events if kind == "start"]

    def overlapped(self, i: int, j: int) -> bool:
        """Whether calls ``i`` and ``j`` were in flight at the same time."""
        si, ei = self.position("start", i), self.position("end", i)
        sj, ej = self.position("start", j), self.position("end", j)
        return si < ej and sj < ei


def ids(responses: list[ToolResponse]) -> list[str]:
    return [r.id for r in responses]


def codes(responses: list[ToolResponse]) -> list[str | None]:
    return [r.error.code if r.error is not None else None for r in responses]


def calls(*specs: tuple[str, dict[str, Any]]) -> list[ToolCall]:
    return [ToolCall(f"c{i}", name, args) for i, (name, args) in enumerate(specs)]


def expected_fingerprint(name: str, validated_args: dict[str, Any]) -> str:
    """DESIGN.md's fingerprint, computed here independently of the library."""
    text = json.dumps(validated_args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(f"{name}\n{text}".encode()).hexdigest()


# -- strategies ----------------------------------------------------------------------------


def make_traced_tools(trace: Trace) -> dict[str, Any]:
    """Async tools that record their start and end; ``i`` is the call's index."""

    @tool(read_only=True, concurrency_safe=True)
    async def safe(i: int) -> int:
        trace.start(i)
        await asyncio.sleep(0.001)
        trace.end(i)
        return i

    @tool
    async def unsafe(i: int) -> int:
        trace.start(i)
        await asyncio.sleep(0.001)
        trace.end(i)
        return i

    @tool(read_only=True)
    async def read_only_only(i: int) -> int:
        trace.start(i)
        await asyncio.sleep(0.001)
        trace.end(i)
        return i

    @tool(concurrency_safe=True)
    async def safe_but_writes(i: int) -> int:
        trace.start(i)
        await asyncio.sleep(0.001)
        trace.end(i)
        return i

    return {t.name: t for t in (safe, unsafe, read_only_only, safe_but_writes)}


async def test_sequential_never_overlaps_and_runs_in_call_order():
    trace = Trace()
    tools = make_traced_tools(trace)
    scheduler = Scheduler(tools.values(), strategy=SEQUENTIAL)
    # Even tools that AUTO would run together run one by one.
    batch = calls(*[("safe", {"i": i}) for i in range(6)])
    responses = await scheduler.dispatch(batch)
    assert trace.peak == 1
    assert trace.events == [e for i in range(6) for e in (("start", i), ("end", i))]
    assert [r.response for r in responses] == [{"result": i} for i in range(6)]


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
async def test_parallel_overlaps_everything_whatever_the_flags(sync):
    n = 6
    if sync:
        barrier = threading.Barrier(n, timeout=RENDEZVOUS_S)

        @tool  # default flags: AUTO would run these one by one
        def meet(i: int) -> int:
            barrier.wait()
            return i

    else:
        arrived = 0
        everyone = asyncio.Event()

        @tool
        async def meet(i: int) -> int:
            nonlocal arrived
            arrived += 1
            if arrived == n:
                everyone.set()
            await asyncio.wait_for(everyone.wait(), RENDEZVOUS_S)
            return i

    scheduler = Scheduler([meet], strategy=PARALLEL)
    responses = await scheduler.dispatch(calls(*[("meet", {"i": i}) for i in range(n)]))
    assert codes(responses) == [None] * n
    assert [r.response["result"] for r in responses] == list(range(n))


async def test_auto_runs_safe_neighbours_together_and_barriers_alone():
    """``[read a, read b, write c, read d]``: a and b together, then c, then d."""
    trace = Trace()
    reading = 0
    two_reading = asyncio.Event()

    @tool(read_only=True, concurrency_safe=True)
    async def read(i: int, partners: int = 1) -> int:
        nonlocal reading
        trace.start(i)
        reading += 1
        if reading >= partners:
            two_reading.set()
        if partners > 1:  # a rendezvous: fails unless the partner is in flight too
            await asyncio.wait_for(two_reading.wait(), RENDEZVOUS_S)
        await asyncio.sleep(0.001)
        reading -= 1
        trace.end(i)
        return i

    @tool
    async def write(i: int) -> int:
        trace.start(i)
        await asyncio.sleep(0.001)
        trace.end(i)
        return i

    scheduler = Scheduler([read, write])  # AUTO is the default
    assert scheduler.strategy is AUTO
    batch = calls(
        ("read", {"i": 0, "partners": 2}),
        ("read", {"i": 1, "partners": 2}),
        ("write", {"i": 2}),
        ("read", {"i": 3}),
    )
    responses = await scheduler.dispatch(batch)
    assert codes(responses) == [None] * 4
    assert trace.overlapped(0, 1)
    # c starts after a and b finished; d starts after c finished.
    assert trace.position("start", 2) > max(trace.position("end", 0), trace.position("end", 1))
    assert trace.position("start", 3) > trace.position("end", 2)


@pytest.mark.parametrize("name", ["unsafe", "read_only_only", "safe_but_writes"])
async def test_auto_with_default_or_partial_flags_is_sequential(name):
    trace = Trace()
    scheduler = Scheduler(make_traced_tools(trace).values())
    responses = await scheduler.dispatch(calls(*[(name, {"i": i}) for i in range(5)]))
    assert codes(responses) == [None] * 5
    assert trace.peak == 1
    assert trace.events == [e for i in range(5) for e in (("start", i), ("end", i))]


async def test_auto_unknown_tool_is_a_barrier():
    trace = Trace()
    scheduler = Scheduler(make_traced_tools(trace).values())
    batch = calls(("safe", {"i": 0}), ("safe", {"i": 1}), ("nope", {}), ("safe", {"i": 3}))
    responses = await scheduler.dispatch(batch)
    assert codes(responses) == [None, None, "tool.not_found", None]
    assert trace.overlapped(0, 1)  # sanity: safe neighbours do run together
    assert trace.position("start", 3) > max(trace.position("end", 0), trace.position("end", 1))


@pytest.mark.parametrize("strategy", [PARALLEL, AUTO])
@pytest.mark.parametrize("limit", [1, 3])
async def test_max_concurrency_is_respected(strategy, limit):
    trace = Trace()
    scheduler = Scheduler(
        make_traced_tools(trace).values(), strategy=strategy, max_concurrency=limit
    )
    responses = await scheduler.dispatch(calls(*[("safe", {"i": i}) for i in range(10)]))
    assert codes(responses) == [None] * 10
    assert trace.peak == limit  # never more; and with asyncio sleeps, the limit is reached


async def test_max_concurrency_is_respected_by_sync_tools():
    trace = Trace()

    @tool(read_only=True, concurrency_safe=True)
    def blocking(i: int) -> int:
        trace.start(i)
        time.sleep(0.002)
        trace.end(i)
        return i

    scheduler = Scheduler([blocking], strategy=PARALLEL, max_concurrency=2)
    responses = await scheduler.dispatch(calls(*[("blocking", {"i": i}) for i in range(8)]))
    assert codes(responses) == [None] * 8
    assert trace.peak <= 2


def test_max_concurrency_must_be_positive():
    with pytest.raises(ValueError):
        Scheduler([], max_concurrency=0)


def test_duplicate_tool_names_are_an_error_at_construction():
    @tool(name="same")
    def one() -> int:
        return 1

    @tool(name="same")
    def two() -> int:
        return 2

    with pytest.raises(ValueError, match="same"):
        Scheduler([one, two])


# -- a property: any mix of calls obeys its strategy -----------------------------------------

KINDS = ["safe", "safe_sync", "unsafe", "unsafe_sync", "fail", "fail_unsafe", "unknown"]
#: Kinds AUTO treats as barriers (an unknown tool is one too).
BARRIERS = {"unsafe", "unsafe_sync", "fail_unsafe", "unknown"}

_property_trace = Trace()


@tool(read_only=True, concurrency_safe=True)
async def p_safe(i: int, delay: bool) -> int:
    _property_trace.start(i)
    await asyncio.sleep(0.0002 if delay else 0)
    _property_trace.end(i)
    return i


@tool(read_only=True, concurrency_safe=True)
def p_safe_sync(i: int, delay: bool) -> int:
    _property_trace.start(i)
    time.sleep(0.0002 if delay else 0)
    _property_trace.end(i)
    return i


@tool
async def p_unsafe(i: int, delay: bool) -> int:
    _property_trace.start(i)
    await asyncio.sleep(0.0002 if delay else 0)
    _property_trace.end(i)
    return i


@tool
def p_unsafe_sync(i: int, delay: bool) -> int:
    _property_trace.start(i)
    time.sleep(0.0002 if delay else 0)
    _property_trace.end(i)
    return i


@tool(read_only=True, concurrency_safe=True)
async def p_fail(i: int, delay: bool) -> int:
    _property_trace.start(i)
    await asyncio.sleep(0.0002 if delay else 0)
    _property_trace.end(i)
    raise ValueError("boom")


@tool
async def p_fail_unsafe(i: int, delay: bool) -> int:
    _property_trace.start(i)
    await asyncio.sleep(0.0002 if delay else 0)
    _property_trace.end(i)
    raise ValueError("boom")


_PROPERTY_TOOLS = [p_safe, p_safe_sync, p_unsafe, p_unsafe_sync, p_fail, p_fail_unsafe]
_PROPERTY_SCHEDULERS = {
    (strategy, limit): Scheduler(_PROPERTY_TOOLS, strategy=strategy, max_concurrency=limit)
    for strategy in ExecutionStrategy
    for limit in (None, 1, 2)
}


@given(
    strategy=st.sampled_from(list(ExecutionStrategy)),
    limit=st.sampled_from([None, 1, 2]),
    plan=st.lists(st.tuples(st.sampled_from(KINDS), st.booleans()), max_size=9),
)
def test_property_any_mix_of_calls_obeys_the_strategy(strategy, limit, plan):
    global _property_trace
    _property_trace = trace = Trace()
    scheduler = _PROPERTY_SCHEDULERS[strategy, limit]
    batch = [
        ToolCall(f"id-{i}", "missing" if kind == "unknown" else f"p_{kind}", {"i": i, "delay": d})
        for i, (kind, d) in enumerate(plan)
    ]
    responses = asyncio.run(scheduler.dispatch(batch))

    # Responses: one per call, in call order, ids matching, the right outcome.
    assert ids(responses) == [c.id for c in batch]
    assert [r.name for r in responses] == [c.name for c in batch]
    for (kind, _), response in zip(plan, responses, strict=True):
        if kind == "unknown":
            assert response.error is not None and response.error.code == "tool.not_found"
        elif kind.startswith("fail"):
            assert response.error is not None and response.error.code == "tool.failed"
        else:
            assert response.error is None
    ran = [i for i, (kind, _) in enumerate(plan) if kind != "unknown"]
    assert sorted(trace.started()) == ran  # every known call ran exactly once
    if limit is not None:
        assert trace.peak <= limit

    start = {i: trace.position("start", i) for i in ran}
    end = {i: trace.position("end", i) for i in ran}
    if strategy is SEQUENTIAL:
        assert trace.peak <= 1
        assert trace.started() == ran  # in call order
    elif strategy is AUTO:
        for b, (kind, _) in enumerate(plan):
            if kind not in BARRIERS:
                continue
            earlier = [i for i in ran if i < b]
            later = [j for j in ran if j > b]
            # Every later call starts after every earlier call finished (the barrier sits
            # between them, whether it ran or was an unknown tool)...
            for i in earlier:
                for j in later:
                    assert end[i] < start[j], (plan, trace.events)
            # ...and a barrier that ran overlapped nothing.
            if b in start:
                assert all(end[i] < start[b] for i in earlier), (plan, trace.events)
                assert all(end[b] < start[j] for j in later), (plan, trace.events)


# -- responses -----------------------------------------------------------------------------


async def test_responses_come_back_in_call_order_with_their_ids():
    finished: list[int] = []
    events = [asyncio.Event() for _ in range(4)]

    @tool(read_only=True, concurrency_safe=True)
    async def step(i: int) -> int:
        # Finish in reverse call order: call i waits for call i + 1 to finish.
        if i + 1 < len(events):
            await asyncio.wait_for(events[i + 1].wait(), RENDEZVOUS_S)
        finished.append(i)
        events[i].set()
        return i

    scheduler = Scheduler([step], strategy=PARALLEL)
    batch = [ToolCall(f"call-{i}", "step", {"i": i}) for i in range(4)]
    responses = await scheduler.dispatch(batch)
    assert finished == [3, 2, 1, 0]
    assert ids(responses) == ["call-0", "call-1", "call-2", "call-3"]
    assert [r.response for r in responses] == [{"result": i} for i in range(4)]
    assert all(r.final and r.name == "step" and r.duration_s >= 0 for r in responses)


@pytest.mark.parametrize("strategy", list(ExecutionStrategy))
async def test_duplicate_ids_are_an_error_for_the_later_calls(strategy):
    seen: list[int] = []

    @tool(read_only=True, concurrency_safe=True)
    async def echo(i: int) -> int:
        seen.append(i)
        return i

    scheduler = Scheduler([echo], strategy=strategy)
    batch = [
        ToolCall("x", "echo", {"i": 0}),
        ToolCall("y", "echo", {"i": 1}),
        ToolCall("x", "echo", {"i": 2}),
        ToolCall("x", "echo", {"i": 3}),
    ]
    responses = await scheduler.dispatch(batch)
    assert ids(responses) == ["x", "y", "x", "x"]
    assert codes(responses) == [None, None, "tool.duplicate_call", "tool.duplicate_call"]
    assert sorted(seen) == [0, 1]
    assert responses[2].response["status"] == "error"
    assert "x" in responses[2].response["error"]["message"]


async def test_unknown_tool_is_told_which_tools_there_are():
    @tool
    def alpha() -> int:
        return 1

    @tool
    def beta() -> int:
        return 2

    scheduler = Scheduler([alpha, beta])
    responses = await scheduler.dispatch(calls(("gamma", {}), ("alpha", {})))
    assert codes(responses) == ["tool.not_found", None]
    error = responses[0].response["error"]
    assert error["code"] == "tool.not_found"
    assert "gamma" in error["message"] and "alpha" in error["message"]
    assert "beta" in error["message"]
    assert responses[1].response == {"result": 1}


@pytest.mark.parametrize(
    "args",
    [{"n": "abc"}, {}, {"n": 1, "extra": 2}, '{"n": "abc"}', "{not json"],
    ids=["wrong-type", "missing", "unknown", "json-wrong-type", "malformed-json"],
)
async def test_invalid_arguments_are_told_in_full(args):
    ran = []

    @tool
    def double(n: int) -> int:
        ran.append(n)
        return 2 * n

    scheduler = Scheduler([double])
    responses = await scheduler.dispatch(
        [ToolCall("a", "double", args), ToolCall("b", "double", {"n": 2})]
    )
    bad, good = responses
    assert bad.error is not None and bad.error.code == "tool.invalid_arguments"
    body = bad.response
    assert body["status"] == "error" and body["error"]["code"] == "tool.invalid_arguments"
    assert body["error"]["details"]  # one entry per problem
    assert all("loc" in d and "msg" in d and "type" in d for d in body["error"]["details"])
    assert good.response == {"result": 4}
    assert ran == [2]


@pytest.mark.parametrize("strategy", list(ExecutionStrategy))
async def test_one_failing_call_does_not_affect_the_others(strategy):
    @tool(read_only=True, concurrency_safe=True)
    async def ok(i: int) -> int:
        await asyncio.sleep(0)
        return i

    @tool(read_only=True, concurrency_safe=True)
    async def broken(i: int) -> int:
        await asyncio.sleep(0)
        raise RuntimeError("nope")

    @tool(read_only=True, concurrency_safe=True)
    def broken_sync(i: int) -> int:
        raise KeyError("nope")

    scheduler = Scheduler([ok, broken, broken_sync], strategy=strategy)
    batch = calls(
        ("ok", {"i": 0}),
        ("broken", {"i": 1}),
        ("ok", {"i": 2}),
        ("broken_sync", {"i": 3}),
        ("ok", {"i": "bad"}),
        ("nope", {}),
        ("ok", {"i": 6}),
    )
    responses = await scheduler.dispatch(batch)
    assert codes(responses) == [
        None,
        "tool.failed",
        None,
        "tool.failed",
        "tool.invalid_arguments",
        "tool.not_found",
        None,
    ]
    assert [responses[i].response for i in (0, 2, 6)] == [{"result": i} for i in (0, 2, 6)]


async def test_exception_is_kept_and_its_text_hidden_from_the_model():
    raised: list[BaseException] = []

    @tool
    async def leaky() -> int:
        exc = ValueError("password=hunter2")
        raised.append(exc)
        raise exc

    [response] = await Scheduler([leaky]).dispatch([ToolCall("1", "leaky", {})])
    assert response.exception is raised[0]
    assert response.error is not None and response.error.code == "tool.failed"
    told = json.dumps(response.response)
    assert "hunter2" not in told
    assert "ValueError" in response.response["error"]["message"]
    assert response.response["status"] == "error"


async def test_sync_exception_is_kept_and_its_text_hidden_from_the_model():
    raised: list[BaseException] = []

    @tool
    def leaky() -> int:
        exc = OSError("/home/alice/secret.txt")
        raised.append(exc)
        raise exc

    [response] = await Scheduler([leaky]).dispatch([ToolCall("1", "leaky", {})])
    assert response.exception is raised[0]
    assert "alice" not in json.dumps(response.response)
    assert "OSError" in response.response["error"]["message"]


async def test_expose_errors_tells_the_exception_text():
    @tool
    async def leaky() -> int:
        raise ValueError("password=hunter2")

    [response] = await Scheduler([leaky], expose_errors=True).dispatch([ToolCall("1", "leaky", {})])
    assert response.error is not None and response.error.code == "tool.failed"
    assert "hunter2" in response.response["error"]["message"]
    assert isinstance(response.exception, ValueError)


class HandWritten(BaseTool):
    """A hand-written tool whose ``run`` raises a plain exception."""

    name = "hand"
    description = "Fails."

    async def run(self, args: Any, ctx: ToolContext | None = None) -> dict[str, Any]:
        raise LookupError("token=abc123")


@pytest.mark.parametrize("expose", [False, True])
async def test_hand_written_tool_failure_is_hidden_unless_exposed(expose):
    [response] = await Scheduler([HandWritten()], expose_errors=expose).dispatch(
        [ToolCall("1", "hand", {})]
    )
    assert response.error is not None and response.error.code == "tool.failed"
    assert isinstance(response.exception, LookupError)
    assert ("abc123" in json.dumps(response.response)) is expose
    assert "LookupError" in response.response["error"]["message"]


@pytest.mark.parametrize("expose", [False, True])
async def test_a_tools_own_tool_error_is_told_with_its_message(expose):
    errors: list[ToolError] = []

    @tool
    async def find_order(order_id: int) -> dict[str, Any]:
        try:
            raise KeyError(order_id)
        except KeyError as exc:
            error = ToolError(f"order {order_id} does not exist", code="orders.not_found")
            errors.append(error)
            raise error from exc

    @tool
    async def plain_failure() -> int:
        # A ToolError with the default code, chained to an internal exception.
        error = ToolError("the upstream service is down; try again later")
        errors.append(error)
        raise error from ConnectionError("10.0.0.7:5432 refused")

    scheduler = Scheduler([find_order, plain_failure], expose_errors=expose)
    first, second = await scheduler.dispatch(
        [ToolCall("1", "find_order", {"order_id": 7}), ToolCall("2", "plain_failure", {})]
    )
    assert first.response == {
        "status": "error",
        "error": {"code": "orders.not_found", "message": "order 7 does not exist"},
    }
    assert first.error is errors[0]
    assert second.response["error"] == {
        "code": "tool.failed",
        "message": "the upstream service is down; try again later",
    }
    assert second.error is not None and second.error.message == errors[1].message


async def test_a_tools_own_timeout_error_is_failed_not_timeout():
    @tool(timeout=30)
    async def times_out_itself() -> int:
        raise TimeoutError("upstream timed out")

    @tool(timeout=30)
    def times_out_itself_sync() -> int:
        raise TimeoutError("upstream timed out")

    scheduler = Scheduler([times_out_itself, times_out_itself_sync], timeout=30)
    responses = await scheduler.dispatch(
        calls(("times_out_itself", {}), ("times_out_itself_sync", {}))
    )
    assert codes(responses) == ["tool.failed", "tool.failed"]
    assert all(isinstance(r.exception, TimeoutError) for r in responses)


async def test_results_are_wrapped_and_made_json_safe():
    @tool
    def plain() -> list[int]:
        return [1, 2]

    @tool
    async def as_dict() -> dict[str, int]:
        return {"a": 1}

    responses = await Scheduler([plain, as_dict]).dispatch(calls(("plain", {}), ("as_dict", {})))
    assert [r.response for r in responses] == [{"result": [1, 2]}, {"a": 1}]
    assert all(r.error is None and r.exception is None for r in responses)


async def test_empty_dispatch_returns_nothing():
    assert await Scheduler([]).dispatch([]) == []


# -- threads -------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", [PARALLEL, AUTO])
async def test_fifty_blocking_sync_calls_all_overlap(strategy):
    n = 50
    barrier = threading.Barrier(n, timeout=RENDEZVOUS_S)
    threads: set[int] = set()

    @tool(read_only=True, concurrency_safe=True)
    def blocking(i: int) -> int:
        threads.add(threading.get_ident())
        barrier.wait()  # breaks (and the call fails) unless all 50 are running at once
        return i

    scheduler = Scheduler([blocking], strategy=strategy)
    try:
        responses = await scheduler.dispatch(calls(*[("blocking", {"i": i}) for i in range(n)]))
    finally:
        scheduler.close()
    assert codes(responses) == [None] * n
    assert [r.response["result"] for r in responses] == list(range(n))
    assert len(threads) == n
    assert threading.get_ident() not in threads


@pytest.mark.parametrize("how", ["close", "drop"])
async def test_idle_threads_go_away_when_the_scheduler_is_closed_or_dropped(how):
    n = 4
    barrier = threading.Barrier(n, timeout=RENDEZVOUS_S)
    workers: list[threading.Thread] = []

    @tool
    def blocking() -> None:
        workers.append(threading.current_thread())
        barrier.wait()

    scheduler = Scheduler([blocking], strategy=PARALLEL)
    responses = await scheduler.dispatch([ToolCall(f"b{i}", "blocking", {}) for i in range(n)])
    assert codes(responses) == [None] * n
    assert len(set(workers)) == n
    if how == "close":
        scheduler.close()
    else:
        del scheduler, responses
        gc.collect()
    for _ in range(2000):
        if not any(w.is_alive() for w in workers):
            break
        await asyncio.sleep(0.005)
    assert not any(w.is_alive() for w in workers)


request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="unset")


async def test_contextvars_are_copied_into_workers():
    seen: list[str] = []

    @tool(read_only=True, concurrency_safe=True)
    def sync_reader() -> str:
        seen.append(request_id.get())
        request_id.set("changed-in-worker")  # a copy: the caller's value is unchanged
        return request_id.get()

    @tool(read_only=True, concurrency_safe=True, long_running=True)
    def gen_reader() -> Iterator[str]:
        seen.append(request_id.get())
        yield request_id.get()

    token = request_id.set("req-42")
    try:
        responses = await Scheduler([sync_reader, gen_reader]).dispatch(
            calls(("sync_reader", {}), ("gen_reader", {}))
        )
        assert request_id.get() == "req-42"
    finally:
        request_id.reset(token)
    assert seen == ["req-42", "req-42"]
    assert codes(responses) == [None, None]


async def test_one_thread_runs_every_step_of_a_sync_generator():
    threads: list[int] = []

    @tool(long_running=True)
    def steps(n: int) -> Iterator[int]:
        for i in range(n):
            threads.append(threading.get_ident())
            yield i
        threads.append(threading.get_ident())

    # Several generators at once: each keeps its own thread for all its steps.
    @tool(long_running=True, read_only=True, concurrency_safe=True)
    def steps_safe(n: int, tag: str) -> Iterator[tuple[str, int]]:
        for i in range(n):
            per_tag.setdefault(tag, []).append(threading.get_ident())
            yield tag, i
            time.sleep(0)

    per_tag: dict[str, list[int]] = {}
    scheduler = Scheduler([steps, steps_safe])
    [response] = await scheduler.dispatch([ToolCall("1", "steps", {"n": 20})])
    assert response.response == {"result": 19}
    assert len(set(threads)) == 1 and len(threads) == 21
    assert threads[0] != threading.get_ident()

    responses = await scheduler.dispatch(
        [ToolCall(f"g{i}", "steps_safe", {"n": 10, "tag": f"t{i}"}) for i in range(4)]
    )
    assert codes(responses) == [None] * 4
    assert all(len(set(v)) == 1 and len(v) == 10 for v in per_tag.values())


async def test_run_in_thread_false_runs_on_the_loop_thread():
    seen: list[int] = []

    @tool(run_in_thread=False)
    def on_loop() -> int:
        seen.append(threading.get_ident())
        return 1

    [response] = await Scheduler([on_loop]).dispatch([ToolCall("1", "on_loop", {})])
    assert response.response == {"result": 1}
    assert seen == [threading.get_ident()]


# -- long-running generator tools -------------------------------------------------------------


async def collect(
    scheduler: Scheduler, batch: list[ToolCall], **kwargs: Any
) -> list[ToolProgress | ToolResponse]:
    async with scheduler.stream(batch, **kwargs) as items:
        return [item async for item in items]


async def test_generator_updates_stream_out_as_they_happen():
    seen_by_consumer = asyncio.Event()
    after_first: list[bool] = []

    @tool(long_running=True)
    async def job(steps: int):
        for i in range(steps):
            yield {"step": i}
            if i == 0:
                # The consumer sees the first update while the tool is still running.
                await asyncio.wait_for(seen_by_consumer.wait(), RENDEZVOUS_S)
                after_first.append(True)

    scheduler = Scheduler([job])
    items: list[Any] = []
    async with scheduler.stream([ToolCall("j1", "job", {"steps": 3})]) as updates:
        async for item in updates:
            items.append(item)
            if len(items) == 1:
                seen_by_consumer.set()
    assert after_first == [True]
    assert all(isinstance(i, ToolResponse) for i in items)
    assert [(i.id, i.name, i.final, i.response) for i in items] == [
        ("j1", "job", False, {"step": 0}),
        ("j1", "job", False, {"step": 1}),
        ("j1", "job", False, {"step": 2}),
        ("j1", "job", True, {"step": 2}),
    ]


async def test_sync_generator_updates_stream_out_and_dispatch_returns_the_final():
    seen_by_consumer = threading.Event()

    @tool(long_running=True)
    def job(steps: int):
        for i in range(steps):
            yield {"step": i}
            if i == 0:
                assert seen_by_consumer.wait(RENDEZVOUS_S)
        return {"done": steps}

    scheduler = Scheduler([job])
    items: list[Any] = []
    async with scheduler.stream([ToolCall("j1", "job", {"steps": 3})]) as updates:
        async for item in updates:
            items.append(item)
            seen_by_consumer.set()
    assert [(i.final, i.response) for i in items] == [
        (False, {"step": 0}),
        (False, {"step": 1}),
        (False, {"step": 2}),
        (True, {"done": 3}),
    ]
    assert all(i.id == "j1" for i in items)

    seen_by_consumer.set()
    [final] = await scheduler.dispatch([ToolCall("j2", "job", {"steps": 2})])
    assert final.final and final.id == "j2" and final.response == {"done": 2}


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
async def test_generator_raising_after_some_yields_gives_them_then_an_error(sync):
    if sync:

        @tool(long_running=True)
        def job():
            yield {"step": 0}
            yield {"step": 1}
            raise RuntimeError("disk full")

    else:

        @tool(long_running=True)
        async def job():
            yield {"step": 0}
            yield {"step": 1}
            raise RuntimeError("disk full")

    scheduler = Scheduler([job])
    items = await collect(scheduler, [ToolCall("j", "job", {})])
    assert [(i.final, i.response.get("step")) for i in items[:2]] == [(False, 0), (False, 1)]
    last = items[-1]
    assert len(items) == 3
    assert isinstance(last, ToolResponse) and last.final
    assert last.error is not None and last.error.code == "tool.failed"
    assert isinstance(last.exception, RuntimeError)
    assert "disk full" not in json.dumps(last.response)

    [final] = await scheduler.dispatch([ToolCall("j", "job", {})])
    assert final.error is not None and final.error.code == "tool.failed"


async def test_stream_gives_every_final_response_once():
    @tool(read_only=True, concurrency_safe=True)
    async def echo(i: int) -> int:
        return i

    items = await collect(Scheduler([echo]), calls(*[("echo", {"i": i}) for i in range(5)]))
    finals = [i for i in items if isinstance(i, ToolResponse)]
    assert sorted(r.id for r in finals) == [f"c{i}" for i in range(5)]
    assert all(r.final for r in finals)


# -- confirmation --------------------------------------------------------------------------


async def test_required_confirmation_stops_the_call_and_resume_runs_it():
    ran: list[dict[str, Any]] = []
    confirmations_seen: list[Confirmation | None] = []

    @tool(require_confirmation=True)
    def delete_file(path: str, ctx: ToolContext, recursive: bool = False) -> str:
        ran.append({"path": path, "recursive": recursive})
        confirmations_seen.append(ctx.tool_confirmation)
        return "deleted"

    scheduler = Scheduler([delete_file])
    call = ToolCall("d1", "delete_file", {"path": "/tmp/x"})
    [pending] = await scheduler.dispatch([call])
    assert ran == []
    assert pending.error is not None and pending.error.code == "tool.confirmation_required"
    validated = {"path": "/tmp/x", "recursive": False}
    fp = expected_fingerprint("delete_file", validated)
    assert pending.response == {
        "status": "confirmation_required",
        "confirmation": {
            "hint": pending.response["confirmation"]["hint"],
            "payload": None,
            "tool": "delete_file",
            "args": validated,
            "fingerprint": fp,
        },
    }
    assert isinstance(pending.response["confirmation"]["hint"], str)

    yes = Confirmation(True, fp)
    [done] = await scheduler.dispatch([call], confirmations={"d1": yes})
    assert done.error is None and done.response == {"result": "deleted"}
    assert ran == [validated]
    assert confirmations_seen == [yes]


async def test_refused_confirmation_is_rejected_and_the_tool_not_run():
    ran = []

    @tool(require_confirmation=True)
    def delete_file(path: str) -> str:
        ran.append(path)
        return "deleted"

    scheduler = Scheduler([delete_file])
    fp = expected_fingerprint("delete_file", {"path": "a"})
    [response] = await scheduler.dispatch(
        [ToolCall("d1", "delete_file", {"path": "a"})],
        confirmations={"d1": Confirmation(False, fp)},
    )
    assert response.error is not None and response.error.code == "tool.rejected"
    assert response.response["status"] == "error"
    assert ran == []


async def test_wrong_fingerprint_makes_a_new_request():
    ran = []

    @tool(require_confirmation=True)
    def delete_file(path: str) -> str:
        ran.append(path)
        return "deleted"

    scheduler = Scheduler([delete_file])
    # A "yes" given for other arguments cannot be replayed for these ones.
    other = Confirmation(True, expected_fingerprint("delete_file", {"path": "harmless"}))
    [response] = await scheduler.dispatch(
        [ToolCall("d1", "delete_file", {"path": "/"})], confirmations={"d1": other}
    )
    assert response.error is not None and response.error.code == "tool.confirmation_required"
    assert response.response["confirmation"]["fingerprint"] == expected_fingerprint(
        "delete_file", {"path": "/"}
    )
    assert ran == []


@pytest.mark.parametrize("is_async", [False, True], ids=["sync-predicate", "async-predicate"])
async def test_confirmation_predicate_is_evaluated_once_with_validated_args(is_async):
    seen: list[dict[str, Any]] = []
    ran: list[int] = []

    def decide(args: dict[str, Any]) -> bool:
        seen.append(dict(args))
        return args["amount"] > args["limit"]

    async def decide_async(args: dict[str, Any]) -> bool:
        await asyncio.sleep(0)
        return decide(args)

    @tool(require_confirmation=decide_async if is_async else decide)
    def pay(amount: int, limit: int = 100) -> int:
        ran.append(amount)
        return amount

    scheduler = Scheduler([pay])
    small, big = await scheduler.dispatch(
        [ToolCall("s", "pay", {"amount": "5"}), ToolCall("b", "pay", {"amount": 500})]
    )
    assert seen == [{"amount": 5, "limit": 100}, {"amount": 500, "limit": 100}]
    assert small.response == {"result": 5}
    assert big.error is not None and big.error.code == "tool.confirmation_required"
    assert big.response["confirmation"]["args"] == {"amount": 500, "limit": 100}
    assert ran == [5]

    seen.clear()
    fp = big.response["confirmation"]["fingerprint"]
    assert fp == expected_fingerprint("pay", {"amount": 500, "limit": 100})
    [resumed] = await scheduler.dispatch(
        [ToolCall("b", "pay", {"amount": 500})], confirmations={"b": Confirmation(True, fp)}
    )
    assert resumed.response == {"result": 500}
    assert len(seen) == 1  # once per call in this dispatch too
    assert ran == [5, 500]


async def test_invalid_arguments_to_a_confirmed_tool_are_invalid_arguments():
    @tool(require_confirmation=True)
    def delete_file(path: str) -> str:
        return "deleted"

    [response] = await Scheduler([delete_file]).dispatch(
        [ToolCall("d", "delete_file", {"path": 3, "x": 1})]
    )
    assert response.error is not None and response.error.code == "tool.invalid_arguments"


@pytest.mark.parametrize("strategy", [AUTO, SEQUENTIAL])
async def test_calls_after_a_pending_unsafe_call_are_deferred(strategy):
    ran: list[str] = []

    @tool(read_only=True, concurrency_safe=True)
    def look(tag: str) -> str:
        ran.append(tag)
        return tag

    @tool(require_confirmation=True)
    def drop_table(table: str) -> str:
        ran.append(f"drop {table}")
        return "dropped"

    scheduler = Scheduler([look, drop_table], strategy=strategy)
    batch = [
        ToolCall("a", "look", {"tag": "before"}),
        ToolCall("x", "drop_table", {"table": "users"}),
        ToolCall("b", "look", {"tag": "after"}),
        ToolCall("c", "drop_table", {"table": "orders"}),
    ]
    responses = await scheduler.dispatch(batch)
    assert codes(responses) == [
        None,
        "tool.confirmation_required",
        "tool.deferred",
        "tool.deferred",
    ]
    assert ran == ["before"]
    assert ids(responses) == ["a", "x", "b", "c"]
    assert "x" in responses[2].response["error"]["message"]

    # Resume: the confirmed call and the deferred ones run; c now asks for itself.
    fp = responses[1].response["confirmation"]["fingerprint"]
    ran.clear()
    resumed = await scheduler.dispatch(batch, confirmations={"x": Confirmation(True, fp)})
    assert codes(resumed) == [None, None, None, "tool.confirmation_required"]
    assert ran == ["before", "drop users", "after"]


async def test_under_parallel_calls_after_a_pending_call_run():
    ran: list[str] = []

    @tool
    def look(tag: str) -> str:
        ran.append(tag)
        return tag

    @tool(require_confirmation=True)
    def drop_table(table: str) -> str:
        ran.append(f"drop {table}")
        return "dropped"

    scheduler = Scheduler([look, drop_table], strategy=PARALLEL)
    responses = await scheduler.dispatch(
        [
            ToolCall("x", "drop_table", {"table": "users"}),
            ToolCall("b", "look", {"tag": "after"}),
        ]
    )
    assert codes(responses) == ["tool.confirmation_required", None]
    assert ran == ["after"]


async def test_a_pending_safe_call_is_no_barrier_under_auto():
    ran: list[str] = []

    @tool(read_only=True, concurrency_safe=True, require_confirmation=True)
    def peek(tag: str) -> str:
        ran.append(tag)
        return tag

    @tool
    def write(tag: str) -> str:
        ran.append(tag)
        return tag

    scheduler = Scheduler([peek, write])
    responses = await scheduler.dispatch(
        [ToolCall("p", "peek", {"tag": "p"}), ToolCall("w", "write", {"tag": "w"})]
    )
    assert codes(responses) == ["tool.confirmation_required", None]
    assert ran == ["w"]


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
async def test_request_confirmation_from_inside_a_tool(sync):
    ran: list[tuple[str, Any]] = []

    def body(amount: int, ctx: ToolContext) -> dict[str, Any]:
        if ctx.tool_confirmation is None:
            ran.append(("asked", amount))
            ctx.request_confirmation("Transfer a large amount?", {"amount": amount, "to": "bob"})
            return {"status": "asked"}
        ran.append(("ran", ctx.tool_confirmation))
        return {"transferred": amount}

    if sync:

        @tool
        def transfer(amount: int, ctx: ToolContext) -> dict[str, Any]:
            return body(amount, ctx)

    else:

        @tool
        async def transfer(amount: int, ctx: ToolContext) -> dict[str, Any]:
            return body(amount, ctx)

    @tool
    def after() -> str:
        ran.append(("after", None))
        return "after"

    scheduler = Scheduler([transfer, after])
    batch = [ToolCall("t", "transfer", {"amount": 900}), ToolCall("n", "after", {})]
    pending, deferred = await scheduler.dispatch(batch)
    fp = expected_fingerprint("transfer", {"amount": 900})
    assert pending.error is not None and pending.error.code == "tool.confirmation_required"
    assert pending.response == {
        "status": "confirmation_required",
        "confirmation": {
            "hint": "Transfer a large amount?",
            "payload": {"amount": 900, "to": "bob"},
            "tool": "transfer",
            "args": {"amount": 900},
            "fingerprint": fp,
        },
    }
    assert deferred.error is not None and deferred.error.code == "tool.deferred"
    assert ran == [("asked", 900)]

    ran.clear()
    yes = Confirmation(True, fp, payload={"note": "ok"})
    done, later = await scheduler.dispatch(batch, confirmations={"t": yes})
    assert done.error is None and done.response == {"transferred": 900}
    assert later.response == {"result": "after"}
    assert ran == [("ran", yes), ("after", None)]

    ran.clear()
    [refused] = await scheduler.dispatch(batch[:1], confirmations={"t": Confirmation(False, fp)})
    assert refused.error is not None and refused.error.code == "tool.rejected"
    assert ran == []


# -- scopes --------------------------------------------------------------------------------


async def test_scopes_must_all_be_granted():
    ran: list[str] = []

    @tool(scopes=("files:write", "admin"))
    def wipe() -> str:
        ran.append("wipe")
        return "wiped"

    @tool
    def free() -> str:
        ran.append("free")
        return "free"

    scheduler = Scheduler([wipe, free])
    default, free_response = await scheduler.dispatch(calls(("wipe", {}), ("free", {})))
    assert default.error is not None and default.error.code == "tool.forbidden"
    message = default.response["error"]["message"]
    assert "files:write" in message and "admin" in message
    assert free_response.response == {"result": "free"}  # no scopes declared: runs
    assert ran == ["free"]

    [partial] = await scheduler.dispatch(calls(("wipe", {})), granted_scopes={"files:write"})
    assert partial.error is not None and partial.error.code == "tool.forbidden"
    assert "admin" in partial.response["error"]["message"]
    assert "files:write" not in partial.response["error"]["message"]

    [granted] = await scheduler.dispatch(
        calls(("wipe", {})), granted_scopes=frozenset({"files:write", "admin", "other"})
    )
    assert granted.response == {"result": "wiped"}
    assert ran == ["free", "wipe"]


async def test_a_forbidden_call_is_not_asked_for_confirmation():
    @tool(scopes=("admin",), require_confirmation=True)
    def wipe() -> str:
        return "wiped"

    [response] = await Scheduler([wipe]).dispatch(calls(("wipe", {})))
    assert response.error is not None and response.error.code == "tool.forbidden"


# -- state ---------------------------------------------------------------------------------


class Contexts:
    """A ``context_factory`` that keeps the contexts it made, by call id."""

    def __init__(self, state: dict[str, Any] | None = None) -> None:
        self.state = state if state is not None else {}
        self.made: dict[str, SimpleToolContext] = {}

    def __call__(self, call: ToolCall) -> SimpleToolContext:
        ctx = SimpleToolContext(caller="test", state=self.state, function_call_id=call.id)
        self.made[call.id] = ctx
        return ctx

    def delta(self, call_id: str) -> dict[str, Any]:
        return self.made[call_id].actions.state_delta


def state_tools(flags: dict[str, Any]) -> list[Any]:
    @tool(**flags)
    async def put(key: str, value: int, ctx: ToolContext) -> int:
        ctx.state[key] = value
        await asyncio.sleep(0)
        return value

    @tool(**flags)
    def get(key: str, ctx: ToolContext) -> Any:
        return ctx.state.get(key)

    return [put, get]


@pytest.mark.parametrize(("strategy", "limit"), [(SEQUENTIAL, None), (AUTO, None), (PARALLEL, 1)])
async def test_a_call_sees_the_writes_of_calls_that_finished_before_it(strategy, limit):
    contexts = Contexts({"k": 0, "base": "b"})
    scheduler = Scheduler(state_tools({}), strategy=strategy, max_concurrency=limit)
    batch = [
        ToolCall("w1", "put", {"key": "k", "value": 1}),
        ToolCall("r1", "get", {"key": "k"}),
        ToolCall("w2", "put", {"key": "k", "value": 2}),
        ToolCall("r2", "get", {"key": "k"}),
        ToolCall("r3", "get", {"key": "base"}),
    ]
    responses = await scheduler.dispatch(batch, context_factory=contexts)
    assert [r.response["result"] for r in responses] == [1, 1, 2, 2, "b"]
    # Each call has its own delta; the session state given is never modified.
    assert contexts.delta("w1") == {"k": 1}
    assert contexts.delta("w2") == {"k": 2}
    assert contexts.delta("r1") == contexts.delta("r2") == contexts.delta("r3") == {}
    assert contexts.state == {"k": 0, "base": "b"}


async def test_concurrent_calls_do_not_see_each_others_in_flight_writes():
    contexts = Contexts()
    both_wrote = asyncio.Event()
    wrote = 0
    seen: dict[str, Any] = {}

    @tool(read_only=True, concurrency_safe=True)
    async def write_then_read(mine: str, theirs: str, ctx: ToolContext) -> str:
        nonlocal wrote
        ctx.state[mine] = "written"
        wrote += 1
        if wrote == 2:
            both_wrote.set()
        await asyncio.wait_for(both_wrote.wait(), RENDEZVOUS_S)
        seen[mine] = ctx.state.get(theirs)
        return mine

    @tool
    def read_all(ctx: ToolContext) -> dict[str, Any]:
        return ctx.state.to_dict()

    for strategy in (AUTO, PARALLEL):
        contexts.made.clear()
        seen.clear()
        wrote = 0
        both_wrote.clear()
        scheduler = Scheduler([write_then_read, read_all], strategy=strategy)
        batch = [
            ToolCall("a", "write_then_read", {"mine": "a", "theirs": "b"}),
            ToolCall("b", "write_then_read", {"mine": "b", "theirs": "a"}),
        ]
        responses = await scheduler.dispatch(batch, context_factory=contexts)
        assert codes(responses) == [None, None]
        assert seen == {"a": None, "b": None}
        assert contexts.delta("a") == {"a": "written"}
        assert contexts.delta("b") == {"b": "written"}

    # Under AUTO, a barrier after them sees both.
    scheduler = Scheduler([write_then_read, read_all])
    wrote = 0
    both_wrote.clear()
    responses = await scheduler.dispatch(
        [*batch, ToolCall("z", "read_all", {})], context_factory=contexts
    )
    assert responses[2].response == {"a": "written", "b": "written"}


async def test_deltas_merge_in_call_order_not_finish_order():
    contexts = Contexts()
    second_done = asyncio.Event()

    @tool(read_only=True, concurrency_safe=True)
    async def put(key: str, value: int, wait: bool, ctx: ToolContext) -> int:
        if wait:  # the first call finishes last
            await asyncio.wait_for(second_done.wait(), RENDEZVOUS_S)
        ctx.state[key] = value
        if not wait:
            second_done.set()
        return value

    @tool
    def get(key: str, ctx: ToolContext) -> Any:
        return ctx.state.get(key)

    scheduler = Scheduler([put, get])
    responses = await scheduler.dispatch(
        [
            ToolCall("w1", "put", {"key": "k", "value": 1, "wait": True}),
            ToolCall("w2", "put", {"key": "k", "value": 2, "wait": False}),
            ToolCall("r", "get", {"key": "k"}),
        ],
        context_factory=contexts,
    )
    assert [r.response["result"] for r in responses] == [1, 2, 2]


async def test_state_writes_from_worker_threads_are_kept():
    contexts = Contexts()

    @tool
    def many_writes(n: int, ctx: ToolContext) -> int:
        def write(k: int) -> None:
            for j in range(200):
                ctx.state[f"k{k}-{j}"] = j

        workers = [threading.Thread(target=write, args=(k,)) for k in range(n)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return len(ctx.state)

    [response] = await Scheduler([many_writes]).dispatch(
        [ToolCall("m", "many_writes", {"n": 4})], context_factory=contexts
    )
    assert response.response == {"result": 800}
    assert len(contexts.delta("m")) == 800


async def test_default_context_carries_the_call_id():
    seen: list[tuple[str, str]] = []

    @tool
    def who(ctx: ToolContext) -> str:
        seen.append((ctx.function_call_id, ctx.tool_name))
        return "ok"

    await Scheduler([who]).dispatch([ToolCall("id-7", "who", {})])
    assert seen == [("id-7", "who")]
