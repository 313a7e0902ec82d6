"""``Runner``: runs an agent on a session and yields the events it produces."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import queue
import threading
from collections.abc import AsyncGenerator, Generator
from typing import TYPE_CHECKING, Any

from tooling import BaseToolset
from tooling.integration import WorkerPool

from ._agent import Agent
from ._config import RunConfig
from ._content import Content, Part
from ._events import Event
from ._invocation.loop import Invocation, RunServices
from ._job_loop import JobResume, RunnerJobs
from .services.base import BaseArtifactService, BaseMemoryService
from .sessions.base import (
    BaseSessionService,
    Session,
    SessionBusyError,
    SessionExistsError,
    SessionStoreError,
)

if TYPE_CHECKING:
    from tooling.auth import CredentialService
    from tooling.integration import ProcessPool

    from .jobs.base import JobStore

__all__ = ["RunConfig", "Runner"]

logger = logging.getLogger("agent_core")


_DONE = object()


def user_message(new_message: object) -> Content:
    """``new_message`` as the user's ``Content`` (a str becomes one text part).

    Anything else is a ``TypeError`` saying what to send: a confirmation is answered by a
    ``Content`` holding the function response to its ``request_confirmation`` call.
    """
    if isinstance(new_message, str):
        return Content(role="user", parts=[Part.from_text(new_message)])
    if isinstance(new_message, Content):
        return new_message
    raise TypeError(
        f"new_message must be a str or a Content, not {type(new_message).__name__}: to "
        "answer a confirmation, send Content(role='user', parts=[Part(function_response="
        "FunctionResponse(id=request.id, name='request_confirmation', "
        "response={'confirmed': True}))]) for the request_confirmation call the run yielded"
    )


class Runner(RunnerJobs):
    """Runs ``agent`` for an app: sessions, artifacts and memory, in memory by default.

    Use :meth:`run_async` in async code, :meth:`run` elsewhere (it drives its own event
    loop on a worker thread, so it works inside a running loop too). Closing the runner
    (``close``/``aclose`` or leaving a ``with`` block) closes every toolset.
    ``credential_service`` stores the credentials of tools with ``auth=`` (in memory by
    default; ``SqliteCredentialService``, ``PostgresCredentialService`` or
    ``credential_service_from_url`` to keep them across processes).
    ``job_store`` keeps durable tools' jobs (a ``JobStore`` or a URL; default: the session
    service's database); ``async with runner:`` runs a job loop for them unless
    ``run_jobs=False``; ``job_resume`` says what a delivered result does: ``"auto"`` (it is
    appended and the model answers it), ``"append"`` (appended only) or ``"none"``.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        app_name: str,
        session_service: BaseSessionService | None = None,
        artifact_service: BaseArtifactService | None = None,
        memory_service: BaseMemoryService | None = None,
        credential_service: CredentialService | None = None,
        job_store: JobStore | str | None = None,
        run_jobs: bool = True,
        job_resume: JobResume = "auto",
    ) -> None:
        from .services.artifacts import InMemoryArtifactService
        from .services.memory import InMemoryMemoryService
        from .sessions.memory import InMemorySessionService

        self.agent = agent
        self.app_name = app_name
        self.session_service = session_service or InMemorySessionService()
        self.artifact_service = artifact_service or InMemoryArtifactService()
        self.memory_service = memory_service or InMemoryMemoryService()
        self._credential_service = credential_service
        self.pool = WorkerPool(64, name=f"agent-{agent.name}")
        self._processes: ProcessPool | None = None
        self._closed = False
        self._init_jobs(job_store, run_jobs, job_resume)

    @property
    def credential_service(self) -> CredentialService:
        """Where tools' credentials are stored (in memory unless given; made on first use)."""
        if self._credential_service is None:
            from tooling.auth import InMemoryCredentialService

            self._credential_service = InMemoryCredentialService()
        return self._credential_service

    @property
    def processes(self) -> ProcessPool:
        """The worker processes of ``isolation="process"`` tools, shared by every run
        (made on first use; no process starts before the first such call)."""
        if self._processes is None:
            from tooling.integration import ProcessPool

            self._processes = ProcessPool(name=f"agent-{self.agent.name}")
        return self._processes

    def run_async(
        self,
        *,
        user_id: str,
        session_id: str,
        new_message: str | Content,
        run_config: RunConfig | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Run the agent on ``new_message``; yield the events the agents produce.

        The user's message is stored, not yielded. A missing session is created. Model
        and tool failures arrive as error events, not exceptions. A ``new_message`` that
        is neither a str nor a ``Content`` is a ``TypeError`` here, at the call.
        """
        message = user_message(new_message)
        return self._run_session(user_id, session_id, message, run_config)

    async def _run_session(
        self,
        user_id: str,
        session_id: str,
        message: Content | None,
        run_config: RunConfig | None,
    ) -> AsyncGenerator[Event, None]:
        """One invocation under the session's lease: on ``message``, or (None) going on
        from what the session holds (after a job delivered its result)."""
        config = run_config or RunConfig()
        service = self.session_service
        async with contextlib.AsyncExitStack() as held:
            try:
                # One writer per session, from reading it to storing its last event.
                await held.enter_async_context(
                    service.lease(
                        app_name=self.app_name,
                        user_id=user_id,
                        session_id=session_id,
                        timeout=config.session_lease_timeout,
                    )
                )
            except SessionBusyError as exc:
                yield Event(
                    author=self.agent.name, error_code="session.busy", error_message=str(exc)
                )
                return
            invocation_id = ""
            try:
                session = await self._session(user_id, session_id)
                invocation = Invocation(self._services(), session, config)
                invocation_id = invocation.id
                events = invocation.run(message)
                try:
                    async for event in events:
                        yield event
                finally:
                    await events.aclose()
            except SessionStoreError as exc:
                # The store failed under the run: what it had stored stays; the failed
                # write stored nothing. Said as an event, like any other failure.
                yield Event(
                    author=self.agent.name,
                    invocation_id=invocation_id,
                    error_code=exc.code,
                    error_message=f"the session store failed: {exc}",
                )

    async def append_delivery(self, user_id: str, session_id: str, event: Event) -> bool:
        """Append a job's delivery ``event`` under the session's lease, leaving out the
        calls this delivery already answered there; False when nothing was left (delivered
        before) or the session is gone."""
        service = self.session_service
        async with service.lease(
            app_name=self.app_name,
            user_id=user_id,
            session_id=session_id,
            timeout=RunConfig().session_lock_timeout,
        ):
            session = await service.get_session(
                app_name=self.app_name, user_id=user_id, session_id=session_id
            )
            if session is None or event.content is None:
                return False
            # Calls this same delivery already answered (it was cut short before the job
            # was marked delivered); an earlier outcome of a resolved job does not count.
            answered = {
                r.id
                for e in session.events
                if not e.partial and e.invocation_id == event.invocation_id
                for r in e.get_function_responses()
                if not r.will_continue
            }
            parts = [
                p
                for p in event.content.parts
                if p.function_response is None or p.function_response.id not in answered
            ]
            if not parts:
                return False
            event.content.parts = parts
            await service.append_event(session, event)
            return True

    async def continue_session(self, user_id: str, session_id: str) -> None:
        """Run one invocation on the session without a new message (the model answers
        what was delivered to it)."""
        async for _ in self._run_session(user_id, session_id, None, None):
            pass

    def _services(self) -> RunServices:
        """What an invocation uses of this runner."""
        return RunServices(
            agent=self.agent,
            session_service=self.session_service,
            artifact_service=self.artifact_service,
            memory_service=self.memory_service,
            pool=self.pool,
            processes=lambda: self.processes,
            credential_service=lambda: self.credential_service,
            jobs=lambda: self.job_store,
        )

    async def _session(self, user_id: str, session_id: str) -> Session:
        """The session, created when missing (by this run or a concurrent creator)."""
        service = self.session_service
        app_name = self.app_name
        while True:
            session = await service.get_session(
                app_name=app_name, user_id=user_id, session_id=session_id
            )
            if session is not None:
                return session
            try:
                return await service.create_session(
                    app_name=app_name, user_id=user_id, session_id=session_id
                )
            except SessionExistsError:
                continue  # created meanwhile (not by a run: runs hold the lease)

    def run(
        self,
        *,
        user_id: str,
        session_id: str,
        new_message: str | Content,
        run_config: RunConfig | None = None,
    ) -> Generator[Event, None, None]:
        """The sync form of :meth:`run_async`; closing the generator cancels the run."""
        user_message(new_message)  # a TypeError here, at the call
        return self._run_in_thread(user_id, session_id, new_message, run_config)

    def _run_in_thread(
        self,
        user_id: str,
        session_id: str,
        new_message: str | Content,
        run_config: RunConfig | None,
    ) -> Generator[Event, None, None]:
        items: queue.Queue[Any] = queue.Queue()
        started = threading.Event()
        box: dict[str, Any] = {}

        async def produce() -> None:
            try:
                async for event in self.run_async(
                    user_id=user_id,
                    session_id=session_id,
                    new_message=new_message,
                    run_config=run_config,
                ):
                    items.put(event)
            except BaseException as exc:  # handed to the consuming thread
                items.put(_Failure(exc))
            finally:
                items.put(_DONE)

        def drive() -> None:
            loop = asyncio.new_event_loop()
            box["loop"] = loop
            box["task"] = loop.create_task(produce())
            started.set()
            try:
                loop.run_until_complete(box["task"])
            finally:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        # The caller's context variables (its current span, say) reach the run's loop.
        context = contextvars.copy_context()
        thread = threading.Thread(
            target=context.run, args=(drive,), name="agent-core-run", daemon=True
        )
        thread.start()
        started.wait()
        finished = False
        try:
            while True:
                item = items.get()
                if item is _DONE:
                    finished = True
                    return
                if isinstance(item, _Failure):
                    # The run is over (its loop may already be closed): nothing to cancel.
                    finished = True
                    if isinstance(item.exc, asyncio.CancelledError):
                        return
                    raise item.exc
                yield item
        finally:
            if not finished:
                loop, task = box["loop"], box["task"]
                # The run may have ended (and closed its loop) meanwhile: then there is
                # nothing left to cancel, and no secondary error to raise.
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(task.cancel)
            thread.join()

    # -- closing -------------------------------------------------------------------------

    def toolsets(self) -> list[BaseToolset]:
        """Every toolset of every agent in the tree, agents behind ``AgentTool``s included."""
        found: list[BaseToolset] = []
        for agent in self.agent.reachable():
            found.extend(t for t in agent.toolsets if all(t is not f for f in found))
        return found

    async def aclose(self) -> None:
        """Close every toolset (once) and stop idle worker threads."""
        if self._closed:
            return
        self._closed = True
        for toolset in self.toolsets():
            try:
                await toolset.close()
            except Exception:
                logger.exception("closing toolset %s failed", type(toolset).__name__)
        self.pool.shutdown()
        if self._processes is not None:
            self._processes.shutdown()
        await self.close_jobs()

    def close(self) -> None:
        """:meth:`aclose` from sync code (on a worker thread with its own loop)."""
        thread = threading.Thread(target=lambda: asyncio.run(self.aclose()), daemon=True)
        thread.start()
        thread.join()


class _Failure:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc
