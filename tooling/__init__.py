"""Typed Python functions as validated tools for language-model agents.

``@tool`` turns a function into a :class:`FunctionTool`: a pydantic arguments model and
an exact JSON Schema derived from the signature and docstring, ``run()`` with errors a
model can recover from, and exports for Gemini, OpenAI, Anthropic and MCP.
"""

from typing import TYPE_CHECKING, Any

from ._base import BaseTool, BaseToolset, CheckedArguments, ToolRuntime
from ._context import ReadonlyContext, SimpleToolContext, ToolActions, ToolContext
from ._errors import ToolError
from ._function.tool import FunctionTool, tool
from ._types import (
    Blob,
    Confirmation,
    Diagnostic,
    FileRef,
    MemoryHit,
    ToolCall,
    ToolProgress,
    ToolResponse,
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
    "MemoryHit",
    "ReadonlyContext",
    "Scheduler",
    "SimpleToolContext",
    "ToolActions",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolProgress",
    "ToolResponse",
    "ToolRuntime",
    "tool",
]


def __getattr__(name: str) -> Any:
    # The scheduler brings asyncio and the worker pool: loaded when first asked for.
    if name in ("Scheduler", "ExecutionStrategy"):
        from ._scheduling import scheduler

        return getattr(scheduler, name)
    raise AttributeError(f"module 'tooling' has no attribute {name!r}")
