"""CrewAI tools as ours (``CrewaiTool``). ``crewai`` is imported when one is first built.

The schema is the tool's ``args_schema``; a call goes through the tool's own ``run`` on a
worker thread (CrewAI validates against ``args_schema`` and counts the use, so
``max_usage_count`` applies); a ``ToolFailure`` it returns (a spent usage limit, the
tool's own report) is an error response carrying its message; ``result_as_answer=True``
sets ``skip_summarization``. Results are cached as CrewAI's agents cache them (its
``CacheHandler``, keyed by the arguments' JSON, kept when the tool's ``cache_function``
says so; a hit does not run the tool), unless ``cache=False``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .._errors import ToolError
from ._base import ForeignTool, model_schema, require, tool_name

if TYPE_CHECKING:
    from .._context import ToolContext

__all__ = ["CrewaiTool"]


class CrewaiTool(ForeignTool):
    """A CrewAI ``BaseTool`` as one of ours (run by its own ``run``, on a worker thread)."""

    sync_only = True

    def __init__(
        self,
        tool: Any,
        *,
        name: str | None = None,
        description: str | None = None,
        cache: bool = True,
    ) -> None:
        crewai_tools = require("crewai.tools", "crewai", "CrewaiTool")
        if not isinstance(tool, crewai_tools.BaseTool):
            raise TypeError(f"CrewaiTool takes a CrewAI BaseTool, not {type(tool).__name__}")
        self.tool = tool
        self.name = tool_name(name or tool.name)
        self.description = description if description is not None else (tool.description or "")
        schema = getattr(tool, "args_schema", None)
        if schema is not None and getattr(schema, "model_fields", None):
            self.parameters_json_schema = model_schema(schema)
            self.arguments_model = schema
        else:
            self.parameters_json_schema = {"type": "object", "properties": {}}
            self.arguments_model = None
        self.result_as_answer = bool(getattr(tool, "result_as_answer", False))
        handler = require("crewai.agents.cache.cache_handler", "crewai", "CrewaiTool")
        self.cache: Any = handler.CacheHandler() if cache else None

    @property
    def takes_context(self) -> bool:
        """Only a ``result_as_answer`` tool needs the context (to skip summarization)."""
        return self.result_as_answer

    def call_foreign_sync(self, args: dict[str, Any], ctx: ToolContext | None) -> Any:
        """``tool.run(**args)`` (on a worker thread); a ``ToolFailure`` raises."""
        failure_type = require("crewai.tools.tool_failure", "crewai", "CrewaiTool").ToolFailure
        key = json.dumps(args, sort_keys=True, default=str) if args else ""
        cached = self.cache.read(tool=self.tool.name, input=key) if self.cache else None
        if cached is not None:
            result = cached
        else:
            result = self.tool.run(**args)
            if (
                self.cache is not None
                and not isinstance(result, failure_type)
                and self.tool.cache_function(args, result)
            ):
                self.cache.add(tool=self.tool.name, input=key, output=result)
        if isinstance(result, failure_type):
            raise ToolError(result.message, code="tool.failed")
        if ctx is not None and self.result_as_answer:
            ctx.actions.skip_summarization = True
        return result
