"""``Scheduler``: runs one model turn's tool calls safely, concurrently where allowed.

A dispatch is owned by one task: every call runs inside it (a ``TaskGroup`` when calls
overlap), so cancelling the dispatch, or leaving ``stream()``, cancels every call still
running and nothing outlives it.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import time
import weakref
from collections import ChainMap
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from pydantic_core import to_json

from ._base import BaseTool, CheckedArguments, ToolRuntime
from ._confirmation import confirmation_response, credential_response, fingerprint
from ._context import SimpleToolContext, ToolContext
from ._errors import FAILURES, ToolError, log_failure
from ._function_tool import FunctionTool
from ._planning import CallRecord, Mode, Plan, Segment, plan_dispatch
from ._progress import CallProgress, ProgressChannel
from ._threads import WorkerPool

if TYPE_CHECKING:
    from ._processes import ProcessPool
from ._tracing import dispatch_trace
from ._types import Confirmation, ToolCall, ToolProgress, ToolResponse

__all__ = [
    "ExecutionStrategy",
    "Scheduler",
]

logger = logging.getLogger("tooling")

#: A response over this many bytes of JSON is cut for the model.
MAX_RESPONSE_BYTES = 256 * 1024

ContextFactory = Callable[[ToolCall], ToolContext]


class CallHooks(Protocol):
    """Callbacks around each call; a non-None return replaces the tool's response dict.

    ``args`` are the call's checked arguments as JSON values (defaults filled in).
    """

    async def before(
        self, tool: BaseTool, call: ToolCall, args: dict[str, Any], ctx: ToolContext
    ) -> dict[str, Any] | None: ...

    async def after(
        self,
        tool: BaseTool,
        call: ToolCall,
        args: dict[str, Any],
        ctx: ToolContext,
        response: dict[str, Any],
    ) -> dict[str, Any] | None: ...


class ExecutionStrategy(StrEnum):
    """How the calls of one model turn are run.

    ``AUTO``: a call starts when every earlier call it conflicts with has finished. Two
    calls conflict unless both tools are ``read_only`` and ``concurrency_safe``, or both
    calls have a conflict key (``conflict_key=``) and the keys differ. So safe reads run
    together, writes to different keys overlap, writes to one key keep their order, and a
    call without a key to an unsafe tool is a barrier (it starts after every earlier call
    finished, and no later call starts before it finished). ``PARALLEL``: all at once,
    whatever the flags and keys. ``SEQUENTIAL``: one by one, in call order.
    """

    AUTO = "auto"
    PARALLEL = "parallel"
    SEQUENTIAL = "sequential"


class Scheduler:
    """Runs tool calls: validation, scopes, confirmation, timeouts, threads, progress.

    ``tools`` are ``BaseTool``s or plain functions (wrapped as ``FunctionTool``); their
    specs are built here, so a broken tool fails at construction. Duplicate names are an
    error. Sync tools run on the scheduler's own pool of up to ``max_threads`` daemon
    threads; ``isolation="process"`` tools in up to ``max_processes`` worker processes
    (default: the number of CPUs). ``pool`` and ``processes`` share pools made elsewhere
    (an agent loop's, across turns; they stay their owner's to shut down); ``hooks`` are
    callbacks around each call.
    """

    def __init__(
        self,
        tools: Iterable[BaseTool | Callable[..., Any]] = (),
        *,
        strategy: ExecutionStrategy = ExecutionStrategy.AUTO,
        max_concurrency: int | None = None,
        timeout: float | None = None,
        expose_errors: bool = False,
        max_threads: int = 64,
        max_processes: int | None = None,
        hooks: CallHooks | None = None,
        pool: WorkerPool | None = None,
        processes: ProcessPool | None = None,
    ) -> None:
        if max_concurrency is not None and max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self._tools: dict[str, BaseTool] = {}
        for item in tools:
            found = item if isinstance(item, BaseTool) else FunctionTool(item)
            found.check_callable()
            _ = found.parameters_json_schema  # a function tool's spec: a broken one fails here
            if found.name in self._tools:
                raise ValueError(f"two tools are named {found.name!r}; tool names must be unique")
            self._tools[found.name] = found
        self.strategy = ExecutionStrategy(strategy)
        self.max_concurrency = max_concurrency
        self.timeout = timeout
        self.expose_errors = expose_errors
        self.max_threads = max_threads
        self.max_processes = max_processes if max_processes is not None else os.cpu_count() or 1
        if self.max_processes < 1:
            raise ValueError("max_processes must be at least 1")
        # Pools given by the caller are shared (an agent loop's across its turns) and
        # stay the caller's to shut down; those made here are the scheduler's own.
        self._pool: WorkerPool | None = pool
        self._processes: ProcessPool | None = processes
        self._owns_pools = (pool is None, processes is None)
        #: Callbacks around each tool call (an agent's tool callbacks; None for plain use).
        self.hooks: CallHooks | None = hooks

    @property
    def tools(self) -> Mapping[str, BaseTool]:
        """The tools by name (read-only)."""
        return dict(self._tools)

    @property
    def pool(self) -> WorkerPool:
        """The worker pool sync tools run on (created on first use).

        A pool the scheduler made is shut down when the scheduler is closed or garbage
        collected, so a scheduler dropped without ``close()`` leaves no idle threads.
        """
        if self._pool is None:
            self._pool = WorkerPool(self.max_threads, name="tooling-scheduler")
            weakref.finalize(self, self._pool.shutdown)
        return self._pool

    @property
    def processes(self) -> ProcessPool:
        """The worker processes ``isolation="process"`` tools run in (made on first use).

        Up to ``max_processes``; none starts before the first such call. Stopped when the
        scheduler is closed or garbage collected.
        """
        if self._processes is None:
            from ._processes import ProcessPool

            self._processes = ProcessPool(self.max_processes, name="tooling-scheduler")
            weakref.finalize(self, self._processes.shutdown)
        return self._processes

    def close(self) -> None:
        """Stop the idle worker threads and every worker process. Thread calls still
        running finish on their own."""
        owns_pool, owns_processes = self._owns_pools
        if owns_pool and self._pool is not None:
            self._pool.shutdown()
        if owns_processes and self._processes is not None:
            self._processes.shutdown()

    async def dispatch(
        self,
        calls: Sequence[ToolCall],
        *,
        context_factory: ContextFactory | None = None,
        confirmations: Mapping[str, Confirmation] | None = None,
        granted_scopes: frozenset[str] | set[str] = frozenset(),
    ) -> list[ToolResponse]:
        """Run ``calls``; return their final responses in call order.

        Progress is dropped (nobody is reading it); use :meth:`stream` to see it.
        """
        loop = asyncio.get_running_loop()
        run = _Dispatch(
            self,
            calls,
            ProgressChannel(loop, consumer=False),
            context_factory,
            confirmations or {},
            frozenset(granted_scopes),
        )
        return await run.execute()

    @asynccontextmanager
    async def stream(
        self,
        calls: Sequence[ToolCall],
        *,
        context_factory: ContextFactory | None = None,
        confirmations: Mapping[str, Confirmation] | None = None,
        granted_scopes: frozenset[str] | set[str] = frozenset(),
    ) -> AsyncIterator[DispatchStream]:
        """Run ``calls``, giving ``ToolProgress`` and ``ToolResponse`` items as they happen.

        Intermediate responses (``final=False``) of long-running tools and every final
        response come through; leaving the block cancels the calls still running.
        """
        loop = asyncio.get_running_loop()
        channel = ProgressChannel(loop, consumer=True)
        run = _Dispatch(
            self, calls, channel, context_factory, confirmations or {}, frozenset(granted_scopes)
        )
        task = asyncio.create_task(run.execute())

        updates = DispatchStream(channel, task, run)
        try:
            yield updates
        finally:
            channel.finish()
            if not task.done():
                task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                # The dispatch's own cancellation ends here; the consumer's does not: a
                # cancel aimed at the task leaving this block must reach it.
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise
            finally:
                await updates.aclose()


class DispatchStream:
    """The items of a streamed dispatch, as they happen; an async iterator.

    After the iteration ends, :attr:`responses` holds the final responses in call order.
    """

    def __init__(self, channel: ProgressChannel, task: asyncio.Task[Any], run: _Dispatch) -> None:
        self._channel = channel
        self._task = task
        self._run = run

    def __aiter__(self) -> DispatchStream:
        return self

    async def __anext__(self) -> ToolProgress | ToolResponse:
        try:
            return await self._channel.__anext__()
        except StopAsyncIteration:
            await self._task  # surface what ended the dispatch abnormally (KeyboardInterrupt)
            raise

    async def aclose(self) -> None:
        """Nothing to release: the dispatch's task is owned by ``Scheduler.stream()``."""

    @property
    def responses(self) -> list[ToolResponse]:
        """The final responses received so far, in call order."""
        return [r for r in self._run.responses if r is not None]


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


class _Dispatch:
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
            from ._processes import worker_ready

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
            await _stop(work)
            raise
        if work.done():
            return work.result()
        if ctx is not None:
            ctx._cancel()
        if threaded:
            await _stop(work)
            tail = "its thread was abandoned; the work may still complete in the background"
        elif await _stop(work):
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
                _cut(update)
                if update.final:
                    final = update
                else:
                    if self.trace is not None:
                        self.trace.intermediate(call)
                    await self.channel.put_update(update)
        assert final is not None
        final.duration_s = time.perf_counter() - started
        return final


_SMALL_SCALARS = frozenset({int, float, bool, type(None)})


def _clearly_small(body: dict[str, Any]) -> bool:
    """True for a few scalars or short strings: far under the limit, no need to measure."""
    if len(body) > 32:
        return False
    for value in body.values():
        kind = type(value)
        if kind is str:
            if len(value) > 1024:
                return False
        elif kind not in _SMALL_SCALARS:
            return False
    return True


def _settle(call: ToolCall, response: ToolResponse, started: float) -> ToolResponse:
    """A tool's final response under the call's id and time, cut to the size limit."""
    response.id = call.id
    response.name = call.name
    response.duration_s = time.perf_counter() - started
    return _cut(response)


#: How long a call cancelled at its deadline may take to end before it is abandoned.
CANCEL_GRACE_S = 0.5

# Tasks that ignored their cancellation, kept referenced until they end on their own.
_abandoned_tasks: set[asyncio.Task[Any]] = set()


async def _stop(work: asyncio.Task[Any]) -> bool:
    """Cancel ``work`` and wait briefly for it to end; True if it did.

    A deadline holds whatever the call does: one that swallows its cancellation is
    abandoned (left running, its outcome discarded), like a hung thread.
    """
    work.cancel()
    await asyncio.wait((work,), timeout=CANCEL_GRACE_S)
    if not work.done():
        _abandoned_tasks.add(work)
        work.add_done_callback(_forget)
        return False
    _forget(work)
    return True


def _forget(work: asyncio.Task[Any]) -> None:
    """Drop an abandoned task; its outcome is discarded (retrieved, so never logged)."""
    _abandoned_tasks.discard(work)
    if work.done() and not work.cancelled():
        work.exception()


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first


def _cut(response: ToolResponse) -> ToolResponse:
    """Cut a response over the size limit for the model, keeping the whole on the side."""
    body = response.response
    if _clearly_small(body):
        return response
    text = to_json(body, fallback=str)
    if len(text) <= MAX_RESPONSE_BYTES:
        return response
    error = ToolError(
        f"the response was {len(text)} bytes of JSON, over the {MAX_RESPONSE_BYTES}-byte "
        "limit; 'partial' holds its beginning",
        code="tool.output_too_large",
    )
    cut = {**error.to_response(), "status": "tool.output_too_large", "partial": ""}
    # 'partial' is JSON text inside a JSON string: its quotes and backslashes are escaped
    # again, so the cut response itself must be measured, not the text kept.
    room = MAX_RESPONSE_BYTES - len(to_json(cut))
    end = room
    while True:
        keep = text[:end].decode("utf-8", "ignore")
        over = len(to_json(keep)) - 2 - room  # without the string's own quotes
        if over <= 0:
            break
        end -= over  # each byte dropped shortens the escaped text by at least one
    cut["partial"] = keep
    response.full_response = body
    response.response = cut
    response.error = error
    return response
