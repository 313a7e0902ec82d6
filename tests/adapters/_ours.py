"""Our tools for the out-direction tests: one with a context, an artifact, an error and an
optional parameter; one sync tool that proves it ran off the loop."""

from __future__ import annotations

from tooling import ToolContext, ToolError, ToolResult, tool

from ._rendezvous import Rendezvous

MEETING = Rendezvous()


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


@tool
def blocking() -> str:
    """Wait for the event loop to release the call."""
    return MEETING.wait_in_tool()
