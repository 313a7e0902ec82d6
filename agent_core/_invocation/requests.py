"""Calls waiting on the user: the requests the loop makes, and how they are recognised.

A call that needs the user's confirmation or a credential ends pending; the loop then
stores one event of request calls (``request_confirmation``, ``request_credential``)
that a front end answers with function responses of the same names. This module is the
one place that knows those names and shapes: the loop, the CLI, the replay model and
the inspector use it.
"""

from __future__ import annotations

from typing import Any

from tooling import ToolCall, ToolResponse

from .._agent import Agent
from .._content import Content, FunctionCall, FunctionResponse, Part
from .._events import Event, EventActions
from .._ids import new_id

__all__: list[str] = []

REQUEST_CONFIRMATION = "request_confirmation"
REQUEST_CREDENTIAL = "request_credential"
REQUESTS = (REQUEST_CONFIRMATION, REQUEST_CREDENTIAL)
#: Ids the loop gives to calls that came without one; stripped before the model sees them.
GENERATED_ID_PREFIX = "call-"


def request_event(
    agent: Agent,
    invocation_id: str,
    pending: list[tuple[ToolCall, ToolResponse]],
    deferred: list[ToolCall],
) -> Event:
    """The event asking the user to confirm (or authorize) the pending calls."""
    parts: list[Part] = []
    actions = EventActions()
    for i, (call, final) in enumerate(pending):
        original = {"id": call.id, "name": call.name, "args": call.args}
        later = [{"id": c.id, "name": c.name, "args": c.args} for c in deferred] if i == 0 else []
        body = final.response
        if final.waiting_for == "credential":
            name = REQUEST_CREDENTIAL
            args: dict[str, Any] = {
                "originalFunctionCall": original,
                "authConfig": body["credential"]["auth_config"],
                "deferredCalls": later,
            }
            actions.requested_auth_configs[call.id] = body["credential"]["auth_config"]
        else:
            name = REQUEST_CONFIRMATION
            args = {
                "originalFunctionCall": original,
                "toolConfirmation": body["confirmation"],
                "deferredCalls": later,
            }
            actions.requested_tool_confirmations[call.id] = body["confirmation"]
        parts.append(Part.from_function_call(name, args, id=new_id("req")))
    return Event(
        author=agent.name,
        invocation_id=invocation_id,
        content=Content(role="model", parts=parts),
        actions=actions,
        long_running_tool_ids={
            p.function_call.id for p in parts if p.function_call and p.function_call.id
        },
    )


def is_request_traffic(event: Event) -> bool:
    """Confirmation/credential requests and the user's answers: between user and loop only."""
    if event.content is None:
        return False
    names = [p.function_call.name for p in event.content.parts if p.function_call is not None]
    names += [
        p.function_response.name for p in event.content.parts if p.function_response is not None
    ]
    return bool(names) and all(n in REQUESTS for n in names)


def pending_part(call: FunctionCall) -> Part:
    """The stand-in answer the model sees for a call that has no result yet."""
    call_id = call.id if call.id and not call.id.startswith(GENERATED_ID_PREFIX) else None
    return Part(
        function_response=FunctionResponse(
            id=call_id,
            name=call.name,
            response={
                "status": "pending",
                "message": "No result yet: this call waits for the user (a confirmation or "
                "credential) or for a long-running job. Do not call it again.",
            },
        )
    )
