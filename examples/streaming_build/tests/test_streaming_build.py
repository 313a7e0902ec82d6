"""The streaming_build example: a subprocess's stdout and stderr stream as progress."""

from __future__ import annotations

import asyncio
from pathlib import Path

from examples._replay import load_agent_module
from examples._snapshots import check_snapshot
from tooling import SimpleToolContext, ToolProgress

EXAMPLE = Path(__file__).resolve().parent.parent


def test_replay_matches_snapshot() -> None:
    replay = check_snapshot(EXAMPLE)
    for exchange, code in zip(replay.exchanges, [0, 1], strict=True):
        call, *progress, response, _answer = exchange.events
        assert progress and all(e.progress is not None for e in progress)
        assert {e.progress.id for e in progress if e.progress} == {call.get_function_calls()[0].id}
        assert response.get_function_responses()[0].response["exit_code"] == code


def test_progress_arrives_per_stream_in_order() -> None:
    module = load_agent_module(EXAMPLE)
    seen: list[ToolProgress] = []
    ctx = SimpleToolContext(caller="test", on_progress=seen.append)
    result = asyncio.run(module.run_build.run({"target": "nothing"}, ctx))
    assert result["exit_code"] == 2 and result["status"] == "failed"
    assert [(p.stream, p.chunk) for p in seen] == [("stderr", "error: unknown target 'nothing'\n")]
