"""The loop's side of tool calls: what the model sent that cannot run, an agent's tool
callbacks as scheduler hooks, and responses and actions folded into the response event."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic_core import to_jsonable_python

from tooling import (
    BaseTool,
    Blob,
    ToolCall,
    ToolContext,
    ToolError,
    ToolResponse,
)
from tooling.integration import provider_aliases, state_value_problem

from .._agent import Agent
from .._content import FunctionCall, FunctionResponse, Part
from .._events import EventActions
from .storable import clean

if TYPE_CHECKING:
    pass

__all__: list[str] = []

logger = logging.getLogger("agent_core")


class ToolCallbacks:
    """An agent's before/after tool callbacks, as the scheduler's hooks."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        after = agent.after_tool_callback
        self._after_takes_artifact = after is not None and _takes_keyword(after, "artifact")

    async def before(
        self, tool: BaseTool, call: ToolCall, args: dict[str, Any], ctx: ToolContext
    ) -> dict[str, Any] | None:
        callback = self.agent.before_tool_callback
        if callback is None:
            return None
        replaced: dict[str, Any] | None = await maybe_await(callback(tool, args, ctx))
        return replaced

    async def after(
        self,
        tool: BaseTool,
        call: ToolCall,
        args: dict[str, Any],
        ctx: ToolContext,
        response: dict[str, Any],
        *,
        artifact: Any = None,
    ) -> dict[str, Any] | None:
        callback = self.agent.after_tool_callback
        if callback is None:
            return None
        if self._after_takes_artifact:
            outcome = callback(tool, args, ctx, response, artifact=artifact)  # type: ignore[call-arg]
        else:
            outcome = callback(tool, args, ctx, response)
        replaced: dict[str, Any] | None = await maybe_await(outcome)
        return replaced


def _takes_keyword(callback: Any, name: str) -> bool:
    """Whether ``callback`` accepts a keyword argument ``name`` (or any keyword)."""
    try:
        parameters = inspect.signature(callback).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(
        (p.name == name and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
        or p.kind is p.VAR_KEYWORD
        for p in parameters
    )


async def maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def refusal(
    call: FunctionCall,
    tools: Mapping[str, BaseTool],
    aliases: Mapping[str, str] | None = None,
) -> ToolError | None:
    """Why ``call`` cannot run as the model sent it (None: it can); made storable meanwhile.

    A name or arguments holding what JSON text cannot (a lone surrogate, an int past the
    digit limit) are escaped for the store; a call of a known tool with such arguments,
    or with arguments that are not an object, is answered ``tool.invalid_arguments``.
    A name a provider was given for a tool it had to rename (``provider_name``) becomes
    the tool's own name: the session keeps our names, whichever model asked. (An unknown
    name is left to the scheduler, which answers ``tool.not_found``.)
    """
    call.name, _ = clean(call.name)
    call.args, problem = clean(call.args)
    if call.name not in tools:
        own = (provider_aliases(tools) if aliases is None else aliases).get(call.name)
        if own is None:
            return None
        call.name = own
    if not isinstance(call.args, dict):
        kind = _JSON_KINDS.get(type(call.args), type(call.args).__name__)
        return ToolError(
            f"invalid arguments for tool {call.name!r}: they must be a JSON object, not {kind}",
            code="tool.invalid_arguments",
            details=[{"loc": [], "msg": "Input should be an object", "type": "model_type"}],
        )
    if problem is not None:
        return ToolError(
            f"invalid arguments for tool {call.name!r}: they hold {problem}",
            code="tool.invalid_arguments",
            details=[{"loc": [], "msg": f"Input holds {problem}", "type": "value_error"}],
        )
    return None


_JSON_KINDS: dict[type, str] = {
    list: "an array",
    tuple: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}


def refused_response(call: ToolCall, error: ToolError) -> ToolResponse:
    return ToolResponse(id=call.id, name=call.name, response=error.to_response(), error=error)


def response_part(final: ToolResponse, *, will_continue: bool | None = None) -> Part:
    parts = [Part(inline_data=p) if isinstance(p, Blob) else Part(file_data=p) for p in final.parts]
    return Part(
        function_response=FunctionResponse(
            id=final.id or None,
            name=final.name,
            response=final.response,
            will_continue=will_continue,
            parts=parts or None,
            artifact=storable_artifact(final) if final.artifact is not None else None,
        )
    )


def storable_artifact(final: ToolResponse) -> Any:
    """A response's artifact as JSON values for the session, or None (with one warning)
    when it is not JSON: it then stays on the ``ToolResponse`` only."""
    try:
        value = to_jsonable_python(final.artifact, bytes_mode="base64", inf_nan_mode="null")
        problem = state_value_problem(value)
    except Exception as exc:  # pydantic cannot encode it
        problem = f"a {type(final.artifact).__name__} ({type(exc).__name__})"
    if problem is None:
        return value
    logger.warning(
        "tool %r returned an artifact that is not JSON (%s): it is kept on the ToolResponse "
        "only, not stored in the session",
        final.name,
        problem,
    )
    return None


def merge_actions(into: EventActions, ctx: ToolContext) -> None:
    done = ctx.actions
    into.state_delta.update(done.state_delta)
    into.artifact_delta.update(done.artifact_delta)
    into.skip_summarization = into.skip_summarization or done.skip_summarization
    into.escalate = into.escalate or done.escalate
    if done.transfer_to_agent:
        into.transfer_to_agent = done.transfer_to_agent
