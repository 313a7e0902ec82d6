"""The summary_agent_tool example: the assistant calls the summarizer agent as a tool."""

from __future__ import annotations

from pathlib import Path

from agent_core import AgentTool
from examples._replay import load_agent_module
from examples._snapshots import check_snapshot

EXAMPLE = Path(__file__).resolve().parent.parent


def test_replay_matches_snapshot() -> None:
    replay = check_snapshot(EXAMPLE)
    for exchange in replay.exchanges:
        call, response, answer = exchange.events
        assert call.get_function_calls()[0].name == "summarizer"
        summary = response.get_function_responses()[0].response["result"]
        assert summary and summary in (answer.content.text if answer.content else "")
        # The assistant keeps the conversation: every event is its own.
        assert {e.author for e in exchange.events} == {"assistant"}


def test_the_summarizer_is_a_tool_not_a_sub_agent() -> None:
    module = load_agent_module(EXAMPLE)
    (tool,) = module.root_agent.tools
    assert isinstance(tool, AgentTool) and tool.agent is module.summarizer
    assert module.root_agent.sub_agents == []
    assert list(tool.parameters_json_schema["properties"]) == ["request"]
