"""Our tools in google-adk, through ``BaseTool.run_async`` with ADK's own ``ToolContext``
over a real ``InvocationContext`` and in-memory session service."""

from __future__ import annotations

import json
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.sessions import InMemorySessionService
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.adk.tools.tool_context import ToolContext as AdkToolContext

from tests.adapters._ours import MEETING, blocking, lookup
from tooling import ToolContext, tool
from tooling.adapters import to_adk


async def adk_context(
    state: dict[str, Any] | None = None,
    call_id: str = "adk_call_1",
    confirmation: ToolConfirmation | None = None,
) -> AdkToolContext:
    service = InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="u", state=state or {})
    agent = LlmAgent(name="helper", model="gemini-2.0-flash")
    invocation = InvocationContext(
        session_service=service, invocation_id="inv_1", agent=agent, session=session
    )
    return AdkToolContext(invocation, function_call_id=call_id, tool_confirmation=confirmation)


async def test_the_declaration_is_ours_and_the_context_is_hidden() -> None:
    exported = to_adk(lookup)
    declaration = exported._get_declaration()
    assert declaration.parameters_json_schema == lookup.parameters_json_schema
    ctx = await adk_context()
    answer = await exported.run_async(args={"city": "Lisbon"}, tool_context=ctx)
    assert answer["call"] == "adk_call_1"
    spoofed = await exported.run_async(args={"city": "x", "tool_context": 1}, tool_context=ctx)
    assert spoofed["error"]["code"] == "tool.invalid_arguments"


async def test_state_and_actions_go_through_adks_context() -> None:
    @tool
    def bump(by: int = 1, tool_context: ToolContext | None = None) -> dict[str, int]:
        """Add to the session's counter."""
        assert tool_context is not None
        count = tool_context.state.get("count", 0) + by
        tool_context.state["count"] = count
        tool_context.actions.skip_summarization = True
        return {"count": count}

    ctx = await adk_context(state={"count": 5})
    assert await to_adk(bump).run_async(args={"by": 2}, tool_context=ctx) == {"count": 7}
    assert ctx.state["count"] == 7
    assert ctx.actions.state_delta == {"count": 7}
    assert ctx.actions.skip_summarization is True


async def test_the_artifact_is_not_in_the_response() -> None:
    ctx = await adk_context()
    answer = await to_adk(lookup).run_async(args={"city": "Porto", "days": 2}, tool_context=ctx)
    assert answer == {"city": "Porto", "days": 2, "call": "adk_call_1"}


async def test_a_failure_is_an_error_response_never_an_exception() -> None:
    ctx = await adk_context()
    exported = to_adk(lookup)
    told = await exported.run_async(args={"city": "Atlantis"}, tool_context=ctx)
    assert told["error"]["code"] == "weather.unknown"
    crashed = await exported.run_async(args={"city": "crash"}, tool_context=ctx)
    assert crashed["error"]["code"] == "tool.failed" and "abc123" not in json.dumps(crashed)


async def test_sync_tools_run_off_the_event_loop() -> None:
    ctx = await adk_context()
    answer = await MEETING.run(to_adk(blocking).run_async(args={}, tool_context=ctx))
    assert answer == {"result": "released"}


async def test_an_optional_parameter_stays_optional() -> None:
    exported = to_adk(lookup)
    assert exported._get_declaration().parameters_json_schema["required"] == ["city"]
    ctx = await adk_context()
    answer = await exported.run_async(args={"city": "Braga", "days": None}, tool_context=ctx)
    assert answer["days"] == 3


async def test_long_running_is_kept_and_confirmation_goes_through_adk() -> None:
    @tool(long_running=True)
    def start_job(name: str) -> dict[str, str]:
        """Start a job."""
        return {"status": "pending", "job": name}

    assert to_adk(start_job).is_long_running is True

    @tool(require_confirmation=True)
    def delete(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    exported = to_adk(delete)
    asking = await adk_context()
    answer = await exported.run_async(args={"path": "/tmp/a"}, tool_context=asking)
    assert answer["error"]["code"] == "tool.confirmation_required"
    assert "adk_call_1" in asking.actions.requested_tool_confirmations

    yes = await adk_context(confirmation=ToolConfirmation(confirmed=True))
    assert await exported.run_async(args={"path": "/tmp/a"}, tool_context=yes) == {
        "result": "deleted /tmp/a"
    }
    no = await adk_context(confirmation=ToolConfirmation(confirmed=False))
    refused = await exported.run_async(args={"path": "/tmp/a"}, tool_context=no)
    assert refused["error"]["code"] == "tool.rejected"


async def test_a_whole_adk_run_records_our_state_write_on_its_event() -> None:
    from collections.abc import AsyncGenerator

    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.adk.runners import Runner
    from google.genai import types

    @tool
    def bump(by: int = 1, tool_context: ToolContext | None = None) -> dict[str, int]:
        """Add to the session's counter."""
        assert tool_context is not None
        count = tool_context.state.get("count", 0) + by
        tool_context.state["count"] = count
        return {"count": count}

    class Scripted(BaseLlm):
        model: str = "scripted"
        turns: int = 0

        async def generate_content_async(
            self, llm_request: Any, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            self.turns += 1
            call = types.FunctionCall(name="bump", args={"by": 2}, id="adk_f1")
            part = types.Part(function_call=call) if self.turns == 1 else types.Part(text="done")
            yield LlmResponse(content=types.Content(role="model", parts=[part]))

    service = InMemorySessionService()
    agent = LlmAgent(name="counter", model=Scripted(), tools=[to_adk(bump)])
    runner = Runner(agent=agent, app_name="app", session_service=service)
    session = await service.create_session(app_name="app", user_id="u", state={"count": 5})
    message = types.Content(role="user", parts=[types.Part(text="go")])
    events = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message=message)
    ]
    [answered] = [e for e in events if e.get_function_responses()]
    assert answered.get_function_responses()[0].response == {"count": 7}
    assert answered.actions.state_delta == {"count": 7}
    stored = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert stored is not None and stored.state["count"] == 7
