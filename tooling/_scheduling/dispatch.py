"""One dispatch: a turn's calls planned, run in their order, and answered in call order.

A dispatch is owned by one task: every call runs inside it (a ``TaskGroup`` when calls
overlap), so cancelling the dispatch, or leaving ``Scheduler.stream()``, cancels every
call still running and nothing outlives it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import replace
from typing import Any

from .._base import BaseTool, CheckedArguments, ToolRuntime
from .._context import SimpleToolContext, ToolContext, give_up, route_progress
from .._errors import FAILURES, ToolError, not_found
from .._state import show_earlier_writes
from .._tracing import dispatch_trace
from .._types import Confirmation, ToolCall, ToolResponse
from .budget import RunBudget
from .confirmation import WaitingForUser, check_confirmation, check_requests
from .credentials import obtain_credential, run_authorized
from .guarding import guard_input, run_policed
from .plain_calls import PlainCalls, answer_plainly, log_answer
from .planning import CallRecord, Mode, Plan, Segment, plan_dispatch
from .progress import CallProgress, ProgressChannel
from .running import (
    error_response,
    failure_response,
    raised_response,
    run_within_limit,
)
from .strategy import ContextFactory, DispatchSettings, ExecutionStrategy

__all__: list[str] = []

logger = logging.getLogger("tooling")


class Dispatch:
    """One dispatch: the calls, their responses, and the state they share."""

    def __init__(
        self,
        settings: DispatchSettings,
        calls: Sequence[ToolCall],
        channel: ProgressChannel,
        context_factory: ContextFactory | None,
        confirmations: Mapping[str, Confirmation],
        granted_scopes: frozenset[str],
    ) -> None:
        self.settings = settings
        self.calls = list(calls)
        self.channel = channel
        self.context_factory = context_factory
        self.confirmations = confirmations
        self.granted_scopes = granted_scopes
        self.responses: list[ToolResponse | None] = [None] * len(self.calls)
        self.pending: set[int] = set()
        self.finished_deltas: dict[int, dict[str, Any]] = {}
        self.contexts: dict[int, ToolContext] = {}
        #: Calls that hold later conflicting calls back: index -> id of the call waiting
        #: for the user (the call itself, or the one it was deferred behind).
        self.blocked: dict[int, str] = {}
        self.plan: Plan | None = None
        self.queued_at = time.perf_counter()
        self.started_at: dict[int, float] = {}
        self.ended_at: dict[int, float] = {}
        limit = settings.max_concurrency
        self.slots = asyncio.Semaphore(limit) if limit is not None else None
        self.trace = dispatch_trace(settings.strategy, settings.timeout)  # None: not traced
        self._thread_runtime: ToolRuntime | None = None
        #: The run's counts (the scheduler's budget, else this dispatch's own, made when
        #: a policy first needs it).
        self._budget = settings.budget
        self.quiet = False  # set once planned (see execute)
        #: Whether each answered call is logged (debug logging is on).
        self.debug = logger.isEnabledFor(logging.DEBUG)
        # Plain calls take the short way unless something around every call (hooks, a
        # trace, a concurrency or time limit) needs the steps it leaves out.
        self._plain = (
            PlainCalls(settings.tools, confirmations, granted_scopes)
            if settings.hooks is None
            and not settings.policed
            and self.trace is None
            and self.slots is None
            and settings.timeout is None
            else None
        )

    # -- planning ----------------------------------------------------------------------

    async def execute(self) -> list[ToolResponse]:
        try:
            self._answer_duplicates()
            todo = [i for i, r in enumerate(self.responses) if r is None]
            mode: Mode = self.settings.strategy.value
            plan = plan_dispatch(self.calls, todo, self.settings.tools, mode)
            self.plan = plan
            #: Whether an answer is only recorded: no folds, no trace, nobody streaming.
            self.quiet = not plan.followers and self.trace is None and not self.channel.consumer
            blocked_by: str | None = None
            if self.trace is not None:
                self.trace.plan(self.records)
            for segment in plan.segments:
                if segment.barrier:  # one after another
                    for index in segment.members:
                        if blocked_by is not None:
                            self._deferred(index, blocked_by)
                        else:
                            await self._answering(index)
                            blocked_by = self.blocked.get(index)
                    continue
                if blocked_by is not None:
                    for index in segment.members:
                        self._deferred(index, blocked_by)
                    continue
                if len(segment.members) == 1:
                    await self._answering(segment.members[0])
                else:
                    await self._run_segment(segment)
                blocked_by = next(
                    (self.blocked[i] for i in segment.members if i in self.blocked), None
                )
        finally:
            self.channel.finish()
        return [r for r in self.responses if r is not None]

    @property
    def records(self) -> list[CallRecord | None]:
        """How each call was scheduled: what it waited for and why, when it ran.

        One record per call (None for calls answered before planning: duplicate ids),
        built on demand from the plan and the times noted so far.
        """
        if self.plan is None:
            return [None] * len(self.calls)
        return self.plan.records(self.calls, self.queued_at, self.started_at, self.ended_at)

    async def _run_segment(self, segment: Segment) -> None:
        """Run a segment's calls together, each after the members it conflicts with."""
        try:
            await self._run_together(segment)
        except BaseExceptionGroup as group_error:
            # What a call let through (KeyboardInterrupt, a BaseException of the tool's
            # own) comes out as itself, as under SEQUENTIAL.
            raise _first_leaf(group_error) from None

    async def _run_together(self, segment: Segment) -> None:
        deps = segment.deps
        if not deps:  # safe reads, or keys that all differ: everything at once
            async with asyncio.TaskGroup() as calls:
                for index in segment.members:
                    calls.create_task(self._answering(index))
            return
        done = {i: asyncio.Event() for i in segment.members}

        async def member(index: int) -> None:
            try:
                waits = deps.get(index, ())
                for j in waits:
                    await done[j].wait()
                root = next((self.blocked[j] for j in waits if j in self.blocked), None)
                if root is not None:
                    self._deferred(index, root)
                    self.blocked[index] = root
                else:
                    await self._answering(index)
            finally:
                done[index].set()

        async with asyncio.TaskGroup() as calls:
            for index in segment.members:
                calls.create_task(member(index))

    def _note_blocking(self, index: int) -> None:
        """A call that waits for the user holds back the calls that conflict with it.

        Under AUTO only an unsafe call does (a safe read waiting for confirmation blocks
        nothing); under SEQUENTIAL every call; under PARALLEL none.
        """
        strategy = self.settings.strategy
        if strategy is ExecutionStrategy.PARALLEL:
            return
        tool = self.settings.tools.get(self.calls[index].name)
        safe = tool is not None and tool.read_only and tool.concurrency_safe
        if strategy is ExecutionStrategy.SEQUENTIAL or not safe:
            self.blocked[index] = self.calls[index].id

    def _answer_duplicates(self) -> None:
        seen: set[str] = set()
        for index, call in enumerate(self.calls):
            if not call.id:
                continue
            if call.id in seen:
                error = ToolError(
                    f"call id {call.id!r} is used by an earlier call in this turn; each call "
                    "needs its own id",
                    code="tool.duplicate_call",
                )
                self.finish(index, error_response(call, error, time.perf_counter(), None))
            seen.add(call.id)

    def _deferred(self, index: int, blocked_by: str) -> None:
        call = self.calls[index]
        error = ToolError(
            f"not run yet: call {blocked_by!r} before it waits for the user; this call runs "
            "when that one is resumed",
            code="tool.deferred",
        )
        self.finish(index, error_response(call, error, time.perf_counter(), None))

    def finish(
        self,
        index: int,
        response: ToolResponse,
        progress: CallProgress | None = None,
        ended: float | None = None,
    ) -> None:
        """Call ``index`` is answered with ``response`` (its folded calls too)."""
        self.responses[index] = response
        self.ended_at[index] = time.perf_counter() if ended is None else ended
        plan = self.plan
        followers = plan.followers.get(index) if plan is not None else None
        if followers:
            assert plan is not None
            response.folded_ids = plan.folded_ids(index, self.calls)
        if self.trace is not None and (
            not response.folded_ids or response.folded_ids[0] == self.calls[index].id
        ):
            # A folded call is one span (the run's), carrying the folded ids.
            self.trace.end(index, self.calls[index], response)
        self.channel.put_final(response, progress)
        if followers:
            for follower in followers:
                # A folded call is answered by its leader's run, under its own id.
                self.finish(follower, replace(response, id=self.calls[follower].id))

    # -- one call ----------------------------------------------------------------------

    def _answering(self, index: int) -> Coroutine[Any, Any, None]:
        """What answers call ``index``: the short way for a plain call, else the full one."""
        plain = self._plain.tool_for(self.calls[index]) if self._plain is not None else None
        return self._answer(index) if plain is None else answer_plainly(self, index, plain)

    async def _answer(self, index: int) -> None:
        """Answer one call: the tool's response, or the error the call ended with."""
        call = self.calls[index]
        started = time.perf_counter()
        progress = self.channel.for_call(call.id, call.name)
        try:
            tool = self._find_tool(call)
            # The call starts when it has a slot: only then is its context made, so it
            # sees the writes of every call that finished while it waited for one.
            if self.slots is None:
                self.started_at[index] = started
                response = await self._call_handling_confirmation(
                    index, tool, call, progress, started
                )
            else:
                async with self.slots:
                    self.started_at[index] = started = time.perf_counter()
                    response = await self._call_handling_confirmation(
                        index, tool, call, progress, started
                    )
        except WaitingForUser as pending:
            self.pending.add(index)
            self._note_blocking(index)
            response = ToolResponse(
                id=call.id,
                name=call.name,
                response=pending.response,
                error=pending.error,
                duration_s=time.perf_counter() - started,
                waiting_for=pending.waiting_for,
            )
        except ToolError as raised:
            if raised.retry:  # the tool asks the model to try again: counted
                raised = self.budget.ask_retry(self.settings, call.name, raised)
            response = raised_response(call, raised, started, self.settings.expose_errors)
        except FAILURES as exc:  # a hand-written tool or a context factory misbehaved
            response = failure_response(call, exc, started, self.settings.expose_errors)
        except BaseException:
            # Cancelled: a thread still running the call learns it was given up on, and
            # the call's span still ends, saying so.
            given_up = self.contexts.get(index)
            if given_up is not None:
                give_up(given_up)
            if self.trace is not None:
                self.trace.abort(index)
            raise
        ctx = self.contexts.get(index)
        if ctx is not None and ctx.actions.state_delta:
            self.finished_deltas[index] = ctx.actions.state_delta
        if self.debug:
            log_answer(call, response)
        self.finish(index, response, progress)

    async def _call_handling_confirmation(
        self, index: int, tool: BaseTool, call: ToolCall, progress: CallProgress, started: float
    ) -> ToolResponse:
        """A call that has its slot: its arguments checked, its context made, and the
        user's confirmation checked before it runs."""
        if self.trace is not None:
            self.trace.begin(index, call, tool)
        plan = self.plan
        checked = plan.checked(index) if plan is not None else None
        if checked is None:
            checked = tool.check_arguments(call.args)  # once: every step below reuses it
        if self.settings.policed or self.settings.budget is not None:
            refused = self.budget.admit(tool, call.args)
            if refused is not None:
                raise refused
        ctx = self._context(index, call, progress) if self._uses_context(tool) else None
        if tool.guardrails:
            await guard_input(self, tool, call, checked, ctx)
        answer = self.confirmations.get(call.id)
        confirmed = (
            False
            if tool.require_confirmation is False and answer is None
            else await check_confirmation(tool, checked, ctx, answer)
        )
        if tool.auth is not None:
            assert ctx is not None
            await obtain_credential(self.settings, tool, ctx)
        return await self._call_handling_hooks(tool, call, checked, ctx, confirmed, started)

    async def _call_handling_hooks(
        self,
        tool: BaseTool,
        call: ToolCall,
        checked: CheckedArguments,
        ctx: ToolContext | None,
        confirmed: bool,
        started: float,
    ) -> ToolResponse:
        """The hooks around the run: ``before`` may answer in the tool's place, ``after``
        may replace the response."""
        hooks = self.settings.hooks
        if hooks is None or ctx is None:
            return await self._call_handling_requests(tool, call, checked, ctx, confirmed, started)
        replaced = await hooks.before(tool, call, checked.values, ctx)
        if replaced is not None:
            response = ToolResponse(id=call.id, name=call.name, response=replaced)
            check_requests(tool, checked, ctx, confirmed)
        else:
            response = await self._call_handling_requests(
                tool, call, checked, ctx, confirmed, started
            )
        after = await hooks.after(
            tool, call, checked.values, ctx, response.response, artifact=response.artifact
        )
        if after is not None:
            response.response = after
            response.full_response = None
        return response

    async def _call_handling_requests(
        self,
        tool: BaseTool,
        call: ToolCall,
        checked: CheckedArguments,
        ctx: ToolContext | None,
        confirmed: bool,
        started: float,
    ) -> ToolResponse:
        """The run, then what the tool asked for while running (confirmation, a credential)."""
        if not self.settings.policed:  # the common case: as fast as before policies
            if tool.auth is None:
                response = await run_within_limit(self, tool, call, checked, ctx, started)
            else:
                assert ctx is not None
                response = await run_authorized(self, tool, call, checked, ctx, started)
        else:
            response = await run_policed(self, tool, call, checked, ctx, started)
        if ctx is not None:
            check_requests(tool, checked, ctx, confirmed)
        return response

    @property
    def budget(self) -> RunBudget:
        """The run's counts: the scheduler's budget, else this dispatch's own."""
        if self._budget is None:
            self._budget = RunBudget()
        return self._budget

    def _uses_context(self, tool: BaseTool) -> bool:
        """Whether the call needs a context: a tool that takes none, with no hooks to hand
        one to, can do without (its actions and state writes would be empty)."""
        return self.settings.hooks is not None or tool.takes_context or tool.auth is not None

    def runtime(self, tool: BaseTool) -> ToolRuntime:
        """The threads (and, for an isolated tool, the processes) a call may use."""
        settings = self.settings
        pool = settings.thread_pool()
        if tool.isolation == "process":
            return ToolRuntime(pool, settings.process_pool())
        runtime = self._thread_runtime
        if runtime is None or runtime.executor is not pool:
            runtime = self._thread_runtime = ToolRuntime(pool)
        return runtime

    def _find_tool(self, call: ToolCall) -> BaseTool:
        tools = self.settings.tools
        tool = tools.get(call.name)
        if tool is None:
            own = self.settings.aliases.get(call.name)
            if own is None:
                raise not_found(call.name, tools)
            tool = tools[own]
        missing = sorted(set(tool.scopes) - self.granted_scopes) if tool.scopes else None
        if missing:
            raise ToolError(
                f"tool {tool.name!r} needs scopes that were not granted: {', '.join(missing)}",
                code="tool.forbidden",
            )
        if not isinstance(call.args, Mapping | str | bytes):
            # Whatever the caller passed on (a model's list, number or null) never reaches
            # a tool, hand-written ones included.
            raise ToolError(
                f"arguments for tool {tool.name!r} must be a JSON object, not "
                f"{type(call.args).__name__}",
                code="tool.invalid_arguments",
                details=[{"loc": [], "msg": "Input should be an object", "type": "model_type"}],
            )
        return tool

    def _context(self, index: int, call: ToolCall, progress: CallProgress) -> ToolContext:
        if self.context_factory is None:
            ctx: ToolContext = SimpleToolContext(caller="scheduler", function_call_id=call.id)
        else:
            ctx = self.context_factory(call)
        route_progress(ctx, progress)
        self.contexts[index] = ctx
        if self.finished_deltas:
            # This call sees the writes of the calls that finished before it started,
            # a later call's write winning over an earlier one's.
            earlier = [self.finished_deltas[i] for i in sorted(self.finished_deltas, reverse=True)]
            show_earlier_writes(ctx.state, earlier)
        return ctx


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first
