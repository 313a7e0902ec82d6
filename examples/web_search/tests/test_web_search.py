"""The web_search example: its replay matches the snapshot; citations reach the events."""

from __future__ import annotations

from pathlib import Path

from examples._replay import load_agent_module
from examples._snapshots import check_snapshot
from tooling.builtin import WebSearch

EXAMPLE = Path(__file__).resolve().parent.parent


def test_replay_matches_snapshot() -> None:
    replay = check_snapshot(EXAMPLE)
    [answer] = replay.exchanges[0].events
    assert answer.citations is not None
    assert [c["uri"] for c in answer.citations] == [
        "https://science.nasa.gov/moon/facts/",
        "https://en.wikipedia.org/wiki/Lunar_distance",
    ]
    converted = replay.exchanges[1].events[1].get_function_responses()[0].response
    assert converted == {"result": 238855.086}


def test_the_search_is_a_built_in_and_each_provider_gets_its_form() -> None:
    module = load_agent_module(EXAMPLE)
    search = module.root_agent.tools[0]
    assert isinstance(search, WebSearch)
    assert search.to_openai() == {"type": "web_search"}
    assert search.to_anthropic()["type"] == "web_search_20250305"
    assert search.to_gemini().google_search is not None
