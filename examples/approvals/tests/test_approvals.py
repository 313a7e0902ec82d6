"""The approvals example: a destructive call waits for the user, then runs or not."""

from __future__ import annotations

from pathlib import Path

from examples._snapshots import check_snapshot

EXAMPLE = Path(__file__).resolve().parent.parent


def test_replay_matches_snapshot() -> None:
    replay = check_snapshot(EXAMPLE)
    _, ask_delete, confirmed, _ask_again, refused = (x.events for x in replay.exchanges)
    call, request = ask_delete
    assert request.get_function_calls()[0].name == "request_confirmation"
    held = request.get_function_calls()[0].args["originalFunctionCall"]
    assert held["id"] == call.get_function_calls()[0].id
    assert confirmed[0].get_function_responses()[0].response["status"] == "deleted"
    assert refused[0].get_function_responses()[0].response["error"]["code"] == "tool.rejected"
    # What the store holds at the end: r2 deleted on confirmation, r1 kept on refusal.
    assert list(replay.module.RECORDS) == ["r1", "r3"]


def test_delete_requires_confirmation() -> None:
    from examples._replay import load_agent_module

    module = load_agent_module(EXAMPLE)
    assert module.delete_record.require_confirmation is True
    assert module.delete_record.destructive and not module.delete_record.read_only
