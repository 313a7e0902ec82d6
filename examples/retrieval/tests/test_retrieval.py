"""The retrieval example: its replay matches the snapshot; hits and artifacts; BM25 order."""

from __future__ import annotations

from pathlib import Path

from examples._replay import load_agent_module
from examples._snapshots import check_snapshot

EXAMPLE = Path(__file__).resolve().parent.parent


def test_replay_matches_snapshot() -> None:
    replay = check_snapshot(EXAMPLE)
    [returns] = replay.exchanges[0].events[1].get_function_responses()
    assert returns.response["hits"][0]["id"] == "returns"
    assert "text" not in returns.response["hits"][0]
    [damaged] = replay.exchanges[1].events[1].get_function_responses()
    assert damaged.response["hits"][0]["id"] == "damaged"


async def test_the_full_documents_are_the_artifact() -> None:
    module = load_agent_module(EXAMPLE)
    [response] = [r async for r in _responses(module.search_policies, "gift card refund")]
    assert response.response["hits"][0]["id"] == "gift-cards"
    assert response.artifact[0]["text"].startswith("Gift cards are valid for three years")


async def _responses(tool, query):  # type: ignore[no-untyped-def]
    from tooling import Scheduler, ToolCall

    for response in await Scheduler([tool]).dispatch(
        [ToolCall(id="c1", name=tool.name, args={"query": query})]
    ):
        yield response
