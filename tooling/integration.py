"""What an agent loop built on ``tooling`` uses beyond the tools themselves.

``agent_core`` uses only this module and the names ``tooling`` exports, so another
loop can use the same pieces: the worker pools a loop shares across its turns, the
helpers behind ``ToolContext``'s artifacts and credentials, the JSON Schema of an input
model as tools describe arguments, and the tracing a loop adds its own spans to.

Tracing names do nothing (and import nothing) unless ``opentelemetry-api`` is installed
and a tracer provider is set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._context import artifact_blob, auth_config_key, pick_version
from ._errors import error_details_from_validation
from ._threads import WorkerPool
from ._tracing import (
    CAPTURE_KEY,
    capture_content,
    content_json,
    continued_trace,
    trace_carrier,
    tracer,
)

if TYPE_CHECKING:
    from ._processes import ProcessPool

__all__ = [
    "CAPTURE_KEY",
    "ProcessPool",
    "WorkerPool",
    "artifact_blob",
    "auth_config_key",
    "capture_content",
    "content_json",
    "continued_trace",
    "error_details_from_validation",
    "input_schema",
    "pick_version",
    "trace_carrier",
    "tracer",
]


def input_schema(model: Any) -> dict[str, Any]:
    """The JSON Schema of a pydantic model, without titles, as tool parameters are given."""
    from ._schema import strip_titles

    return strip_titles(model.model_json_schema())


def __getattr__(name: str) -> Any:
    if name == "ProcessPool":  # multiprocessing is loaded only by a loop that needs it
        from ._processes import ProcessPool

        return ProcessPool
    raise AttributeError(f"module 'tooling.integration' has no attribute {name!r}")
