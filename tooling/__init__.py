"""Typed Python functions as validated tools for language-model agents.

``@tool`` turns a function into a :class:`FunctionTool`: a pydantic arguments model and
an exact JSON Schema derived from the signature and docstring, ``run()`` with errors a
model can recover from, and exports for Gemini, OpenAI, Anthropic and MCP.

The folders, lowest layer first (a module imports only its own layer and those below)::

    _types _errors _context _results ...  the shared vocabulary
    _export/       Gemini, OpenAI, Anthropic and MCP declarations of a tool
    _base.py       BaseTool, BaseToolset
    _workers/      threads, sync generators and worker processes that run a tool's code
    _function/     a function to a tool: target, docstrings, one frozen spec, FunctionTool
    _scheduling/   the Scheduler: a dispatch, planning, strategies, limits, progress
    _cli/          loading targets and finding tools for the commands
    mcp/  web/     MCP both ways; the local inspector
    adapters/      other frameworks' tools in, ours out (LangChain, CrewAI, ...)
    cli.py  integration.py  the entry points: commands, and what an agent loop uses
"""

from typing import TYPE_CHECKING, Any

from ._base import BaseTool, BaseToolset, CheckedArguments, ToolRuntime
from ._context import ReadonlyContext, SimpleToolContext, ToolActions, ToolContext
from ._errors import ToolError
from ._function.decorator import tool
from ._function.tool import FunctionTool
from ._jobs import JobInfo, JobOptions
from ._policy import Reject
from ._types import (
    Blob,
    Confirmation,
    Diagnostic,
    FileRef,
    MemoryHit,
    ToolCall,
    ToolProgress,
    ToolResponse,
    ToolResult,
)

if TYPE_CHECKING:
    from ._scheduling.scheduler import ExecutionStrategy, Scheduler

__all__ = [
    "BaseTool",
    "BaseToolset",
    "Blob",
    "CheckedArguments",
    "Confirmation",
    "Diagnostic",
    "ExecutionStrategy",
    "FileRef",
    "FunctionTool",
    "JobInfo",
    "JobOptions",
    "MemoryHit",
    "ReadonlyContext",
    "Reject",
    "Scheduler",
    "SimpleToolContext",
    "ToolActions",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolProgress",
    "ToolResponse",
    "ToolResult",
    "ToolRuntime",
    "tool",
]


def __getattr__(name: str) -> Any:
    # The scheduler brings asyncio and the worker pool: loaded when first asked for.
    if name in ("Scheduler", "ExecutionStrategy"):
        from ._scheduling import scheduler

        return getattr(scheduler, name)
    raise AttributeError(f"module 'tooling' has no attribute {name!r}")
