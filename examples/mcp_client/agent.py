"""An agent whose tools live in another process: an MCP server, used as a toolset.

``McpToolset(StdioServer(...))`` starts ``python -m examples.mcp_server`` (some of the
other examples' tools, served over MCP) on first use, lists its tools once and keeps
them until the server says the list changed. Each tool is an ``McpTool``: the model sees
the server's schemas; arguments are checked against them before anything is sent; the
answers come back as ordinary function responses.

``tool_filter`` keeps three of the server's five tools. ``trust_annotations=True``
because we started this server ourselves: its ``readOnlyHint`` then counts, so the two
lookups of one turn run side by side (a hint from a server you do not trust must not
make calls overlap, so the default ignores them). The runner closes the toolset when it
is done, which stops the server process.
"""

from __future__ import annotations

import sys
from pathlib import Path

from agent_core import Agent
from tooling.mcp import McpToolset, StdioServer

ROOT = Path(__file__).resolve().parent.parent.parent

examples_server = McpToolset(
    StdioServer(sys.executable, ["-m", "examples.mcp_server"], cwd=ROOT),
    tool_filter=["get_stock_price", "find_symbol", "get_weather_report"],
    trust_annotations=True,
)

root_agent = Agent(
    name="mcp_client",
    model="gemini-2.5-flash",
    description="Answers about stock prices and the weather with tools from an MCP server.",
    instruction=(
        "You answer questions about stock prices and the weather. Use get_stock_price "
        "for a ticker symbol, find_symbol first when the user names a company, and "
        "get_weather_report for a city. When a question needs several lookups, ask for "
        "them together. Quote the figures the tools give, with their dates."
    ),
    tools=[examples_server],
)
