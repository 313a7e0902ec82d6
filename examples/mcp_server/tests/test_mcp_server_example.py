"""The mcp_server example, seen by the official SDK's client over stdio."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import mcp_types as types
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[3]


async def test_the_examples_tools_are_served_over_stdio() -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "examples.mcp_server"], cwd=ROOT
    )
    async with Client(params, cache=None) as client:
        assert client.server_info is not None
        assert client.server_info.name == "agent-tooling-examples"
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert sorted(tools) == [
            "analyze_sentiment",
            "find_symbol",
            "get_stock_price",
            "get_weather_report",
            "render_bar_chart",
        ]
        assert tools["get_stock_price"].annotations.read_only_hint  # type: ignore[union-attr]

        price = await client.call_tool("get_stock_price", {"symbol": "GOOG"})
        assert price.structured_content["price"] == 174.42  # type: ignore[index]

        unknown = await client.call_tool("get_weather_report", {"city": "Atlantis"})
        assert unknown.structured_content["status"] == "error"  # type: ignore[index]

        chart = await client.call_tool(
            "render_bar_chart", {"title": "t", "labels": ["a", "b"], "values": [1, 2]}
        )
        assert chart.structured_content["image"] == {"part": 0, "mime_type": "image/png"}  # type: ignore[index]
        image = next(b for b in chart.content if isinstance(b, types.ImageContent))
        assert base64.b64decode(image.data).startswith(b"\x89PNG")

        bad = await client.call_tool("render_bar_chart", {"title": "t", "labels": [], "values": []})
        assert bad.is_error
        # An error is its JSON text only (clients check structured content against the
        # tool's output schema even on errors).
        assert bad.structured_content is None
        [text] = [b for b in bad.content if isinstance(b, types.TextContent)]
        assert json.loads(text.text)["error"]["code"] == "tool.invalid_arguments"
