"""One trace across an MCP client and server in two processes.

Both are ``tests/_mcp_traced.py`` (a client running an agent whose tool is served over
stdio, and the server), each with its own tracer provider writing spans to a file.
"""

from __future__ import annotations

import contextvars
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace

from tests.test_tracing import exporter  # noqa: F401 (the fixture)
from tooling.mcp._meta import call_meta, serving_call

SCRIPT = str(Path(__file__).resolve().parent / "_mcp_traced.py")
ROOT = Path(__file__).resolve().parent.parent


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_one_trace_holds_the_clients_call_and_the_servers(tmp_path: Path) -> None:
    client_file, server_file = tmp_path / "client.jsonl", tmp_path / "server.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, SCRIPT, "client", str(client_file), str(server_file)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"result": "HI"}
    client, server = _read(client_file), _read(server_file)

    (ours,) = [s for s in client if s["name"] == "execute_tool shout"]
    assert ours["attributes"]["gen_ai.tool.type"] == "extension"
    (agent,) = [s for s in client if s["name"] == "invoke_agent caller"]
    assert ours["parent_id"] == agent["span_id"]
    # The server's spans of the call are in the client's trace...
    call = [s for s in server if s["trace_id"] == ours["trace_id"]]
    names = {s["name"] for s in call}
    assert {"execute_tool shout", "inside shout"} <= names, names
    (theirs,) = [s for s in call if s["name"] == "execute_tool shout"]
    assert theirs["attributes"]["gen_ai.tool.type"] == "function"
    # ...and descend from the client's call (through the MCP SDK's own spans, when it
    # makes them: the client's request span, the server's).
    parents = {s["span_id"]: s["parent_id"] for s in client + server}
    chain, at = [], theirs["span_id"]
    while parents.get(at) is not None:
        at = parents[at]
        chain.append(at)
    assert ours["span_id"] in chain
    (inside,) = [s for s in call if s["name"] == "inside shout"]
    assert inside["parent_id"] == theirs["span_id"]


def test_the_meta_carries_the_trace_context_and_the_server_continues_it(exporter):  # noqa: F811
    with trace.get_tracer("test").start_as_current_span("client") as client:
        meta = call_meta()
    assert meta is not None and meta["traceparent"].startswith("00-")

    def server() -> None:  # a process that knows nothing of the client's span
        with serving_call(meta), trace.get_tracer("test").start_as_current_span("server"):
            pass

    contextvars.Context().run(server)
    (served,) = [s for s in exporter.get_finished_spans() if s.name == "server"]
    assert served.parent is not None
    assert served.parent.span_id == client.get_span_context().span_id
