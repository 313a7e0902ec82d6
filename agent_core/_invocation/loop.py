"""One invocation: model turns, tool dispatch, transfers, pauses and resumes.

The loop: pick the active agent, ask its model with the session so far, store what it
says; when it calls tools, dispatch the calls through a ``Scheduler`` and store one event
with all the responses; repeat until a final answer, a pause (confirmation, credential,
a pending long-running call) or an error. A model turn with calls is stored together with
its responses, so a cancelled run never leaves calls without answers in the session.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tooling import (
    BaseTool,
    Confirmation,
    ReadonlyContext,
    Scheduler,
    ToolCall,
    ToolContext,
    ToolError,
    ToolProgress,
    ToolResponse,
)
from tooling.integration import auth_config_key

from .._agent import Agent
from .._content import Content, FunctionCall, FunctionResponse, Part
from .._events import Event, EventActions
from .._ids import new_id
from ..models.base import LlmRequest, LlmResponse
from ..models.scripted import ScriptExhausted
from ..sessions.state import TEMP_PREFIX
from .history import contents_for
from .requests import GENERATED_ID_PREFIX, REQUEST_CONFIRMATION, REQUESTS, request_event
from .storable import state_problem, storable_event
from .tool_calls import (
    ToolCallbacks,
    maybe_await,
    merge_actions,
    refusal,
    refused_response,
    response_part,
)
from .tool_context import InvocationToolContext
from .tracing import invocation_trace

if TYPE_CHECKING:
    from tooling.integration import ProcessPool, WorkerPool

    from .._config import RunConfig
    from ..services.base import BaseArtifactService, BaseMemoryService
    from ..sessions.base import BaseSessionService, Session

__all__: list[str] = []

logger = logging.getLogger("agent_core")


class _Stop(Exception):
    """Ends the invocation after the event that explains why was emitted."""


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


class Invocation:
    """Everything one ``run`` needs: the runner's services, the session, the config."""

    def __init__(self, services: RunServices, session: Session, run_config: RunConfig) -> None:
        self.services = services
        self.session = session
        self.config = run_config
        self.id = new_id("inv")
        self.model_calls = 0
        self._tools: dict[str, dict[str, BaseTool]] = {}  # per agent, resolved once
        self.trace = invocation_trace(self)  # None unless a tracer provider is set

    # -- the loop ------------------------------------------------------------------------

    async def run(self, message: Content) -> AsyncGenerator[Event, None]:
        user_event = Event(author="user", content=message, invocation_id=self.id)
        await self._store(user_event)
        agent = self._active_agent()
        try:
            replies = [
                p.function_response
                for p in message.parts
                if p.function_response is not None and p.function_response.name in REQUESTS
            ]
            if replies:
                agent, events = await self._resume(replies)
                async for event in events:
                    yield event
                # The resumed calls' responses decide what comes next, as after any
                # dispatch (skip_summarization, a transfer, escalate).
                resumed_next = self._next_agent(agent)
                if resumed_next is None:
                    return
                agent = resumed_next
            while True:
                async for event in self._turn(agent):
                    yield event
                next_agent = self._next_agent(agent)
                if next_agent is None:
                    return
                agent = next_agent
        except _Stop:
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

    async def _turn(self, agent: Agent) -> AsyncGenerator[Event, None]:
        """One model call and, if it calls tools, one dispatch."""
        tools = await self._agent_tools(agent)
        if isinstance(tools, Event):
            yield await self._store(tools)
            raise _Stop
        callback_ctx = self._context(agent, "")
        try:
            instruction = agent.render_instruction(self.session.state)
        except KeyError as exc:
            yield await self._store(self._error(agent, "agent.instruction", str(exc.args[0])))
            raise _Stop from None
        request = LlmRequest(
            model=agent.model.model,
            contents=contents_for(agent.name, self.session.events),
            system_instruction=instruction,
            tools=tools,
            config=agent.generate_content_config,
            agent_name=agent.name,
        )

        response: LlmResponse | None = None
        if agent.before_model_callback is not None:
            try:
                response = await maybe_await(agent.before_model_callback(callback_ctx, request))
            except Exception as exc:
                yield await self._store(self._callback_error(agent, "before_model_callback", exc))
                raise _Stop from None
        if response is None:
            if self.model_calls >= self.config.max_model_calls:
                yield await self._store(
                    self._error(
                        agent,
                        "agent.max_model_calls",
                        f"stopped after {self.model_calls} model calls in one run "
                        "(RunConfig.max_model_calls); the agent may be looping",
                    )
                )
                raise _Stop
            self.model_calls += 1
            response = None
            async for event_or_response in self._ask_model(agent, request):
                if isinstance(event_or_response, Event):
                    yield event_or_response
                else:
                    response = event_or_response
            assert response is not None
        if logger.isEnabledFor(logging.DEBUG):
            parts = response.content.parts if response.content is not None else []
            calls_made = sum(p.function_call is not None for p in parts)
            logger.debug(
                "invocation %s: model turn %d of agent %s: %s",
                self.id,
                self.model_calls,
                agent.name,
                response.error_code or f"{calls_made} calls",
            )
        if agent.after_model_callback is not None:
            try:
                replaced = await maybe_await(agent.after_model_callback(callback_ctx, response))
            except Exception as exc:
                yield await self._store(self._callback_error(agent, "after_model_callback", exc))
                raise _Stop from None
            if replaced is not None:
                response = replaced

        if response.error_code is not None:
            yield await self._store(
                self._error(agent, response.error_code, response.error_message or "model error")
            )
            raise _Stop
        content = response.content or Content(role="model", parts=[])
        content.role = "model"
        calls: list[FunctionCall] = []
        refused: dict[int, ToolError] = {}
        for part in content.parts:
            if part.function_call is not None:
                call = part.function_call
                if not call.id:
                    call.id = new_id(GENERATED_ID_PREFIX.rstrip("-"))
                error = refusal(call, tools)
                if error is not None:
                    refused[len(calls)] = error
                calls.append(call)
        model_event = Event(
            author=agent.name,
            content=content,
            invocation_id=self.id,
            actions=EventActions(state_delta=dict(callback_ctx.actions.state_delta)),
            finish_reason=response.finish_reason,
            usage=response.usage,
        )
        if not calls:
            if agent.output_key and content.text:
                model_event.actions.state_delta[agent.output_key] = content.text
            yield await self._store(model_event)
            return
        yield model_event
        async for event in self._dispatch(agent, tools, calls, model_event, refused=refused):
            yield event

    # -- model -------------------------------------------------------------------------

    async def _ask_model(
        self, agent: Agent, request: LlmRequest
    ) -> AsyncGenerator[Event | LlmResponse, None]:
        stream = self.config.stream
        final: LlmResponse | None = None
        text_so_far: list[str] = []
        try:
            responses = agent.model.generate_content_async(request, stream=stream)
            if self.trace is not None:
                responses = self.trace.chat(agent, request, responses)
            async for item in responses:
                if item.partial:
                    if item.content is not None and item.content.text:
                        text_so_far.append(item.content.text)
                    yield Event(
                        author=agent.name,
                        content=item.content,
                        invocation_id=self.id,
                        partial=True,
                    )
                else:
                    final = item
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            # The adapter's own failure (an API's error comes as an error response, with
            # the provider's words): its text may hold secrets, so it goes to the log.
            final = LlmResponse(
                error_code="model.failed",
                error_message=self._failure_text(
                    f"model {type(agent.model).__name__} ({agent.model.model})",
                    exc,
                    type_first=True,
                ),
            )
        if final is None:
            if text_so_far:
                final = LlmResponse(
                    content=Content(role="model", parts=[Part.from_text("".join(text_so_far))])
                )
            else:
                final = LlmResponse(
                    error_code="model.empty", error_message="the model returned nothing"
                )
        yield final

    # -- tools -------------------------------------------------------------------------

    async def _agent_tools(self, agent: Agent) -> dict[str, BaseTool] | Event:
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
                return self._error(
                    agent,
                    "agent.toolset_failed",
                    self._failure_text(
                        f"toolset {type(toolset).__name__} (listing its tools)", exc
                    ),
                )
        tools: dict[str, BaseTool] = {}
        for t in found:
            if t.name in tools:
                return self._error(
                    agent,
                    "agent.duplicate_tool",
                    f"two tools of agent {agent.name} are named {t.name!r}",
                )
            tools[t.name] = t
        self._tools[agent.name] = tools
        return tools

    def _context(
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

    async def _dispatch(
        self,
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
        config = self.config
        isolated = any(t.isolation == "process" for t in tools.values())
        callbacks = agent.before_tool_callback is not None or agent.after_tool_callback is not None
        scheduler = Scheduler(
            tools.values(),
            strategy=agent.tool_strategy,
            max_concurrency=config.max_concurrency,
            timeout=config.tool_timeout,
            expose_errors=config.expose_errors,
            pool=self.services.pool,
            processes=self.services.processes() if isolated else None,
            hooks=ToolCallbacks(agent) if callbacks else None,
        )
        contexts: dict[str, InvocationToolContext] = {}

        def make_context(call: ToolCall) -> ToolContext:
            ctx = self._context(agent, call.id, auth)
            contexts.setdefault(call.id, ctx)
            return ctx

        tool_calls = [
            ToolCall(id=c.id or "", name=c.name, args={} if i in refused else c.args)
            for i, c in enumerate(calls)
        ]
        streaming = scheduler.stream(
            [c for i, c in enumerate(tool_calls) if i not in refused],
            context_factory=make_context,
            confirmations=confirmations,
            granted_scopes=config.granted_scopes,
        )
        if self.trace is not None:  # the calls' spans go under this agent's
            streaming = self.trace.dispatching(agent, streaming)
        async with streaming as items:
            async for item in items:
                if isinstance(item, ToolProgress):
                    yield Event(
                        author=agent.name, invocation_id=self.id, progress=item, partial=True
                    )
                elif not item.final:
                    yield Event(
                        author=agent.name,
                        invocation_id=self.id,
                        content=Content(
                            role="user", parts=[response_part(item, will_continue=True)]
                        ),
                        partial=True,
                    )
            run = iter(items.responses)
        finals = [
            refused_response(call, refused[i]) if i in refused else next(run)
            for i, call in enumerate(tool_calls)
        ]

        answered: list[Part] = []
        actions = EventActions()
        pending: list[tuple[ToolCall, ToolResponse]] = []
        deferred: list[ToolCall] = []
        waiting_long: set[str] = set()
        for call, final in zip(tool_calls, finals, strict=True):
            if final.waiting_for is not None:
                pending.append((call, final))
                continue
            code = final.error.code if final.error is not None else None
            if code == "tool.deferred":
                deferred.append(call)
                continue
            tool = tools.get(call.name)
            if (
                tool is not None
                and tool.long_running
                and final.error is None
                and final.response == {"result": None}
            ):
                waiting_long.add(call.id)
                continue
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
            answered.append(response_part(final))
            if ctx is not None:
                merge_actions(actions, ctx)

        events: list[Event] = []
        if model_event is not None:
            if waiting_long:
                # Only calls still waiting for their result when the turn ends are long-running
                # in the event's sense (a generator that finished here is not).
                model_event.long_running_tool_ids = set(waiting_long)
            events.append(model_event)
        if answered:
            response_event = Event(
                author=agent.name,
                invocation_id=self.id,
                content=Content(role="user", parts=answered),
                actions=actions,
            )
            if (
                actions.transfer_to_agent
                and self.services.agent.find_agent(actions.transfer_to_agent) is None
            ):
                target = actions.transfer_to_agent
                actions.transfer_to_agent = None
                events.append(response_event)
                events.append(
                    self._error(
                        agent,
                        "agent.unknown_agent",
                        f"there is no agent named {target!r} to transfer to",
                    )
                )
            else:
                events.append(response_event)
        if pending:
            events.append(request_event(agent, self.id, pending, deferred))
        # Calls and their answers are stored together: a cancelled run leaves nothing half-done.
        await _finish_even_if_cancelled(self._store_all(events))
        for event in events[1 if model_event is not None else 0 :]:
            yield event
        if events and events[-1].error_code is not None:
            raise _Stop
        if pending or (waiting_long and not answered):
            raise _Stop
        if waiting_long:
            # Some calls answered, others wait for a result the user will send: let the
            # model speak about what it has, then stop.
            return

    async def _resume(
        self, replies: list[FunctionResponse]
    ) -> tuple[Agent, AsyncGenerator[Event, None]]:
        """The user answered confirmation or credential requests: run the held calls."""
        requests: dict[str, tuple[Event, FunctionCall]] = {}
        where: dict[str, int] = {}  # request id -> index of its event in the session
        answered: dict[str, int] = {}  # call id -> index of its last response's event
        for index, event in enumerate(self.session.events):
            for call in event.get_function_calls():
                if call.name in REQUESTS and call.id:
                    requests[call.id] = (event, call)
                    where[call.id] = index
            for response in event.get_function_responses():
                if response.id:
                    answered[response.id] = index
        agent = self.services.agent
        calls: list[FunctionCall] = []
        confirmations: dict[str, Confirmation] = {}
        auth: dict[str, dict[str, Any]] = {}
        for reply in replies:
            found = requests.get(reply.id or "")
            if (
                found is None
                or answered.get(found[1].args["originalFunctionCall"]["id"], -1)
                > where[reply.id or ""]
            ):
                # A request whose call has its response is not pending any more: replaying
                # the answer must not run the held calls a second time.
                event = self._error(
                    agent,
                    "agent.unknown_request" if found is None else "agent.request_answered",
                    f"no pending request has id {reply.id!r}"
                    if found is None
                    else f"request {reply.id!r} was already answered",
                )

                async def fail(e: Event = event) -> AsyncGenerator[Event, None]:
                    yield await self._store(e)
                    raise _Stop

                return agent, fail()
            event, request = found
            agent = self.services.agent.find_agent(event.author) or agent
            original = request.args["originalFunctionCall"]
            held = [original, *request.args.get("deferredCalls", [])]
            for item in held:
                if all(c.id != item["id"] for c in calls):
                    calls.append(
                        FunctionCall(id=item["id"], name=item["name"], args=dict(item["args"]))
                    )
            if request.name == REQUEST_CONFIRMATION:
                confirmations[original["id"]] = Confirmation(
                    confirmed=bool(reply.response.get("confirmed", False)),
                    fingerprint=request.args["toolConfirmation"]["fingerprint"],
                    payload=reply.response.get("payload"),
                )
            else:
                auth[auth_config_key(request.args["authConfig"])] = dict(reply.response)
        resumed_agent = agent

        async def run_held() -> AsyncGenerator[Event, None]:
            tools = await self._agent_tools(resumed_agent)
            if isinstance(tools, Event):
                yield await self._store(tools)
                raise _Stop
            async for e in self._dispatch(resumed_agent, tools, calls, None, confirmations, auth):
                yield e

        return resumed_agent, run_held()

    # -- storing -------------------------------------------------------------------------

    async def _store(self, event: Event) -> Event:
        if event.error_code is not None and self.trace is not None:
            self.trace.error(event)
        if not event.partial:
            await self.services.session_service.append_event(self.session, storable_event(event))
        return event

    async def _store_all(self, events: list[Event]) -> None:
        for event in events:
            await self._store(event)

    def _callback_error(self, agent: Agent, which: str, exc: Exception) -> Event:
        return self._error(
            agent,
            "agent.callback_failed",
            self._failure_text(f"{which} of agent {agent.name}", exc),
        )

    def _failure_text(self, what: str, exc: BaseException, *, type_first: bool = False) -> str:
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

    def _error(self, agent: Agent, code: str, message: str) -> Event:
        return Event(
            author=agent.name, invocation_id=self.id, error_code=code, error_message=message
        )


async def _finish_even_if_cancelled(work: Coroutine[Any, Any, None]) -> None:
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
