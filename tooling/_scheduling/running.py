"""A call's run once it is cleared to start: its time limit, its threads or worker
process, and the updates of a streaming tool.

``run_within_limit`` holds the call to the tool's (or the scheduler's) time limit and
says how a call that overran was stopped; ``run_tool`` asks the tool for its response
(or its stream of them) and settles it under the call's id, time and size limit.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from .._base import BaseTool, CheckedArguments
from .._context import ToolContext, give_up
from .._errors import ToolError, log_failure
from .._types import ToolCall, ToolResponse
from .deadlines import stop_within_grace
from .response_size import cut_for_model

if TYPE_CHECKING:
    from .._workers.threads import WorkerPool
    from .dispatch import Dispatch

__all__: list[str] = []


async def run_within_limit(
    dispatch: Dispatch,
    tool: BaseTool,
    call: ToolCall,
    checked: CheckedArguments,
    ctx: ToolContext | None,
    started: float,
) -> ToolResponse:
    """The tool's response, or ``ToolError`` (``tool.timeout``) once its time is up."""
    settings = dispatch.settings
    limit = tool.timeout
    if limit is None or (settings.timeout is not None and settings.timeout < limit):
        limit = settings.timeout
    threaded = tool.runs_in_thread
    if threaded:
        refuse_if_saturated(tool, settings.thread_pool())
    if limit is None:
        if not tool.streams:  # the common case, one coroutine layer less
            response = await tool.respond(checked, ctx, runtime=dispatch.runtime(tool))
            return settle(call, response, started)
        return await run_tool(dispatch, tool, call, checked, ctx, started)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    isolated = tool.isolation == "process"
    started_in_worker = True
    moved = loop.create_future()  # done when the clock restarts
    if isolated:
        # A process call's clock starts when its tool starts in the worker: waiting for a
        # worker, starting one and importing the tool's module are not running, and have
        # the pool's own bound. The task made here inherits the callback.
        from .._workers.processes import worker_ready

        wait_bound = settings.process_pool().start_timeout
        deadline = loop.time() + wait_bound
        started_in_worker = False

        def restart_clock() -> None:
            nonlocal deadline, started_in_worker
            deadline = loop.time() + limit
            started_in_worker = True
            if not moved.done():
                moved.set_result(None)

        token = worker_ready.set(restart_clock)
        try:
            work = asyncio.create_task(run_tool(dispatch, tool, call, checked, ctx, started))
        finally:
            worker_ready.reset(token)
    else:
        work = asyncio.create_task(run_tool(dispatch, tool, call, checked, ctx, started))
    try:
        while not work.done() and (remaining := deadline - loop.time()) > 0:
            waits = (work,) if started_in_worker else (work, moved)
            await asyncio.wait(waits, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:  # the dispatch is cancelled: so is this call
        await stop_within_grace(work)
        raise
    if work.done():
        return work.result()
    if ctx is not None:
        give_up(ctx)
    if not started_in_worker:
        await stop_within_grace(work)
        raise ToolError(
            f"tool {tool.name!r} was not started: no worker process could run it within "
            f"{wait_bound:g} s (all were busy, or starting one took that long)",
            code="tool.timeout",
        )
    if threaded:
        await stop_within_grace(work)
        tail = "its thread was abandoned; the work may still complete in the background"
    elif await stop_within_grace(work):
        tail = "its worker process was stopped" if isolated else "it was cancelled"
    else:
        tail = "it ignored its cancellation and was abandoned"
    raise ToolError(
        f"tool {tool.name!r} did not finish within {limit:g} s: {tail}",
        code="tool.timeout",
    )


def refuse_if_saturated(tool: BaseTool, pool: WorkerPool) -> None:
    """A ``ToolError`` rather than a thread call on a pool its hung calls have filled."""
    if pool.saturated():
        raise ToolError(
            f"tool {tool.name!r} was not started: {pool.abandoned} hung "
            "calls (timed out or cancelled) are still running in their threads",
            code="tool.failed",
        )


async def run_tool(
    dispatch: Dispatch,
    tool: BaseTool,
    call: ToolCall,
    checked: CheckedArguments,
    ctx: ToolContext | None,
    started: float,
) -> ToolResponse:
    """The tool's final response; a streaming tool's updates go to the dispatch's channel."""
    runtime = dispatch.runtime(tool)
    if not tool.streams:  # the common case: one response
        return settle(call, await tool.respond(checked, ctx, runtime=runtime), started)
    final: ToolResponse | None = None
    trace = dispatch.trace
    async with tool.stream_responses(checked, ctx, runtime=runtime) as updates:
        async for update in updates:
            update.id = call.id
            cut_for_model(update)
            if update.final:
                final = update
            else:
                if trace is not None:
                    trace.intermediate(call)
                await dispatch.channel.put_update(update)
    assert final is not None
    final.duration_s = time.perf_counter() - started
    return final


def settle(call: ToolCall, response: ToolResponse, started: float) -> ToolResponse:
    """A tool's final response under the call's id and time, cut to the size limit."""
    response.id = call.id
    response.name = call.name
    response.duration_s = time.perf_counter() - started
    return cut_for_model(response)


# -- a call's error as its response --------------------------------------------------------


def error_response(
    call: ToolCall, error: ToolError, started: float, exc: BaseException | None
) -> ToolResponse:
    """The response of a call that ended with ``error`` (caused by ``exc``)."""
    return ToolResponse(
        id=call.id,
        name=call.name,
        response=error.to_response(),
        error=error,
        exception=exc,
        duration_s=time.perf_counter() - started,
    )


def raised_response(
    call: ToolCall, raised: ToolError, started: float, expose_errors: bool
) -> ToolResponse:
    """The response of a call that raised ``raised``; with ``expose_errors``, an error
    that hides its cause tells it."""
    cause = raised.__cause__
    told = raised
    if expose_errors and raised.hides_cause:
        told = ToolError(f"{type(cause).__name__}: {cause}", code="tool.failed")
        told.__cause__ = cause
    return error_response(call, told, started, cause if cause is not None else raised)


def failure_response(
    call: ToolCall, exc: BaseException, started: float, expose_errors: bool
) -> ToolResponse:
    """The response of a call whose hand-written tool (or context factory) misbehaved;
    the error text only with ``expose_errors``."""
    log_failure(call.name, exc)
    failure = ToolError(
        f"{type(exc).__name__}: {exc}"
        if expose_errors
        else f"tool {call.name!r} failed with {type(exc).__name__} (the error text is not shown)",
        code="tool.failed",
    )
    failure.__cause__ = exc
    return error_response(call, failure, started, exc)
