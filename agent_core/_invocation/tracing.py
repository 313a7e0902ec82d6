"""OpenTelemetry spans of a run: ``invoke_agent {agent}`` and ``chat {model}``.

The scheduler makes the ``execute_tool`` spans (``tooling._tracing``); this module gives
them their parent. A run asks :func:`invocation_trace` once: None, the fast path, unless
opentelemetry is loaded and a tracer provider is set. Then an :class:`InvocationTrace`
opens one ``invoke_agent`` span per agent that takes the conversation (the first one under
whatever span is current when the run starts, an agent handed to under the agent that
handed over, and ended when the conversation goes back), one ``chat`` span per model call
under its agent's, and makes the agent's span the parent of the calls it dispatches.

No context is attached across a ``yield`` of the loop (an async generator may be resumed,
or closed, from another task): spans are started with an explicit parent, and a context
is made current only around an ``await`` (one step of the model's response stream, the
start of a dispatch), so tools and model clients see the right current span.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Awaitable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from tooling.integration import CAPTURE_KEY, capture_content, content_json, tracer

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Span, Tracer

    from .._agent import Agent
    from .._content import Content
    from .._events import Event
    from ..models.base import LlmRequest, LlmResponse
    from .loop import Invocation

__all__: list[str] = []

_T = TypeVar("_T")


def invocation_trace(invocation: Invocation) -> InvocationTrace | None:
    """The spans of ``invocation``, or None when nobody listens (nothing is imported)."""
    found = tracer("agent_core")
    if found is None:
        return None
    return InvocationTrace(found, invocation)


class _AgentSpan:
    __slots__ = ("agent", "context", "span")

    def __init__(self, agent: Agent, span: Span, context: Context) -> None:
        self.agent = agent
        self.span = span
        self.context = context


class InvocationTrace:
    """The ``invoke_agent`` and ``chat`` spans of one invocation."""

    def __init__(self, tracer: Tracer, invocation: Invocation) -> None:
        from opentelemetry import context

        self._tracer = tracer
        self._invocation = invocation
        parent = context.get_current()
        self.capture = invocation.config.trace_content or capture_content(parent)
        if self.capture:
            parent = context.set_value(CAPTURE_KEY, True, parent)
        self._root = parent
        self._agents: list[_AgentSpan] = []  # the agent answering now is the last

    # -- agents --------------------------------------------------------------------------

    def agent_context(self, agent: Agent) -> Context:
        """The context whose current span is ``agent``'s (opened when it takes over).

        An agent already on the way (it handed over, and the conversation came back)
        continues in its span; the spans of the agents after it end.
        """
        for depth, opened in enumerate(self._agents):
            if opened.agent is agent:
                for later in reversed(self._agents[depth + 1 :]):
                    later.span.end()
                del self._agents[depth + 1 :]
                return opened.context
        from opentelemetry import trace

        parent = self._agents[-1].context if self._agents else self._root
        session = self._invocation.session
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent.name,
            "gen_ai.conversation.id": session.id,
            "agent_core.invocation.id": self._invocation.id,
            "agent_core.app.name": session.app_name,
        }
        if agent.description:
            attributes["gen_ai.agent.description"] = agent.description
        span = self._tracer.start_span(
            f"invoke_agent {agent.name}",
            context=parent,
            kind=trace.SpanKind.INTERNAL,
            attributes=attributes,
        )
        opened = _AgentSpan(agent, span, trace.set_span_in_context(span, parent))
        self._agents.append(opened)
        return opened.context

    def error(self, event: Event) -> None:
        """An error event ends the run: its agent's span says so."""
        from opentelemetry import trace

        span = next((a.span for a in reversed(self._agents) if a.agent.name == event.author), None)
        if span is None:
            agent = self._invocation.services.agent.find_agent(event.author)
            if agent is None:
                if not self._agents:
                    return
                span = self._agents[-1].span
            else:
                self.agent_context(agent)
                span = self._agents[-1].span
        span.set_attribute("error.type", event.error_code or "agent.error")
        span.set_status(trace.StatusCode.ERROR, event.error_message if self.capture else None)

    def end(self, exc: BaseException | None = None) -> None:
        """The run is over: end every agent span still open (innermost first)."""
        from opentelemetry import trace

        if exc is not None and not isinstance(exc, GeneratorExit) and self._agents:
            span = self._agents[-1].span
            kind = type(exc)
            span.set_attribute("error.type", f"{kind.__module__}.{kind.__qualname__}")
            span.set_status(trace.StatusCode.ERROR)
        for opened in reversed(self._agents):
            opened.span.end()
        self._agents.clear()

    async def under(self, agent: Agent, work: Awaitable[_T]) -> _T:
        """Await ``work`` with ``agent``'s span current (a toolset listing its tools)."""
        from opentelemetry import context

        token = context.attach(self.agent_context(agent))
        try:
            return await work
        finally:
            context.detach(token)

    @asynccontextmanager
    async def dispatching(
        self, agent: Agent, stream: AbstractAsyncContextManager[_T]
    ) -> AsyncIterator[_T]:
        """Enter ``stream`` (a ``Scheduler.stream``) with ``agent``'s span current, so the
        dispatch's task, and every call's span, start under it."""
        from opentelemetry import context

        async with AsyncExitStack() as stack:
            token = context.attach(self.agent_context(agent))
            try:
                entered = await stack.enter_async_context(stream)
            finally:
                context.detach(token)
            yield entered

    # -- model calls ---------------------------------------------------------------------

    def chat(
        self, agent: Agent, request: LlmRequest, responses: AsyncIterable[LlmResponse]
    ) -> AsyncGenerator[LlmResponse, None]:
        """``responses`` (the model's stream) inside a ``chat`` span under ``agent``'s."""
        from opentelemetry import trace

        parent = self.agent_context(agent)
        model = agent.model
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": request.model,
            "gen_ai.conversation.id": self._invocation.session.id,
            "agent_core.invocation.id": self._invocation.id,
        }
        if model.provider:
            attributes["gen_ai.provider.name"] = model.provider
        if self.capture:
            if request.system_instruction:
                attributes["gen_ai.system_instructions"] = content_json(
                    [{"type": "text", "content": request.system_instruction}]
                )
            attributes["gen_ai.input.messages"] = content_json(
                [_message(c) for c in request.contents]
            )
        span = self._tracer.start_span(
            f"chat {request.model}",
            context=parent,
            kind=trace.SpanKind.CLIENT,
            attributes=attributes,
        )
        return self._chat_steps(span, trace.set_span_in_context(span, parent), responses)

    async def _chat_steps(
        self, span: Span, current: Context, responses: AsyncIterable[LlmResponse]
    ) -> AsyncGenerator[LlmResponse, None]:
        from opentelemetry import context, trace

        final: LlmResponse | None = None
        partial = 0
        try:
            # Any async iterable, as the untraced loop's ``async for`` takes.
            steps = aiter(responses)
            while True:
                # The model's code runs with the chat span current (its HTTP client's
                # spans nest under it); the loop between steps does not.
                token = context.attach(current)
                try:
                    item = await anext(steps)
                except StopAsyncIteration:
                    break
                finally:
                    context.detach(token)
                if item.partial:
                    partial += 1
                else:
                    final = item
                yield item
        except BaseException as exc:
            if not isinstance(exc, GeneratorExit):
                span.set_attribute(
                    "error.type",
                    "model.failed" if isinstance(exc, Exception) else type(exc).__qualname__,
                )
                span.set_status(trace.StatusCode.ERROR)
            span.end()
            raise
        if partial:
            span.set_attribute("agent_core.chat.partial_responses", partial)
        if final is None and not partial:
            span.set_attribute("error.type", "model.empty")
            span.set_status(trace.StatusCode.ERROR)
        elif final is not None:
            self._response_attributes(span, final)
        span.end()

    def _response_attributes(self, span: Span, response: LlmResponse) -> None:
        from opentelemetry import trace

        attributes: dict[str, Any] = {}
        if response.finish_reason:
            attributes["gen_ai.response.finish_reasons"] = [response.finish_reason]
        if response.usage is not None:
            for key in ("input_tokens", "output_tokens"):
                value = response.usage.get(key)
                if isinstance(value, int):
                    attributes[f"gen_ai.usage.{key}"] = value
        if response.error_code is not None:
            attributes["error.type"] = response.error_code
        elif self.capture and response.content is not None:
            message = _message(response.content)
            if response.finish_reason:
                message["finish_reason"] = response.finish_reason
            attributes["gen_ai.output.messages"] = content_json([message])
        span.set_attributes(attributes)
        if response.error_code is not None:
            span.set_status(
                trace.StatusCode.ERROR, response.error_message if self.capture else None
            )


def _message(content: Content) -> dict[str, Any]:
    """A ``Content`` in the GenAI conventions' message shape (role and typed parts)."""
    parts: list[dict[str, Any]] = []
    for part in content.parts:
        if part.function_call is not None:
            call = part.function_call
            parts.append(
                {"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.args}
            )
        elif part.function_response is not None:
            answer = part.function_response
            parts.append(
                {"type": "tool_call_response", "id": answer.id, "response": answer.response}
            )
        elif part.text is not None:
            parts.append({"type": "reasoning" if part.thought else "text", "content": part.text})
        elif part.inline_data is not None:
            # Bytes are not recorded: the part is named by its type.
            parts.append({"type": "blob", "mime_type": part.inline_data.mime_type})
        elif part.file_data is not None:
            parts.append(
                {"type": "uri", "mime_type": part.file_data.mime_type, "uri": part.file_data.uri}
            )
    if content.role == "model":
        role = "assistant"
    elif parts and all(p["type"] == "tool_call_response" for p in parts):
        role = "tool"
    else:
        role = content.role
    return {"role": role, "parts": parts}
