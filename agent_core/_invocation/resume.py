"""Resuming: the user answered confirmation or credential requests, so the calls they
held run now, with the answers (a ``Confirmation`` per call, credentials by auth key)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tooling import Confirmation
from tooling.integration import auth_config_key

from .._agent import Agent
from .._content import FunctionCall, FunctionResponse
from .._events import Event
from .dispatch import dispatch
from .requests import UserRequest, Waiting
from .stop import Stop

if TYPE_CHECKING:
    from .loop import Invocation

__all__: list[str] = []


@dataclass(slots=True)
class _Answers:
    """The held calls (each once, in order) and what the user's replies give them."""

    calls: list[FunctionCall] = field(default_factory=list)
    confirmations: dict[str, Confirmation] = field(default_factory=dict)
    auth: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(self, request: UserRequest, reply: FunctionResponse) -> None:
        for held in request.held_calls():
            if all(c.id != held.id for c in self.calls):
                self.calls.append(held.function_call())
        if request.kind == "confirmation":
            assert request.call is not None
            self.confirmations[request.call.id] = Confirmation(
                confirmed=bool(reply.response.get("confirmed", False)),
                fingerprint=request.fingerprint,
                payload=reply.response.get("payload"),
            )
        else:
            self.auth[auth_config_key(dict(request.auth_config))] = dict(reply.response)


def resume(
    inv: Invocation, replies: list[FunctionResponse]
) -> tuple[Agent, AsyncGenerator[Event, None]]:
    """The agent that asked, and the run of the held calls (or of the error that a reply
    to no open request gets)."""
    waiting = Waiting(inv.session.events)
    agent = inv.services.agent
    answers = _Answers()
    for reply in replies:
        request = waiting.request(reply.id)
        if request is None or request.call is None or waiting.held_call_answered(request):
            # A request whose call has its response is not pending any more: replaying
            # the answer must not run the held calls a second time.
            return agent, _fail(inv, _refusal(inv, agent, reply, request))
        agent = inv.services.agent.find_agent(request.author) or agent
        answers.add(request, reply)
    return agent, _run_held(inv, agent, answers)


def _refusal(
    inv: Invocation, agent: Agent, reply: FunctionResponse, request: UserRequest | None
) -> Event:
    if request is None or request.call is None:
        return inv.error(agent, "agent.unknown_request", f"no pending request has id {reply.id!r}")
    return inv.error(agent, "agent.request_answered", f"request {reply.id!r} was already answered")


async def _fail(inv: Invocation, event: Event) -> AsyncGenerator[Event, None]:
    yield await inv.store(event)
    raise Stop


async def _run_held(
    inv: Invocation, agent: Agent, answers: _Answers
) -> AsyncGenerator[Event, None]:
    tools = await inv.agent_tools(agent)
    if isinstance(tools, Event):
        yield await inv.store(tools)
        raise Stop
    async for event in dispatch(
        inv, agent, tools, answers.calls, None, answers.confirmations, answers.auth
    ):
        yield event
