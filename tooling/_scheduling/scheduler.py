"""``Scheduler``: runs one model turn's tool calls safely, concurrently where allowed.

The scheduler holds the tools, the settings and the pools; each ``dispatch()`` or
``stream()`` is one ``Dispatch`` (``dispatch.py``), owned by one task.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from .._base import BaseTool
from .._export.names import provider_aliases
from .._function.tool import FunctionTool
from .._types import Confirmation, ToolCall, ToolProgress, ToolResponse
from .._workers.threads import WorkerPool
from .budget import RunBudget, has_policies
from .dispatch import Dispatch
from .progress import ProgressChannel
from .strategy import CallHooks, ContextFactory, DispatchSettings, ExecutionStrategy

if TYPE_CHECKING:
    from .._workers.processes import ProcessPool
    from ..auth._service import CredentialService

__all__ = [
    "ExecutionStrategy",
    "Scheduler",
]


class Scheduler:
    """Runs tool calls: validation, scopes, confirmation, timeouts, threads, progress.

    ``tools`` are ``BaseTool``s or plain functions (wrapped as ``FunctionTool``); their
    specs are built here, so a broken tool fails at construction. Duplicate names are an
    error. Sync tools run on the scheduler's own pool of up to ``max_threads`` daemon
    threads; ``isolation="process"`` tools in up to ``max_processes`` worker processes
    (default: the number of CPUs). ``pool`` and ``processes`` share pools made elsewhere
    (an agent loop's, across turns; they stay their owner's to shut down); ``hooks`` are
    callbacks around each call. ``credential_service`` stores the credentials of tools
    with ``auth=`` (in memory by default; a context's own ``credential_service`` wins).

    Tool policies apply to every call: guardrails, retries, per-run call limits and
    result cuts. ``budget`` (a ``tooling.integration.RunBudget``) is a run's counts shared
    by several dispatches, as an agent loop keeps one per run; without it each dispatch
    counts on its own. A tool may be called by a name a provider was given for it (see
    ``tooling.integration.provider_name``); two tools one provider would see under one
    name are an error here.
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
        credential_service: CredentialService | None = None,
        budget: RunBudget | None = None,
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
        #: A provider's name for a tool (one it had to rename) -> the tool's own name.
        self._aliases: dict[str, str] = provider_aliases(self._tools)
        #: The run's budget (an agent loop's, shared by its dispatches), or None.
        self.budget = budget
        self._policed = any(has_policies(t) for t in self._tools.values()) or (
            budget is not None and budget.max_result_tokens is not None
        )
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
        self._credential_service = credential_service

    @property
    def credential_service(self) -> CredentialService:
        """Where credentials of tools with ``auth=`` are stored (in memory unless given)."""
        if self._credential_service is None:
            from ..auth._service import InMemoryCredentialService

            self._credential_service = InMemoryCredentialService()
        return self._credential_service

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
            from .._workers.processes import ProcessPool

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

    def _dispatch_settings(self) -> DispatchSettings:
        """What a dispatch reads, as set now (the settings are plain attributes)."""
        return DispatchSettings(
            tools=self._tools,
            aliases=self._aliases,
            strategy=self.strategy,
            max_concurrency=self.max_concurrency,
            timeout=self.timeout,
            expose_errors=self.expose_errors,
            hooks=self.hooks,
            thread_pool=lambda: self.pool,
            process_pool=lambda: self.processes,
            credential_service=lambda: self.credential_service,
            budget=self.budget,
            policed=self._policed,
        )

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
        run = Dispatch(
            self._dispatch_settings(),
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
        run = Dispatch(
            self._dispatch_settings(),
            calls,
            channel,
            context_factory,
            confirmations or {},
            frozenset(granted_scopes),
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

    def __init__(self, channel: ProgressChannel, task: asyncio.Task[Any], run: Dispatch) -> None:
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
