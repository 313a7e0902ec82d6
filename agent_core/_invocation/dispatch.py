"""One dispatch: run a turn's calls through a ``Scheduler`` and store what they leave.

The steps: build the scheduler for the agent (:func:`_scheduler`), run the calls and
emit their progress (:func:`_run_calls`), sort each final response into answered,
waiting on the user, deferred behind a request, or waiting for a later result
(:func:`_sort`), then store the turn's events together (:func:`_events_of`), so a
cancelled run never leaves calls without answers in the session.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tooling import (
    BaseTool,
    Confirmation,
    Scheduler,
    ToolCall,
    ToolContext,
    ToolError,
    ToolProgress,
    ToolResponse,
)

from .._agent import Agent
from .._content import Content, FunctionCall, Part
from .._events import Event, EventActions
from .._output import FINAL_RESULT
from .jobs import is_job_answer
from .requests import awaits_result, request_event
from .stop import Stop
from .storable import state_problem
from .tool_calls import ToolCallbacks, merge_actions, refused_response, response_part

if TYPE_CHECKING:
    from .loop import Invocation
    from .tool_context import InvocationToolContext

__all__: list[str] = []


@dataclass(slots=True)
class _Sorted:
    """A dispatch's final responses, by what each leaves behind."""

    answered: list[Part] = field(default_factory=list)
    actions: EventActions = field(default_factory=EventActions)
    pending: list[tuple[ToolCall, ToolResponse]] = field(default_factory=list)  # on the user
    deferred: list[ToolCall] = field(default_factory=list)  # held behind a request
    waiting_long: set[str] = field(default_factory=set)  # results that come later
    output: Any = None  # an output_schema agent's accepted final answer


async def dispatch(
    inv: Invocation,
    agent: Agent,
    tools: dict[str, BaseTool],
    calls: Sequence[FunctionCall],
    model_event: Event | None,
    confirmations: dict[str, Confirmation] | None = None,
    auth: dict[str, dict[str, Any]] | None = None,
    *,
    refused: Mapping[int, ToolError] | None = None,
) -> AsyncGenerator[Event, None]:
    """Run ``calls``; store ``model_event`` (if any) with the response event.

    ``refused`` answers calls (by index) with an error without running them.
    """
    refused = refused or {}
    inv.budget.new_turn()
    tool_calls = [
        ToolCall(id=c.id or "", name=c.name, args={} if i in refused else c.args)
        for i, c in enumerate(calls)
    ]
    contexts: dict[str, InvocationToolContext] = {}
    ran: list[ToolResponse] = []
    to_run = [c for i, c in enumerate(tool_calls) if i not in refused]
    async for event in _run_calls(inv, agent, tools, to_run, contexts, ran, confirmations, auth):
        yield event
    answers = iter(ran)
    finals = [
        refused_response(call, refused[i]) if i in refused else next(answers)
        for i, call in enumerate(tool_calls)
    ]
    done = _sort(tools, tool_calls, finals, contexts)
    events = _events_of(inv, agent, model_event, done)
    # Calls and their answers are stored together: a cancelled run leaves nothing half-done.
    await finish_even_if_cancelled(inv.store_all(events))
    for event in events[1 if model_event is not None else 0 :]:
        yield event
    if events and events[-1].error_code is not None:
        raise Stop
    if done.pending or (done.waiting_long and not done.answered):
        raise Stop
    # Some calls answered while others wait for a result the user will send: the model
    # speaks about what it has, then the loop stops.


def _scheduler(inv: Invocation, agent: Agent, tools: dict[str, BaseTool]) -> Scheduler:
    config = inv.config
    isolated = any(t.isolation == "process" for t in tools.values())
    callbacks = agent.before_tool_callback is not None or agent.after_tool_callback is not None
    credentials = inv.services.credential_service
    needs_auth = any(t.auth is not None for t in tools.values())
    return Scheduler(
        tools.values(),
        strategy=agent.tool_strategy,
        max_concurrency=config.max_concurrency,
        timeout=config.tool_timeout,
        expose_errors=config.expose_errors,
        pool=inv.services.pool,
        processes=inv.services.processes() if isolated else None,
        hooks=ToolCallbacks(agent) if callbacks else None,
        credential_service=credentials() if credentials is not None and needs_auth else None,
        budget=inv.budget,
    )


async def _run_calls(
    inv: Invocation,
    agent: Agent,
    tools: dict[str, BaseTool],
    calls: list[ToolCall],
    contexts: dict[str, InvocationToolContext],
    finals: list[ToolResponse],
    confirmations: dict[str, Confirmation] | None,
    auth: dict[str, dict[str, Any]] | None,
) -> AsyncGenerator[Event, None]:
    """Run the calls, emitting progress and intermediate responses as partial events;
    ``finals`` gets their final responses (in order) and ``contexts`` their contexts."""

    def make_context(call: ToolCall) -> ToolContext:
        ctx = inv.context(agent, call.id, auth)
        contexts.setdefault(call.id, ctx)
        return ctx

    streaming = _scheduler(inv, agent, tools).stream(
        calls,
        context_factory=make_context,
        confirmations=confirmations,
        granted_scopes=inv.config.granted_scopes,
    )
    if inv.trace is not None:  # the calls' spans go under this agent's
        streaming = inv.trace.dispatching(agent, streaming)
    async with streaming as items:
        async for item in items:
            if isinstance(item, ToolProgress):
                yield Event(author=agent.name, invocation_id=inv.id, progress=item, partial=True)
            elif not item.final:
                yield Event(
                    author=agent.name,
                    invocation_id=inv.id,
                    content=Content(role="user", parts=[response_part(item, will_continue=True)]),
                    partial=True,
                )
        finals.extend(items.responses)


def _sort(
    tools: dict[str, BaseTool],
    calls: list[ToolCall],
    finals: list[ToolResponse],
    contexts: dict[str, InvocationToolContext],
) -> _Sorted:
    done = _Sorted()
    for call, final in zip(calls, finals, strict=True):
        if final.waiting_for is not None:
            done.pending.append((call, final))
        elif final.error is not None and final.error.code == "tool.deferred":
            done.deferred.append(call)
        elif awaits_result(tools.get(call.name), final):
            done.waiting_long.add(call.id)
        elif is_job_answer(tools.get(call.name), final.response):
            # A durable call: pending now (stored, so the model knows), finished by a job.
            done.answered.append(response_part(final, will_continue=True))
            done.waiting_long.add(call.id)
        else:
            ctx = contexts.get(call.id)
            if ctx is not None:
                problem = state_problem(ctx.actions.state_delta)
                if problem is not None:
                    # Written straight into the actions, past the state's own check: the
                    # call fails and its writes are dropped, so the session stays storable.
                    final = refused_response(
                        call,
                        ToolError(
                            f"tool {call.name!r} wrote state that cannot be stored: {problem}",
                            code="tool.failed",
                        ),
                    )
                    ctx = None
            done.answered.append(response_part(final))
            if call.name == FINAL_RESULT and final.error is None:
                done.output = final.artifact
            if ctx is not None:
                merge_actions(done.actions, ctx)
    return done


def _events_of(
    inv: Invocation, agent: Agent, model_event: Event | None, done: _Sorted
) -> list[Event]:
    """The events the dispatch stores: the model's turn (if any), the responses, an error
    for a transfer to no agent, and the requests waiting on the user."""
    events: list[Event] = []
    if model_event is not None:
        if done.waiting_long:
            # Only calls still waiting for their result when the turn ends are long-running
            # in the event's sense (a generator that finished here is not).
            model_event.long_running_tool_ids = set(done.waiting_long)
        events.append(model_event)
    if done.answered:
        actions = done.actions
        events.append(
            Event(
                author=agent.name,
                invocation_id=inv.id,
                content=Content(role="user", parts=done.answered),
                actions=actions,
                output=done.output,
            )
        )
        target = actions.transfer_to_agent
        if target and inv.services.agent.find_agent(target) is None:
            actions.transfer_to_agent = None
            events.append(
                inv.error(
                    agent,
                    "agent.unknown_agent",
                    f"there is no agent named {target!r} to transfer to",
                )
            )
    if done.pending:
        events.append(request_event(agent.name, inv.id, done.pending, done.deferred))
    return events


async def finish_even_if_cancelled(work: Coroutine[Any, Any, None]) -> None:
    """Run ``work`` to its end even when the caller is cancelled meanwhile, then re-raise.

    The cancelled run must not release its session (the runner's lock) while its last
    events are still being stored: a run started next would interleave with them.
    """
    task = asyncio.ensure_future(work)
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        while not task.done():
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                continue
        raise
