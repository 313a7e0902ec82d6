"""What a model is offered this turn, and what its calls may reach.

A tool whose ``scopes`` the run has not granted is not offered (a call to it is still
refused by the scheduler, ``tool.forbidden``). A tool with ``available=`` is asked once
per turn, given a ``ReadonlyContext``; one that answers False, raises or does not answer
within the run's tool timeout (:data:`AVAILABLE_TIMEOUT` without one) is hidden for that
turn, and a call to it is ``tool.not_found``. With ``Agent(tool_search=...)`` the model
is offered the search's ``always`` tools, the tools revealed so far and ``search_tools``.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
from typing import TYPE_CHECKING, Any

from tooling import BaseTool, ReadonlyContext

if TYPE_CHECKING:
    from .._agent import Agent
    from .loop import Invocation

__all__: list[str] = []

logger = logging.getLogger("agent_core")

#: How long an ``available=`` predicate may take when the run sets no tool timeout.
AVAILABLE_TIMEOUT = 5.0


async def turn_tools(
    inv: Invocation, agent: Agent, tools: dict[str, BaseTool]
) -> tuple[dict[str, BaseTool], dict[str, BaseTool]]:
    """``(offered, callable)``: the tools the model is offered this turn, and those its
    calls may reach (the agent's tools less those hidden by ``available=``)."""
    search = agent.tool_search
    if search is None and not any(t.scopes or t.available is not None for t in tools.values()):
        return tools, tools  # the common case: everything, as it is
    granted = inv.config.granted_scopes
    readonly: ReadonlyContext | None = None
    reachable: dict[str, BaseTool] = {}
    offered: dict[str, BaseTool] = {}
    for name, t in tools.items():
        if t.available is not None:
            if readonly is None:
                readonly = ReadonlyContext(
                    invocation_id=inv.id,
                    agent_name=agent.name,
                    user_id=inv.session.user_id,
                    session_id=inv.session.id,
                    state=inv.session.state,
                )
            if not await _available(inv, t, readonly):
                continue
        reachable[name] = t
        if t.scopes and not set(t.scopes) <= granted:
            continue
        offered[name] = t
    if search is not None:
        offered = search.offered(offered, inv.session.state)
        reachable = {**reachable, **{k: v for k, v in offered.items() if k not in reachable}}
    return offered, reachable


async def _available(inv: Invocation, tool: BaseTool, readonly: ReadonlyContext) -> bool:
    """The tool's ``available`` answer; False (logged) if it raises or hangs."""
    check: Any = tool.available
    limit = inv.config.tool_timeout or AVAILABLE_TIMEOUT
    try:
        if inspect.iscoroutinefunction(check):
            answer = await asyncio.wait_for(check(readonly), limit)
        else:
            loop = asyncio.get_running_loop()
            work = loop.run_in_executor(
                inv.services.pool, contextvars.copy_context().run, check, readonly
            )
            answer = await asyncio.wait_for(work, limit)
    except TimeoutError:
        logger.warning(
            "tool %r hidden this turn: its available= check did not answer within %g s",
            tool.name,
            limit,
        )
        return False
    except Exception as exc:
        logger.warning(
            "tool %r hidden this turn: its available= check raised %s",
            tool.name,
            type(exc).__name__,
            exc_info=exc,
        )
        return False
    return bool(answer)
