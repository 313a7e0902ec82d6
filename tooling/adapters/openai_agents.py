"""Our tools as OpenAI Agents SDK tools (``to_openai_agents``). ``agents`` is imported when
one is built.

``params_json_schema`` is our strict OpenAI schema (every property required, optional
ones nullable): a null that arrives for an optional parameter means its default, as in
our own ``run()``. ``on_invoke_tool`` runs our validation, context and time limit, and
always answers text: the response's JSON, or the error response's JSON for a failure
(the SDK's own failure handler never sees an exception). ``require_confirmation`` becomes
``needs_approval`` (a predicate is asked with the validated arguments).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .._base import BaseTool
from .._context import SimpleToolContext
from .._errors import ToolError
from ._base import answer, as_tool, require, response_text

if TYPE_CHECKING:
    from agents import FunctionTool as AgentsFunctionTool

__all__ = ["to_openai_agents"]


def to_openai_agents(
    tool: BaseTool | Callable[..., Any],
    *,
    strict: bool = True,
    granted_scopes: Iterable[str] = (),
) -> AgentsFunctionTool:
    """Our tool as an openai-agents ``FunctionTool`` (strict schema by default)."""
    agents = require("agents", "openai-agents", "to_openai_agents")
    ours = as_tool(tool)
    declared = ours.to_openai(strict=strict)["function"]
    scopes = frozenset(granted_scopes)

    async def on_invoke_tool(ctx: Any, input: str) -> str:
        context = SimpleToolContext(
            caller="openai-agents", function_call_id=getattr(ctx, "tool_call_id", "") or ""
        )
        return response_text(await answer(ours, input or "{}", context, granted_scopes=scopes))

    return agents.FunctionTool(  # type: ignore[no-any-return]
        name=ours.name,
        description=ours.description,
        params_json_schema=declared["parameters"],
        on_invoke_tool=on_invoke_tool,
        strict_json_schema=bool(declared.get("strict", False)),
        needs_approval=_approval(ours),
    )


def _approval(ours: BaseTool) -> Any:
    rule = ours.require_confirmation
    if not callable(rule):
        return bool(rule)

    async def needs_approval(_ctx: Any, params: dict[str, Any], _call_id: str) -> bool:
        try:
            values = ours.validated_arguments(params)
        except ToolError:
            return False  # the call itself answers with the argument errors
        decided = rule(values)
        return bool(await decided) if inspect.isawaitable(decided) else bool(decided)

    return needs_approval
