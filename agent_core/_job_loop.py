"""The job loop: claim due jobs of this agent's durable tools, run them under a renewed
lease, and deliver what they end with to the sessions of their calls.

One pass (:meth:`JobLoop.step`) claims at most ``concurrency`` jobs and runs them side by
side, then delivers ended jobs. Running a job: the tool's arguments are checked again
(they were valid for the code that made the job; a worker running newer code may refuse
them: ``tool.invalid_arguments``), the started marker is committed, and the tool runs
with ``tool_context.job`` set, its yields and progress recorded on the job. A renewal
that finds the lease lost or a cancel asked for stops the run.

Delivery appends one event per session (author the calling agent; one function response
per call id the job answers; the job's state writes as ``state_delta``) under the
session's lease, skipping calls that already have their final answer there (a delivery
cut short is done again without doubling), then marks the job delivered. With
``resume="auto"`` an invocation then runs on that session, so the model answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal, Self

from tooling import BaseTool, JobInfo, ToolError, ToolProgress, ToolRuntime
from tooling.integration import Closing, give_up, route_progress

from ._content import Content, FunctionResponse, Part
from ._events import Event, EventActions
from ._invocation.tool_context import InvocationToolContext
from .jobs.base import Job, JobCall, JobStatus, JobStore

if TYPE_CHECKING:
    from ._agent import Agent
    from ._runner import Runner

__all__: list[str] = []

logger = logging.getLogger("agent_core")

JobResume = Literal["auto", "append", "none"]

#: How often an idle loop looks for due jobs.
POLL_S = 0.2


def durable_tools(agent: Agent) -> dict[str, BaseTool]:
    """The durable tools of ``agent`` and its sub-agents, by name."""
    found: dict[str, BaseTool] = {}

    def walk(a: Agent) -> None:
        for tool in a.tools:
            if tool.durable is not None:
                found.setdefault(tool.name, tool)
        for sub in a.sub_agents:
            walk(sub)

    walk(agent)
    return found


class JobLoop:
    """Runs and delivers a runner's jobs (see the module docs)."""

    def __init__(
        self, runner: Runner, store: JobStore, *, resume: JobResume, concurrency: int = 4
    ) -> None:
        self.runner = runner
        self.store = store
        self.resume = resume
        self.concurrency = concurrency
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.tools = durable_tools(runner.agent)

    async def step(self) -> bool:
        """One pass; True when it found work (a job run or delivered)."""
        claimed: list[Job] = []
        for _ in range(self.concurrency):
            job = await self.store.claim(self.tools, self.owner)
            if job is None:
                break
            claimed.append(job)
        if claimed:
            await asyncio.gather(*(self._run(job) for job in claimed))
        delivered = await self.deliver()
        return bool(claimed) or delivered > 0

    async def run(self, *, until_idle: bool = False) -> None:
        """Run passes; with ``until_idle`` stop at the first pass that finds nothing."""
        while True:
            try:
                busy = await self.step()
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.warning("job loop pass failed; trying again", exc_info=True)
                busy = False
                if until_idle:
                    raise
            if not busy:
                if until_idle:
                    return
                await asyncio.sleep(POLL_S)

    # -- running -------------------------------------------------------------------------

    async def _run(self, job: Job) -> None:
        tool = self.tools.get(job.tool)
        if tool is None:  # claim asks only for our tools; a rename between releases
            await self._end(job, JobStatus.FAILED, code="tool.not_found", message=job.tool)
            return
        try:
            checked = tool.check_arguments(job.args)
        except ToolError as exc:
            await self._end(job, JobStatus.FAILED, code=exc.code, message=exc.message)
            return
        if not await self.store.mark_started(job.id, self.owner):
            return  # taken over meanwhile
        ctx = await self._context(job, tool)
        progress = _Progress()
        route_progress(ctx, lambda item: progress.set(_progress_value(item)))
        work = asyncio.ensure_future(self._responses(tool, checked, ctx, job, progress))
        stop = asyncio.ensure_future(self._keep_lease(job, work, ctx, progress))
        try:
            status, body, code, message = await work
        except asyncio.CancelledError:
            if stop.done() and stop.result() == "cancel":
                status, body = JobStatus.CANCELLED, None
                code, message = "job.cancelled", "the job was cancelled while it ran"
            elif stop.done():
                return  # the lease was lost: another holder decides
            else:
                raise
        finally:
            stop.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stop
        await self.store.finish(
            job.id,
            self.owner,
            status=status,
            response=body,
            error_code=code,
            error_message=message,
            state_delta=dict(ctx.actions.state_delta),
        )

    async def _context(self, job: Job, tool: BaseTool) -> InvocationToolContext:
        call = job.calls[0]
        runner = self.runner
        session = await runner.session_service.get_session(
            app_name=job.app_name, user_id=call.user_id, session_id=call.session_id
        )
        ctx = InvocationToolContext(
            app_name=job.app_name,
            invocation_id=f"job:{job.id}",
            agent_name=call.agent_name,
            user_id=call.user_id,
            session_id=call.session_id,
            state=dict(session.state) if session is not None else {},
            artifact_service=runner.artifact_service,
            memory_service=runner.memory_service,
            function_call_id=call.call_id,
        )
        ctx.tool_name = tool.name
        ctx.job = JobInfo(job_id=job.id, attempt=job.attempt, idempotency_key=job.id)
        return ctx

    async def _responses(
        self,
        tool: BaseTool,
        checked: Any,
        ctx: InvocationToolContext,
        job: Job,
        progress: _Progress,
    ) -> tuple[JobStatus, dict[str, Any] | None, str | None, str | None]:
        runtime = ToolRuntime(
            executor=self.runner.pool if tool.runs_in_thread else None,
            processes=self.runner.processes if tool.isolation == "process" else None,
        )
        final = None
        try:
            async with (
                asyncio.timeout(tool.timeout),
                tool.stream_responses(checked, ctx, runtime=runtime) as updates,
            ):
                async for item in updates:
                    if item.final:
                        final = item
                    else:
                        progress.set(item.response)
                    await progress.flush(self.store, job.id)
        except TimeoutError:
            give_up(ctx)
            return JobStatus.FAILED, None, "tool.timeout", f"{tool.name} ran past {tool.timeout} s"
        except ToolError as exc:
            return JobStatus.FAILED, None, exc.code, exc.message
        except Exception as exc:  # the tool's own failure, as the scheduler reports it
            logger.warning("job %s: tool %s failed", job.id, tool.name, exc_info=True)
            return (
                JobStatus.FAILED,
                None,
                "tool.failed",
                f"{tool.name} failed: {type(exc).__name__}",
            )
        await progress.flush(self.store, job.id)
        if final is None:
            return JobStatus.FAILED, None, "tool.failed", f"{tool.name} gave no response"
        if final.error is not None:
            return JobStatus.FAILED, None, final.error.code, final.error.message
        return JobStatus.SUCCEEDED, final.response, None, None

    async def _keep_lease(
        self,
        job: Job,
        work: asyncio.Future[Any],
        ctx: InvocationToolContext,
        progress: _Progress,
    ) -> str:
        """Renew the lease (and record the latest progress) until the work ends; cancel it
        when the lease is lost or a cancel is asked for (that verdict is the result)."""
        while not work.done():
            await asyncio.sleep(max(0.05, job.lease / 3))
            await progress.flush(self.store, job.id)
            verdict = await self.store.renew(job.id, self.owner)
            if verdict != "ok":
                give_up(ctx)
                work.cancel()
                return verdict
        return "ok"

    async def _end(self, job: Job, status: JobStatus, *, code: str, message: str) -> None:
        await self.store.finish(
            job.id, self.owner, status=status, error_code=code, error_message=message
        )

    # -- delivering ----------------------------------------------------------------------

    async def deliver(self) -> int:
        """Deliver ended jobs; how many were delivered."""
        count = 0
        for job in await self.store.take_deliveries(self.owner):
            if job.app_name != self.runner.app_name:
                continue
            try:
                for (user_id, session_id), calls in _by_session(job.calls):
                    await self._deliver_to(job, user_id, session_id, calls)
            except Exception:
                logger.warning("delivering job %s failed; it is tried again", job.id, exc_info=True)
                continue
            await self.store.mark_delivered(job.id)
            count += 1
        return count

    async def _deliver_to(
        self, job: Job, user_id: str, session_id: str, calls: list[JobCall]
    ) -> None:
        if self.resume == "none":
            return
        runner = self.runner
        # One delivery per outcome: a job resolved by hand is delivered again, as a new
        # outcome of the same calls (the id tells the deliveries apart).
        round_ = f":{job.resolutions}" if job.resolutions else ""
        event = Event(
            author=calls[0].agent_name,
            invocation_id=f"job:{job.id}{round_}",
            content=Content(
                role="user",
                parts=[
                    Part(
                        function_response=FunctionResponse(
                            id=c.call_id, name=job.tool, response=job.final_response()
                        )
                    )
                    for c in calls
                ],
            ),
            actions=EventActions(state_delta=dict(job.state_delta)),
        )
        appended = await runner.append_delivery(user_id, session_id, event)
        if appended and self.resume == "auto":
            await runner.continue_session(user_id, session_id)


def _by_session(calls: list[JobCall]) -> Iterator[tuple[tuple[str, str], list[JobCall]]]:
    groups: dict[tuple[str, str], list[JobCall]] = {}
    for call in calls:
        groups.setdefault((call.user_id, call.session_id), []).append(call)
    yield from groups.items()


class _Progress:
    """The latest progress value of a running job, until it is written to the store (only
    the latest is kept: a tool flooding progress costs one slot)."""

    __slots__ = ("_pending", "_value")

    def __init__(self) -> None:
        self._value: Any = None
        self._pending = False

    def set(self, value: Any) -> None:
        """A new latest value (from the event loop or a tool's worker thread)."""
        self._value, self._pending = value, True

    async def flush(self, store: JobStore, job_id: str) -> None:
        """Write the latest value, if there is a new one."""
        if self._pending:
            self._pending = False
            await store.set_progress(job_id, self._value)


def _progress_value(item: ToolProgress) -> dict[str, Any]:
    return {"stream": item.stream, "chunk": item.chunk}


class RunnerJobs(Closing):
    """The runner's side of durable jobs: its store, its loop, and the job commands.

    Mixed into ``Runner``; the attributes it reads are the runner's own.
    """

    agent: Agent
    app_name: str
    _job_store: JobStore | None
    _job_loop: JobLoop | None
    _job_task: asyncio.Task[None] | None
    _run_jobs: bool
    _job_resume: JobResume
    _owns_job_store: bool

    def _init_jobs(
        self, job_store: JobStore | str | None, run_jobs: bool, job_resume: JobResume
    ) -> None:
        if job_resume not in ("auto", "append", "none"):
            raise ValueError(f"job_resume must be 'auto', 'append' or 'none', not {job_resume!r}")
        self._owns_job_store = job_store is None or isinstance(job_store, str)
        if isinstance(job_store, str):
            from ._service_urls import job_store_from_url

            job_store = job_store_from_url(job_store)
        self._job_store = job_store
        self._job_loop = None
        self._job_task = None
        self._run_jobs = run_jobs
        self._job_resume = job_resume

    @property
    def job_store(self) -> JobStore:
        """Where durable jobs are kept: the one given, else the session service's database
        (a SQLite file or PostgreSQL), else this process's memory (with one warning when the
        agent has durable tools: such jobs do not survive a restart)."""
        if self._job_store is None:
            self._job_store = _default_store(self)
        return self._job_store

    def _loop(self) -> JobLoop:
        if self._job_loop is None:
            self._job_loop = JobLoop(self, self.job_store, resume=self._job_resume)  # type: ignore[arg-type]
        return self._job_loop

    async def close_jobs(self) -> None:
        """Close the job store this runner made (a default one, or one from a URL)."""
        store, owned = self._job_store, self._owns_job_store
        if store is not None and owned:
            self._job_store, self._job_loop = None, None
            await store.close()

    async def run_jobs(self, *, until_idle: bool = True) -> None:
        """Run and deliver due jobs of this agent's durable tools; with ``until_idle``
        (the default) return once there is nothing left to do, else run until cancelled."""
        await self._loop().run(until_idle=until_idle)

    async def get_job(self, job_id: str) -> Job | None:
        """One job, or None."""
        return await self.job_store.get(job_id)

    async def list_jobs(
        self,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        status: JobStatus | None = None,
    ) -> list[Job]:
        """This app's jobs, newest first."""
        return await self.job_store.list_jobs(
            app_name=self.app_name, user_id=user_id, session_id=session_id, status=status
        )

    async def cancel_job(self, job_id: str) -> Job | None:
        """Cancel a job: a pending one at once, a running one at its holder's next lease
        renewal (an async tool is cancelled, a process tool's worker killed, a thread
        tool's ``tool_context.cancelled`` set)."""
        return await self.job_store.cancel(job_id)

    async def resolve_job(
        self,
        job_id: str,
        *,
        response: dict[str, Any] | None = None,
        error: str | None = None,
        rerun: bool = False,
    ) -> Job:
        """Settle a job in doubt (or failed): its ``response``, an ``error``, or
        ``rerun=True`` (the only way a non-idempotent job runs twice)."""
        return await self.job_store.resolve(job_id, response=response, error=error, rerun=rerun)

    async def __aenter__(self) -> Self:
        """Start the job loop (when the agent has durable tools and ``run_jobs``)."""
        if self._run_jobs and durable_tools(self.agent):
            self._job_task = asyncio.ensure_future(self._loop().run())
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Stop the job loop, then close the runner."""
        task, self._job_task = self._job_task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.aclose()


def _default_store(runner: RunnerJobs) -> JobStore:
    service = getattr(runner, "session_service", None)
    path = getattr(service, "path", None)
    if isinstance(path, str) and path != ":memory:":
        from .jobs.sqlite import SqliteJobStore

        return SqliteJobStore(path)
    dsn = getattr(service, "dsn", None)
    if isinstance(dsn, str) and dsn.startswith(("postgresql://", "postgres://")):
        from .jobs.postgres import PostgresJobStore

        return PostgresJobStore(dsn)
    from .jobs.sqlite import InMemoryJobStore

    if durable_tools(runner.agent):
        logger.warning(
            "agent %s has durable tools but its jobs are kept in memory: they do not "
            "survive a restart (give Runner a job_store, or a database session service)",
            runner.agent.name,
        )
    return InMemoryJobStore()
