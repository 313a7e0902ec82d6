"""An ``AgentTool``'s child reaches its caller's artifacts and memory through the caller's
``ToolContext``, whatever kind of context that is (a ``SimpleToolContext`` in a test or a
script, or the context of an agent run)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from agent_core import (
    Agent,
    AgentTool,
    InMemoryArtifactService,
    InMemoryMemoryService,
    Part,
    Runner,
    ScriptedModel,
)
from tooling import Blob, SimpleToolContext, ToolContext


async def keep(text: str, tool_context: ToolContext) -> dict[str, Any]:
    """Save a note as an artifact, read it back, and search memory for it."""
    version = await tool_context.save_artifact("note.txt", text)
    loaded = await tool_context.load_artifact("note.txt")
    hits = await tool_context.search_memory(text)
    return {
        "version": version,
        "loaded": loaded.data.decode() if loaded is not None else None,
        "names": await tool_context.list_artifacts(),
        "hits": len(hits),
    }


def clerk() -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel([[Part.from_function_call("keep", {"text": "milk"})], "Kept."])
    return Agent("clerk", model, description="Keeps notes.", tools=[keep]), model


def child_response(model: ScriptedModel) -> dict[str, Any]:
    part = model.requests[1].contents[2].parts[0]
    assert part.function_response is not None
    return part.function_response.response


async def test_under_a_simple_tool_context_the_child_saves_into_the_callers_artifacts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    agent, model = clerk()
    ctx = SimpleToolContext()
    await ctx.save_artifact("list.txt", "eggs")  # the caller already holds an artifact
    with caplog.at_level(logging.WARNING):
        result = await AgentTool(agent).run({"request": "keep milk"}, ctx)
    assert result == {"result": "Kept."}
    assert child_response(model) == {
        "version": 0,
        "loaded": "milk",
        "names": ["list.txt", "note.txt"],
        "hits": 0,
    }
    assert await ctx.load_artifact("note.txt") == Blob(data=b"milk", mime_type="text/plain")
    assert ctx.actions.artifact_delta == {"list.txt": 0, "note.txt": 0}
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_in_an_agent_run_the_child_saves_into_the_callers_session() -> None:
    agent, model = clerk()
    artifacts = InMemoryArtifactService()
    memory = InMemoryMemoryService()
    lead = Agent(
        "lead",
        ScriptedModel([[Part.from_function_call("clerk", {"request": "keep milk"})], "Done."]),
        tools=[AgentTool(agent)],
    )
    runner = Runner(lead, app_name="shop", artifact_service=artifacts, memory_service=memory)
    events = [e async for e in runner.run_async(user_id="u", session_id="s", new_message="go")]
    assert child_response(model)["loaded"] == "milk"
    assert await artifacts.list_artifact_keys(app_name="shop", user_id="u", session_id="s") == [
        "note.txt"
    ]
    answered = [e for e in events if e.get_function_responses()]
    assert answered[0].actions.artifact_delta == {"note.txt": 0}
