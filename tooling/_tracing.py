"""OpenTelemetry spans for tool calls (``execute_tool {tool}``), only when someone listens.

Nothing here imports opentelemetry at ``import tooling``. A dispatch asks
:func:`dispatch_trace` once: it answers None, the fast path, unless ``opentelemetry.trace``
has been imported (whoever sets a tracer provider imports it) and a real tracer provider
is set. Otherwise it gives a :class:`DispatchTrace`, which the scheduler tells about each
call at three points: it starts running (:meth:`~DispatchTrace.begin`), it has its final
response (:meth:`~DispatchTrace.end`), or it was cancelled (:meth:`~DispatchTrace.abort`).

Spans follow the OpenTelemetry GenAI conventions (``gen_ai.*``); what only this library
knows is under ``tooling.*``. Arguments and results are recorded only when content
capture is on: ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``, or the
context value :data:`CAPTURE_KEY` (the agent loop sets it for
``RunConfig(trace_content=True)``); and then as the model sees them (the response cut to
size, exception text hidden unless the scheduler exposes errors).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contextvars import Token

    from opentelemetry.context import Context
    from opentelemetry.trace import Span, Tracer

    from ._base import BaseTool
    from ._scheduling.planning import CallRecord
    from ._types import ToolCall, ToolResponse

__all__ = [
    "CAPTURE_KEY",
    "capture_content",
    "content_json",
    "continued_trace",
    "trace_carrier",
    "tracer",
]

#: The environment switch of the GenAI conventions for recording prompts, arguments, results.
CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
#: An OpenTelemetry context value: True records content for the spans made below it.
CAPTURE_KEY = "tooling.trace_content"

_API = "opentelemetry.trace"
_tracers: dict[str, tuple[object, Tracer]] = {}
_version: str | None = None
_quiet: tuple[Any, tuple[type, ...]] | None = None
_UNKNOWN = object()
#: Whether the environment names a tracer provider (read once, as the API reads it once).
_ENV_PROVIDER = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ


def tracer(scope: str) -> Tracer | None:
    """The tracer for ``scope`` from the global provider, or None when nobody listens.

    None when opentelemetry was never imported (so no provider can be set), or when the
    global provider is the API's proxy or no-op one. Until a provider is set this is a
    dictionary lookup and two attribute reads: cheap enough for every dispatch.
    """
    api: Any = sys.modules.get(_API)
    if api is None:
        return None
    # The global the API's set_tracer_provider() writes; None until then, unless the
    # environment names a provider for get_tracer_provider() to load. Reading it spares
    # get_tracer_provider()'s environment lookup on every dispatch; should the API ever
    # drop it, the public call below decides alone.
    if getattr(api, "_TRACER_PROVIDER", _UNKNOWN) is None and not _ENV_PROVIDER:
        return None
    provider = api.get_tracer_provider()
    if type(provider) in _quiet_types(api):
        return None
    cached = _tracers.get(scope)
    if cached is None or cached[0] is not provider:
        cached = (provider, provider.get_tracer(scope, _package_version()))
        _tracers[scope] = cached
    return cached[1]


def _quiet_types(api: Any) -> tuple[type, ...]:
    """The API's own providers, which make no spans (the proxy before one is set, no-op)."""
    global _quiet
    if _quiet is None or _quiet[0] is not api:
        _quiet = (api, (api.ProxyTracerProvider, api.NoOpTracerProvider))
    return _quiet[1]


def _package_version() -> str:
    global _version
    if _version is None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            _version = version("agent-tooling")
        except PackageNotFoundError:
            _version = "0"
    return _version


def capture_content(parent: Context | None = None) -> bool:
    """Whether content is recorded under ``parent`` (default: the current context)."""
    from opentelemetry import context

    if context.get_value(CAPTURE_KEY, parent) is True:
        return True
    return os.environ.get(CAPTURE_ENV, "").strip().lower() == "true"


def content_json(value: Any) -> str:
    """JSON text of a recorded value (arguments, a response); text is kept as it is."""
    if isinstance(value, str):
        return value
    from pydantic_core import to_json

    return to_json(value, fallback=str).decode()


def short_hash(text: str) -> str:
    """A short stable stand-in for a value that must not be recorded (a conflict key)."""
    import hashlib

    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def trace_carrier() -> dict[str, str]:
    """The current trace context in W3C form (``traceparent``, ``tracestate``) for another
    process to continue (an MCP request's ``_meta``); empty when nobody listens."""
    if tracer("tooling") is None:
        return {}
    from opentelemetry import propagate

    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


@contextmanager
def continued_trace(carrier: Mapping[str, Any] | None) -> Iterator[None]:
    """Run the block under the trace context ``carrier`` holds (from :func:`trace_carrier`
    in the calling process), so its spans join the caller's trace.

    Nothing changes when nobody listens, when the carrier holds no valid context, or when
    the current span is already in that trace (a transport's own span continued it).
    """
    if not carrier or "traceparent" not in carrier or tracer("tooling") is None:
        yield
        return
    from opentelemetry import context, propagate, trace

    extracted = propagate.extract({k: v for k, v in carrier.items() if isinstance(v, str)})
    remote = trace.get_current_span(extracted).get_span_context()
    current = trace.get_current_span().get_span_context()
    if not remote.is_valid or (current.is_valid and current.trace_id == remote.trace_id):
        yield
        return
    token = context.attach(extracted)
    try:
        yield
    finally:
        context.detach(token)


def dispatch_trace(strategy: str, timeout: float | None) -> DispatchTrace | None:
    """A :class:`DispatchTrace` for one dispatch, or None when nobody listens."""
    found = tracer("tooling")
    if found is None:
        return None
    return DispatchTrace(found, strategy, timeout)


class _Open:
    """One call's span while it runs."""

    __slots__ = ("span", "token")

    def __init__(self, span: Span, token: Token[Context]) -> None:
        self.span = span
        self.token = token


class DispatchTrace:
    """The spans of one dispatch: one ``execute_tool`` span per call, siblings.

    The parent is the context current when the dispatch began (the agent's span under the
    agent loop). While a call runs its span is the current one, so spans the tool makes
    (a child agent's, an MCP request's) nest under it.
    """

    def __init__(self, tracer: Tracer, strategy: str, timeout: float | None) -> None:
        from opentelemetry import context, trace

        self._context_api = context  # the modules, once per dispatch rather than per call
        self._trace_api = trace
        self._tracer = tracer
        self._parent = context.get_current()
        self._capture = capture_content(self._parent)
        self._strategy = str(strategy)
        self._timeout = timeout
        self._began = time.perf_counter()
        self._open: dict[int, _Open] = {}
        self._waited: dict[int, tuple[list[str], list[str]]] = {}
        self._keys: dict[int, str] = {}
        self._intermediate: dict[int, int] = {}
        self._running: dict[int, int] = {}  # id(ToolCall) -> index, while it runs

    @property
    def capture(self) -> bool:
        """Whether arguments and results are recorded."""
        return self._capture

    def plan(self, records: Sequence[CallRecord | None]) -> None:
        """Record who waits for whom, from the scheduler's per-call records.

        A call's ``waited_for`` are the nearest calls it started after (earlier ones are
        waited for through them), ``wait_reasons`` why, one by one; ``wait_reason`` sums
        them up: ``conflict_key`` when every one of them shares its key, ``sequential``
        under SEQUENTIAL, else ``barrier``.
        """
        for record in records:
            if record is None:
                continue
            if record.conflict_key is not None:
                self._keys[record.index] = record.conflict_key
            if record.waited_for:
                self._waited[record.index] = (
                    list(record.waited_for),
                    list(record.wait_reasons),
                )

    def begin(self, index: int, call: ToolCall, tool: BaseTool) -> None:
        """The call starts running: open its span and make it current."""
        trace = self._trace_api
        span = self._tracer.start_span(
            f"execute_tool {call.name}",
            context=self._parent,
            kind=trace.SpanKind.INTERNAL,
            attributes=self._call_attributes(index, call, tool),
        )
        token = self._context_api.attach(trace.set_span_in_context(span, self._parent))
        self._open[index] = _Open(span, token)
        self._running[id(call)] = index

    def intermediate(self, call: ToolCall) -> None:
        """``call`` (running) gave an intermediate response: a generator's yield."""
        index = self._running.get(id(call))
        if index is not None:
            self._intermediate[index] = self._intermediate.get(index, 0) + 1

    def event(self, call: ToolCall, name: str, attributes: Mapping[str, Any]) -> None:
        """A span event on ``call``'s span (running): a guardrail's verdict, a retry."""
        index = self._running.get(id(call))
        opened = self._open.get(index) if index is not None else None
        if opened is not None:
            opened.span.add_event(name, attributes=dict(attributes))

    def end(self, index: int, call: ToolCall, response: ToolResponse) -> None:
        """The call has its final response: close its span (one is made if it never ran)."""
        opened = self._open.pop(index, None)
        self._running.pop(id(call), None)
        if opened is None:
            span = self._tracer.start_span(
                f"execute_tool {call.name}",
                context=self._parent,
                attributes=self._call_attributes(index, call, None),
            )
        else:
            span = opened.span
            self._context_api.detach(opened.token)
        self._finish(span, index, response)

    def abort(self, index: int) -> None:
        """The call was cancelled before its response (the dispatch was cancelled)."""
        opened = self._open.pop(index, None)
        if opened is None:
            return
        self._context_api.detach(opened.token)
        opened.span.set_attributes(
            {"error.type": "tool.cancelled", "tooling.call.status": "cancelled"}
        )
        opened.span.set_status(self._trace_api.StatusCode.ERROR)
        opened.span.end()

    # -- attributes ----------------------------------------------------------------------

    def _call_attributes(self, index: int, call: ToolCall, tool: BaseTool | None) -> dict[str, Any]:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.type": getattr(tool, "_trace_tool_type", "function"),
            "tooling.strategy": self._strategy,
            "tooling.call.index": index,
            "tooling.call.queue_wait_s": time.perf_counter() - self._began,
        }
        if call.id:
            attributes["gen_ai.tool.call.id"] = call.id
        if tool is not None:
            attributes["tooling.call.isolation"] = _isolation(tool)
            limit = tool.timeout
            if limit is None or (self._timeout is not None and self._timeout < limit):
                limit = self._timeout
            if limit is not None:
                attributes["tooling.call.timeout_s"] = float(limit)
        waited = self._waited.get(index)
        if waited is not None:
            ids, reasons = waited
            distinct = set(reasons)
            attributes["tooling.call.waited_for"] = ids
            attributes["tooling.call.wait_reasons"] = reasons
            attributes["tooling.call.wait_reason"] = (
                distinct.pop() if len(distinct) == 1 else "barrier"
            )
        key = self._keys.get(index)
        if key is not None:
            # A key is made from the arguments (a path, say): content, so a hash by default.
            attributes["tooling.call.conflict_key"] = key if self._capture else short_hash(key)
        if self._capture:
            attributes["gen_ai.tool.call.arguments"] = content_json(call.args)
        return attributes

    def _finish(self, span: Span, index: int, response: ToolResponse) -> None:
        error = response.error
        attributes: dict[str, Any] = {}
        count = self._intermediate.pop(index, 0)
        if count:
            attributes["tooling.call.intermediate_responses"] = count
        if error is None:
            attributes["tooling.call.status"] = "ok"
        elif error.code == "tool.confirmation_required":
            attributes["tooling.call.status"] = "pending"
        elif error.code == "tool.deferred":
            attributes["tooling.call.status"] = "deferred"
        else:
            attributes["tooling.call.status"] = "error"
            attributes["error.type"] = error.code
        if response.folded_ids:
            attributes["tooling.call.folded_ids"] = list(response.folded_ids)
        if self._capture:
            attributes["gen_ai.tool.call.result"] = content_json(response.response)
        span.set_attributes(attributes)
        if "error.type" in attributes:
            assert error is not None
            span.set_status(
                self._trace_api.StatusCode.ERROR, error.message if self._capture else None
            )
        span.end()


def _isolation(tool: BaseTool) -> str:
    """Where the call runs: ``process`` (a worker process), ``thread`` (a sync function on
    the pool) or ``async`` (on the event loop)."""
    if getattr(tool, "isolation", None) == "process":
        return "process"
    if getattr(tool, "runs_in_thread", False):  # a FunctionTool's sync function or generator
        return "thread"
    return "async"
