"""Our tools in the OpenAI Agents SDK, through ``FunctionTool.on_invoke_tool`` (what the
SDK's runner calls) with the SDK's own ``ToolContext``."""

from __future__ import annotations

import json

import pytest
from agents import FunctionTool
from agents.strict_schema import ensure_strict_json_schema
from agents.tool_context import ToolContext as AgentsToolContext

from tests.adapters._ours import MEETING, blocking, lookup
from tooling import tool
from tooling.adapters import to_openai_agents


def context(call_id: str = "call_1", name: str = "lookup") -> AgentsToolContext[None]:
    return AgentsToolContext(
        context=None, tool_name=name, tool_call_id=call_id, tool_arguments="{}"
    )


async def invoke(tool: FunctionTool, arguments: dict | str, call_id: str = "call_1") -> dict:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    answer = await tool.on_invoke_tool(context(call_id, tool.name), text)
    return json.loads(answer)


async def test_the_context_is_hidden_and_cannot_be_spoofed() -> None:
    exported = to_openai_agents(lookup)
    assert set(exported.params_json_schema["properties"]) == {"city", "days"}
    answer = await invoke(exported, {"city": "Lisbon", "days": None}, call_id="call_7")
    assert answer["call"] == "call_7"
    spoofed = await invoke(exported, {"city": "Lisbon", "days": None, "tool_context": {}})
    assert spoofed["error"]["code"] == "tool.invalid_arguments"


async def test_the_artifact_is_not_what_the_model_sees() -> None:
    answer = await invoke(to_openai_agents(lookup), {"city": "Porto", "days": 2})
    assert answer == {"city": "Porto", "days": 2, "call": "call_1"}


async def test_a_failure_is_an_error_result_never_an_exception() -> None:
    exported = to_openai_agents(lookup)
    told = await invoke(exported, {"city": "Atlantis", "days": None})
    assert told["error"] == {"code": "weather.unknown", "message": "there is no such city"}
    crashed = await invoke(exported, {"city": "crash", "days": None})
    assert crashed["error"]["code"] == "tool.failed" and "abc123" not in json.dumps(crashed)
    broken = await invoke(exported, "{not json")
    assert broken["error"]["code"] == "tool.invalid_arguments"


async def test_sync_tools_run_off_the_event_loop() -> None:
    answer = await MEETING.run(to_openai_agents(blocking).on_invoke_tool(context(), "{}"))
    assert answer == "released"


async def test_an_optional_parameter_stays_optional_in_strict_mode() -> None:
    exported = to_openai_agents(lookup)
    assert exported.strict_json_schema is True
    schema = exported.params_json_schema
    assert ensure_strict_json_schema(json.loads(json.dumps(schema))) == schema
    assert schema["properties"]["days"]["anyOf"][1] == {"type": "null"}
    answer = await invoke(exported, {"city": "Braga", "days": None})
    assert answer["days"] == 3


async def test_confirmation_becomes_needs_approval() -> None:
    @tool(require_confirmation=lambda args: args["path"].startswith("/etc"))
    def delete(path: str) -> str:
        """Delete a file."""
        return path

    exported = to_openai_agents(delete)
    assert callable(exported.needs_approval)
    assert await exported.needs_approval(None, {"path": "/etc/passwd"}, "c") is True
    assert await exported.needs_approval(None, {"path": "/tmp/x"}, "c") is False


def test_the_non_strict_form_keeps_our_plain_schema() -> None:
    exported = to_openai_agents(lookup, strict=False)
    assert exported.strict_json_schema is False
    assert exported.params_json_schema == lookup.parameters_json_schema


@pytest.mark.parametrize("granted", [(), ("files.write",)])
async def test_scopes_are_granted_at_export(granted: tuple[str, ...]) -> None:
    @tool(scopes=("files.write",))
    def write(text: str) -> str:
        """Write."""
        return text

    exported = to_openai_agents(write, granted_scopes=granted)
    answer = await exported.on_invoke_tool(context(name="write"), '{"text": "hi"}')
    if granted:
        assert answer == "hi"  # a plain string result is sent as itself
    else:
        assert json.loads(answer)["error"]["code"] == "tool.forbidden"
