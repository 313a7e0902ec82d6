"""The openapi_petstore example: an agent using a REST API through its OpenAPI spec."""

from __future__ import annotations

import asyncio
from pathlib import Path

from examples._replay import load_agent_module
from examples._snapshots import check_snapshot
from tooling.openapi import RestApiTool

EXAMPLE = Path(__file__).resolve().parent.parent


def test_replay_matches_snapshot() -> None:
    replay = check_snapshot(EXAMPLE)
    listed = replay.exchanges[0].events[1].get_function_responses()[0].response
    assert [p["name"] for p in listed["result"]] == ["Rex", "Tom"]
    both = replay.exchanges[1].events[1].get_function_responses()
    assert [r.response["name"] for r in both] == ["Rex", "Nemo"]
    created = replay.exchanges[2].events[1].get_function_responses()[0].response
    assert created == {"id": 4, "name": "Polly", "status": "available", "tag": "parrot"}
    inventory = replay.exchanges[3].events[1].get_function_responses()[0].response
    assert inventory == {"available": 3, "sold": 1}  # the API key was sent
    missing = replay.exchanges[4].events[1].get_function_responses()[0].response
    assert missing["error"]["code"] == "http.error"
    assert missing["error"]["details"] == {
        "status": 404,
        "body": {"code": 404, "message": "no pet with id 42"},
    }


def test_the_toolset_has_one_tool_per_operation() -> None:
    module = load_agent_module(EXAMPLE)
    tools = asyncio.run(module.petstore.get_tools())
    assert [t.name for t in tools] == [
        "list_pets",
        "create_pet",
        "show_pet_by_id",
        "delete_pet",
        "get_inventory",
    ]
    assert all(isinstance(t, RestApiTool) for t in tools)
    by_name = {t.name: t for t in tools}
    assert by_name["list_pets"].read_only and by_name["list_pets"].concurrency_safe
    assert by_name["delete_pet"].is_destructive
    assert by_name["create_pet"].parameters_json_schema["required"] == ["name"]
