"""Structured output beside tools: ``Agent(output_schema=Model)`` gives a validated
``Model`` on ``Event.output`` and its JSON in ``state[output_key]``; an invalid answer goes
back to the model. Scripted models; each test counts requests and tool runs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from _providers import no_proxies
from pydantic import BaseModel, Field

from agent_core import Agent, Event, Part, RunConfig, Runner, ScriptedModel
from tests._providers import ChatDialect, Dialect, FakeServer, ResponsesDialect, serving
from tooling import tool


class Weather(BaseModel):
    """The weather in a city."""

    city: str
    celsius: float = Field(ge=-90, le=60)


@tool
def lookup(city: str) -> dict:
    """Look the weather up."""
    runs.append(city)
    return {"city": city, "temp": 21}


runs: list[str] = []


def call(tool_name: str, /, **args: Any) -> list[Part]:
    return [Part.from_function_call(tool_name, args)]


async def collect(runner: Runner, config: RunConfig | None = None) -> list[Event]:
    return [
        e
        async for e in runner.run_async(
            user_id="u", session_id="s", new_message="weather?", run_config=config
        )
    ]


async def test_the_final_answer_is_a_validated_model_after_the_tools() -> None:
    runs.clear()
    model = ScriptedModel(
        [
            call("lookup", city="Lisbon"),
            call("final_result", city="Lisbon", celsius=400),  # out of range: sent back
            call("final_result", city="Lisbon", celsius=21),
        ]
    )
    agent = Agent("a", model, tools=[lookup], output_schema=Weather, output_key="weather")
    runner = Runner(agent, app_name="out")
    events = await collect(runner)
    assert runs == ["Lisbon"] and len(model.requests) == 3  # no turn after the answer
    assert "final_result" in model.requests[0].tools
    retry = events[3].get_function_responses()[0].response
    assert retry["error"]["code"] == "tool.invalid_arguments"
    assert retry["error"]["details"][0]["loc"] == ["celsius"]
    last = events[-1]
    assert isinstance(last.output, Weather) and last.output == Weather(city="Lisbon", celsius=21)
    assert last.is_final_response()
    session = await runner.session_service.get_session(app_name="out", user_id="u", session_id="s")
    assert session is not None and session.state["weather"] == {"city": "Lisbon", "celsius": 21.0}
    # Stored and read back, the output is its JSON.
    assert Event.from_dict(last.to_dict()).output == {"city": "Lisbon", "celsius": 21.0}


async def test_a_text_answer_that_is_the_models_json_is_accepted() -> None:
    model = ScriptedModel(['{"city": "Porto", "celsius": 18}'])
    agent = Agent("a", model, output_schema=Weather, output_key="weather")
    events = await collect(Runner(agent, app_name="out"))
    assert events[-1].output == Weather(city="Porto", celsius=18)
    assert events[-1].actions.state_delta["weather"] == {"city": "Porto", "celsius": 18.0}
    assert len(model.requests) == 1


async def test_other_text_is_sent_back_and_counted_against_the_run() -> None:
    model = ScriptedModel(["It is sunny.", call("final_result", city="Faro", celsius=25)])
    agent = Agent("a", model, output_schema=Weather)
    events = await collect(Runner(agent, app_name="out"))
    assert len(model.requests) == 2
    sent_back = model.requests[1].contents[-1]
    assert sent_back.role == "user" and "final_result" in (sent_back.text or "")
    assert events[-1].output == Weather(city="Faro", celsius=25)

    model = ScriptedModel(["nope"] * 5)
    events = await collect(
        Runner(Agent("a", model, output_schema=Weather), app_name="out"),
        RunConfig(max_model_calls=3),
    )
    assert len(model.requests) == 3 and events[-1].error_code == "agent.max_model_calls"


class Trip(BaseModel):
    """A trip."""

    city: str
    nights: int = 1


async def test_a_strict_mode_models_nulls_mean_the_defaults() -> None:
    # OpenAI's strict declarations make every field required and nullable: a model that
    # leaves one out sends null, which means the default.
    strict = Agent("a", ScriptedModel([]), output_schema=Trip).builtin_tools()[-1]
    declared = strict.to_openai(strict=True)["function"]["parameters"]
    assert declared["required"] == ["city", "nights"]
    model = ScriptedModel([call("final_result", city="Rome", nights=None)])
    events = await collect(Runner(Agent("a", model, output_schema=Trip), app_name="out"))
    assert events[-1].output == Trip(city="Rome", nights=1)
    model = ScriptedModel([call("final_result", city=None), "gave up"])
    events = await collect(Runner(Agent("a", model, output_schema=Trip), app_name="out"))
    bad = events[1].get_function_responses()[0].response
    assert bad["error"]["code"] == "tool.invalid_arguments"


# -- OpenAI's JSON mode when the answer is the only tool ----------------------------------


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    no_proxies(monkeypatch)
    with serving() as fake:
        yield fake


@pytest.mark.parametrize("dialect", [ResponsesDialect(), ChatDialect()], ids=lambda d: d.name)
async def test_without_other_tools_openai_is_asked_in_json_mode(
    api: FakeServer, dialect: Dialect
) -> None:
    model = dialect.model(api)
    try:
        api.reply(dialect.turn(text='{"city": "Rome", "nights": null}'))
        agent = Agent("a", model, output_schema=Trip, output_key="trip")
        events = await collect(Runner(agent, app_name="out"))
        body = api.requests[0]["body"]
        assert "tools" not in body
        if dialect.name == "openai-chat":
            spec = body["response_format"]["json_schema"]
            assert body["response_format"]["type"] == "json_schema"
        else:
            spec = body["text"]["format"]
            assert spec["type"] == "json_schema"
        assert spec["name"] == "final_result" and spec["strict"] is True
        assert spec["schema"]["required"] == ["city", "nights"]
        assert events[-1].output == Trip(city="Rome", nights=1)
        assert events[-1].actions.state_delta["trip"] == {"city": "Rome", "nights": 1}
    finally:
        await model.aclose()  # type: ignore[attr-defined]
