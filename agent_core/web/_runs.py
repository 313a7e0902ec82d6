"""The Runs part of the inspector: a waterfall of one invocation from stored spans.

``GET /api/invocations`` lists the traces in the span database (newest first); ``GET
/api/invocations/{id}/spans`` gives one trace's spans (``id`` is an invocation id the
agent loop recorded, or a trace id) and the bars the page draws: one per span, times in
nanoseconds from the trace's start, each tool call's queue wait (``tooling.call.queue_wait_s``
before it started), the calls it waited for (``tooling.call.waited_for``) and why
(``tooling.call.wait_reason``: a barrier, sequential order, a conflict key).
"""

from __future__ import annotations

from typing import Any

from tooling.web import HttpError, Reply, Request, WebServer

from ..trace_db import StoredSpan, find_trace, list_traces, read_trace

__all__: list[str] = []


def _kind(span: StoredSpan) -> str:
    operation = span["attributes"].get("gen_ai.operation.name")
    name = span["name"]
    if operation == "execute_tool" or name.startswith("execute_tool"):
        return "tool"
    if operation == "chat" or name.startswith("chat"):
        return "model"
    if operation == "invoke_agent" or name.startswith("invoke_agent"):
        return "agent"
    return "other"


def _invocation_id(spans: list[StoredSpan]) -> str | None:
    for span in spans:
        for key, value in span["attributes"].items():
            if key.endswith("invocation.id") and isinstance(value, str):
                return value
    return None


def invocation_summary(roots: list[StoredSpan]) -> dict[str, Any]:
    """One row of the invocation list, from a trace's root spans."""
    first = roots[0]
    attributes = first["attributes"]
    start = min(s["start_ns"] for s in roots)
    end = max(s["end_ns"] for s in roots)
    return {
        "id": _invocation_id(roots) or first["trace_id"],
        "trace_id": first["trace_id"],
        "name": first["name"],
        "agent": attributes.get("gen_ai.agent.name"),
        "session": attributes.get("gen_ai.conversation.id"),
        "start_time": start / 1e9,
        "duration_ms": (end - start) / 1e6,
    }


def _label(span: StoredSpan, kind: str) -> str:
    attributes = span["attributes"]
    if kind == "tool":
        index = attributes.get("tooling.call.index")
        tool = attributes.get("gen_ai.tool.name") or span["name"].removeprefix("execute_tool ")
        return f"#{index} {tool}" if index is not None else str(tool)
    return str(span["name"])


def waterfall(spans: list[StoredSpan]) -> dict[str, Any]:
    """The bars of one trace: parents before their children, children by start time."""
    if not spans:
        return {"duration_ns": 0, "bars": []}
    by_id = {s["span_id"]: s for s in spans}
    children: dict[str | None, list[StoredSpan]] = {}
    for span in spans:
        parent = span["parent_id"] if span["parent_id"] in by_id else None
        children.setdefault(parent, []).append(span)

    def wait_start(span: StoredSpan) -> int | None:
        wait = span["attributes"].get("tooling.call.queue_wait_s")
        if not isinstance(wait, int | float) or wait <= 0:
            return None
        return int(span["start_ns"] - round(wait * 1e9))

    origin = min(min(s["start_ns"], wait_start(s) or s["start_ns"]) for s in spans)
    end = max(s["end_ns"] for s in spans)
    bars: list[dict[str, Any]] = []

    def visit(span: StoredSpan, depth: int) -> None:
        attributes = span["attributes"]
        kind = _kind(span)
        waited = attributes.get("tooling.call.waited_for") or []
        if isinstance(waited, str):
            waited = [waited]
        queued = wait_start(span)
        error = attributes.get("error.type") or ("error" if span["status"] == "ERROR" else None)
        bars.append(
            {
                "span_id": span["span_id"],
                "parent_id": span["parent_id"],
                "name": span["name"],
                "kind": kind,
                "label": _label(span, kind),
                "depth": depth,
                "start_ns": span["start_ns"] - origin,
                "end_ns": span["end_ns"] - origin,
                "wait_start_ns": queued - origin if queued is not None else None,
                "waited_for": [str(w) for w in waited],
                "wait_reason": attributes.get("tooling.call.wait_reason"),
                "wait_reasons": [str(r) for r in attributes.get("tooling.call.wait_reasons") or []],
                "conflict_key": attributes.get("tooling.call.conflict_key"),
                "call_id": attributes.get("gen_ai.tool.call.id"),
                "call_index": attributes.get("tooling.call.index"),
                "error": error,
            }
        )
        for child in sorted(children.get(span["span_id"], []), key=_order):
            visit(child, depth + 1)

    for root in sorted(children.get(None, []), key=_order):
        visit(root, 0)
    return {"duration_ns": end - origin, "origin_ns": origin, "bars": bars}


def _order(span: StoredSpan) -> tuple[int, int, str]:
    index = span["attributes"].get("tooling.call.index")
    return (span["start_ns"], index if isinstance(index, int) else 0, span["span_id"])


def add_run_routes(server: WebServer, path: str) -> None:
    """Serve the runs API from the span database at ``path``."""

    def invocations(request: Request) -> Reply:
        limit = request.int_query("limit", 200, low=1, high=5000)
        session = request.query.get("session")
        rows = [invocation_summary(roots) for roots in list_traces(path, limit)]
        if session:
            rows = [r for r in rows if r["session"] == session]
        return Reply({"invocations": rows})

    def spans(request: Request) -> Reply:
        wanted = request.params["id"]
        trace_id = find_trace(path, wanted)
        if trace_id is None:
            raise HttpError(404, f"no stored spans for {wanted!r}")
        stored = read_trace(path, trace_id)
        body = {"id": wanted, "trace_id": trace_id, **waterfall(stored), "spans": stored}
        return Reply(body)

    server.route("GET", "/api/invocations", invocations)
    server.route("GET", r"/api/invocations/(?P<id>[^/]+)/spans", spans)
