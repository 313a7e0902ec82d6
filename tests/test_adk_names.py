"""google-adk's names, each an alias of ours: the same setting, method or class under
both names, in real runs where the name changes what a run does."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from google.genai import types
from hypothesis import given
from hypothesis import strategies as st

from agent_core import (
    Agent,
    AlreadyExistsError,
    Content,
    Event,
    InMemoryArtifactService,
    InMemorySessionService,
    LlmRequest,
    LlmResponse,
    Part,
    RunConfig,
    Runner,
    ScriptedModel,
    SessionExistsError,
    UsageMetadata,
)
from tooling import BaseTool, SimpleToolContext, ToolContext, ToolError, tool

APP = "app"


async def run(runner: Runner, message: str | Content, **config: Any) -> list[Event]:
    return [
        e
        async for e in runner.run_async(
            user_id="u", session_id="s1", new_message=message, run_config=RunConfig(**config)
        )
    ]


# -- RunConfig ------------------------------------------------------------------------------


@given(st.integers(min_value=0, max_value=10_000))
def test_max_llm_calls_is_max_model_calls(n: int) -> None:
    config = RunConfig(max_llm_calls=n)
    assert config == RunConfig(max_model_calls=n)
    assert config.max_llm_calls == config.max_model_calls == n


@given(st.floats(min_value=0, max_value=1e6, allow_nan=False))
def test_session_lock_timeout_is_the_earlier_name_of_session_lease_timeout(t: float) -> None:
    config = RunConfig(session_lock_timeout=t)
    assert config == RunConfig(session_lease_timeout=t)
    assert config.session_lock_timeout == config.session_lease_timeout == t
    assert dataclasses.replace(config, stream=True).session_lease_timeout == t


def test_both_names_of_one_setting_is_an_error() -> None:
    with pytest.raises(TypeError, match="max_llm_calls"):
        RunConfig(max_model_calls=3, max_llm_calls=4)
    with pytest.raises(TypeError, match="session_lock_timeout"):
        RunConfig(session_lease_timeout=1, session_lock_timeout=2)
    assert RunConfig().max_model_calls == 25 and RunConfig().session_lease_timeout == 30.0


def test_every_run_config_field_is_a_parameter_and_kept() -> None:
    import inspect

    params = inspect.signature(RunConfig).parameters
    config = RunConfig()
    for field in dataclasses.fields(RunConfig):
        assert field.name in params, f"RunConfig.__init__ does not take {field.name}"
        assert getattr(config, field.name) == field.default  # set, to its default
    assert dataclasses.replace(config) == config


async def test_max_llm_calls_stops_a_looping_model() -> None:
    def ping() -> str:
        """Ping."""
        return "pong"

    model = ScriptedModel([[Part.from_function_call("ping", {})]] * 5)
    runner = Runner(Agent("looper", model, tools=[ping]), app_name=APP)
    events = await run(runner, "go", max_llm_calls=2)
    assert len(model.requests) == 2
    assert events[-1].error_code == "agent.max_model_calls"


# -- tools ----------------------------------------------------------------------------------


async def test_run_async_takes_args_and_tool_context_by_keyword() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    ctx = SimpleToolContext()
    assert await add.run_async(args={"a": 2, "b": 3}, tool_context=ctx) == {"result": 5}
    assert await add.run_async(args={"a": 2, "b": 3}, tool_context=ctx) == await add.run(
        {"a": 2, "b": 3}, ctx
    )
    with pytest.raises(ToolError) as failed:
        await add.run_async(args={"a": "x"}, tool_context=ctx)
    assert failed.value.code == "tool.invalid_arguments"
    with pytest.raises(TypeError):
        await add.run_async({"a": 1, "b": 2})  # type: ignore[misc]


class StartJob(BaseTool):
    """A hand-written tool flagged long-running the way google-adk's tools are."""

    name = "start_job"
    description = "Start a job; its result comes later."
    is_long_running = True

    def __init__(self) -> None:
        self.started = 0

    async def run(self, args: Any, ctx: ToolContext | None = None) -> dict[str, Any]:
        self.started += 1
        return {"result": None}


async def test_is_long_running_as_a_class_attribute_makes_the_call_wait_for_its_result() -> None:
    job = StartJob()
    assert job.long_running is True and job.is_long_running is True
    model = ScriptedModel([[Part.from_function_call("start_job", {})], "Done."])
    runner = Runner(Agent("ops", model, tools=[job]), app_name=APP)
    (event,) = await run(runner, "start it")
    (call,) = event.get_function_calls()
    assert event.long_running_tool_ids == {call.id}
    assert len(model.requests) == 1  # the turn ends waiting for the job's result

    @tool
    def plain() -> None:
        """Nothing."""

    assert plain.is_long_running is False
    plain.is_long_running = True
    assert plain.long_running is True


async def test_save_and_load_artifact_take_filename_and_a_genai_part() -> None:
    ctx = SimpleToolContext()
    part = types.Part.from_bytes(data=b"\x89PNG", mime_type="image/png")
    assert await ctx.save_artifact(filename="chart.png", artifact=part) == 0
    assert await ctx.save_artifact("chart.png", part) == 1  # positionally, as google-adk
    loaded = await ctx.load_artifact(filename="chart.png", version=0)
    assert loaded is not None and (loaded.mime_type, loaded.data) == ("image/png", b"\x89PNG")
    assert ctx.actions.artifact_delta == {"chart.png": 1}
    with pytest.raises(TypeError, match="not both"):
        await ctx.save_artifact("a", b"x", filename="b")
    with pytest.raises(TypeError):
        await ctx.save_artifact(filename="a")


async def test_a_tool_saves_an_artifact_under_adk_keywords_in_a_run() -> None:
    @tool
    async def draw(ctx: ToolContext) -> int:
        """Draw a chart."""
        part = types.Part.from_bytes(data=b"svg", mime_type="image/svg+xml")
        return await ctx.save_artifact(filename="chart.svg", artifact=part)

    artifacts = InMemoryArtifactService()
    model = ScriptedModel([[Part.from_function_call("draw", {})], "Drawn."])
    runner = Runner(Agent("artist", model, tools=[draw]), app_name=APP, artifact_service=artifacts)
    await run(runner, "draw")
    stored = await artifacts.load_artifact(
        app_name=APP, user_id="u", session_id="s1", filename="chart.svg"
    )
    assert stored is not None and stored.mime_type == "image/svg+xml" and stored.data == b"svg"


async def test_request_confirmation_without_a_hint_pauses_the_call() -> None:
    ran: list[bool] = []

    @tool
    def wipe(ctx: ToolContext) -> str:
        """Wipe the disk."""
        if not ran:
            ran.append(True)
            ctx.request_confirmation()
        return "wiped"

    model = ScriptedModel([[Part.from_function_call("wipe", {})], "Waiting."])
    runner = Runner(Agent("ops", model, tools=[wipe]), app_name=APP)
    events = await run(runner, "wipe")
    (request,) = events[-1].get_function_calls()
    assert request.name == "request_confirmation"
    assert request.args["toolConfirmation"]["hint"] == ""


# -- models, events, sessions ---------------------------------------------------------------


def test_usage_metadata_reads_usage_under_genai_names() -> None:
    response = LlmResponse(usage={"input_tokens": 3, "output_tokens": 4})
    assert response.usage_metadata == UsageMetadata(3, 4, 7)
    meta = Event(author="a", usage={"input_tokens": 10}).usage_metadata
    assert meta is not None and meta.prompt_token_count == 10 and meta.total_token_count == 10
    assert meta.candidates_token_count is None
    assert LlmResponse().usage_metadata is None and Event(author="a").usage_metadata is None


async def test_tools_dict_is_the_requests_tools() -> None:
    seen: list[list[str]] = []

    def lookup(q: str) -> str:
        """Look up."""
        return q

    def before(ctx: Any, request: LlmRequest) -> None:
        assert request.tools_dict is request.tools
        seen.append(sorted(request.tools_dict))

    agent = Agent("a", ScriptedModel(["Hi."]), tools=[lookup], before_model_callback=before)
    await run(Runner(agent, app_name=APP), "hello")
    assert seen == [["lookup"]]


async def test_already_exists_error_is_session_exists_error() -> None:
    assert AlreadyExistsError is SessionExistsError
    service = InMemorySessionService()
    await service.create_session(app_name=APP, user_id="u", session_id="s")
    with pytest.raises(AlreadyExistsError):
        await service.create_session(app_name=APP, user_id="u", session_id="s")
