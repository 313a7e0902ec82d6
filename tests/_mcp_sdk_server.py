"""An MCP server written only with the official SDK's low-level ``Server`` (no tooling).

``python tests/_mcp_sdk_server.py`` serves over stdio; ``--port N`` over streamable HTTP
on 127.0.0.1; ``--legacy`` refuses ``server/discover``, so clients use the initialize
handshake (HTTP sessions). It lists its tools two per page, counts the requests it
gets (the ``stats`` tool tells), and ``change_tools`` adds a tool and announces that the
list changed.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError

PAGE = 2
PIXEL = base64.b64encode(b"\x89PNG fake").decode()

counts = {"lists": 0, "calls": 0}
bus = InMemorySubscriptionBus()
sessions: list[Any] = []


def _tool(name: str, properties: dict[str, Any], **extra: Any) -> types.Tool:
    schema = {"type": "object", "properties": properties, "required": list(properties)}
    return types.Tool(name=name, description=f"The {name} tool.", input_schema=schema, **extra)


TOOLS = [
    _tool(
        "echo",
        {"text": {"type": "string"}},
        output_schema={"type": "object", "properties": {"echo": {"type": "string"}}},
        annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True),
    ),
    _tool("text_only", {}),
    _tool("image", {}),
    _tool("fail", {}),
    _tool("slow", {"marker": {"type": "string"}}),
    _tool("stats", {}),
    _tool("change_tools", {}),
    # Optional parameters whose schemas take no null (a strict model sends null for them).
    types.Tool(
        name="count",
        description="Counts up to n.",
        input_schema={
            "type": "object",
            "properties": {"n": {"type": "integer"}, "label": {"type": "string"}},
        },
    ),
    _tool("triple", {"a": {"type": "string"}, "b": {"type": "string"}, "c": {"type": "string"}}),
    _tool("in_background", {}, execution=types.ToolExecution(task_support="required")),
    _tool("summarize", {}),
]


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    counts["lists"] += 1
    if ctx.session.client_params is not None and ctx.session not in sessions:
        sessions.append(ctx.session)
    start = int(params.cursor) if params is not None and params.cursor else 0
    page = TOOLS[start : start + PAGE]
    more = start + PAGE < len(TOOLS)
    return types.ListToolsResult(tools=page, next_cursor=str(start + PAGE) if more else None)


def _text(text: str) -> list[types.ContentBlock]:
    return [types.TextContent(text=text)]


async def call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    counts["calls"] += 1
    args = params.arguments or {}
    name = params.name
    if name == "echo":
        return types.CallToolResult(
            content=_text(args["text"]), structured_content={"echo": args["text"]}
        )
    if name == "text_only":
        return types.CallToolResult(content=_text("plain words"))
    if name == "image":
        return types.CallToolResult(content=[types.ImageContent(data=PIXEL, mime_type="image/png")])
    if name == "fail":
        return types.CallToolResult(content=_text("it broke, try later"), is_error=True)
    if name == "slow":
        marker = Path(args["marker"])
        marker.with_suffix(".started").write_text("started")
        try:
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            marker.with_suffix(".cancelled").write_text("cancelled")
            raise
        return types.CallToolResult(content=_text("slept"))
    if name == "summarize":  # asks the client's model (2026-07-28: an input request)
        question = types.SamplingMessage(role="user", content=types.TextContent(text="Sum up"))
        request = types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(messages=[question], max_tokens=10)
        )
        return types.InputRequiredResult(input_requests={"sample": request})  # type: ignore[return-value]
    if name in ("count", "triple"):
        return types.CallToolResult(content=_text("ok"), structured_content=dict(args))
    if name == "stats":
        return types.CallToolResult(content=_text("stats"), structured_content=dict(counts))
    if name == "change_tools":
        if all(t.name != "extra" for t in TOOLS):
            TOOLS.append(_tool("extra", {}))
        await bus.publish(ToolsListChanged())
        for session in sessions:
            await session.send_tool_list_changed()
        return types.CallToolResult(content=_text("changed"))
    return types.CallToolResult(content=_text(f"unknown tool {name}"), is_error=True)


server: Server[Any] = Server(
    "sdk-only",
    version="1.0",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_subscriptions_listen=ListenHandler(bus),
)


class HandshakeOnly:
    """A server middleware refusing the 2026-07-28 ``server/discover`` probe."""

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if ctx.method == "server/discover":
            raise MCPError(types.METHOD_NOT_FOUND, "Method not found")
        return await call_next(ctx)


async def main(port: int | None) -> None:
    if port is None:
        from mcp.server.stdio import stdio_server

        options = server.create_initialization_options(NotificationOptions(tools_changed=True))
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, options)
    else:
        import uvicorn

        app = server.streamable_http_app(host="127.0.0.1")
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        await uvicorn.Server(config).serve()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=None)
    parser.add_argument("--legacy", action="store_true")
    options = parser.parse_args()
    if options.legacy:
        server.middleware.append(HandshakeOnly())
    asyncio.run(main(options.port))
