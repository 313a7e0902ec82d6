"""The mcp_client example: an agent using the mcp_server example's tools over MCP."""

from __future__ import annotations

import asyncio
from pathlib import Path

from examples._replay import load_agent_module
from examples._snapshots import check_snapshot
from tooling.mcp import McpTool

EXAMPLE = Path(__file__).resolve().parent.parent


def test_replay_matches_snapshot() -> None:
    replay = check_snapshot(EXAMPLE)
    both = replay.exchanges[0].events[1].get_function_responses()
    assert [r.name for r in both] == ["get_stock_price", "get_weather_report"]
    assert both[0].response["price"] == 174.42
    assert both[1].response["city"] == "Paris"
    offered = replay.module.root_agent.model.requests[0].tools
    assert sorted(offered) == ["find_symbol", "get_stock_price", "get_weather_report"]


def test_the_toolset_gives_the_servers_tools_and_closes_it() -> None:
    module = load_agent_module(EXAMPLE)
    (toolset,) = module.root_agent.toolsets

    async def look() -> None:
        try:
            tools = await toolset.get_tools_with_prefix()
            assert all(isinstance(t, McpTool) for t in tools)
            price = next(t for t in tools if t.name == "get_stock_price")
            assert price.read_only and price.concurrency_safe  # trusted annotations
            assert price.parameters_json_schema["required"] == ["symbol"]
        finally:
            await toolset.close()

    asyncio.run(look())
