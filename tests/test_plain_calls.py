"""Plain calls (no context, confirmation, credential, hooks or limits) take a short way
through a dispatch; their answers are the ones the full way gives.

The full way is forced with a concurrency limit far above the number of calls (a limit
makes every call wait for a slot, so none takes the short way); everything else is equal.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooling import BaseTool, CheckedArguments, Scheduler, ToolCall, ToolError, ToolResult, tool
from tooling._scheduling.response_size import MAX_RESPONSE_BYTES


@tool(run_in_thread=False)
def inline(n: int, word: str = "w") -> dict[str, Any]:
    """Echo, or fail on request."""
    if n == 13:
        raise ToolError("unlucky number", code="tool.unlucky")
    if n < 0:
        raise ValueError("negative")
    return {"n": n, "word": word}


@tool(read_only=True, concurrency_safe=True)
def threaded(n: int) -> int:
    """A sync tool on a worker thread; fails for negative numbers."""
    if n < 0:
        raise RuntimeError(f"no thread for {n}")
    return n * 2


@tool(read_only=True, concurrency_safe=True)
async def awaited(n: int) -> list[int]:
    """An async tool."""
    if n < 0:
        raise KeyError(n)
    return [n, n]


@tool(read_only=True, idempotent=True)
async def folded(n: int) -> int:
    """Equal calls of a read-only, idempotent tool are folded into one run."""
    return n + 1


@tool(conflict_key="key")
async def keyed(key: str, n: int) -> str:
    """Calls with different keys overlap."""
    return f"{key}:{n}"


@tool(run_in_thread=False)
def kept(n: int) -> ToolResult[int]:
    """The model sees the number, the application keeps the list."""
    return ToolResult(n, artifact=list(range(n)))


@tool(run_in_thread=False)
def huge(n: int) -> str:
    """A response over the size limit (cut for the model)."""
    return "x" * (MAX_RESPONSE_BYTES + n)


@tool(scopes=["admin"])
def guarded(n: int) -> int:
    """Needs a scope."""
    return n


class HandWritten(BaseTool):
    """A hand-written tool without a context: its own checks and responses."""

    name = "hand"
    description = "Doubles n."
    parameters_json_schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
    }
    takes_context = False  # type: ignore[assignment]

    def check_arguments(self, args: Any) -> CheckedArguments:
        if not isinstance(args, dict) or not isinstance(args.get("n"), int):
            raise ToolError("n must be an integer", code="tool.invalid_arguments")
        return CheckedArguments(dict(args))

    async def run(self, args: Any, ctx: Any = None) -> dict[str, Any]:
        n = self.check_arguments(args).values["n"]
        if n < 0:
            raise OSError("the hand slipped")
        return {"result": n * 2}


TOOLS = [inline, threaded, awaited, folded, keyed, kept, huge, guarded, HandWritten()]
NAMES = [t.name for t in TOOLS]


def answers(responses: list[Any]) -> list[tuple[Any, ...]]:
    """What a caller sees of each response (everything but its duration)."""
    return [
        (
            r.id,
            r.name,
            r.response,
            None if r.error is None else (r.error.code, r.error.message, r.error.details),
            type(r.exception).__name__ if r.exception is not None else None,
            r.final,
            r.parts,
            r.full_response,
            r.folded_ids,
            r.waiting_for,
            r.artifact,
        )
        for r in responses
    ]


async def both_ways(
    calls: list[ToolCall], scopes: frozenset[str] = frozenset(), **options: Any
) -> tuple[list[Any], list[Any]]:
    short = Scheduler(TOOLS, **options)
    full = Scheduler(TOOLS, max_concurrency=10_000, **options)
    try:
        return (
            answers(await short.dispatch(calls, granted_scopes=scopes)),
            answers(await full.dispatch(calls, granted_scopes=scopes)),
        )
    finally:
        short.close()
        full.close()


ARGS = st.one_of(
    st.fixed_dictionaries({"n": st.sampled_from([0, 1, 2, 13, -1])}),
    st.fixed_dictionaries({"n": st.sampled_from([1, 2]), "key": st.sampled_from(["a", "b"])}),
    st.fixed_dictionaries({"n": st.sampled_from(["two", None, 2.5])}),
    st.just({}),
    st.just('{"n": 3}'),
    st.sampled_from([[1, 2], 7, None, "not json"]),
)
CALL = st.tuples(st.sampled_from([*NAMES, "missing"]), ARGS, st.sampled_from(["a", "b", "c"]))


@settings(max_examples=60, deadline=None)
@given(st.lists(CALL, min_size=1, max_size=8), st.booleans())
def test_a_turn_of_plain_calls_is_answered_as_the_full_way_answers_it(
    spec: list[tuple[str, Any, str]], expose_errors: bool
) -> None:
    calls = [
        ToolCall(id=f"{cid}{i % 3}", name=name, args=args)
        for i, (name, args, cid) in enumerate(spec)
    ]
    short, full = asyncio.run(both_ways(calls, expose_errors=expose_errors))
    assert short == full


@pytest.mark.parametrize("strategy", ["auto", "parallel", "sequential"])
async def test_every_kind_of_plain_call_answers_alike_under_each_strategy(strategy: str) -> None:
    calls = [
        ToolCall(id="1", name="inline", args={"n": 1}),
        ToolCall(id="2", name="inline", args={"n": 13}),
        ToolCall(id="3", name="inline", args={"n": -1}),
        ToolCall(id="4", name="threaded", args={"n": 4}),
        ToolCall(id="5", name="threaded", args={"n": -4}),
        ToolCall(id="6", name="awaited", args={"n": 5}),
        ToolCall(id="7", name="awaited", args={"n": -5}),
        ToolCall(id="8", name="folded", args={"n": 1}),
        ToolCall(id="9", name="folded", args={"n": 1}),
        ToolCall(id="10", name="keyed", args={"key": "a", "n": 1}),
        ToolCall(id="11", name="kept", args={"n": 3}),
        ToolCall(id="12", name="huge", args={"n": 1}),
        ToolCall(id="13", name="guarded", args={"n": 1}),
        ToolCall(id="14", name="hand", args={"n": 2}),
        ToolCall(id="15", name="hand", args={"n": -2}),
        ToolCall(id="16", name="hand", args={"n": "x"}),
        ToolCall(id="17", name="inline", args=[1]),
        ToolCall(id="17", name="inline", args={"n": 1}),
    ]
    short, full = await both_ways(calls, strategy=strategy)
    assert short == full
    by_id = {a[0]: a for a in short}
    assert by_id["11"][2] == {"result": 3} and by_id["11"][10] == [0, 1, 2]
    assert by_id["12"][3][0] == "tool.output_too_large"
    assert by_id["13"][3][0] == "tool.forbidden"
    assert by_id["9"][8] == ("8", "9")


async def test_a_plain_call_with_its_scope_granted_runs() -> None:
    short, full = await both_ways(
        [ToolCall(id="1", name="guarded", args={"n": 7})], scopes=frozenset({"admin"})
    )
    assert short == full
    assert short[0][2] == {"result": 7}


async def test_plain_calls_of_a_safe_tool_still_overlap() -> None:
    # The short way keeps the strategy: safe reads run together (a rendezvous of four).
    barrier = threading.Barrier(4, timeout=10)

    @tool(read_only=True, concurrency_safe=True)
    def meet(n: int) -> int:
        """Waits for three others."""
        barrier.wait()
        return n

    scheduler = Scheduler([meet])
    try:
        responses = await scheduler.dispatch(
            [ToolCall(id=str(i), name="meet", args={"n": i}) for i in range(4)]
        )
    finally:
        scheduler.close()
    assert [r.response for r in responses] == [{"result": i} for i in range(4)]
    assert all(r.duration_s > 0 for r in responses)
