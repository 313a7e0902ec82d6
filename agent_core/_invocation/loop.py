"""One invocation: model turns, tool dispatch, transfers, pauses and resumes.

The loop: pick the active agent, ask its model with the session so far, store what it
says; when it calls tools, dispatch the calls through a ``Scheduler`` and store one event
with all the responses; repeat until a final answer, a pause (confirmation, credential,
a pending long-running call) or an error. The steps live beside this module, named by
concern: ``turn`` (one model turn), ``dispatch`` (one turn's calls), ``resume`` (the
calls the user's answers release), ``requests`` (what waits on the user). This module
keeps what they share: who answers, the tools and contexts, storing and error events.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tooling import BaseTool, ReadonlyContext
from tooling.integration import RunBudget, provider_aliases

from .._agent import Agent
from .._content import Content
from .._events import Event
from .._ids import new_id
from ..models.scripted import ScriptExhausted
from ..sessions.state import TEMP_PREFIX
from .builtins import Unsupported, offer_builtins
from .jobs import JobSubmitter
from .requests import interrupted_events, request_replies
from .resume import resume
from .stop import Stop
from .storable import storable_event
from .tool_context import InvocationToolContext
from .tracing import invocation_trace
from .turn import model_turn

if TYPE_CHECKING:
    from tooling.auth import CredentialService
    from tooling.integration import ProcessPool, WorkerPool

    from .._config import RunConfig
    from ..jobs.base import JobStore
    from ..services.base import BaseArtifactService, BaseMemoryService
    from ..sessions.base import BaseSessionService, Session

__all__: list[str] = []

logger = logging.getLogger("agent_core")


@dataclass(frozen=True, slots=True)
class RunServices:
    """What an invocation uses of its runner: the root agent, the stores and the pools.

    ``processes`` makes (or returns) the runner's worker processes, only when a tool
    needs them.
    """

    agent: Agent
    session_service: BaseSessionService
    artifact_service: BaseArtifactService
    memory_service: BaseMemoryService
    pool: WorkerPool
    processes: Callable[[], ProcessPool]
    #: Where tools' credentials are stored (made, or returned, when a tool needs it).
    credential_service: Callable[[], CredentialService] | None = None
    #: The runner's job store, made on first use (durable tools' calls become jobs).
    jobs: Callable[[], JobStore] | None = None


class Invocation:
    """Everything one ``run`` needs: the runner's services, the session, the config."""

    def __init__(self, services: RunServices, session: Session, run_config: RunConfig) -> None:
        self.services = services
        self.session = session
        self.config = run_config
        self.id = new_id("inv")
        self.model_calls = 0
        self._tools: dict[str, dict[str, BaseTool]] = {}  # per agent, resolved once
        #: Per agent: a provider's name for a tool it had to rename -> the tool's own.
        self.aliases: dict[str, dict[str, str]] = {}
        #: An agent whose answer was sent back to it (not the output it must give).
        self.ask_again: Agent | None = None
        #: The run's tool-call counts against its limits, shared by all its dispatches.
        self.budget = RunBudget(
            max_tool_calls=run_config.max_tool_calls,
            max_repeated_calls=run_config.max_repeated_calls,
            max_result_tokens=run_config.max_result_tokens,
        )
        self.trace = invocation_trace(self)  # None unless a tracer provider is set

    # -- the loop ------------------------------------------------------------------------

    async def run(self, message: Content | None) -> AsyncGenerator[Event, None]:
        """The invocation's events: on ``message``, or (None) going on from the session
        as it is (a delivered job result for the model to answer)."""
        # A call stored without its answer (the store failed between a turn's appends)
        # is answered first, right after it: the model learns it was interrupted.
        if message is not None:
            for answer in interrupted_events(self.session.events, self.id, message):
                yield await self.store(answer)
            user_event = Event(author="user", content=message, invocation_id=self.id)
            await self.store(user_event)
        agent = self._active_agent()
        try:
            replies = request_replies(message) if message is not None else []
            if replies:
                agent, events = resume(self, replies)
                async for event in events:
                    yield event
                # The resumed calls' responses decide what comes next, as after any
                # dispatch (skip_summarization, a transfer, escalate).
                resumed_next = self._next_agent(agent)
                if resumed_next is None:
                    return
                agent = resumed_next
            while True:
                async for event in model_turn(self, agent):
                    yield event
                next_agent = self._next_agent(agent)
                if next_agent is None:
                    return
                agent = next_agent
        except Stop:
            return
        except BaseException as exc:
            if self.trace is not None:
                self.trace.end(exc)
            raise
        finally:
            for key in [k for k in self.session.state if k.startswith(TEMP_PREFIX)]:
                del self.session.state[key]
            if self.trace is not None:
                self.trace.end()

    def _active_agent(self) -> Agent:
        """Who answers: the agent the conversation was last handed to, else the root."""
        root = self.services.agent
        for event in reversed(self.session.events):
            if event.author == "user":
                continue
            if event.actions.transfer_to_agent:
                target = root.find_agent(event.actions.transfer_to_agent)
                if target is not None:
                    return target
            author = root.find_agent(event.author)
            if author is not None:
                if event.actions.escalate and author.parent_agent is not None:
                    return author.parent_agent
                return author
        return root

    def _next_agent(self, agent: Agent) -> Agent | None:
        """After a turn with tool responses: keep going, hand over, or stop (None)."""
        if self.ask_again is agent:  # its answer was sent back to it
            self.ask_again = None
            return agent
        last = self.session.events[-1] if self.session.events else None
        if last is None or not last.get_function_responses() or last.author != agent.name:
            return None
        if last.actions.skip_summarization:
            return None
        if last.actions.transfer_to_agent:
            target = self.services.agent.find_agent(last.actions.transfer_to_agent)
            return target if target is not None else None
        if last.actions.escalate and agent.parent_agent is not None:
            return agent.parent_agent
        return agent

    # -- the agent's tools and the calls' contexts --------------------------------------

    async def agent_tools(self, agent: Agent) -> dict[str, BaseTool] | Event:
        cached = self._tools.get(agent.name)
        if cached is not None:
            return cached
        found: list[BaseTool] = [*agent.tools, *agent.builtin_tools()]
        readonly = ReadonlyContext(
            invocation_id=self.id,
            agent_name=agent.name,
            user_id=self.session.user_id,
            session_id=self.session.id,
            state=self.session.state,
        )
        for toolset in agent.toolsets:
            try:
                listing = toolset.get_tools_with_prefix(readonly)
                if self.trace is not None:  # a remote listing joins the agent's trace
                    listing = self.trace.under(agent, listing)
                found.extend(await listing)
            except Exception as exc:
                return self.error(
                    agent,
                    "agent.toolset_failed",
                    self.failure_text(f"toolset {type(toolset).__name__} (listing its tools)", exc),
                )
        tools: dict[str, BaseTool] = {}
        for t in found:
            if t.name in tools:
                return self.error(
                    agent,
                    "agent.duplicate_tool",
                    f"two tools of agent {agent.name} are named {t.name!r}",
                )
            tools[t.name] = t
        try:
            tools = offer_builtins(agent, tools)
        except Unsupported as exc:
            return self.error(agent, "tool.unsupported", str(exc))
        except ValueError as exc:
            return self.error(agent, "agent.duplicate_tool", str(exc))
        jobs = self.services.jobs
        if jobs is not None:
            for name, t in list(tools.items()):
                if t.durable is not None:
                    tools[name] = JobSubmitter(t, jobs(), self.session.app_name)
        try:
            # Two tools one provider would see under one name are refused here.
            self.aliases[agent.name] = provider_aliases(tools)
        except ValueError as exc:
            return self.error(agent, "agent.duplicate_tool", f"agent {agent.name}: {exc}")
        self._tools[agent.name] = tools
        return tools

    def context(
        self, agent: Agent, call_id: str, auth: dict[str, dict[str, Any]] | None = None
    ) -> InvocationToolContext:
        return InvocationToolContext(
            app_name=self.session.app_name,
            invocation_id=self.id,
            agent_name=agent.name,
            user_id=self.session.user_id,
            session_id=self.session.id,
            state=dict(self.session.state),
            artifact_service=self.services.artifact_service,
            memory_service=self.services.memory_service,
            function_call_id=call_id,
            auth_responses=auth,
            run_config=self.config,
        )

    # -- storing -------------------------------------------------------------------------

    async def store(self, event: Event) -> Event:
        if event.error_code is not None and self.trace is not None:
            self.trace.error(event)
        if not event.partial:
            await self.services.session_service.append_event(self.session, storable_event(event))
        return event

    async def store_all(self, events: list[Event]) -> None:
        for event in events:
            await self.store(event)

    def callback_error(self, agent: Agent, which: str, exc: Exception) -> Event:
        return self.error(
            agent,
            "agent.callback_failed",
            self.failure_text(f"{which} of agent {agent.name}", exc),
        )

    def failure_text(self, what: str, exc: BaseException, *, type_first: bool = False) -> str:
        """What an event says of an exception raised by ``what``; logged with its traceback.

        Only its type, unless ``RunConfig.expose_errors``: events reach end users and
        models, and exception text can carry secrets.
        """
        logger.warning("%s failed with %s", what, type(exc).__name__, exc_info=exc)
        kind = type(exc).__name__
        # A script running out is the framework's own words, written for the developer.
        if self.config.expose_errors or isinstance(exc, ScriptExhausted):
            return f"{kind}: {exc}" if type_first else f"{what} raised {kind}: {exc}"
        hidden = "the error text is not shown; it may contain private data"
        return (
            f"{kind} from {what} ({hidden})" if type_first else f"{what} raised {kind} ({hidden})"
        )

    def error(self, agent: Agent, code: str, message: str) -> Event:
        return Event(
            author=agent.name, invocation_id=self.id, error_code=code, error_message=message
        )
