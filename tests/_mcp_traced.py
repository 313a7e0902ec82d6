"""Two processes that trace, for ``test_tracing_mcp.py``: an MCP client and its server.

``python _mcp_traced.py client FILE``: a run of an agent whose tool comes from the server
over stdio (an ``McpToolset``); ``python _mcp_traced.py server FILE``: an ``McpServer``
over stdio. Each process has its own tracer provider and writes its spans to ``FILE``,
one JSON object a line, as each span ends.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor


def line(span: ReadableSpan) -> str:
    context = span.get_span_context()
    assert context is not None
    record = {
        "name": span.name,
        "trace_id": f"{context.trace_id:032x}",
        "span_id": f"{context.span_id:016x}",
        "parent_id": f"{span.parent.span_id:016x}" if span.parent else None,
        "attributes": dict(span.attributes or {}),
    }
    return json.dumps(record) + "\n"


def shout(text: str) -> str:
    """Says it louder.

    Args:
        text: What to say.
    """
    with trace.get_tracer("server-tool").start_as_current_span("inside shout"):
        return text.upper()


def serve() -> None:
    from tooling.mcp import McpServer

    McpServer([shout], name="traced").run()


def run_client(server_file: str) -> None:
    from agent_core import Agent, Part, Runner, ScriptedModel
    from tooling.mcp import McpToolset, StdioServer

    server = StdioServer(sys.executable, [__file__, "server", server_file])
    model = ScriptedModel(
        [[Part.from_function_call("shout", {"text": "hi"}, id="c1")], "It says HI."]
    )
    with Runner(Agent("caller", model, tools=[McpToolset(server)]), app_name="app") as runner:
        events = list(runner.run(user_id="u", session_id="s", new_message="go"))
    print(json.dumps(events[1].get_function_responses()[0].response))


if __name__ == "__main__":
    role, spans_file = sys.argv[1], sys.argv[2]
    out = open(spans_file, "a", encoding="utf-8", buffering=1)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=out, formatter=line)))
    trace.set_tracer_provider(provider)
    try:
        if role == "server":
            serve()
        else:
            run_client(sys.argv[3])
    finally:
        provider.shutdown()
