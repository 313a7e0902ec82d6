"""Some of the examples' tools, served over MCP.

``get_stock_price`` and ``find_symbol`` (from ``stock_price``), ``get_weather_report`` and
``analyze_sentiment`` (from ``weather_sentiment``) and ``render_bar_chart`` (from
``chart``, answering with a PNG image) become one MCP server. Each call runs through a
``Scheduler``, exactly as inside an agent: arguments are validated, errors come back as
``isError`` results with the error response, the chart comes back as an image block.

From the repository root::

    python -m examples.mcp_server                 # stdio: what an MCP client launches
    python -m examples.mcp_server --http 8000     # http://127.0.0.1:8000/mcp
    tooling serve examples/mcp_server/server.py   # the same tools through the CLI

``examples/mcp_client`` is an agent using this server's tools through an ``McpToolset``.
"""

from __future__ import annotations

from examples.chart.agent import render_bar_chart
from examples.stock_price.agent import find_symbol, get_stock_price
from examples.weather_sentiment.agent import analyze_sentiment, get_weather_report
from tooling.mcp import McpServer

TOOLS = [get_stock_price, find_symbol, get_weather_report, analyze_sentiment, render_bar_chart]

server = McpServer(
    TOOLS,
    name="agent-tooling-examples",
    version="1.0",
    instructions="Stock prices and weather reports from canned tables, and bar charts.",
)
