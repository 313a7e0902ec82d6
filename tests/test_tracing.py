"""Tracing: ``execute_tool``, ``chat`` and ``invoke_agent`` spans, read back from the
OpenTelemetry SDK's in-memory exporter.

Each test installs a real SDK tracer provider as the global one and removes it afterwards
(the API allows setting it once per process; the fixture resets that guard, as
opentelemetry's own test utilities do).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from opentelemetry.util._once import Once

from tooling import ExecutionStrategy, Scheduler, ToolCall, tool
from tooling._tracing import CAPTURE_ENV

AUTO = ExecutionStrategy.AUTO
CONTENT_KEYS = {
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
}


def _set_global_provider(provider: Any) -> None:
    trace._TRACER_PROVIDER_SET_ONCE = Once()  # type: ignore[attr-defined]
    trace._TRACER_PROVIDER = None  # type: ignore[attr-defined]
    if provider is not None:
        trace.set_tracer_provider(provider)


@pytest.fixture
def exporter(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> Iterator[InMemorySpanExporter]:
    monkeypatch.delenv(CAPTURE_ENV, raising=False)
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    _set_global_provider(provider)
    try:
        yield memory
    finally:
        _set_global_provider(None)
        provider.shutdown()
    # A context attached in one place and detached in another is logged by the API.
    troubles = [
        r
        for phase in ("setup", "call", "teardown")
        for r in caplog.get_records(phase)  # type: ignore[arg-type]
        if r.name.startswith("opentelemetry")
    ]
    assert not troubles, [r.getMessage() for r in troubles]


def by_name(spans: tuple[ReadableSpan, ...] | list[ReadableSpan]) -> dict[str, ReadableSpan]:
    named = {s.name: s for s in spans}
    assert len(named) == len(spans), [s.name for s in spans]
    return named


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


# -- tools ---------------------------------------------------------------------------------

ARRIVED = threading.Barrier(2, timeout=10)


@tool(read_only=True, concurrency_safe=True)
def read_a(path: str) -> str:
    """Read a (meets read_b: both must run at once)."""
    ARRIVED.wait()
    return f"a:{path}"


@tool(read_only=True, concurrency_safe=True)
def read_b(path: str) -> str:
    """Read b."""
    ARRIVED.wait()
    return f"b:{path}"


@tool
def write(path: str, text: str) -> str:
    """Write (a barrier)."""
    return "written"


@tool
def broken(secret: str) -> str:
    """Fails with text that must not reach the trace."""
    raise ValueError(f"the secret was {secret}")


@tool(timeout=0.05)
async def slow() -> str:
    """Never finishes in time."""
    await asyncio.sleep(30)
    return "late"


@tool
def counting(n: int) -> Iterator[dict[str, int]]:
    """Yields n + 1 responses; each is told as it comes, the last is also the final one."""
    for i in range(n):
        yield {"step": i}
    yield {"done": n}


@tool
def nested() -> str:
    """Makes a span of its own (on a worker thread)."""
    with trace.get_tracer("user").start_as_current_span("inside the tool"):
        return "ok"


# -- the scheduler ---------------------------------------------------------------------------


async def test_each_call_is_a_sibling_span_under_the_current_one(exporter):
    scheduler = Scheduler([read_a, read_b, write, broken, slow], strategy=AUTO)
    calls = [
        ToolCall("c1", "read_a", {"path": "x"}),
        ToolCall("c2", "read_b", {"path": "y"}),
        ToolCall("c3", "write", {"path": "x", "text": "t"}),
        ToolCall("c4", "broken", {"secret": "hunter2"}),
        ToolCall("c5", "slow", {}),
        ToolCall("c6", "missing", {}),
    ]
    with trace.get_tracer("test").start_as_current_span("turn") as turn:
        responses = await scheduler.dispatch(calls)
    assert [r.error.code if r.error else None for r in responses] == [
        None,
        None,
        None,
        "tool.failed",
        "tool.timeout",
        "tool.not_found",
    ]
    spans = by_name(exporter.get_finished_spans())
    assert set(spans) == {
        "turn",
        "execute_tool read_a",
        "execute_tool read_b",
        "execute_tool write",
        "execute_tool broken",
        "execute_tool slow",
        "execute_tool missing",
    }
    turn_id = turn.get_span_context().span_id
    for name, span in spans.items():
        if name != "turn":
            assert parent_id(span) == turn_id, name
            assert span.kind is trace.SpanKind.INTERNAL

    a = spans["execute_tool read_a"].attributes
    assert a["gen_ai.operation.name"] == "execute_tool"
    assert a["gen_ai.tool.name"] == "read_a"
    assert a["gen_ai.tool.call.id"] == "c1"
    assert a["gen_ai.tool.type"] == "function"
    assert a["tooling.strategy"] == "auto"
    assert a["tooling.call.index"] == 0
    assert a["tooling.call.isolation"] == "thread"
    assert a["tooling.call.status"] == "ok"
    assert a["tooling.call.queue_wait_s"] >= 0
    assert "tooling.call.waited_for" not in a
    assert spans["execute_tool read_a"].status.status_code is StatusCode.UNSET

    # The barrier waited for both reads; each later call for the one before it.
    w = spans["execute_tool write"].attributes
    assert list(w["tooling.call.waited_for"]) == ["c1", "c2"]
    assert w["tooling.call.wait_reason"] == "barrier"
    assert list(spans["execute_tool broken"].attributes["tooling.call.waited_for"]) == ["c3"]
    # The write started after both reads had finished.
    reads_end = max(spans[f"execute_tool read_{x}"].end_time or 0 for x in "ab")
    assert (spans["execute_tool write"].start_time or 0) >= reads_end
    assert w["tooling.call.queue_wait_s"] > a["tooling.call.queue_wait_s"]

    failed = spans["execute_tool broken"]
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.attributes["error.type"] == "tool.failed"
    assert failed.attributes["tooling.call.status"] == "error"
    assert failed.status.description is None  # the message is content

    timed_out = spans["execute_tool slow"]
    assert timed_out.attributes["error.type"] == "tool.timeout"
    assert timed_out.attributes["tooling.call.timeout_s"] == 0.05
    assert timed_out.attributes["tooling.call.isolation"] == "async"
    assert timed_out.status.status_code is StatusCode.ERROR

    missing = spans["execute_tool missing"]
    assert missing.attributes["error.type"] == "tool.not_found"
    assert "tooling.call.isolation" not in missing.attributes

    for span in spans.values():
        assert not CONTENT_KEYS & set(span.attributes or {}), span.name
        assert "hunter2" not in repr(dict(span.attributes or {}))
        assert not span.events


async def test_without_a_parent_the_dispatch_spans_are_roots_of_one_trace_each(exporter):
    await Scheduler([write]).dispatch([ToolCall("c1", "write", {"path": "p", "text": "t"})])
    (span,) = exporter.get_finished_spans()
    assert span.parent is None


async def test_content_is_recorded_with_the_environment_switch(exporter, monkeypatch):
    monkeypatch.setenv(CAPTURE_ENV, "true")
    scheduler = Scheduler([write, broken])
    await scheduler.dispatch(
        [
            ToolCall("c1", "write", {"path": "p", "text": "hello"}),
            ToolCall("c2", "broken", {"secret": "hunter2"}),
        ]
    )
    spans = by_name(exporter.get_finished_spans())
    ok = spans["execute_tool write"].attributes
    assert ok["gen_ai.tool.call.arguments"] == '{"path":"p","text":"hello"}'
    assert ok["gen_ai.tool.call.result"] == '{"result":"written"}'
    failed = spans["execute_tool broken"]
    # The arguments as the model sent them; the result as the model sees it: the
    # exception's text is hidden from the model, so from the trace too.
    assert "hunter2" in failed.attributes["gen_ai.tool.call.arguments"]
    assert "hunter2" not in failed.attributes["gen_ai.tool.call.result"]
    assert '"code":"tool.failed"' in failed.attributes["gen_ai.tool.call.result"]
    assert failed.status.description and "ValueError" in failed.status.description


async def test_a_generators_intermediate_responses_are_counted_not_recorded(exporter):
    scheduler = Scheduler([counting])
    async with scheduler.stream([ToolCall("c1", "counting", {"n": 3})]) as items:
        seen = [item async for item in items]
    assert [item.final for item in seen] == [False, False, False, False, True]
    (span,) = exporter.get_finished_spans()
    assert span.attributes["tooling.call.intermediate_responses"] == 4
    assert not span.events


async def test_spans_made_by_a_sync_tool_nest_under_its_call(exporter):
    await Scheduler([nested]).dispatch([ToolCall("c1", "nested", {})])
    spans = by_name(exporter.get_finished_spans())
    assert parent_id(spans["inside the tool"]) == span_id(spans["execute_tool nested"])


async def test_a_cancelled_call_ends_its_span_as_cancelled(exporter):
    started = asyncio.Event()

    @tool
    async def hang() -> str:
        """Waits until cancelled."""
        started.set()
        await asyncio.sleep(30)
        return "never"

    task = asyncio.create_task(Scheduler([hang]).dispatch([ToolCall("c1", "hang", {})]))
    await asyncio.wait_for(started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    (span,) = exporter.get_finished_spans()
    assert span.attributes["error.type"] == "tool.cancelled"
    assert span.attributes["tooling.call.status"] == "cancelled"
    # The caller's context is as it was: no span of ours is left current.
    assert not trace.get_current_span().get_span_context().is_valid


async def test_sequential_calls_wait_for_the_one_before(exporter):
    scheduler = Scheduler([write], strategy=ExecutionStrategy.SEQUENTIAL)
    await scheduler.dispatch(
        [ToolCall(f"c{i}", "write", {"path": "p", "text": str(i)}) for i in range(3)]
    )
    spans = sorted(exporter.get_finished_spans(), key=lambda s: s.attributes["tooling.call.index"])
    assert [list(s.attributes.get("tooling.call.waited_for", [])) for s in spans] == [
        [],
        ["c0"],
        ["c1"],
    ]
    assert spans[1].attributes["tooling.call.wait_reason"] == "sequential"


async def test_a_call_pending_confirmation_is_not_an_error(exporter):
    @tool(require_confirmation=True)
    def delete(path: str) -> str:
        """Deletes."""
        return "deleted"

    await Scheduler([delete, write]).dispatch(
        [
            ToolCall("c1", "delete", {"path": "p"}),
            ToolCall("c2", "write", {"path": "p", "text": "t"}),
        ]
    )
    spans = by_name(exporter.get_finished_spans())
    assert spans["execute_tool delete"].attributes["tooling.call.status"] == "pending"
    assert spans["execute_tool write"].attributes["tooling.call.status"] == "deferred"
    for span in spans.values():
        assert span.status.status_code is StatusCode.UNSET
        assert "error.type" not in span.attributes


async def test_no_provider_no_spans_and_no_state():
    # No provider set: the dispatch takes the fast path.
    from tooling._tracing import dispatch_trace

    _set_global_provider(None)  # whatever an earlier test or page set
    assert dispatch_trace("auto", None) is None
    responses = await Scheduler([write]).dispatch(
        [ToolCall("c1", "write", {"path": "p", "text": "t"})]
    )
    assert responses[0].error is None


def test_a_trace_context_travels_as_w3c_text_and_is_continued(exporter):
    import contextvars

    from tooling._tracing import continued_trace, trace_carrier

    with trace.get_tracer("test").start_as_current_span("client") as client:
        carrier = trace_carrier()
    assert carrier["traceparent"].split("-")[1] == f"{client.get_span_context().trace_id:032x}"

    def elsewhere() -> None:  # a context that knows nothing of the client's span
        with continued_trace(carrier), trace.get_tracer("test").start_as_current_span("server"):
            pass

    contextvars.Context().run(elsewhere)
    spans = by_name(exporter.get_finished_spans())
    assert parent_id(spans["server"]) == span_id(spans["client"])
    assert spans["server"].context.trace_id == spans["client"].context.trace_id


def test_without_a_provider_no_trace_context_travels():
    from tooling._tracing import continued_trace, trace_carrier

    _set_global_provider(None)
    assert trace_carrier() == {}
    with continued_trace({"traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"}):
        assert not trace.get_current_span().get_span_context().is_valid


def test_importing_the_packages_imports_no_opentelemetry():
    code = (
        "import sys, tooling, agent_core\n"
        "from tooling import Scheduler\n"
        "from agent_core import Runner\n"
        "found = sorted(m for m in sys.modules if m.startswith('opentelemetry'))\n"
        "assert not found, found\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=60)


async def test_keyed_waits_and_folded_calls_in_spans(exporter: InMemorySpanExporter) -> None:
    @tool(conflict_key="path")
    async def save(path: str) -> str:
        return path

    @tool(read_only=True, idempotent=True)
    async def lookup(city: str) -> str:
        return city

    batch = [
        ToolCall("s1", "save", {"path": "a"}),
        ToolCall("s2", "save", {"path": "b"}),
        ToolCall("s3", "save", {"path": "a"}),
        ToolCall("l1", "lookup", {"city": "Oslo"}),
        ToolCall("l2", "lookup", {"city": "Oslo"}),
    ]
    await Scheduler([save, lookup]).dispatch(batch)
    spans = {s.attributes["gen_ai.tool.call.id"]: s for s in exporter.get_finished_spans()}
    # The folded call l2 has no span of its own: l1's run answered it.
    assert set(spans) == {"s1", "s2", "s3", "l1"}
    third = spans["s3"].attributes
    assert list(third["tooling.call.waited_for"]) == ["s1"]
    assert list(third["tooling.call.wait_reasons"]) == ["conflict_key"]
    assert third["tooling.call.wait_reason"] == "conflict_key"
    assert "tooling.call.waited_for" not in spans["s2"].attributes
    assert list(spans["l1"].attributes["tooling.call.folded_ids"]) == ["l1", "l2"]
    # Keys come from the arguments: recorded as a short hash unless content is captured.
    keys = {i: spans[i].attributes["tooling.call.conflict_key"] for i in ("s1", "s2", "s3")}
    assert keys["s1"] == keys["s3"] != keys["s2"]
    assert keys["s1"].startswith("sha256:") and len(keys["s1"]) == len("sha256:") + 12
    assert "tooling.call.conflict_key" not in spans["l1"].attributes


async def test_conflict_keys_are_recorded_as_they_are_with_content(exporter, monkeypatch):
    monkeypatch.setenv(CAPTURE_ENV, "true")

    @tool(conflict_key="path")
    async def save(path: str) -> str:
        return path

    await Scheduler([save]).dispatch([ToolCall("s1", "save", {"path": "/tmp/a"})])
    (span,) = exporter.get_finished_spans()
    assert span.attributes["tooling.call.conflict_key"] == "/tmp/a"


# -- a run -------------------------------------------------------------------------------------


def _team(model: Any) -> Any:
    from agent_core import Agent, AgentTool

    helper = Agent("helper", model, description="Answers sub-questions.")
    specialist = Agent("specialist", model, description="Finishes the job.")
    return Agent(
        "coordinator",
        model,
        tools=[read_a, read_b, broken, slow, AgentTool(helper)],
        sub_agents=[specialist],
    )


def _script() -> Any:
    from agent_core import Part, ScriptedModel

    def call(name: str, id: str, **args: Any) -> Any:
        return Part.from_function_call(name, args, id=id)

    return ScriptedModel(
        {
            "coordinator": [
                [
                    call("read_a", "c1", path="x"),
                    call("read_b", "c2", path="y"),
                    call("broken", "c3", secret="hunter2"),
                    call("slow", "c4"),
                ],
                [call("helper", "c5", request="what is six times seven?")],
                [call("transfer_to_agent", "c6", agent_name="specialist")],
            ],
            "helper": ["42"],
            "specialist": ["All done."],
        }
    )


async def _run_team(**config: Any) -> list[Any]:
    from agent_core import RunConfig, Runner

    runner = Runner(_team(_script()), app_name="app")
    return [
        event
        async for event in runner.run_async(
            user_id="u", session_id="s1", new_message="go", run_config=RunConfig(**config)
        )
    ]


def _tree(spans: tuple[ReadableSpan, ...]) -> list[tuple[int, str]]:
    """(depth, name) depth first, children in start order."""
    children: dict[int | None, list[ReadableSpan]] = {}
    for span in spans:
        children.setdefault(parent_id(span), []).append(span)
    out: list[tuple[int, str]] = []

    def walk(parent: int | None, depth: int) -> None:
        for span in sorted(children.get(parent, []), key=lambda s: (s.start_time, s.name)):
            out.append((depth, span.name))
            walk(span_id(span), depth + 1)

    walk(None, 0)
    return out


async def test_a_run_is_one_trace_from_the_model_call_to_the_tool(exporter):
    events = await _run_team()
    assert events[-1].content.text == "All done."
    spans = exporter.get_finished_spans()
    assert len({s.context.trace_id for s in spans}) == 1
    tree = _tree(spans)
    # Parallel calls started in either order: compare them as a set.
    reads = {tree[2][1], tree[3][1]}
    assert reads == {"execute_tool read_a", "execute_tool read_b"}
    assert [t for i, t in enumerate(tree) if i not in (2, 3)] == [
        (0, "invoke_agent coordinator"),
        (1, "chat scripted"),
        (1, "execute_tool broken"),
        (1, "execute_tool slow"),
        (1, "chat scripted"),
        (1, "execute_tool helper"),
        (2, "invoke_agent helper"),
        (3, "chat scripted"),
        (1, "chat scripted"),
        (1, "execute_tool transfer_to_agent"),
        (1, "invoke_agent specialist"),
        (2, "chat scripted"),
    ]
    assert tree[2][0] == tree[3][0] == 1

    named: dict[str, list[ReadableSpan]] = {}
    for span in spans:
        named.setdefault(span.name, []).append(span)
    (root,) = named["invoke_agent coordinator"]
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root.attributes["gen_ai.agent.name"] == "coordinator"
    assert root.attributes["gen_ai.conversation.id"] == "s1"
    assert root.attributes["agent_core.invocation.id"] == events[0].invocation_id
    assert root.status.status_code is StatusCode.UNSET
    (specialist,) = named["invoke_agent specialist"]
    assert specialist.attributes["gen_ai.agent.description"] == "Finishes the job."

    chat = named["chat scripted"][0]
    assert chat.kind is trace.SpanKind.CLIENT
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.request.model"] == "scripted"

    (broken_span,) = named["execute_tool broken"]
    assert broken_span.attributes["error.type"] == "tool.failed"
    assert broken_span.status.status_code is StatusCode.ERROR
    (slow_span,) = named["execute_tool slow"]
    assert slow_span.attributes["error.type"] == "tool.timeout"
    assert list(slow_span.attributes["tooling.call.waited_for"]) == ["c3"]
    (helper_call,) = named["execute_tool helper"]
    assert helper_call.attributes["gen_ai.tool.call.id"] == "c5"
    assert helper_call.attributes["tooling.call.status"] == "ok"
    # The child agent ran inside the call, under its span.
    (helper_run,) = named["invoke_agent helper"]
    assert helper_run.start_time >= helper_call.start_time
    assert helper_run.end_time <= helper_call.end_time

    for span in spans:
        assert not CONTENT_KEYS & set(span.attributes or {}), span.name
        assert "hunter2" not in repr(dict(span.attributes or {}))


async def test_trace_content_records_prompts_arguments_and_results(exporter):
    await _run_team(trace_content=True)
    spans = exporter.get_finished_spans()
    named: dict[str, list[ReadableSpan]] = {}
    for span in spans:
        named.setdefault(span.name, []).append(span)
    first_chat = min(named["chat scripted"], key=lambda s: s.start_time)

    sent = json.loads(first_chat.attributes["gen_ai.input.messages"])
    assert sent == [{"role": "user", "parts": [{"type": "text", "content": "go"}]}]
    said = json.loads(first_chat.attributes["gen_ai.output.messages"])
    assert said[0]["role"] == "assistant"
    assert said[0]["parts"][0] == {
        "type": "tool_call",
        "id": "c1",
        "name": "read_a",
        "arguments": {"path": "x"},
    }
    (read,) = named["execute_tool read_a"]
    assert json.loads(read.attributes["gen_ai.tool.call.result"]) == {"result": "a:x"}
    # The AgentTool's child run records content too: it runs under its caller's config.
    (helper_run,) = named["invoke_agent helper"]
    (helper_chat,) = [s for s in named["chat scripted"] if parent_id(s) == span_id(helper_run)]
    assert "what is six" in helper_chat.attributes["gen_ai.input.messages"]
    assert "42" in helper_chat.attributes["gen_ai.output.messages"]
    (broken_span,) = named["execute_tool broken"]
    assert "hunter2" not in broken_span.attributes["gen_ai.tool.call.result"]


async def test_an_error_event_marks_the_agent_span(exporter):
    from agent_core import Agent, LlmResponse, Runner, ScriptedModel

    model = ScriptedModel([LlmResponse(error_code="429", error_message="slow down")])
    runner = Runner(Agent("solo", model), app_name="app")
    events = [e async for e in runner.run_async(user_id="u", session_id="s", new_message="hi")]
    assert events[-1].error_code == "429"
    spans = by_name(exporter.get_finished_spans())
    for name in ("invoke_agent solo", "chat scripted"):
        assert spans[name].attributes["error.type"] == "429"
        assert spans[name].status.status_code is StatusCode.ERROR
        assert spans[name].status.description is None


async def test_a_streamed_model_call_counts_its_partial_responses(exporter):
    from agent_core import Agent, RunConfig, Runner, ScriptedModel

    runner = Runner(Agent("solo", ScriptedModel(["one two three"])), app_name="app")
    events = [
        e
        async for e in runner.run_async(
            user_id="u", session_id="s", new_message="hi", run_config=RunConfig(stream=True)
        )
    ]
    assert events[-1].content.text == "one two three"
    chat = by_name(exporter.get_finished_spans())["chat scripted"]
    assert chat.attributes["agent_core.chat.partial_responses"] == 3


def test_the_sync_runner_continues_the_callers_trace(exporter):
    from agent_core import Agent, Runner, ScriptedModel

    runner = Runner(Agent("solo", ScriptedModel(["hello"])), app_name="app")
    with trace.get_tracer("test").start_as_current_span("request") as outer:
        list(runner.run(user_id="u", session_id="s", new_message="hi"))
    spans = by_name(exporter.get_finished_spans())
    assert parent_id(spans["invoke_agent solo"]) == outer.get_span_context().span_id


async def test_a_run_closed_early_ends_its_spans_and_leaves_no_context(exporter):
    from agent_core import Agent, Runner, ScriptedModel

    runner = Runner(Agent("solo", ScriptedModel(["hello"])), app_name="app")
    events = runner.run_async(user_id="u", session_id="s", new_message="hi")
    async for _ in events:
        break
    await events.aclose()
    spans = by_name(exporter.get_finished_spans())
    assert "invoke_agent solo" in spans
    assert not trace.get_current_span().get_span_context().is_valid


async def test_a_toolset_lists_its_tools_under_the_agents_span(exporter):
    from agent_core import Agent, Runner, ScriptedModel
    from tooling import BaseToolset

    class Remote(BaseToolset):
        async def get_tools(self, readonly_context=None):
            with trace.get_tracer("test").start_as_current_span("list remote tools"):
                return [nested]

    runner = Runner(Agent("solo", ScriptedModel(["hello"]), tools=[Remote()]), app_name="app")
    [e async for e in runner.run_async(user_id="u", session_id="s", new_message="hi")]
    spans = by_name(exporter.get_finished_spans())
    assert parent_id(spans["list remote tools"]) == span_id(spans["invoke_agent solo"])


async def test_a_chat_span_names_the_provider_and_counts_the_tokens(exporter):
    from agent_core import Agent, BaseLlm, Content, LlmResponse, Part, Runner

    class Counted(BaseLlm):
        provider = "openai"

        async def generate_content_async(self, llm_request, stream=False):
            yield LlmResponse(
                content=Content(role="model", parts=[Part.from_text("hi")]),
                finish_reason="STOP",
                usage={"input_tokens": 12, "output_tokens": 3},
            )

    runner = Runner(Agent("solo", Counted("gpt-test")), app_name="app")
    [e async for e in runner.run_async(user_id="u", session_id="s", new_message="hi")]
    chat = by_name(exporter.get_finished_spans())["chat gpt-test"]
    assert chat.attributes["gen_ai.provider.name"] == "openai"
    assert chat.attributes["gen_ai.request.model"] == "gpt-test"
    assert chat.attributes["gen_ai.usage.input_tokens"] == 12
    assert chat.attributes["gen_ai.usage.output_tokens"] == 3
    assert list(chat.attributes["gen_ai.response.finish_reasons"]) == ["STOP"]


class _Replies:
    """An async iterable that is not an iterator (a list-like of responses)."""

    def __init__(self, *responses: Any) -> None:
        self.responses = responses

    def __aiter__(self) -> Any:
        async def each() -> Any:
            for response in self.responses:
                yield response

        return each()


@pytest.mark.parametrize("traced", [False, True])
async def test_a_model_returning_an_async_iterable_works_traced_or_not(
    traced: bool, request: pytest.FixtureRequest
) -> None:
    from agent_core import Agent, BaseLlm, Content, LlmResponse, Part, Runner

    if traced:
        request.getfixturevalue("exporter")

    class Iterable(BaseLlm):
        def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            return _Replies(LlmResponse(content=Content("model", [Part.from_text("hi")])))

    runner = Runner(Agent("a", Iterable("iterable")), app_name="app")
    events = [e async for e in runner.run_async(user_id="u", session_id="s", new_message="x")]
    assert [(e.error_code, e.content.text if e.content else None) for e in events] == [(None, "hi")]
