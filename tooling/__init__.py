"""Typed Python functions as validated tools for language-model agents.

``@tool`` turns a function into a :class:`FunctionTool`: a pydantic arguments model and
an exact JSON Schema derived from the signature and docstring, ``run()`` with errors a
model can recover from, and exports for Gemini, OpenAI, Anthropic and MCP.
"""

from ._base import BaseTool, BaseToolset
from ._context import ReadonlyContext, SimpleToolContext, ToolActions, ToolContext
from ._errors import ToolError
from ._function_tool import FunctionTool, tool
from ._scheduler import ExecutionStrategy, Scheduler
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

__all__ = [
    "BaseTool",
    "BaseToolset",
    "Blob",
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
    "tool",
]
