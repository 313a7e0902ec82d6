"""Our tools as google-adk tools (``to_adk``). ``google.adk`` is imported when one is built.

The declaration is our ``to_gemini()``; ``run_async`` runs our validation and time limit
with a context over ADK's: the tool reads ADK's session state, and its state writes and
actions (``skip_summarization``, ``transfer_to_agent``, ``escalate``) are written back
into ADK's ``ToolContext`` (whose delta ADK records on its event). A tool that requires
confirmation asks through ADK's ``request_confirmation`` and runs once confirmed. A
failure is the error response dict, never an exception out of ADK's run; a
``ToolResult``'s artifact is not part of the response ADK sends to the model.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any

from .._base import BaseTool
from .._context import SimpleToolContext
from .._errors import ToolError
from ._base import answer, as_tool, require

__all__ = ["to_adk"]


def to_adk(tool: BaseTool | Callable[..., Any], *, granted_scopes: Iterable[str] = ()) -> Any:
    """Our tool as a google-adk ``BaseTool`` (long-running kept)."""
    return _adk_class()(as_tool(tool), frozenset(granted_scopes))


@functools.cache
def _adk_class() -> type:
    base_tool = require("google.adk.tools.base_tool", "adk", "to_adk").BaseTool

    class OurAdkTool(base_tool):  # type: ignore[misc,valid-type]
        """One of our tools, as ADK runs tools."""

        def __init__(self, ours: BaseTool, granted_scopes: frozenset[str]) -> None:
            super().__init__(
                name=ours.name, description=ours.description, is_long_running=ours.long_running
            )
            self.ours = ours
            self.granted_scopes = granted_scopes

        def _get_declaration(self) -> Any:
            return self.ours.to_gemini()

        async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
            ours = self.ours
            waiting = await _confirmation(ours, args, tool_context)
            if waiting is not None:
                return waiting
            ctx = _context_over(tool_context)
            response = await answer(ours, args, ctx, granted_scopes=self.granted_scopes)
            if response.error is None:
                _write_back(ctx, tool_context)
            return response.response

    return OurAdkTool


def _context_over(tool_context: Any) -> SimpleToolContext:
    invocation = getattr(tool_context, "_invocation_context", None)
    session = getattr(invocation, "session", None)
    state = tool_context.state.to_dict() if hasattr(tool_context.state, "to_dict") else {}
    return SimpleToolContext(
        caller=getattr(tool_context, "agent_name", "") or "adk",
        state=state,
        function_call_id=tool_context.function_call_id or "",
        invocation_id=getattr(tool_context, "invocation_id", "") or "",
        session_id=getattr(session, "id", "") or "",
    )


def _write_back(ctx: SimpleToolContext, tool_context: Any) -> None:
    done = ctx.actions
    for key, value in done.state_delta.items():
        tool_context.state[key] = value
    actions = tool_context.actions
    if done.skip_summarization:
        actions.skip_summarization = True
    if done.transfer_to_agent:
        actions.transfer_to_agent = done.transfer_to_agent
    if done.escalate:
        actions.escalate = True


async def _confirmation(ours: BaseTool, args: dict[str, Any], tool_context: Any) -> Any:
    """None when the call may run; else the response that stands for it meanwhile."""
    rule = ours.require_confirmation
    if rule is False:
        return None
    if callable(rule):
        try:
            values = ours.validated_arguments(args)
        except ToolError:
            return None  # the call itself answers with the argument errors
        decided = rule(values)
        needed = bool(await decided) if inspect.isawaitable(decided) else bool(decided)
        if not needed:
            return None
    confirmation = getattr(tool_context, "tool_confirmation", None)
    if confirmation is None:
        hint = f"Run tool {ours.name!r} with these arguments?"
        tool_context.request_confirmation(hint=hint, payload=None)
        tool_context.actions.skip_summarization = True
        error = ToolError(
            f"tool {ours.name!r} needs the user's confirmation; it was asked for",
            code="tool.confirmation_required",
        )
        return error.to_response()
    if not confirmation.confirmed:
        return ToolError(
            f"the user refused the call to tool {ours.name!r}", code="tool.rejected"
        ).to_response()
    return None
