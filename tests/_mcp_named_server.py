"""An MCP server (the official SDK's low-level ``Server``, stdio) whose tools have names
no model provider takes as they are: SEP-986 names with ``.`` and ``/``, and one of 100
characters. ``echo`` answers with the name it was called by and its arguments."""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server

LONG = "analytics.reports." + "quarterly_revenue_by_region_" * 3 + "export"
NAMES = ["github.issues/create", "github.issues/list", LONG]


def _tool(name: str) -> types.Tool:
    schema = {"type": "object", "properties": {"title": {"type": "string"}}, "required": []}
    return types.Tool(name=name, description=f"The {name} tool.", input_schema=schema)


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[_tool(n) for n in NAMES])


async def call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    answer = {"called": params.name, "args": params.arguments or {}}
    return types.CallToolResult(content=[types.TextContent(text="ok")], structured_content=answer)


server: Server[Any] = Server(
    "named", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool
)


async def main() -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
