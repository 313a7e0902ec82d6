"""The math_toolset example: prefixed toolset tools write the last operation to state."""

from __future__ import annotations

import asyncio
from pathlib import Path

from examples._replay import load_agent_module
from examples._snapshots import check_snapshot

EXAMPLE = Path(__file__).resolve().parent.parent


def test_replay_matches_snapshot() -> None:
    replay = check_snapshot(EXAMPLE)
    deltas = [x.events[1].actions.state_delta for x in replay.exchanges[1:3]]
    assert deltas == [{"last_operation": "17 + 25 = 42"}, {"last_operation": "42 × 3 = 126"}]
    failed = replay.exchanges[3].events[1]
    assert failed.get_function_responses()[0].response["error"]["code"] == "math.division_by_zero"
    assert failed.actions.state_delta == {}
    assert replay.session.state["last_operation"] == "42 × 3 = 126"
    # The instruction shows the model the state through {last_operation?}.
    requests = replay.module.root_agent.model.requests
    assert requests[0].system_instruction.endswith("(empty if there was none):")
    assert requests[-1].system_instruction.endswith("42 × 3 = 126")


def test_the_toolset_prefixes_its_tools_on_copies() -> None:
    module = load_agent_module(EXAMPLE)
    (toolset,) = module.root_agent.toolsets
    tools = asyncio.run(toolset.get_tools_with_prefix())
    assert [t.name for t in tools] == ["math_add", "math_subtract", "math_multiply", "math_divide"]
    assert [t.name for t in asyncio.run(toolset.get_tools())] == [
        "add",
        "subtract",
        "multiply",
        "divide",
    ]
    assert [t.name for t in module.root_agent.tools] == ["greet_user"]
