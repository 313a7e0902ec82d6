"""The long_running_file example: progress while the file is processed, then the totals."""

from __future__ import annotations

import asyncio
from pathlib import Path

from examples._replay import load_agent_module
from examples._snapshots import check_snapshot

EXAMPLE = Path(__file__).resolve().parent.parent


def test_replay_matches_snapshot() -> None:
    replay = check_snapshot(EXAMPLE)
    call, *updates, final, answer = replay.exchanges[0].events
    assert not call.long_running_tool_ids  # the generator finished within the run
    responses = [u.get_function_responses()[0] for u in updates]
    assert all(u.partial and r.will_continue for u, r in zip(updates, responses, strict=True))
    assert [r.response["percent"] for r in responses] == [20, 40, 60, 80]
    assert all(r.response["time_left_s"] >= 0 for r in responses)
    result = final.get_function_responses()[0].response
    text = (EXAMPLE / "files" / "field_notes.txt").read_text(encoding="utf-8")
    assert result["status"] == "completed"
    assert result["lines"] == len(text.splitlines())
    assert result["words"] == sum(result["words_per_chunk"])
    assert answer.is_final_response()


def test_only_files_of_the_example_can_be_read() -> None:
    module = load_agent_module(EXAMPLE)
    for name in ("../agent.py", "/etc/passwd", "missing.txt"):
        response = asyncio.run(module.process_file.run({"file_name": name}))
        assert response["status"] == "error"
        assert "field_notes.txt" in response["error_message"]


def test_the_description_says_it_runs_for_a_while() -> None:
    module = load_agent_module(EXAMPLE)
    assert module.process_file.long_running
    assert module.process_file.description.endswith("wait for its result.")
