"""Bounding calls: retries, retry asks, budgets per run and per tool, repeated calls,
unknown tools, and results over their token budget. Scripted models; each test counts
the model requests and the tool runs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_core import Agent, Event, Part, RunConfig, Runner, ScriptedModel
from tooling import FunctionTool, Scheduler, ToolCall, ToolError, tool


def call(name: str, **args: Any) -> list[Part]:
    return [Part.from_function_call(name, args)]


async def run(agent: Agent, config: RunConfig | None = None) -> list[Event]:
    runner = Runner(agent, app_name="bounds")
    return [
        e
        async for e in runner.run_async(
            user_id="u", session_id="s", new_message="go", run_config=config
        )
    ]


def responses(events: list[Event]) -> list[dict[str, Any]]:
    return [r.response for e in events for r in e.get_function_responses()]


def codes(events: list[Event]) -> list[str | None]:
    return [r.get("error", {}).get("code") for r in responses(events)]


# -- the run's budget ------------------------------------------------------------------------


async def test_a_model_that_always_calls_ends_at_the_limit_plus_one_call() -> None:
    runs: list[int] = []

    @tool
    def ping(n: int) -> int:
        """Ping."""
        runs.append(n)
        return n

    model = ScriptedModel([call("ping", n=i) for i in range(100)])
    events = await run(Agent("a", model, tools=[ping]), RunConfig(max_tool_calls=5))
    assert runs == [0, 1, 2, 3, 4]
    assert len(model.requests) == 6  # the limit, plus the one last turn
    assert codes(events)[-1] == "tool.budget_exhausted"
    assert events[-1].error_code == "agent.tool_budget_exhausted"
    # The last turn was told the budget is spent.
    assert "tool budget of this run is spent" in (model.requests[-1].system_instruction or "")


async def test_the_same_call_in_consecutive_turns_is_answered_repeated_call() -> None:
    runs: list[str] = []

    @tool
    def lookup(q: str) -> str:
        """Look up."""
        runs.append(q)
        return q

    model = ScriptedModel([call("lookup", q="x")] * 3 + [call("lookup", q="y"), "done"])
    events = await run(Agent("a", model, tools=[lookup]))
    assert runs == ["x", "x", "y"]
    assert codes(events) == [None, None, "tool.repeated_call", None]
    assert len(model.requests) == 5
    assert events[-1].content is not None and events[-1].content.text == "done"


async def test_a_tools_own_limit_per_run_then_the_last_turn() -> None:
    runs: list[int] = []

    @tool(max_calls_per_run=2)
    def charge(n: int) -> int:
        """Charge."""
        runs.append(n)
        return n

    model = ScriptedModel([call("charge", n=1), call("charge", n=2), call("charge", n=3), "ok"])
    events = await run(Agent("a", model, tools=[charge]))
    assert runs == [1, 2]
    assert codes(events) == [None, None, "tool.budget_exhausted"]
    assert len(model.requests) == 4
    assert events[-1].content is not None and events[-1].content.text == "ok"


async def test_a_model_calling_after_the_budget_gets_no_more_runs() -> None:
    runs: list[int] = []

    @tool(max_calls_per_run=1)
    def once(n: int) -> int:
        """Once."""
        runs.append(n)
        return n

    @tool
    def other(n: int) -> int:
        """Other."""
        runs.append(-n)
        return n

    model = ScriptedModel(
        [call("once", n=1), call("once", n=2), call("other", n=3), call("other", n=4)]
    )
    events = await run(Agent("a", model, tools=[once, other]))
    assert runs == [1]
    assert len(model.requests) == 3
    assert codes(events) == [None, "tool.budget_exhausted", "tool.budget_exhausted"]
    assert events[-1].error_code == "agent.tool_budget_exhausted"


# -- retries -----------------------------------------------------------------------------------


async def test_an_idempotent_tools_transient_failure_is_retried() -> None:
    attempts: list[int] = []

    @tool(idempotent=True, retries=2, retry_on=ConnectionError)
    def fetch(url: str) -> str:
        """Fetch."""
        attempts.append(1)
        if len(attempts) < 3:
            raise ConnectionError("reset by peer")
        return "page"

    model = ScriptedModel([call("fetch", url="u"), "got it"])
    events = await run(Agent("a", model, tools=[fetch]))
    assert len(attempts) == 3
    assert responses(events) == [{"result": "page"}]
    assert len(model.requests) == 2


async def test_a_non_idempotent_tools_failure_goes_to_the_model() -> None:
    attempts: list[int] = []

    @tool(retries=2, retry_on=ConnectionError)
    def send(text: str) -> str:
        """Send."""
        attempts.append(1)
        raise ConnectionError("reset by peer")

    model = ScriptedModel([call("send", text="hi"), "failed"])
    events = await run(Agent("a", model, tools=[send]))
    assert len(attempts) == 1
    assert codes(events) == ["tool.failed"]


async def test_a_timeout_of_an_idempotent_tool_is_retried() -> None:
    attempts: list[int] = []

    @tool(idempotent=True, retries=1, timeout=0.2)
    async def slow_once() -> str:
        """Slow the first time."""
        attempts.append(1)
        if len(attempts) == 1:
            await asyncio.sleep(30)
        return "fine"

    [response] = await Scheduler([slow_once]).dispatch([ToolCall("1", "slow_once", {})])
    assert response.error is None and response.response == {"result": "fine"}
    assert len(attempts) == 2


async def test_other_exceptions_are_not_retried() -> None:
    attempts: list[int] = []

    @tool(idempotent=True, retries=3, retry_on=ConnectionError)
    def broken() -> str:
        """Broken."""
        attempts.append(1)
        raise ValueError("no")

    [response] = await Scheduler([broken]).dispatch([ToolCall("1", "broken", {})])
    assert response.error is not None and response.error.code == "tool.failed"
    assert len(attempts) == 1


async def test_a_retry_ask_counts_against_retries_then_is_exhausted() -> None:
    runs: list[str] = []

    @tool(retries=1)
    def book(day: str) -> str:
        """Book a day."""
        runs.append(day)
        raise ToolError(f"{day} is full; try another day", code="booking.full", retry=True)

    model = ScriptedModel([call("book", day="mon"), call("book", day="tue"), "sorry"])
    events = await run(Agent("a", model, tools=[book]))
    assert runs == ["mon", "tue"]  # asked by the model, never retried by the scheduler
    first, second = responses(events)
    assert first["error"] == {
        "code": "booking.full",
        "message": "mon is full; try another day",
        "retry": True,
    }
    assert second["error"]["code"] == "tool.retries_exhausted"
    assert "tue is full" in second["error"]["message"]
    assert len(model.requests) == 3


# -- unknown tools -------------------------------------------------------------------------


async def test_an_unknown_tools_message_lists_at_most_twenty_names_closest_first() -> None:
    def make(i: int) -> FunctionTool[..., int]:
        def f() -> int:
            return i

        return FunctionTool(f, name=f"tool_{i:02d}", description="A tool.")

    tools = [make(i) for i in range(30)]
    weather = FunctionTool(lambda: 1, name="get_weather", description="Weather.")
    model = ScriptedModel([call("get_wether"), "ok"])
    events = await run(Agent("a", model, tools=[*tools, weather]))
    [response] = responses(events)
    message = response["error"]["message"]
    assert response["error"]["code"] == "tool.not_found"
    listed = message.split("you may call: ")[1].split(" (and")[0].split(", ")
    assert len(listed) == 20 and listed[0] == "get_weather"
    assert "(and 11 more)" in message
    assert len(model.requests) == 2


# -- results over their budget -----------------------------------------------------------------


async def test_a_result_over_its_token_budget_is_cut_to_head_and_tail() -> None:
    @tool(max_result_tokens=50)
    def dump() -> str:
        """A big result."""
        return "HEAD" + "x" * 10_000 + "TAIL"

    [response] = await Scheduler([dump]).dispatch([ToolCall("1", "dump", {})])
    assert response.error is None
    body = response.response
    assert body["status"] == "truncated"
    assert body["content"].startswith('{"result":"HEAD')
    assert body["content"].endswith('TAIL"}')
    assert "left out" in body["content"] and "narrow the request" in body["content"]
    assert len(body["content"]) < 50 * 4 + 300
    assert body["omitted_bytes"] > 9_000
    whole = {"result": "HEAD" + "x" * 10_000 + "TAIL"}
    assert response.full_response == whole and response.artifact == whole


async def test_the_runs_result_budget_applies_to_tools_without_one() -> None:
    @tool
    def dump() -> str:
        """A big result."""
        return "y" * 5_000

    @tool
    def small() -> str:
        """A small result."""
        return "tiny"

    model = ScriptedModel([call("dump") + call("small"), "ok"])
    events = await run(Agent("a", model, tools=[dump, small]), RunConfig(max_result_tokens=100))
    big, little = responses(events)
    assert big["status"] == "truncated" and len(big["content"]) < 100 * 4 + 300
    assert little == {"result": "tiny"}


def test_policy_options_are_checked_when_the_tool_is_made() -> None:
    def f() -> None:
        """F."""

    with pytest.raises(ValueError, match="retries"):
        FunctionTool(f, retries=-1)
    with pytest.raises(TypeError, match="retry_on"):
        FunctionTool(f, retry_on=("ConnectionError",))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_calls_per_run"):
        FunctionTool(f, max_calls_per_run=0)
    from tooling.integration import RunBudget

    with pytest.raises(ValueError, match="max_tool_calls"):
        RunBudget(max_tool_calls=0)
