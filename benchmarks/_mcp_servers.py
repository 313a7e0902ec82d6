"""The servers ``bench_mcp.py`` measures, one no-op tool each: ``python _mcp_servers.py KIND``.

``ours``: ``tooling.mcp.McpServer``; ``sdk``: the SDK's own high-level ``MCPServer``;
``lowlevel``: the SDK's low-level ``Server`` with hand-written handlers (the floor). All
serve over stdio and count the requests they get (the ``requests`` tool tells).
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

counts: Counter[str] = Counter()


async def noop() -> dict[str, bool]:
    """Does nothing."""
    return {"ok": True}


def requests() -> dict[str, int]:
    """How many requests of each method the server got."""
    return dict(counts)


class CountRequests:
    """A server middleware (the SDK's ``Server.middleware``) counting requests by method."""

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if ctx.request_id is not None:
            counts[ctx.method] += 1
        return await call_next(ctx)


def main(kind: str) -> None:
    if kind == "ours":
        from tooling import tool
        from tooling.mcp import McpServer

        server = McpServer([tool(noop), tool(requests)], name="ours")
        server.server.middleware.append(CountRequests())
        server.run("stdio")
    elif kind == "sdk":
        from mcp.server.mcpserver import MCPServer

        app = MCPServer("sdk")
        app.tool()(noop)
        app.tool()(requests)
        app.run("stdio")
    elif kind == "lowlevel":
        import anyio
        import mcp_types as types
        from mcp.server.lowlevel.server import Server
        from mcp.server.stdio import stdio_server

        tool = types.Tool(name="noop", input_schema={"type": "object", "properties": {}})

        async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
            return types.ListToolsResult(tools=[tool])

        async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
            return types.CallToolResult(
                content=[types.TextContent(text='{"ok":true}')], structured_content={"ok": True}
            )

        low: Server[Any] = Server("lowlevel", on_list_tools=list_tools, on_call_tool=call_tool)

        async def serve() -> None:
            async with stdio_server() as (read_stream, write_stream):
                await low.run(read_stream, write_stream, low.create_initialization_options())

        anyio.run(serve)
    else:
        raise SystemExit(f"unknown server kind {kind!r}: ours, sdk or lowlevel")


if __name__ == "__main__":
    main(sys.argv[1])
