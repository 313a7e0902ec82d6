"""The weather_sentiment example: its replay matches the snapshot; both tools' statuses."""

from __future__ import annotations

from pathlib import Path

from examples._replay import load_agent_module
from examples._snapshots import check_snapshot

EXAMPLE = Path(__file__).resolve().parent.parent


def test_replay_matches_snapshot() -> None:
    replay = check_snapshot(EXAMPLE)
    last = replay.exchanges[-1].events
    # Used in sequence: the report first, then the sentiment, one model turn each.
    assert [e.get_function_calls()[0].name for e in (last[0], last[2])] == [
        "get_weather_report",
        "analyze_sentiment",
    ]


def test_statuses() -> None:
    module = load_agent_module(EXAMPLE)
    assert module.get_weather_report("PARIS")["status"] == "success"
    assert module.get_weather_report("Atlantis") == {
        "status": "error",
        "error_message": "No weather report is available for 'Atlantis'.",
    }
    assert module.analyze_sentiment("What a lovely day")["sentiment"] == "positive"
    assert module.analyze_sentiment("I hate the rain")["sentiment"] == "negative"
    assert module.analyze_sentiment("I don't like it")["sentiment"] == "negative"
    assert module.analyze_sentiment("It is Tuesday")["sentiment"] == "neutral"
    assert module.analyze_sentiment("  ")["status"] == "error"
