"""Exception text stays out of events and model requests (unless ``expose_errors``), an
``AgentTool``'s child runs under its caller's ``RunConfig``, and a method tool taken from
its class is refused when the agent is built."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from agent_core import (
    Agent,
    AgentTool,
    BaseLlm,
    Event,
    InMemoryArtifactService,
    LlmRequest,
    LlmResponse,
    Part,
    RunConfig,
    Runner,
    ScriptedModel,
)
from agent_core._invocation.tool_context import InvocationToolContext
from tooling import BaseTool, BaseToolset, ReadonlyContext, Scheduler, tool

SECRET = "sk-live-0123456789"


class LeakyModel(BaseLlm):
    """A model adapter whose own code fails, with a secret in the message."""

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False):
        raise RuntimeError(f"connection failed for key {SECRET}")
        yield  # pragma: no cover


class QuotaModel(BaseLlm):
    """A provider's API error, passed on as the provider wrote it."""

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False):
        yield LlmResponse(error_code="429", error_message="Quota exceeded for project demo-1")


class LeakyToolset(BaseToolset):
    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        raise ConnectionError(f"cannot reach https://user:{SECRET}@tools.example")


async def run(agent: Agent, config: RunConfig | None = None, message: str = "go") -> list[Event]:
    async with Runner(agent, app_name="app") as runner:
        return [
            e
            async for e in runner.run_async(
                user_id="u", session_id="s", new_message=message, run_config=config
            )
        ]


def everything(events: list[Event]) -> str:
    return "\n".join(e.to_json() for e in events)


def failing_callback(*_: Any) -> None:
    raise PermissionError(f"token {SECRET} rejected")


CASES = {
    "model": lambda: Agent("a", LeakyModel("leaky")),
    "toolset": lambda: Agent("a", ScriptedModel(["hi"]), tools=[LeakyToolset()]),
    "before_model": lambda: Agent(
        "a", ScriptedModel(["hi"]), before_model_callback=failing_callback
    ),
    "after_model": lambda: Agent("a", ScriptedModel(["hi"]), after_model_callback=failing_callback),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_exception_text_is_kept_out_of_events_and_logged(case, caplog):
    caplog.set_level(logging.WARNING, logger="agent_core")
    events = await run(CASES[case]())
    error = events[-1]
    assert error.error_code is not None
    assert SECRET not in everything(events)
    assert "not shown" in (error.error_message or "")
    logged = [r for r in caplog.records if r.name == "agent_core" and r.exc_info]
    assert logged and SECRET in str(logged[-1].exc_info[1])  # the developer sees it


@pytest.mark.parametrize("case", list(CASES))
async def test_expose_errors_shows_exception_text(case):
    events = await run(CASES[case](), RunConfig(expose_errors=True))
    assert SECRET in (events[-1].error_message or "")


async def test_a_providers_api_error_is_passed_on_as_written():
    events = await run(Agent("a", QuotaModel("quota")))
    assert events[-1].error_code == "429"
    assert events[-1].error_message == "Quota exceeded for project demo-1"


def ask(request: str) -> list[Part]:
    return [Part.from_function_call("helper", {"request": request}, id="ask-1")]


async def test_a_child_agents_error_reaches_the_parent_model_without_its_text():
    child = Agent("helper", LeakyModel("leaky"), description="Helps.")
    parent_model = ScriptedModel([ask("help"), "sorry"])
    parent = Agent("boss", parent_model, tools=[AgentTool(child)])
    events = await run(parent)
    assert SECRET not in everything(events)
    told = json.dumps([c.to_dict() for c in parent_model.requests[-1].contents])
    assert "helper" in told and "RuntimeError" in told
    assert SECRET not in told


# -- an AgentTool's child runs under its caller's RunConfig ----------------------------------


@tool(scopes=("notes:write",))
def write_note(text: str) -> str:
    """Write a note.

    Args:
        text: The note.
    """
    return f"noted: {text}"


@tool
async def slow() -> str:
    """Take a long time."""
    await asyncio.sleep(30)
    return "late"


@tool
def leak() -> str:
    """Fail with a secret in the message."""
    raise ValueError(f"db password {SECRET}")


def child_agent(turns: list[Any]) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel(turns)
    return Agent("helper", model, description="Helps.", tools=[write_note, slow, leak]), model


def child_call(name: str, **args: Any) -> list[Part]:
    return [Part.from_function_call(name, args, id="c-1")]


def child_response(model: ScriptedModel) -> dict[str, Any]:
    (response,) = [
        p.function_response.response
        for c in model.requests[-1].contents
        for p in c.parts
        if p.function_response is not None
    ]
    return response


async def test_the_child_gets_the_callers_granted_scopes():
    child, child_model = child_agent([child_call("write_note", text="x"), "done"])
    parent = Agent("boss", ScriptedModel([ask("note x"), "ok"]), tools=[AgentTool(child)])
    await run(parent, RunConfig(granted_scopes=frozenset({"notes:write"})))
    assert child_response(child_model) == {"result": "noted: x"}

    child, child_model = child_agent([child_call("write_note", text="x"), "done"])
    parent = Agent("boss", ScriptedModel([ask("note x"), "ok"]), tools=[AgentTool(child)])
    await run(parent)
    assert child_response(child_model)["error"]["code"] == "tool.forbidden"


async def test_the_child_gets_the_callers_tool_timeout():
    # Called directly: inside a parent run the parent's own timeout would cut the
    # AgentTool call first.
    child, child_model = child_agent([child_call("slow"), "done"])
    ctx = InvocationToolContext(
        app_name="app",
        invocation_id="inv-1",
        agent_name="boss",
        user_id="u",
        session_id="s",
        state={},
        artifact_service=InMemoryArtifactService(),
        memory_service=None,
        function_call_id="ask-1",
        run_config=RunConfig(tool_timeout=0.2),
    )
    assert await AgentTool(child).run({"request": "wait"}, ctx) == {"result": "done"}
    assert child_response(child_model)["error"]["code"] == "tool.timeout"


@pytest.mark.parametrize("expose", [False, True])
async def test_the_child_gets_the_callers_expose_errors(expose):
    child, child_model = child_agent([child_call("leak"), "done"])
    parent = Agent("boss", ScriptedModel([ask("leak"), "ok"]), tools=[AgentTool(child)])
    await run(parent, RunConfig(expose_errors=expose))
    message = child_response(child_model)["error"]["message"]
    assert (SECRET in message) is expose


# -- a method tool taken from its class -------------------------------------------------------


class NotesStore:
    def __init__(self) -> None:
        self.notes: list[str] = []

    @tool
    def add_note(self, text: str) -> int:
        """Add a note.

        Args:
            text: The note.
        """
        self.notes.append(text)
        return len(self.notes)

    def plain_add(self, text: str) -> int:
        """Add a note (not decorated)."""
        return self.add_note(text)


@pytest.mark.parametrize(
    "method", [NotesStore.add_note, NotesStore.plain_add], ids=["tool", "plain"]
)
def test_a_method_tool_taken_from_its_class_is_refused_when_the_agent_is_built(method):
    with pytest.raises(TypeError, match="instance") as raised:
        Agent("a", ScriptedModel([]), tools=[method])
    assert "NotesStore" in str(raised.value)
    with pytest.raises(TypeError, match="instance"):
        Scheduler([method])


async def test_a_method_tool_from_an_instance_is_accepted():
    store = NotesStore()
    agent = Agent(
        "a",
        ScriptedModel([[Part.from_function_call("add_note", {"text": "hi"})], "ok"]),
        tools=[store.add_note],
    )
    await run(agent)
    assert store.notes == ["hi"]
