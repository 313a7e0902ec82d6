"""Guardrails: checks before and after a call, run once per call by the scheduler, so the
loop, the MCP server and an AgentTool's child run apply them alike; each verdict is a
span event. A guardrail that raises or hangs fails its call alone."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from agent_core import Agent, AgentTool, Event, Part, Runner, ScriptedModel
from tests._mcp_helpers import ROOT, serve_args
from tooling import Reject, Scheduler, ToolCall, ToolContext, tool
from tooling.mcp import McpToolset, StdioServer

POLICY_TOOLS = str(ROOT / "tests" / "_policy_tools.py")


def make_tools(counts: dict[str, int], guards: list[Any], outputs: list[Any] = ()) -> Any:  # type: ignore[assignment]
    @tool(guardrails=guards, output_guardrails=list(outputs), timeout=0.5)
    def write(path: str) -> str:
        """Write a file."""
        counts["runs"] = counts.get("runs", 0) + 1
        return f"wrote {path}"

    return write


def counting(counts: dict[str, int], verdict: Reject | None = None) -> Any:
    def check(args: dict[str, Any], ctx: ToolContext | None) -> Reject | None:
        counts["checks"] = counts.get("checks", 0) + 1
        return verdict

    return check


async def one(scheduler: Scheduler, name: str = "write", **args: Any) -> Any:
    [response] = await scheduler.dispatch([ToolCall("c1", name, args or {"path": "/tmp/a"})])
    return response


async def test_an_allowing_guardrail_runs_once_and_the_tool_runs() -> None:
    counts: dict[str, int] = {}
    response = await one(Scheduler([make_tools(counts, [counting(counts)])]))
    assert response.error is None and response.response == {"result": "wrote /tmp/a"}
    assert counts == {"checks": 1, "runs": 1}


async def test_a_reject_answers_tool_rejected_with_its_message_and_nothing_runs() -> None:
    counts: dict[str, int] = {}
    guard = counting(counts, Reject("not there; write under /tmp/out"))
    response = await one(Scheduler([make_tools(counts, [guard])]))
    assert response.error is not None and response.error.code == "tool.rejected"
    assert response.response["error"]["message"] == "not there; write under /tmp/out"
    assert counts == {"checks": 1}


async def test_an_async_guardrail_sees_the_validated_arguments() -> None:
    seen: list[dict[str, Any]] = []

    async def check(args: dict[str, Any], ctx: ToolContext | None) -> None:
        seen.append(args)

    @tool(guardrails=[check])
    def count(n: int = 3) -> int:
        """Count."""
        return n

    [response] = await Scheduler([count]).dispatch([ToolCall("c1", "count", '{"n": "7"}')])
    assert response.response == {"result": 7} and seen == [{"n": 7}]


async def test_a_raising_guardrail_fails_that_call_alone() -> None:
    counts: dict[str, int] = {}

    def broken(args: dict[str, Any], ctx: ToolContext | None) -> None:
        raise RuntimeError("secret-token-123")

    @tool
    def other() -> str:
        """Other."""
        return "fine"

    scheduler = Scheduler([make_tools(counts, [broken]), other])
    first, second = await scheduler.dispatch(
        [ToolCall("1", "write", {"path": "/tmp/a"}), ToolCall("2", "other", {})]
    )
    assert first.error is not None and first.error.code == "tool.failed"
    assert "RuntimeError" in first.error.message and "secret" not in first.error.message
    assert second.response == {"result": "fine"}
    assert "runs" not in counts


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_hanging_guardrail_fails_the_call_within_its_time_limit(kind: str) -> None:
    counts: dict[str, int] = {}

    def hangs(args: dict[str, Any], ctx: ToolContext | None) -> None:
        time.sleep(3)

    async def hangs_async(args: dict[str, Any], ctx: ToolContext | None) -> None:
        await asyncio.sleep(30)

    write = make_tools(counts, [hangs if kind == "sync" else hangs_async])
    started = time.monotonic()
    response = await one(Scheduler([write]))
    assert response.error is not None and response.error.code == "tool.failed"
    assert "did not answer within 0.5 s" in response.error.message
    assert time.monotonic() - started < 2.5
    assert "runs" not in counts


async def test_an_output_guardrail_replaces_a_result_it_rejects() -> None:
    counts: dict[str, int] = {}
    seen: list[Any] = []

    def no_secrets(args: dict[str, Any], ctx: ToolContext | None, response: dict) -> Any:
        seen.append(response)
        return Reject("the result held a secret; ask for less")

    response = await one(Scheduler([make_tools(counts, [], [no_secrets])]))
    assert response.error is not None and response.error.code == "tool.rejected"
    assert response.response["error"]["message"] == "the result held a secret; ask for less"
    assert seen == [{"result": "wrote /tmp/a"}] and counts == {"runs": 1}


def test_guardrails_must_be_a_list_of_functions() -> None:
    with pytest.raises(TypeError, match="guardrails"):
        tool(name="f", guardrails=lambda a, c: None)(lambda: 1)  # type: ignore[arg-type]


# -- the loop, AgentTool and the MCP server apply them alike -------------------------------


async def collect(runner: Runner, text: str = "go") -> list[Event]:
    return [e async for e in runner.run_async(user_id="u", session_id="s", new_message=text)]


async def test_the_loop_tells_the_model_the_rejection_and_goes_on() -> None:
    counts: dict[str, int] = {}
    guard = counting(counts, Reject("use /tmp"))
    model = ScriptedModel([[Part.from_function_call("write", {"path": "/etc/x"})], "ok"])
    events = await collect(
        Runner(Agent("a", model, tools=[make_tools(counts, [guard])]), app_name="g")
    )
    [response] = events[1].get_function_responses()
    assert response.response["error"] == {"code": "tool.rejected", "message": "use /tmp"}
    assert counts == {"checks": 1} and len(model.requests) == 2


async def test_an_agent_tools_child_run_applies_them() -> None:
    counts: dict[str, int] = {}
    guard = counting(counts, Reject("use /tmp"))
    child_model = ScriptedModel(
        [[Part.from_function_call("write", {"path": "/etc/x"})], "could not write"]
    )
    child = Agent("writer", child_model, description="Writes.", tools=[make_tools(counts, [guard])])
    parent_model = ScriptedModel(
        [[Part.from_function_call("writer", {"request": "write /etc/x"})], "done"]
    )
    events = await collect(
        Runner(Agent("lead", parent_model, tools=[AgentTool(child)]), app_name="g")
    )
    assert counts == {"checks": 1}
    sent_back = child_model.requests[1].contents[-1].parts[0].function_response
    assert sent_back is not None and sent_back.response["error"]["code"] == "tool.rejected"
    assert events[-1].content is not None and events[-1].content.text == "done"


async def test_the_mcp_server_applies_them_and_lists_only_what_may_be_called() -> None:
    toolset = McpToolset(StdioServer(sys.executable, serve_args(POLICY_TOOLS), cwd=ROOT))
    try:
        # Only what a session may call is listed: not a tool whose scopes are not
        # granted, nor one whose available= check says no.
        [read_file] = await toolset.get_tools()
        assert await read_file.run({"path": "/tmp/a"}) == {"result": "contents of /tmp/a"}
        with pytest.raises(Exception, match="paths under /root are off limits"):
            await read_file.run({"path": "/root/.ssh/id_rsa"})
    finally:
        await toolset.close()


# -- span events ---------------------------------------------------------------------------


@pytest.fixture
def spans() -> Iterator[Any]:
    sdk = pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry import trace
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.util._once import Once

    memory = InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    trace._TRACER_PROVIDER_SET_ONCE = Once()  # type: ignore[attr-defined]
    trace._TRACER_PROVIDER = None  # type: ignore[attr-defined]
    trace.set_tracer_provider(provider)
    try:
        yield memory
    finally:
        trace._TRACER_PROVIDER_SET_ONCE = Once()  # type: ignore[attr-defined]
        trace._TRACER_PROVIDER = None  # type: ignore[attr-defined]
        provider.shutdown()


async def test_each_verdict_is_a_span_event(spans: Any) -> None:
    counts: dict[str, int] = {}
    allow = counting(counts)
    deny = counting(counts, Reject("no"))
    await one(Scheduler([make_tools(counts, [allow, deny])]))
    [span] = [s for s in spans.get_finished_spans() if s.name == "execute_tool write"]
    verdicts = [
        (e.attributes["tooling.guardrail.stage"], e.attributes["tooling.guardrail.verdict"])
        for e in span.events
        if e.name == "tooling.guardrail"
    ]
    assert verdicts == [("input", "allowed"), ("input", "rejected")]
    assert span.attributes["error.type"] == "tool.rejected"


async def test_the_mcp_server_announces_a_list_change_when_scopes_are_granted() -> None:
    server = StdioServer(sys.executable, [str(ROOT / "tests" / "_mcp_policy_server.py")], cwd=ROOT)
    toolset = McpToolset(server)
    try:
        listed = {t.name for t in await toolset.get_tools()}
        assert listed == {"read_file", "grant_admin"}
        grant = next(t for t in await toolset.get_tools() if t.name == "grant_admin")
        assert await grant.run({}) == {"result": "granted"}
        deadline = time.monotonic() + 20
        while toolset._tools is not None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert toolset._tools is None  # the server said its list changed
        relisted = {t.name: t for t in await toolset.get_tools()}
        assert set(relisted) == {"read_file", "grant_admin", "drop_table"}
        assert await relisted["drop_table"].run({"name": "old"}) == {"result": "old"}
    finally:
        await toolset.close()
