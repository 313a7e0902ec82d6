"""One dispatch: a turn's calls planned, run in their order, and answered in call order.

A dispatch is owned by one task: every call runs inside it (a ``TaskGroup`` when calls
overlap), so cancelling the dispatch, or leaving ``Scheduler.stream()``, cancels every
call still running and nothing outlives it.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections import ChainMap
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal, cast

from .._base import BaseTool, CheckedArguments, ToolRuntime
from .._context import SimpleToolContext, ToolContext
from .._errors import FAILURES, ToolError, log_failure
from .confirmation import confirmation_response, credential_response, fingerprint
from .planning import CallRecord, Mode, Plan, Segment, plan_dispatch
from .progress import CallProgress, ProgressChannel

if TYPE_CHECKING:
    pass
from .._tracing import dispatch_trace
from .._types import Confirmation, ToolCall, ToolResponse
from .deadlines import stop_within_grace
from .response_size import cut_for_model
from .strategy import ContextFactory, ExecutionStrategy

if TYPE_CHECKING:
    from .scheduler import Scheduler

__all__: list[str] = []

logger = logging.getLogger("tooling")


def _error_response(
    call: ToolCall, error: ToolError, started: float, exc: BaseException | None
) -> ToolResponse:
    return ToolResponse(
        id=call.id,
        name=call.name,
        response=error.to_response(),
        error=error,
        exception=exc,
        duration_s=time.perf_counter() - started,
    )


class _Pending(Exception):
    """A call ends waiting for the user (confirmation or credential)."""

    def __init__(
        self,
        response: dict[str, Any],
        error: ToolError,
        waiting_for: Literal["confirmation", "credential"],
    ) -> None:
        super().__init__(error.message)
        self.response = response
        self.error = error
        self.waiting_for = waiting_for


class Dispatch:
    """One dispatch: the calls, their responses, and the state they share."""

    def __init__(
        self,
        scheduler: Scheduler,
        calls: Sequence[ToolCall],
        channel: ProgressChannel,
        context_factory: ContextFactory | None,
        confirmations: Mapping[str, Confirmation],
        granted_scopes: frozenset[str],
    ) -> None:
        self.scheduler = scheduler
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
        limit = scheduler.max_concurrency
        self.slots = asyncio.Semaphore(limit) if limit is not None else None
        self.trace = dispatch_trace(scheduler.strategy, scheduler.timeout)  # None: not traced
        self._thread_runtime: ToolRuntime | None = None

    # -- planning ----------------------------------------------------------------------

    async def execute(self) -> list[ToolResponse]:
        try:
            self._answer_duplicates()
            todo = [i for i, r in enumerate(self.responses) if r is None]
            mode: Mode = self.scheduler.strategy.value
            plan = plan_dispatch(self.calls, todo, self.scheduler._tools, mode)
            self.plan = plan
            blocked_by: str | None = None
            if self.trace is not None:
                self.trace.plan(self.records)
            for segment in plan.segments:
                if segment.barrier:  # one after another
                    for index in segment.members:
                        if blocked_by is not None:
                            self._deferred(index, blocked_by)
                        else:
                            await self._run(index)
                            blocked_by = self.blocked.get(index)
                    continue
                if blocked_by is not None:
                    for index in segment.members:
                        self._deferred(index, blocked_by)
                    continue
                if len(segment.members) == 1:
                    await self._run(segment.members[0])
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
                    calls.create_task(self._run(index))
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
                    await self._run(index)
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
        strategy = self.scheduler.strategy
        if strategy is ExecutionStrategy.PARALLEL:
            return
        tool = self.scheduler._tools.get(self.calls[index].name)
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
                self._finish(index, _error_response(call, error, time.perf_counter(), None))
            seen.add(call.id)

    def _deferred(self, index: int, blocked_by: str) -> None:
        call = self.calls[index]
        error = ToolError(
            f"not run yet: call {blocked_by!r} before it waits for the user; this call runs "
            "when that one is resumed",
            code="tool.deferred",
        )
        self._finish(index, _error_response(call, error, time.perf_counter(), None))

    def _finish(
        self, index: int, response: ToolResponse, progress: CallProgress | None = None
    ) -> None:
        self.responses[index] = response
        self.ended_at[index] = time.perf_counter()
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
                self._finish(follower, replace(response, id=self.calls[follower].id))

    # -- one call ----------------------------------------------------------------------

    async def _run(self, index: int) -> None:
        call = self.calls[index]
        started = time.perf_counter()
        progress = self.channel.for_call(call.id, call.name)
        try:
            tool = self._tool(call)
            # The call starts when it has a slot: only then is its context made, so it
            # sees the writes of every call that finished while it waited for one.
            if self.slots is None:
                self.started_at[index] = started = time.perf_counter()
                response = await self._call(index, tool, call, progress, started)
            else:
                async with self.slots:
                    self.started_at[index] = started = time.perf_counter()
                    response = await self._call(index, tool, call, progress, started)
        except _Pending as pending:
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
            cause = raised.__cause__
            told = raised
            if self.scheduler.expose_errors and raised.hides_cause:
                told = ToolError(f"{type(cause).__name__}: {cause}", code="tool.failed")
                told.__cause__ = cause
            response = _error_response(call, told, started, cause if cause is not None else raised)
        except FAILURES as exc:  # a hand-written tool or a context factory misbehaved
            log_failure(call.name, exc)
            failure = ToolError(
                f"{type(exc).__name__}: {exc}"
                if self.scheduler.expose_errors
                else f"tool {call.name!r} failed with {type(exc).__name__} "
                "(the error text is not shown)",
                code="tool.failed",
            )
            failure.__cause__ = exc
            response = _error_response(call, failure, started, exc)
        except BaseException:
            # Cancelled: a thread still running the call learns it was given up on, and
            # the call's span still ends, saying so.
            given_up = self.contexts.get(index)
            if given_up is not None:
                given_up._cancel()
            if self.trace is not None:
                self.trace.abort(index)
            raise
        ctx = self.contexts.get(index)
        if ctx is not None and ctx.actions.state_delta:
            self.finished_deltas[index] = ctx.actions.state_delta
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "tool call %s %s: %s in %.4f s",
                call.id,
                call.name,
                response.error.code if response.error is not None else "ok",
                response.duration_s,
            )
        self._finish(index, response, progress)

    async def _call(
        self, index: int, tool: BaseTool, call: ToolCall, progress: CallProgress, started: float
    ) -> ToolResponse:
        """Arguments, confirmation, hooks and the run itself, for a call that has its slot."""
        if self.trace is not None:
            self.trace.begin(index, call, tool)
        plan = self.plan
        checked = plan.checked(index) if plan is not None else None
        if checked is None:
            checked = tool.check_arguments(call.args)  # once: every step below reuses it
        hooks = self.scheduler.hooks
        ctx = self._context(index, call, progress) if self._uses_context(tool) else None
        confirmed = (
            False
            if tool.require_confirmation is False and call.id not in self.confirmations
            else await self._check_confirmation(tool, call, checked, ctx)
        )
        if hooks is not None and ctx is not None:
            replaced = await hooks.before(tool, call, checked.values, ctx)
            if replaced is not None:
                response = ToolResponse(id=call.id, name=call.name, response=replaced)
            else:
                response = await self._execute(tool, call, checked, ctx, started)
            self._check_requests(tool, checked, ctx, confirmed)
            after = await hooks.after(tool, call, checked.values, ctx, response.response)
            if after is not None:
                response.response = after
                response.full_response = None
            return response
        response = await self._execute(tool, call, checked, ctx, started)
        if ctx is not None:
            self._check_requests(tool, checked, ctx, confirmed)
        return response

    def _uses_context(self, tool: BaseTool) -> bool:
        """Whether the call needs a context: a tool that takes none, with no hooks to hand
        one to, can do without (its actions and state writes would be empty)."""
        return self.scheduler.hooks is not None or tool.takes_context

    def _tool(self, call: ToolCall) -> BaseTool:
        tool = self.scheduler._tools.get(call.name)
        if tool is None:
            names = ", ".join(sorted(self.scheduler._tools)) or "(none)"
            raise ToolError(
                f"there is no tool named {call.name!r}; the tools are: {names}",
                code="tool.not_found",
            )
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
        ctx._progress_sink = progress
        self.contexts[index] = ctx
        if self.finished_deltas:
            # This call sees the writes of the calls that finished before it started,
            # a later call's write winning over an earlier one's.
            earlier = [self.finished_deltas[i] for i in sorted(self.finished_deltas, reverse=True)]
            ctx.state._base = ChainMap(*earlier, cast("dict[str, Any]", ctx.state._base))
        return ctx

    async def _check_confirmation(
        self, tool: BaseTool, call: ToolCall, checked: CheckedArguments, ctx: ToolContext | None
    ) -> bool:
        """Whether the user confirmed this call; raises ``_Pending`` when they must first."""
        rule = tool.require_confirmation
        answer = self.confirmations.get(call.id)
        if rule is False and answer is None:
            return False
        args = checked.values
        if callable(rule):
            verdict = rule(args)
            needed = bool(await verdict if inspect.isawaitable(verdict) else verdict)
        else:
            needed = bool(rule)
        print_ = fingerprint(tool.name, args)
        if answer is not None and answer.fingerprint == print_:
            if not answer.confirmed:
                raise ToolError(f"the user declined to run {tool.name!r}", code="tool.rejected")
            if ctx is not None:
                ctx.tool_confirmation = answer
            return True
        if needed:
            raise self._pending_confirmation(
                tool, args, print_, f"Confirm running {tool.name}.", None
            )
        return False

    def _pending_confirmation(
        self, tool: BaseTool, args: dict[str, Any], print_: str, hint: str, payload: Any
    ) -> _Pending:
        return _Pending(
            confirmation_response(tool.name, hint, payload, args, print_),
            ToolError(
                f"tool {tool.name!r} waits for the user's confirmation: {hint}",
                code="tool.confirmation_required",
            ),
            "confirmation",
        )

    def _check_requests(
        self, tool: BaseTool, checked: CheckedArguments, ctx: ToolContext, confirmed: bool
    ) -> None:
        """A tool that asked for confirmation or a credential while running ends pending."""
        actions = ctx.actions
        if actions.requested_confirmation is not None and not confirmed:
            args = checked.values
            request = actions.requested_confirmation
            raise self._pending_confirmation(
                tool, args, fingerprint(tool.name, args), request["hint"], request.get("payload")
            )
        if (
            actions.requested_credential is not None
            and ctx.get_auth_response(actions.requested_credential) is None
        ):
            raise _Pending(
                credential_response(tool.name, actions.requested_credential),
                ToolError(
                    f"tool {tool.name!r} waits for the user's credential",
                    code="tool.confirmation_required",
                ),
                "credential",
            )

    async def _execute(
        self,
        tool: BaseTool,
        call: ToolCall,
        checked: CheckedArguments,
        ctx: ToolContext | None,
        started: float,
    ) -> ToolResponse:
        limit = tool.timeout
        if limit is None or (self.scheduler.timeout is not None and self.scheduler.timeout < limit):
            limit = self.scheduler.timeout
        threaded = tool.runs_in_thread
        if threaded and self.scheduler.pool.saturated():
            raise ToolError(
                f"tool {tool.name!r} was not started: {self.scheduler.pool.abandoned} hung "
                "calls (timed out or cancelled) are still running in their threads",
                code="tool.failed",
            )
        if limit is None:
            if not tool.streams:  # the common case, one coroutine layer less
                response = await tool.respond(checked, ctx, runtime=self._runtime(tool))
                return _settle(call, response, started)
            return await self._produce(tool, call, checked, ctx, started)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        isolated = tool.isolation == "process"
        if isolated:
            # A process call's clock starts when it has its worker (waiting for one, or
            # starting one, is not running). The task made here inherits the callback.
            from .._workers.processes import worker_ready

            def restart_clock() -> None:
                nonlocal deadline
                deadline = loop.time() + limit

            token = worker_ready.set(restart_clock)
            try:
                work = asyncio.create_task(self._produce(tool, call, checked, ctx, started))
            finally:
                worker_ready.reset(token)
        else:
            work = asyncio.create_task(self._produce(tool, call, checked, ctx, started))
        try:
            while not work.done() and (remaining := deadline - loop.time()) > 0:
                await asyncio.wait((work,), timeout=remaining)
        except BaseException:  # the dispatch is cancelled: so is this call
            await stop_within_grace(work)
            raise
        if work.done():
            return work.result()
        if ctx is not None:
            ctx._cancel()
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

    def _runtime(self, tool: BaseTool) -> ToolRuntime:
        """The threads (and, for an isolated tool, the processes) a call may use."""
        scheduler = self.scheduler
        if tool.isolation == "process":
            return ToolRuntime(scheduler.pool, scheduler.processes)
        runtime = self._thread_runtime
        if runtime is None or runtime.executor is not scheduler.pool:
            runtime = self._thread_runtime = ToolRuntime(scheduler.pool)
        return runtime

    async def _produce(
        self,
        tool: BaseTool,
        call: ToolCall,
        checked: CheckedArguments,
        ctx: ToolContext | None,
        started: float,
    ) -> ToolResponse:
        runtime = self._runtime(tool)
        if not tool.streams:  # the common case: one response
            return _settle(call, await tool.respond(checked, ctx, runtime=runtime), started)
        final: ToolResponse | None = None
        async with tool.stream_responses(checked, ctx, runtime=runtime) as updates:
            async for update in updates:
                update.id = call.id
                cut_for_model(update)
                if update.final:
                    final = update
                else:
                    if self.trace is not None:
                        self.trace.intermediate(call)
                    await self.channel.put_update(update)
        assert final is not None
        final.duration_s = time.perf_counter() - started
        return final


def _settle(call: ToolCall, response: ToolResponse, started: float) -> ToolResponse:
    """A tool's final response under the call's id and time, cut to the size limit."""
    response.id = call.id
    response.name = call.name
    response.duration_s = time.perf_counter() - started
    return cut_for_model(response)


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first
