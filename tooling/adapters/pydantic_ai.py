"""Our tools as pydantic-ai tools (``to_pydantic_ai``). ``pydantic_ai`` is imported when
one is built.

The schema is ours (pydantic-ai skips its own validation for a schema-defined tool; ours
runs); the context parameter stays hidden. Argument errors become pydantic-ai's retry
prompt (``ModelRetry`` with the details) while the tool has retries left, then the error
response (pydantic-ai would otherwise end the run with an exception); any other failure
is the error response, returned to the model as the tool's result. A
``ToolResult``'s artifact is the ``ToolReturn``'s ``metadata`` (which pydantic-ai keeps
for the application and never sends); ``Blob``/``FileRef`` parts are its ``content``
(``BinaryContent``, ``ImageUrl``, ``DocumentUrl``), shown to the model beside the result.
Flags: ``sequential`` unless the tool is ``read_only`` and ``concurrency_safe``;
``requires_approval`` from ``require_confirmation``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from .._base import BaseTool
from .._context import SimpleToolContext
from .._types import Blob, FileRef
from ._base import answer, as_tool, require

__all__ = ["to_pydantic_ai"]


def to_pydantic_ai(
    tool: BaseTool | Callable[..., Any], *, granted_scopes: Iterable[str] = ()
) -> Any:
    """Our tool as a pydantic-ai ``Tool``."""
    pydantic_ai = require("pydantic_ai", "pydantic-ai", "to_pydantic_ai")
    ours = as_tool(tool)
    scopes = frozenset(granted_scopes)

    async def call(ctx: Any, **kwargs: Any) -> Any:
        context = SimpleToolContext(
            caller="pydantic-ai", function_call_id=getattr(ctx, "tool_call_id", None) or ""
        )
        response = await answer(ours, kwargs, context, granted_scopes=scopes)
        error = response.error
        retries_left = getattr(ctx, "retry", 0) < getattr(ctx, "max_retries", 0)
        if error is not None and error.code == "tool.invalid_arguments" and retries_left:
            details = json.dumps(error.details or [], ensure_ascii=False, default=str)
            raise pydantic_ai.ModelRetry(f"{error.message}; details: {details}")
        if response.artifact is not None or response.parts:
            return pydantic_ai.ToolReturn(
                return_value=response.response,
                content=[_content(pydantic_ai, p) for p in response.parts] or None,
                metadata=response.artifact,
            )
        return response.response

    made = pydantic_ai.Tool.from_schema(
        call,
        name=ours.name,
        description=ours.description,
        json_schema=ours.parameters_json_schema,
        takes_ctx=True,
        sequential=not (ours.read_only and ours.concurrency_safe),
    )
    made.requires_approval = ours.require_confirmation is not False
    return made


def _content(pydantic_ai: Any, part: Blob | FileRef) -> Any:
    """A response part as pydantic-ai content the model is shown beside the result."""
    if isinstance(part, Blob):
        return pydantic_ai.BinaryContent(data=part.data, media_type=part.mime_type)
    if part.mime_type.startswith("image/"):
        return pydantic_ai.ImageUrl(url=part.uri, media_type=part.mime_type)
    return pydantic_ai.DocumentUrl(url=part.uri, media_type=part.mime_type)
