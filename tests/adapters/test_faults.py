"""Third-party tools that misbehave get the bounded outcomes our own tools get: an error
response, a timeout, a cut result; never a crash of the run."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Literal

import pytest
from crewai.tools import BaseTool as CrewBaseTool
from langchain_core.tools import StructuredTool
from pydantic import BaseModel

from agent_core import Agent, Part, Runner, ScriptedModel
from tooling import Scheduler, ToolCall
from tooling.adapters import CrewaiTool, LangchainTool

HUGE = "x" * (1024 * 1024)


class Opaque:
    """Not JSON: a connection, a data frame."""


def langchain_tool(func: Any, name: str) -> LangchainTool:
    return LangchainTool(StructuredTool.from_function(func, name=name, description=name))


class CrewReturns(CrewBaseTool):
    name: str = "crew_returns"
    description: str = "Returns what it was built with."
    value: Any = None

    def _run(self) -> Any:
        return self.value


async def one(tool: Any, args: dict[str, Any], **options: Any) -> Any:
    [response] = await Scheduler([tool], **options).dispatch([ToolCall("c", tool.name, args)])
    return response


@pytest.mark.parametrize("framework", ["langchain", "crewai"])
async def test_a_result_that_is_not_json_is_tool_failed(framework: str) -> None:
    def opaque() -> Any:
        """Opaque."""
        return {"handle": Opaque()}

    tool = (
        langchain_tool(opaque, "opaque")
        if framework == "langchain"
        else CrewaiTool(CrewReturns(value={"handle": Opaque()}))
    )
    response = await one(tool, {})
    if framework == "langchain":
        # LangChain itself makes a non-message result text (its own rule): it arrives.
        assert response.error is None and "Opaque" in response.response["result"]
    else:
        assert response.error is not None and response.error.code == "tool.failed"


@pytest.mark.parametrize("framework", ["langchain", "crewai"])
async def test_a_huge_string_is_cut_for_the_model(framework: str) -> None:
    def huge() -> str:
        """Huge."""
        return HUGE

    tool = (
        langchain_tool(huge, "huge")
        if framework == "langchain"
        else CrewaiTool(CrewReturns(value=HUGE))
    )
    response = await one(tool, {})
    assert response.error is not None and response.error.code == "tool.output_too_large"
    assert response.full_response == {"result": HUGE}
    assert len(response.response["partial"]) < 300 * 1024


@pytest.mark.parametrize("framework", ["langchain", "crewai"])
async def test_a_tool_that_blocks_for_a_minute_times_out_and_is_abandoned(framework: str) -> None:
    gate = threading.Event()

    def stuck() -> str:
        """Stuck."""
        gate.wait(60)
        return "late"

    class CrewStuck(CrewBaseTool):
        name: str = "stuck"
        description: str = "Blocks."

        def _run(self) -> str:
            return stuck()

    tool = langchain_tool(stuck, "stuck") if framework == "langchain" else CrewaiTool(CrewStuck())
    started = time.monotonic()
    try:
        response = await one(tool, {}, timeout=0.3)
    finally:
        gate.set()
    assert response.error is not None and response.error.code == "tool.timeout"
    assert time.monotonic() - started < 30  # the minute was not waited for


def test_a_run_with_a_failing_and_a_stuck_third_party_tool_goes_on() -> None:
    gate = threading.Event()

    def fails(x: int) -> str:
        """Fails."""
        raise ValueError("private detail")

    def stuck() -> str:
        """Stuck."""
        gate.wait(60)
        return "late"

    from agent_core import RunConfig

    model = ScriptedModel(
        [[Part.from_function_call("fails", {"x": 1}), Part.from_function_call("stuck", {})], "ok"]
    )
    agent = Agent(
        "a", model, tools=[langchain_tool(fails, "fails"), langchain_tool(stuck, "stuck")]
    )
    try:
        with Runner(agent, app_name="faults") as runner:
            events = list(
                runner.run(
                    user_id="u",
                    session_id="s",
                    new_message="go",
                    run_config=RunConfig(tool_timeout=0.3),
                )
            )
    finally:
        gate.set()
    codes = [r.response["error"]["code"] for e in events for r in e.get_function_responses()]
    assert codes == ["tool.failed", "tool.timeout"]
    assert events[-1].content is not None and events[-1].content.parts[0].text == "ok"


class Address(BaseModel):
    street: str
    kind: Literal["home", "work"] = "home"


class Order(BaseModel):
    to: Address
    notes: str | list[str] | None = None
    items: list[Address | int]


async def test_ref_and_union_schemas_export_and_validate() -> None:
    def ship(to: Address, items: list[Address | int], notes: str | list[str] | None = None) -> str:
        """Ship an order."""
        return f"{to.street}: {len(items)} item(s)"

    tool = LangchainTool(
        StructuredTool.from_function(ship, name="ship", description="Ship.", args_schema=Order)
    )
    schema = tool.parameters_json_schema
    assert "$defs" in schema and "Address" in schema["$defs"]
    strict = tool.to_openai(strict=True)["function"]["parameters"]
    from agents.strict_schema import ensure_strict_json_schema

    assert ensure_strict_json_schema(strict) == strict
    tool.to_gemini()
    tool.to_gemini(legacy=True)
    ok = await one(tool, {"to": {"street": "Rua A"}, "items": [1, {"street": "B"}], "notes": None})
    assert ok.response == {"result": "Rua A: 2 item(s)"}
    bad = await one(tool, {"to": {"street": "Rua A", "kind": "moon"}, "items": []})
    assert bad.error is not None and bad.error.code == "tool.invalid_arguments"
    assert bad.error.details[0]["loc"][:2] == ["to", "kind"]


def test_asyncio_run_is_not_held_up_by_an_abandoned_thread() -> None:
    gate = threading.Event()

    def stuck() -> str:
        """Stuck."""
        gate.wait(60)
        return "late"

    started = time.monotonic()
    try:
        response = asyncio.run(one(langchain_tool(stuck, "stuck"), {}, timeout=0.2))
    finally:
        gate.set()
    assert response.error is not None and response.error.code == "tool.timeout"
    assert time.monotonic() - started < 30
