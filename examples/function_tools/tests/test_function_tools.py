"""The function_tools example: its replay matches the snapshot; the tools stand alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from examples._replay import load_agent_module
from examples._snapshots import check_snapshot

EXAMPLE = Path(__file__).resolve().parent.parent


def test_replay_matches_snapshot() -> None:
    replay = check_snapshot(EXAMPLE)
    first, second, third = (x.events for x in replay.exchanges)
    assert first[1].get_function_responses()[0].response == {"result": 1}
    # The second call uses the first call's result, one model turn later.
    assert [e.get_function_calls()[0].args for e in (second[0], second[2])] == [
        {},
        {"number": 2},
    ]
    # Two calls in one model turn, answered together in one event.
    assert [c.name for c in third[0].get_function_calls()] == ["generate_random_number", "is_even"]
    assert [r.response for r in third[1].get_function_responses()] == [
        {"result": 3},
        {"result": False},
    ]


def test_counter_switch_makes_numbers_predictable() -> None:
    module = load_agent_module(EXAMPLE)
    assert [module.generate_random_number() for _ in range(3)] == [1, 2, 3]
    assert module.is_even(4) and not module.is_even(5)


def test_random_numbers_without_the_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    module = load_agent_module(EXAMPLE)
    monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)
    monkeypatch.delenv("FUNCTION_TOOLS_COUNTER", raising=False)
    values = {module.generate_random_number(5) for _ in range(200)}
    assert values <= set(range(6)) and len(values) > 1


def test_the_schema_comes_from_the_signature() -> None:
    module = load_agent_module(EXAMPLE)
    tools = {t.name: t for t in module.root_agent.tools}
    schema = tools["generate_random_number"].parameters_json_schema
    assert schema["properties"]["max_value"]["default"] == 100
    assert "required" not in schema or schema["required"] == []
    assert tools["is_even"].parameters_json_schema["required"] == ["number"]
