"""LangChain both ways, through LangChain's own call path (``ainvoke`` with a ToolCall).

In: ``LangchainTool`` run by our ``Scheduler`` (which calls ``tool.ainvoke``). Out:
``to_langchain`` run by ``StructuredTool.ainvoke``/``invoke``. One test per property.
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import (
    InjectedToolArg,
    InjectedToolCallId,
    StructuredTool,
    ToolException,
)
from langchain_core.tools import tool as lc_tool

from tests.adapters._rendezvous import Rendezvous
from tooling import Scheduler, ToolCall, ToolContext, ToolError, ToolResult, tool
from tooling.adapters import LangchainTool, LangchainToolset, to_langchain


def tool_call(name: str, args: dict[str, Any], call_id: str = "tc_1") -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


@lc_tool(response_format="content_and_artifact")
def search(
    query: str,
    call_id: Annotated[str, InjectedToolCallId],
    user: Annotated[str, InjectedToolArg],
    limit: int = 3,
) -> tuple[str, dict[str, Any]]:
    """Search the catalogue."""
    return f"{limit} hits for {query!r} (user {user}, call {call_id})", {"rows": list(range(limit))}


async def one(tool: Any, args: dict[str, Any], call_id: str = "c1") -> Any:
    [response] = await Scheduler([tool]).dispatch([ToolCall(call_id, tool.name, args)])
    return response


# -- in ------------------------------------------------------------------------------------


async def test_in_injected_arguments_are_hidden_filled_by_us_and_cannot_be_spoofed() -> None:
    adapted = LangchainTool(search, inject={"user": lambda ctx: f"agent {ctx.agent_name}"})
    assert set(adapted.parameters_json_schema["properties"]) == {"query", "limit"}
    assert adapted.parameters_json_schema["required"] == ["query"]

    response = await one(adapted, {"query": "lamps"}, call_id="call_42")
    assert response.response == {
        "result": "3 hits for 'lamps' (user agent scheduler, call call_42)"
    }
    for spoof in ({"user": "admin"}, {"call_id": "forged"}):
        refused = await one(adapted, {"query": "lamps", **spoof})
        assert refused.error is not None and refused.error.code == "tool.invalid_arguments"
        assert refused.error.details[0]["loc"] == list(spoof)

    with pytest.raises(ValueError, match="user"):
        LangchainTool(search)  # an injected argument with no value


async def test_in_the_artifact_stays_apart() -> None:
    response = await one(LangchainTool(search, inject={"user": "ana"}), {"query": "q", "limit": 2})
    assert response.artifact == {"rows": [0, 1]}
    assert "rows" not in json.dumps(response.response)


async def test_in_a_failure_is_an_error_response() -> None:
    def handled(city: str) -> str:
        """Weather of a city."""
        raise ToolException(f"no weather for {city}")

    def unhandled(city: str) -> str:
        """Weather of a city."""
        raise RuntimeError("secret token abc123")

    told = StructuredTool.from_function(handled, name="handled", handle_tool_error=True)
    response = await one(LangchainTool(told), {"city": "Atlantis"})
    assert response.error is not None
    assert response.response["error"]["message"] == "no weather for Atlantis"

    hidden = StructuredTool.from_function(unhandled, name="unhandled")
    response = await one(LangchainTool(hidden), {"city": "x"})
    assert response.error is not None and response.error.code == "tool.failed"
    assert "abc123" not in json.dumps(response.response)

    bad = await one(LangchainTool(told), {"city": 5})
    assert bad.error is not None and bad.error.code == "tool.invalid_arguments"
    assert bad.error.details[0]["loc"] == ["city"]


async def test_in_sync_tools_run_off_the_loop_and_async_only_tools_work() -> None:
    meeting = Rendezvous()

    def blocking(x: int) -> str:
        """Wait for the loop."""
        return meeting.wait_in_tool()

    async def async_only(x: int) -> str:
        """Async only."""
        await asyncio.sleep(0)
        return f"async {x}"

    sync_tool = LangchainTool(StructuredTool.from_function(blocking, name="blocking"))
    assert sync_tool.runs_in_thread
    response = await meeting.run(one(sync_tool, {"x": 1}))
    assert response.response == {"result": "released"}

    coroutine_tool = StructuredTool.from_function(
        coroutine=async_only, name="async_only", description="Async only."
    )
    response = await one(LangchainTool(coroutine_tool), {"x": 2})
    assert response.response == {"result": "async 2"}


async def test_in_an_optional_parameter_stays_optional_in_strict_mode() -> None:
    adapted = LangchainTool(search, inject={"user": "ana"})
    strict = adapted.to_openai(strict=True)["function"]
    assert strict["strict"] is True
    assert "limit" in strict["parameters"]["required"]  # strict: listed, but nullable
    response = await one(adapted, {"query": "q", "limit": None})  # what a strict model sends
    assert response.response["result"].startswith("3 hits")


async def test_a_toolset_adapts_a_list_and_applies_prefix_and_inject() -> None:
    @lc_tool
    def ping() -> str:
        """Ping."""
        return "pong"

    toolset = LangchainToolset([search, ping], inject={"user": "ana"}, tool_name_prefix="lc")
    tools = await toolset.get_tools_with_prefix()
    assert [t.name for t in tools] == ["lc_search", "lc_ping"]
    [a, b] = await Scheduler(tools).dispatch(
        [ToolCall("1", "lc_search", {"query": "q"}), ToolCall("2", "lc_ping", {})]
    )
    assert "user ana" in a.response["result"] and b.response == {"result": "pong"}


# -- out -----------------------------------------------------------------------------------


@tool
async def lookup(city: str, days: int = 3, tool_context: ToolContext | None = None) -> ToolResult:
    """Look up the weather."""
    assert tool_context is not None
    if city == "Atlantis":
        raise ToolError("there is no such city", code="weather.unknown")
    if city == "crash":
        raise RuntimeError("secret token abc123")
    body = {"city": city, "days": days, "call": tool_context.function_call_id}
    return ToolResult(body, artifact={"raw": [city] * days})


async def test_out_the_context_is_hidden_and_cannot_be_spoofed() -> None:
    exported = to_langchain(lookup)
    assert set(exported.tool_call_schema["properties"]) == {"city", "days"}
    message = await exported.ainvoke(tool_call("lookup", {"city": "Lisbon"}, "call_7"))
    assert json.loads(message.content)["call"] == "call_7"

    spoofed = await exported.ainvoke(tool_call("lookup", {"city": "Lisbon", "tool_context": 1}))
    assert spoofed.status == "error"
    assert json.loads(spoofed.content)["error"]["code"] == "tool.invalid_arguments"


async def test_out_a_tool_result_is_content_and_artifact() -> None:
    message = await to_langchain(lookup).ainvoke(tool_call("lookup", {"city": "Porto", "days": 2}))
    assert isinstance(message, ToolMessage)
    assert message.artifact == {"raw": ["Porto", "Porto"]}
    assert "raw" not in message.content


async def test_out_a_failure_is_the_tools_error_text_never_an_exception() -> None:
    exported = to_langchain(lookup)
    message = await exported.ainvoke(tool_call("lookup", {"city": "Atlantis"}))
    assert message.status == "error"
    assert json.loads(message.content)["error"] == {
        "code": "weather.unknown",
        "message": "there is no such city",
    }
    crashed = await exported.ainvoke(tool_call("lookup", {"city": "crash"}))
    assert crashed.status == "error" and "abc123" not in crashed.content
    invalid = await exported.ainvoke(tool_call("lookup", {"city": "x", "days": "many"}))
    assert json.loads(invalid.content)["error"]["details"][0]["loc"] == ["days"]


async def test_out_sync_tools_run_off_the_loop_and_sync_invoke_works() -> None:
    meeting = Rendezvous()

    @tool
    def blocking() -> str:
        """Wait for the loop."""
        return meeting.wait_in_tool()

    exported = to_langchain(blocking)
    message = await meeting.run(exported.ainvoke(tool_call("blocking", {})))
    assert message.content == "released"

    # The sync path, from inside a running loop too.
    assert to_langchain(lookup).invoke({"city": "Faro", "days": 1}) == json.dumps(
        {"city": "Faro", "days": 1, "call": ""}
    )


async def test_out_an_optional_parameter_stays_optional() -> None:
    exported = to_langchain(lookup)
    assert exported.tool_call_schema["required"] == ["city"]
    message = await exported.ainvoke(tool_call("lookup", {"city": "Braga", "days": None}))
    assert json.loads(message.content)["days"] == 3  # a strict model's null is the default


def test_out_a_tool_needing_confirmation_is_refused() -> None:
    @tool(require_confirmation=True)
    def delete(path: str) -> str:
        """Delete a file."""
        return path

    with pytest.raises(ValueError, match="confirmation"):
        to_langchain(delete)


async def test_out_images_and_files_are_content_blocks_after_the_text() -> None:
    from tooling import Blob, FileRef

    @tool
    def chart() -> dict:
        """Draw a chart."""
        return {"image": Blob("image/png", b"PNG"), "data": FileRef("gs://b/d.csv", "text/csv")}

    message = await to_langchain(chart).ainvoke(tool_call("chart", {}))
    text, image, data = message.content
    assert json.loads(text["text"]) == {
        "image": {"part": 0, "mime_type": "image/png"},
        "data": {"part": 1, "mime_type": "text/csv"},
    }
    assert image == {"type": "image", "base64": "UE5H", "mime_type": "image/png"}
    assert data == {"type": "file", "url": "gs://b/d.csv", "mime_type": "text/csv"}
