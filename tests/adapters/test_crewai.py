"""CrewAI tools as ours, through the tool's own ``run`` (CrewAI's validation and usage
count), by our ``Scheduler``."""

from __future__ import annotations

import json
from typing import Any

from crewai.tools import BaseTool as CrewBaseTool
from pydantic import BaseModel, Field

from tests.adapters._rendezvous import Rendezvous
from tooling import Scheduler, SimpleToolContext, ToolCall
from tooling.adapters import CrewaiTool


class ForecastArgs(BaseModel):
    city: str = Field(description="The city")
    days: int | None = Field(default=None, description="How many days; all by default")


class Forecast(CrewBaseTool):
    name: str = "Weather forecast"
    description: str = "The forecast for a city."
    args_schema: type[BaseModel] = ForecastArgs

    def _run(self, city: str, days: int | None = None) -> str:
        if city == "crash":
            raise RuntimeError("secret token abc123")
        return f"sunny in {city} for {days or 7} days"


async def one(tool: Any, args: dict[str, Any], call_id: str = "c1") -> Any:
    [response] = await Scheduler([tool]).dispatch([ToolCall(call_id, tool.name, args)])
    return response


async def test_the_schema_and_name_come_from_the_tool() -> None:
    adapted = CrewaiTool(Forecast())
    assert adapted.name == "Weather_forecast"
    assert adapted.parameters_json_schema["required"] == ["city"]
    assert adapted.parameters_json_schema["properties"]["city"]["description"] == "The city"


async def test_a_model_cannot_send_unknown_arguments() -> None:
    response = await one(CrewaiTool(Forecast()), {"city": "Lisbon", "api_key": "x"})
    assert response.error is not None and response.error.code == "tool.invalid_arguments"
    assert response.error.details[0]["loc"] == ["api_key"]


async def test_result_as_answer_sets_skip_summarization() -> None:
    adapted = CrewaiTool(Forecast(result_as_answer=True))
    ctx = SimpleToolContext()
    assert await adapted.run({"city": "Lisbon"}, ctx) == {"result": "sunny in Lisbon for 7 days"}
    assert ctx.actions.skip_summarization is True


async def test_a_failure_and_a_spent_usage_limit_are_error_responses() -> None:
    crashed = await one(CrewaiTool(Forecast()), {"city": "crash"})
    assert crashed.error is not None and crashed.error.code == "tool.failed"
    assert "abc123" not in json.dumps(crashed.response)

    limited = CrewaiTool(Forecast(max_usage_count=1))
    first, second = await Scheduler([limited]).dispatch(
        [
            ToolCall("a", limited.name, {"city": "Porto"}),
            ToolCall("b", limited.name, {"city": "Faro"}),
        ]
    )
    assert first.error is None
    assert second.error is not None and "usage limit" in second.response["error"]["message"]


async def test_the_tool_runs_off_the_event_loop() -> None:
    meeting = Rendezvous()

    class Slow(CrewBaseTool):
        name: str = "slow"
        description: str = "Waits."

        def _run(self) -> str:
            return meeting.wait_in_tool()

    response = await meeting.run(one(CrewaiTool(Slow()), {}))
    assert response.response == {"result": "released"}


async def test_an_optional_parameter_stays_optional_in_strict_mode() -> None:
    adapted = CrewaiTool(Forecast())
    strict = adapted.to_openai(strict=True)["function"]["parameters"]
    assert set(strict["required"]) == {"city", "days"}  # strict lists all, optional nullable
    response = await one(adapted, {"city": "Braga", "days": None})
    assert response.response == {"result": "sunny in Braga for 7 days"}
    response = await one(adapted, {"city": "Braga"})
    assert response.response == {"result": "sunny in Braga for 7 days"}


async def test_results_are_cached_as_crewai_agents_cache_them() -> None:
    runs: list[str] = []

    class Counting(CrewBaseTool):
        name: str = "counting"
        description: str = "Counts its runs."
        args_schema: type[BaseModel] = ForecastArgs

        def _run(self, city: str, days: int | None = None) -> str:
            runs.append(city)
            return f"run {len(runs)}"

    calls = [ToolCall(str(i), "counting", {"city": c}) for i, c in enumerate("aab")]
    answers = await Scheduler([CrewaiTool(Counting())]).dispatch(calls)
    assert [a.response["result"] for a in answers] == ["run 1", "run 1", "run 2"]
    assert runs == ["a", "b"]

    runs.clear()
    never = Counting(cache_function=lambda args, result: False)
    await Scheduler([CrewaiTool(never)]).dispatch(calls)
    assert runs == ["a", "a", "b"]

    runs.clear()
    await Scheduler([CrewaiTool(Counting(), cache=False)]).dispatch(calls)
    assert runs == ["a", "a", "b"]
