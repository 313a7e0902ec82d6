"""What an agent loop built on ``tooling`` uses beyond the tools themselves.

``agent_core`` uses only this module and the names ``tooling`` exports, so another
loop can use the same pieces: the worker pools a loop shares across its turns, the
helpers behind ``ToolContext``'s artifacts and credentials, the JSON Schema of an input
model as tools describe arguments, the tracing a loop adds its own spans to, and the
plumbing of the command-line tools (loading a target, finding its tools, one-line
errors and exit statuses).

Tracing names do nothing (and import nothing) unless ``opentelemetry-api`` is installed
and a tracer provider is set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._closing import Closing
from ._context import artifact_blob, auth_config_key, give_up, pick_version, route_progress
from ._errors import error_details_from_validation
from ._export.names import provider_aliases, provider_name
from ._jsonsafe import state_value_problem
from ._tracing import (
    CAPTURE_KEY,
    capture_content,
    content_json,
    continued_trace,
    trace_carrier,
    tracer,
)
from ._workers.threads import WorkerPool

if TYPE_CHECKING:
    from ._cli.discovery import (
        EXIT_OK,
        EXIT_TOOL_ERROR,
        EXIT_USAGE,
        CliError,
        FoundTool,
        discover_tools,
        load_agent_dir,
        load_target,
        one_line,
    )
    from ._cli.support import CliParser, run_cli
    from ._scheduling.budget import RunBudget
    from ._scheduling.confirmation import call_fingerprint
    from ._workers.processes import ProcessPool

# Loaded when first asked for: a loop that never runs a command pays nothing for them.
_LAZY = {
    "RunBudget": "_scheduling.budget",
    "ProcessPool": "_workers.processes",
    "call_fingerprint": "_scheduling.confirmation",
    "CliParser": "_cli.support",
    "run_cli": "_cli.support",
    "EXIT_OK": "_cli.discovery",
    "EXIT_TOOL_ERROR": "_cli.discovery",
    "EXIT_USAGE": "_cli.discovery",
    "CliError": "_cli.discovery",
    "FoundTool": "_cli.discovery",
    "discover_tools": "_cli.discovery",
    "load_agent_dir": "_cli.discovery",
    "load_target": "_cli.discovery",
    "one_line": "_cli.discovery",
}

__all__ = [
    "CAPTURE_KEY",
    "EXIT_OK",
    "EXIT_TOOL_ERROR",
    "EXIT_USAGE",
    "CliError",
    "CliParser",
    "Closing",
    "FoundTool",
    "ProcessPool",
    "RunBudget",
    "WorkerPool",
    "artifact_blob",
    "auth_config_key",
    "call_fingerprint",
    "capture_content",
    "content_json",
    "continued_trace",
    "discover_tools",
    "error_details_from_validation",
    "give_up",
    "input_schema",
    "load_agent_dir",
    "load_target",
    "one_line",
    "pick_version",
    "provider_aliases",
    "provider_name",
    "route_progress",
    "run_cli",
    "state_value_problem",
    "trace_carrier",
    "tracer",
]


def input_schema(model: Any) -> dict[str, Any]:
    """The JSON Schema of a pydantic model, without titles, as tool parameters are given."""
    from ._jsonschema import strip_titles

    return strip_titles(model.model_json_schema())


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tooling.integration' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__package__}.{module}"), name)
