"""The stock_price example: its replay matches the snapshot; lookups and errors."""

from __future__ import annotations

from pathlib import Path

from examples._replay import load_agent_module
from examples._snapshots import check_snapshot

EXAMPLE = Path(__file__).resolve().parent.parent


def test_replay_matches_snapshot() -> None:
    replay = check_snapshot(EXAMPLE)
    unknown = replay.exchanges[2].events[1].get_function_responses()[0].response
    assert unknown["status"] == "error" and "ZZZZ" in unknown["error_message"]
    both = replay.exchanges[3].events
    assert [r.response["symbol"] for r in both[1].get_function_responses()] == ["AAPL", "NVDA"]


def test_lookups_read_the_shipped_table() -> None:
    module = load_agent_module(EXAMPLE)
    assert module.get_stock_price(" msft ")["price"] == 413.52
    assert module.get_stock_price("NOPE")["status"] == "error"
    assert module.find_symbol("alphabet")["matches"][0]["symbol"] == "GOOG"
    assert module.find_symbol("nothing like it")["status"] == "error"
    assert module.get_stock_price.read_only and module.get_stock_price.concurrency_safe
