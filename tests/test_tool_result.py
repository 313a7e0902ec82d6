"""``ToolResult``: the model sees the content, the application keeps the artifact.

The artifact is on ``ToolResponse.artifact`` (scheduler, process workers, generators),
reaches ``after_tool_callback``, is stored on the function-response event (every session
service loads it back) and is shown by the inspector; MCP serving puts it in the result's
``_meta`` and ``McpToolset`` reads it back. No model adapter ever sends it: each one's
request is read back from a loopback server speaking its API.
"""

from __future__ import annotations

import json
import logging
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _providers import no_proxies

from agent_core import (
    Agent,
    Content,
    Event,
    FunctionResponse,
    Part,
    Runner,
    ScriptedModel,
    SqliteSessionService,
)
from agent_core.models.base import BaseLlm, LlmRequest
from agent_core.models.gemini import GeminiModel
from tests._providers import DIALECTS, MODEL, Dialect, FakeServer, serving
from tooling import Scheduler, SimpleToolContext, ToolCall, ToolResult, tool

#: A value that must never appear in anything sent to a model.
SECRET_ROWS = [
    {"row": 1, "marker": "ARTIFACT-ONLY-7f3a"},
    {"row": 2, "marker": "ARTIFACT-ONLY-7f3a"},
]


@tool
def query(sql: str) -> ToolResult:
    """Run a query; the model gets a summary, the application the rows."""
    return ToolResult(f"{len(SECRET_ROWS)} rows for {sql}", artifact=SECRET_ROWS)


class Frame:
    """Stands for a value that is not JSON (a data frame, a connection)."""


@tool
def frame() -> ToolResult:
    """Build a frame."""
    return ToolResult({"shape": [2, 3]}, artifact=Frame())


def test_a_tool_result_is_its_content_for_the_model() -> None:
    result = ToolResult("two rows", artifact=[1, 2])
    assert (result.content, result.artifact) == ("two rows", [1, 2])
    assert ToolResult("x").artifact is None
    with pytest.raises(TypeError):
        ToolResult("x", [1])  # type: ignore[misc]  # the artifact is keyword-only
    assert query("select 1").content == "2 rows for select 1"  # still callable as written


async def test_run_gives_the_content_and_dispatch_keeps_the_artifact() -> None:
    assert await query.run({"sql": "q"}) == {"result": "2 rows for q"}
    [response] = await Scheduler([query]).dispatch([ToolCall("c1", "query", {"sql": "q"})])
    assert response.response == {"result": "2 rows for q"}
    assert response.artifact == SECRET_ROWS
    assert "ARTIFACT" not in json.dumps(response.response)


async def test_a_generator_yields_tool_results_each_with_its_artifact() -> None:
    @tool(long_running=True)
    def steps() -> Iterator[ToolResult]:
        """Work in steps."""
        yield ToolResult({"done": 1}, artifact="first")
        yield ToolResult({"done": 2}, artifact="second")

    async with steps.stream({}, SimpleToolContext()) as updates:
        seen = [(u.response, u.artifact, u.final) async for u in updates]
    assert seen == [
        ({"done": 1}, "first", False),
        ({"done": 2}, "second", False),
        ({"done": 2}, "second", True),
    ]


async def test_a_process_isolated_tool_sends_its_artifact_back() -> None:
    from tests._process_tools import with_artifact

    scheduler = Scheduler([with_artifact], max_processes=1)
    try:
        [response] = await scheduler.dispatch([ToolCall("p1", "with_artifact", {"n": 3})])
    finally:
        scheduler.close()
    assert response.error is None, response.response
    assert response.response == {"result": 3}
    assert response.artifact == {"squares": [0, 1, 4]}


def _run(agent: Agent, runner: Runner) -> list[Event]:
    return list(runner.run(user_id="u", session_id="s", new_message="go"))


def test_the_artifact_is_stored_and_never_in_the_next_model_request(tmp_path: Path) -> None:
    model = ScriptedModel([[Part.from_function_call("query", {"sql": "q"})], "Two rows."])
    seen: list[Any] = []

    def after(tool: Any, args: Any, ctx: Any, response: Any, *, artifact: Any = None) -> None:
        seen.append(artifact)

    agent = Agent("a", model, tools=[query], after_tool_callback=after)
    service = SqliteSessionService(tmp_path / "s.db")
    with Runner(agent, app_name="app", session_service=service) as runner:
        events = _run(agent, runner)
    [answer] = [r for e in events for r in e.get_function_responses()]
    assert answer.response == {"result": "2 rows for q"}
    assert answer.artifact == SECRET_ROWS
    assert answer.to_dict()["artifact"] == SECRET_ROWS
    assert seen == [SECRET_ROWS]

    # The model's second request holds the response without the artifact.
    sent = model.requests[1].contents
    assert "ARTIFACT" not in json.dumps([c.to_dict() for c in sent])
    assert any(p.function_response for c in sent for p in c.parts)

    # Stored: a fresh service over the same file loads it back.
    import asyncio

    again = SqliteSessionService(tmp_path / "s.db")
    session = asyncio.run(again.get_session(app_name="app", user_id="u", session_id="s"))
    assert session is not None
    stored = [r for e in session.events for r in e.get_function_responses()]
    assert [r.artifact for r in stored] == [SECRET_ROWS]


def test_a_callback_without_an_artifact_parameter_is_called_as_before() -> None:
    model = ScriptedModel([[Part.from_function_call("query", {"sql": "q"})], "ok"])
    calls: list[dict[str, Any]] = []

    def after(tool: Any, args: Any, ctx: Any, response: dict[str, Any]) -> None:
        calls.append(response)

    agent = Agent("a", model, tools=[query], after_tool_callback=after)
    with Runner(agent, app_name="app") as runner:
        _run(agent, runner)
    assert calls == [{"result": "2 rows for q"}]


def test_a_non_json_artifact_stays_on_the_response_with_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ScriptedModel([[Part.from_function_call("frame", {})], "done"])
    kept: list[Any] = []

    def after(tool: Any, args: Any, ctx: Any, response: Any, **extra: Any) -> None:
        kept.append(extra["artifact"])

    agent = Agent("a", model, tools=[frame], after_tool_callback=after)
    with caplog.at_level(logging.WARNING, logger="agent_core"), Runner(agent, app_name="x") as r:
        events = _run(agent, r)
    [answer] = [resp for e in events for resp in e.get_function_responses()]
    assert answer.response == {"shape": [2, 3]}
    assert answer.artifact is None and "artifact" not in answer.to_dict()
    assert len(kept) == 1 and isinstance(kept[0], Frame)
    warned = [rec for rec in caplog.records if "artifact" in rec.getMessage()]
    assert len(warned) == 1 and "frame" in warned[0].getMessage()


def test_the_wire_shape_round_trips_the_artifact() -> None:
    response = FunctionResponse(id="c", name="q", response={"result": 1}, artifact={"a": [1]})
    assert FunctionResponse.from_dict(response.to_dict()) == response
    event = Event(author="a", content=Content("user", [Part(function_response=response)]))
    assert Event.from_dict(json.loads(event.to_json())).get_function_responses() == [response]


# -- each model adapter's request ----------------------------------------------------------


def _history() -> list[Content]:
    return [
        Content("user", [Part.from_text("rows?")]),
        Content("model", [Part.from_function_call("query", {"sql": "q"}, id="call_1")]),
        Content(
            "user",
            [
                Part(
                    function_response=FunctionResponse(
                        id="call_1",
                        name="query",
                        response={"result": "2 rows"},
                        artifact=SECRET_ROWS,
                    )
                )
            ],
        ),
    ]


@pytest.fixture
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    no_proxies(monkeypatch)


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
async def test_no_provider_adapter_sends_the_artifact(no_proxy: None, dialect: Dialect) -> None:
    server: FakeServer
    with serving() as server:
        server.reply(dialect.turn(text="Two rows."))
        llm: BaseLlm = dialect.model(server)
        try:
            request = LlmRequest(model=MODEL, contents=_history(), tools={"query": query})
            [_ async for _ in llm.generate_content_async(request)]
        finally:
            await llm.aclose()  # type: ignore[attr-defined]
        body = json.dumps(server.last_body)
    assert "2 rows" in body  # the content went
    assert "ARTIFACT-ONLY" not in body


async def test_gemini_does_not_send_the_artifact(no_proxy: None) -> None:
    import threading
    from http.server import ThreadingHTTPServer

    from tests.test_gemini_model import FakeGemini, Reply, _candidate, _make_handler

    fake = FakeGemini()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(fake))
    fake.base_url = f"http://127.0.0.1:{httpd.server_port}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        fake.reply(Reply(body=_candidate({"text": "Two rows."})))
        gemini = GeminiModel(MODEL, api_key="test-key", base_url=fake.base_url)
        try:
            request = LlmRequest(model=MODEL, contents=_history(), tools={"query": query})
            [_ async for _ in gemini.generate_content_async(request)]
        finally:
            await gemini.aclose()
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
    body = json.dumps(fake.last_body)
    assert "2 rows" in body
    assert "ARTIFACT-ONLY" not in body


# -- MCP serving and the inspector ---------------------------------------------------------

TARGET = textwrap.dedent(
    """
    from tooling import ToolResult, tool

    @tool(read_only=True)
    def query(sql: str) -> ToolResult:
        '''Run a query.'''
        return ToolResult(f"2 rows for {sql}", artifact=[{"row": 1}, {"row": 2}])
    """
)


async def test_mcp_serving_puts_the_artifact_in_meta_and_the_toolset_reads_it(
    tmp_path: Path,
) -> None:
    pytest.importorskip("mcp")
    from mcp import Client, StdioServerParameters

    from tests._mcp_helpers import serve_args
    from tooling.mcp import McpToolset, StdioServer

    target = tmp_path / "rows.py"
    target.write_text(TARGET)
    params = StdioServerParameters(command=sys.executable, args=serve_args(str(target)))
    async with Client(params, mode="legacy", cache=None) as client:
        result = await client.call_tool("query", {"sql": "q"})
    assert result.is_error is False
    assert result.meta == {"artifact": [{"row": 1}, {"row": 2}]}
    assert result.structured_content == {"result": "2 rows for q"}
    assert '"row"' not in json.dumps([b.model_dump() for b in result.content])

    toolset = McpToolset(StdioServer(sys.executable, serve_args(str(target))))
    try:
        [remote] = await toolset.get_tools()
        [response] = await Scheduler([remote]).dispatch([ToolCall("m1", "query", {"sql": "q"})])
    finally:
        await toolset.close()
    assert response.response == {"result": "2 rows for q"}
    assert response.artifact == [{"row": 1}, {"row": 2}]


def test_the_inspector_shows_the_artifact_of_a_call_and_of_a_stored_response() -> None:
    from agent_core.web import serve
    from tests.test_web_api import request
    from tooling.web import serve_tools

    with serve_tools([query], title="t") as server:
        status, items = request(server, "POST", "/api/tools/query/call", {"args": {"sql": "q"}})
    assert status == 200
    [final] = [data for name, data in items if name == "response"]
    assert final["response"] == {"result": "2 rows for q"}
    assert final["artifact"] == SECRET_ROWS

    model = ScriptedModel([[Part.from_function_call("query", {"sql": "q"})], "ok"])
    agent = Agent("a", model, tools=[query])
    with Runner(agent, app_name="app") as runner:
        _run(agent, runner)
        with serve(runner) as web:
            status, page = request(web, "GET", "/api/sessions/u/s")
    assert status == 200
    stored = [
        p["functionResponse"]
        for e in page["events"]
        for p in (e.get("content") or {}).get("parts", [])
        if "functionResponse" in p
    ]
    assert [r.get("artifact") for r in stored] == [SECRET_ROWS]


def test_the_response_schema_describes_the_content() -> None:
    @tool
    def typed(n: int) -> ToolResult[list[int]]:
        """Numbers for the model."""
        return ToolResult(list(range(n)), artifact="raw")

    assert typed.response_json_schema == {
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"type": "integer"}}},
        "required": ["result"],
    }
    assert query.response_json_schema is None  # a bare ToolResult says nothing of its content
    assert all(d.code != "schema.unsupported_return" for d in query.diagnostics)
