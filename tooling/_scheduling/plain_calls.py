"""The short way for a plain call: its arguments checked, the run, its response settled,
without the steps such a call has no use for (a context, confirmation, a credential,
hooks, a deadline, a span) and with two clock reads.

A call is plain when no tool of the scheduler sets a policy, and its tool is found under
its own name with its scopes granted, takes no context and no credential, neither streams
nor runs in a worker process, has no time limit and asks for no confirmation (nor was one
given for the call), and its arguments are of a type a tool may be given. The answer is
the one the full way would give.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .._base import BaseTool
from .._errors import FAILURES, ToolError
from .._function.tool import FunctionTool, respond_directly
from .._types import Confirmation, ToolCall, ToolResponse
from .response_size import cut_for_model
from .running import failure_response, raised_response, refuse_if_saturated

if TYPE_CHECKING:
    from .dispatch import Dispatch

__all__: list[str] = []

logger = logging.getLogger("tooling")


class PlainTool:
    """A tool whose calls may be plain, with what its calls need known once: whether it
    is a function answered in one step (``direct``), whether it runs in a thread."""

    __slots__ = ("direct", "threaded", "tool")

    def __init__(self, tool: BaseTool) -> None:
        self.tool = tool
        self.direct = isinstance(tool, FunctionTool)
        self.threaded = tool.runs_in_thread


class PlainCalls:
    """Which calls of one dispatch are plain; a tool's part checked once per dispatch."""

    __slots__ = ("_confirmations", "_granted", "_tools", "_verdicts")

    def __init__(
        self,
        tools: Mapping[str, BaseTool],
        confirmations: Mapping[str, Confirmation],
        granted_scopes: frozenset[str],
    ) -> None:
        self._tools = tools
        self._confirmations = confirmations
        self._granted = granted_scopes
        self._verdicts: dict[str, PlainTool | None] = {}  # by tool name

    def tool_for(self, call: ToolCall) -> PlainTool | None:
        """The tool of ``call`` if the call is plain, else None."""
        if self._confirmations and call.id in self._confirmations:
            return None
        args = call.args
        if type(args) is not dict and not isinstance(args, Mapping | str | bytes):
            return None
        name = call.name
        if name in self._verdicts:
            return self._verdicts[name]
        tool = self._tools.get(name)
        verdict = (
            None
            if tool is None
            or tool.streams
            or tool.takes_context
            or tool.auth is not None
            or tool.isolation == "process"
            or tool.timeout is not None
            or tool.require_confirmation is not False
            or (tool.scopes and not self._granted.issuperset(tool.scopes))
            else PlainTool(tool)
        )
        self._verdicts[name] = verdict
        return verdict


async def answer_plainly(dispatch: Dispatch, index: int, plain: PlainTool) -> None:
    """Answer plain call ``index`` of ``dispatch``."""
    call = dispatch.calls[index]
    settings = dispatch.settings
    tool = plain.tool
    dispatch.started_at[index] = started = time.perf_counter()
    try:
        budget = settings.budget
        if budget is not None:  # the run's counts (an agent loop's)
            refused = budget.admit(tool, call.args)
            if refused is not None:
                raise refused
        plan = dispatch.plan
        checked = plan.checked(index) if plan is not None and plan.slots is not None else None
        executor = None
        if plain.threaded:
            executor = settings.thread_pool()
            refuse_if_saturated(tool, executor)
        if checked is None and plain.direct:
            assert isinstance(tool, FunctionTool)
            response = await respond_directly(tool, call.args, call.id, executor)
        else:
            if checked is None:
                checked = tool.check_arguments(call.args)
            response = await tool.respond(checked, None, runtime=dispatch.runtime(tool))
            response.id = call.id
            response.name = call.name
        response = cut_for_model(response)
    except ToolError as raised:
        if raised.retry:  # the tool asks the model to try again: counted
            raised = dispatch.budget.ask_retry(settings, call.name, raised)
        response = raised_response(call, raised, started, settings.expose_errors)
    except FAILURES as exc:  # a hand-written tool misbehaved
        response = failure_response(call, exc, started, settings.expose_errors)
    ended = time.perf_counter()
    response.duration_s = ended - started
    if dispatch.debug:
        log_answer(call, response)
    if dispatch.quiet:  # the answer is only recorded (finish would do just this)
        dispatch.responses[index] = response
        dispatch.ended_at[index] = ended
    else:
        dispatch.finish(index, response, None, ended)


def log_answer(call: ToolCall, response: ToolResponse) -> None:
    """One debug line per answered call (a dispatch asks once whether debug is on)."""
    logger.debug(
        "tool call %s %s: %s in %.4f s",
        call.id,
        call.name,
        response.error.code if response.error is not None else "ok",
        response.duration_s,
    )
