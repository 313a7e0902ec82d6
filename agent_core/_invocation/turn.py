"""One model turn: build the request, ask the model (with the agent's model callbacks),
store what it says, and hand the calls it makes to the dispatch."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING

from tooling import BaseTool, ToolError

from .._agent import Agent
from .._content import Content, FunctionCall, Part
from .._events import Event, EventActions
from .._ids import new_id
from .._output import FINAL_RESULT, parsed_answer
from ..models.base import LlmRequest, LlmResponse
from .dispatch import dispatch
from .history import contents_for
from .offering import turn_tools
from .requests import GENERATED_ID_PREFIX
from .stop import Stop
from .tool_calls import maybe_await, refusal

if TYPE_CHECKING:
    from .loop import Invocation
    from .tool_context import InvocationToolContext

__all__: list[str] = []

logger = logging.getLogger("agent_core")


async def model_turn(inv: Invocation, agent: Agent) -> AsyncGenerator[Event, None]:
    """One model call and, if it calls tools, one dispatch."""
    tools = await inv.agent_tools(agent)
    if isinstance(tools, Event):
        yield await inv.store(tools)
        raise Stop
    callback_ctx = inv.context(agent, "")
    offered, tools = await turn_tools(inv, agent, tools)
    request = _request(inv, agent, offered)
    if isinstance(request, Event):
        yield await inv.store(request)
        raise Stop
    response: LlmResponse | None = None
    async for item in _model_response(inv, agent, request, callback_ctx):
        if isinstance(item, Event):
            yield item
        else:
            response = item
    assert response is not None
    if response.error_code is not None:
        yield await inv.store(
            inv.error(agent, response.error_code, response.error_message or "model error")
        )
        raise Stop
    content = response.content or Content(role="model", parts=[])
    content.role = "model"
    last_turn = inv.budget.spent  # the tool budget was spent before this turn
    calls, refused = _calls_of(content, tools, inv.aliases.get(agent.name))
    if last_turn:
        for index in range(len(calls)):
            refused.setdefault(
                index,
                ToolError(
                    "not run: this run's tool budget is spent; answer without tools",
                    code="tool.budget_exhausted",
                ),
            )
    model_event = Event(
        author=agent.name,
        content=content,
        invocation_id=inv.id,
        actions=EventActions(state_delta=dict(callback_ctx.actions.state_delta)),
        finish_reason=response.finish_reason,
        usage=response.usage,
        citations=response.citations,
    )
    if not calls:
        if agent.output_schema is not None:
            async for event in _structured_answer(inv, agent, model_event):
                yield event
            return
        if agent.output_key and content.text:
            model_event.actions.state_delta[agent.output_key] = content.text
        yield await inv.store(model_event)
        return
    yield model_event
    async for event in dispatch(inv, agent, tools, calls, model_event, refused=refused):
        yield event
    if last_turn:
        yield await inv.store(
            inv.error(
                agent,
                "agent.tool_budget_exhausted",
                "the model kept calling tools after the run's tool budget was spent "
                "(RunConfig.max_tool_calls, or a tool's max_calls_per_run); none of those "
                "calls ran",
            )
        )
        raise Stop


async def _structured_answer(
    inv: Invocation, agent: Agent, model_event: Event
) -> AsyncGenerator[Event, None]:
    """A text answer of an ``output_schema`` agent: accepted if it is the model's JSON,
    else stored with a note of what is wrong, and the model asked again."""
    assert agent.output_schema is not None
    text = model_event.content.text if model_event.content is not None else ""
    answer, problems = parsed_answer(agent.output_schema, text or "")
    if answer is not None:
        model_event.output = answer
        if agent.output_key:
            model_event.actions.state_delta[agent.output_key] = answer.model_dump(mode="json")
        yield await inv.store(model_event)
        return
    yield await inv.store(model_event)
    note = Event(
        author=agent.name,
        invocation_id=inv.id,
        content=Content(
            role="user",
            parts=[
                Part.from_text(
                    f"That answer does not match the required output ({problems}). Give the "
                    f"final answer by calling {FINAL_RESULT} with valid arguments."
                )
            ],
        ),
    )
    yield await inv.store(note)
    inv.ask_again = agent


def _request(inv: Invocation, agent: Agent, tools: dict[str, BaseTool]) -> LlmRequest | Event:
    """What the model is asked: the agent's instruction, the session so far, the tools
    (or the error event of an instruction naming state that is not there)."""
    try:
        instruction = agent.render_instruction(inv.session.state)
    except KeyError as exc:
        return inv.error(agent, "agent.instruction", str(exc.args[0]))
    if inv.budget.spent:
        instruction = (
            f"{instruction}\n\nThe tool budget of this run is spent: answer now with what "
            "you have; tools will not run."
        ).strip()
    return LlmRequest(
        model=agent.model.model,
        contents=contents_for(agent.name, inv.session.events),
        system_instruction=instruction,
        tools=tools,
        config=agent.generate_content_config,
        agent_name=agent.name,
    )


async def _model_response(
    inv: Invocation, agent: Agent, request: LlmRequest, callback_ctx: InvocationToolContext
) -> AsyncGenerator[Event | LlmResponse, None]:
    """The turn's response, last: the before-model callback's, else the model's (its
    streamed pieces first), as the after-model callback may replace it."""
    response: LlmResponse | None = None
    if agent.before_model_callback is not None:
        try:
            response = await maybe_await(agent.before_model_callback(callback_ctx, request))
        except Exception as exc:
            yield await inv.store(inv.callback_error(agent, "before_model_callback", exc))
            raise Stop from None
    if response is None:
        if inv.model_calls >= inv.config.max_model_calls:
            yield await inv.store(
                inv.error(
                    agent,
                    "agent.max_model_calls",
                    f"stopped after {inv.model_calls} model calls in one run "
                    "(RunConfig.max_model_calls); the agent may be looping",
                )
            )
            raise Stop
        inv.model_calls += 1
        async for item in _ask_model(inv, agent, request):
            if isinstance(item, Event):
                yield item
            else:
                response = item
        assert response is not None
    if logger.isEnabledFor(logging.DEBUG):
        parts = response.content.parts if response.content is not None else []
        calls_made = sum(p.function_call is not None for p in parts)
        logger.debug(
            "invocation %s: model turn %d of agent %s: %s",
            inv.id,
            inv.model_calls,
            agent.name,
            response.error_code or f"{calls_made} calls",
        )
    if agent.after_model_callback is not None:
        try:
            replaced = await maybe_await(agent.after_model_callback(callback_ctx, response))
        except Exception as exc:
            yield await inv.store(inv.callback_error(agent, "after_model_callback", exc))
            raise Stop from None
        if replaced is not None:
            response = replaced
    yield response


async def _ask_model(
    inv: Invocation, agent: Agent, request: LlmRequest
) -> AsyncGenerator[Event | LlmResponse, None]:
    """The model's streamed pieces as partial events, then its final response."""
    final: LlmResponse | None = None
    text_so_far: list[str] = []
    try:
        responses = agent.model.generate_content_async(request, stream=inv.config.stream)
        if inv.trace is not None:
            responses = inv.trace.chat(agent, request, responses)
        async for item in responses:
            if item.partial:
                if item.content is not None and item.content.text:
                    text_so_far.append(item.content.text)
                yield Event(
                    author=agent.name, content=item.content, invocation_id=inv.id, partial=True
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
            error_message=inv.failure_text(
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


def _calls_of(
    content: Content, tools: dict[str, BaseTool], aliases: dict[str, str] | None
) -> tuple[list[FunctionCall], dict[int, ToolError]]:
    """The calls the model made (each given an id if it had none), and the refused ones
    by index with the error that answers them."""
    calls: list[FunctionCall] = []
    refused: dict[int, ToolError] = {}
    for part in content.parts:
        if part.function_call is not None:
            call = part.function_call
            if not call.id:
                call.id = new_id(GENERATED_ID_PREFIX.rstrip("-"))
            error = refusal(call, tools, aliases)
            if error is not None:
                refused[len(calls)] = error
            calls.append(call)
    return calls, refused
