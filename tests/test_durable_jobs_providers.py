"""A durable job's result reaching OpenAI and Anthropic models, which take one tool
result per call: the pending answer is the call's result, the job's final result comes
as a user text naming the call and the job (loopback servers speaking each API)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from _providers import DIALECTS, Call, Dialect, FakeServer, no_proxies, serving

from agent_core import Agent, Runner
from tooling import tool


@tool(durable=True)
def make_report(topic: str) -> dict[str, Any]:
    """Write a report.

    Args:
        topic: What it is about.
    """
    return {"report": f"all about {topic}"}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    no_proxies(monkeypatch)
    with serving() as fake:
        yield fake


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
async def test_the_final_result_is_one_user_text_after_the_pending_result(
    server: FakeServer, dialect: Dialect
) -> None:
    server.reply(
        dialect.turn(calls=[Call("call_1", "make_report", '{"topic": "tides"}')]),
        dialect.turn(text="It is being written."),
        dialect.turn(text="Here it is: all about tides."),
    )
    model = dialect.model(server)
    runner = Runner(Agent("writer", model, tools=[make_report]), app_name="app")
    [e async for e in runner.run_async(user_id="u", session_id="s", new_message="report")]
    await runner.run_jobs()
    await model.aclose()  # type: ignore[attr-defined]
    assert len(server.requests) == 3
    last = server.requests[2]["body"]
    results = [r for r in dialect.results(last) if r.call_id == "call_1"]
    assert len(results) == 1 and json.loads(results[0].text)["status"] == "pending"
    text = json.dumps(last)
    assert "The result of your earlier call call_1 to make_report" in text
    assert "all about tides" in text
