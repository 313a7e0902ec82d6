"""The customer_support example: an urgent query is handed to the support agent."""

from __future__ import annotations

from pathlib import Path

from examples._replay import load_agent_module
from examples._snapshots import check_snapshot
from tooling import SimpleToolContext

EXAMPLE = Path(__file__).resolve().parent.parent


def test_replay_matches_snapshot() -> None:
    replay = check_snapshot(EXAMPLE)
    general, urgent, after = (x.events for x in replay.exchanges)
    assert [e.author for e in general] == ["front_desk"]
    _call, response, answer = urgent
    assert response.actions.transfer_to_agent == "support_agent"
    assert answer.author == "support_agent"
    # The support agent keeps the conversation afterwards.
    assert [e.author for e in after] == ["support_agent"]


def test_only_urgent_queries_are_transferred() -> None:
    module = load_agent_module(EXAMPLE)
    calm = SimpleToolContext(caller="front_desk")
    assert module.check_and_transfer("How do I export?", calm)["status"] == "not_urgent"
    assert calm.actions.transfer_to_agent is None
    rushed = SimpleToolContext(caller="front_desk")
    assert module.check_and_transfer("Outage! Help ASAP", rushed)["status"] == "transferred"
    assert rushed.actions.transfer_to_agent == "support_agent"
