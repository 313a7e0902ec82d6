"""The request ``_meta`` of MCP calls: built in one place (client), read in one place (server).

Both sides go through these two functions only, so what travels in ``_meta`` (a trace
context, for one) is added here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

from .._tracing import continued_trace, trace_carrier

if TYPE_CHECKING:
    from mcp_types import RequestParamsMeta

__all__: list[str] = []


def call_meta() -> RequestParamsMeta | None:
    """The ``_meta`` an ``McpToolset`` sends with each ``tools/call`` (None: nothing).

    The SDK adds its own keys (the progress token, the protocol envelope) to what this
    returns. When tracing is on, it holds the current trace context (``traceparent``,
    ``tracestate``, as the MCP and OpenTelemetry conventions place it in ``_meta``), so the
    server's spans join the caller's trace.
    """
    carrier = trace_carrier()
    return cast("RequestParamsMeta", carrier) if carrier else None


@contextmanager
def serving_call(meta: Mapping[str, Any] | None) -> Iterator[None]:
    """Wraps one ``tools/call`` an ``McpServer`` runs, given the request's ``_meta``: when
    tracing is on, the call's spans continue the trace context the client sent."""
    with continued_trace(meta):
        yield
