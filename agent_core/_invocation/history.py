"""The session as a model sees it: pure functions over stored events."""

from __future__ import annotations

import json
from collections.abc import Sequence

from .._content import Content, FunctionCall, FunctionResponse, Part
from .._events import Event
from .requests import GENERATED_ID_PREFIX, is_request_traffic, pending_part

__all__: list[str] = []


def contents_for(agent_name: str, events: Sequence[Event]) -> list[Content]:
    """The session's ``events`` as the model of the agent ``agent_name`` sees them.

    A call still waiting (for the user's confirmation, a credential, a long-running
    job) gets a stand-in "pending" response, so every call the model sees is answered.
    """
    answered = {r.id for e in events for r in e.get_function_responses() if r.id}
    contents: list[Content] = []
    waiting: list[Part] = []

    def add(content: Content) -> None:
        if contents and _responses_only(contents[-1]) and _responses_only(content):
            contents[-1] = Content(role="user", parts=[*contents[-1].parts, *content.parts])
        else:
            contents.append(content)

    for event in events:
        if event.partial or event.progress is not None or event.content is None:
            continue
        if is_request_traffic(event):
            continue
        own = event.author in ("user", agent_name)
        content = _without_generated_ids(event.content) if own else _as_context(event)
        if not content.parts:
            continue
        if waiting and not _responses_only(content):
            add(Content(role="user", parts=waiting))
            waiting = []
        add(content)
        if own and event.author != "user":
            waiting.extend(
                pending_part(call)
                for call in event.get_function_calls()
                if call.id and call.id not in answered
            )
    if waiting:
        add(Content(role="user", parts=waiting))
    return contents


def _responses_only(content: Content) -> bool:
    return bool(content.parts) and all(p.function_response is not None for p in content.parts)


def _without_generated_ids(content: Content) -> Content:
    parts = []
    for part in content.parts:
        call, response = part.function_call, part.function_response
        if call is not None and call.id and call.id.startswith(GENERATED_ID_PREFIX):
            part = Part(function_call=FunctionCall(id=None, name=call.name, args=call.args))
        elif response is not None and (
            response.artifact is not None
            or (response.id and response.id.startswith(GENERATED_ID_PREFIX))
        ):
            # A generated id goes back as none; an artifact never goes to a model.
            generated = bool(response.id and response.id.startswith(GENERATED_ID_PREFIX))
            part = Part(
                function_response=FunctionResponse(
                    id=None if generated else response.id,
                    name=response.name,
                    response=response.response,
                    will_continue=response.will_continue,
                    parts=response.parts,
                )
            )
        parts.append(part)
    return Content(role=content.role, parts=parts)


def _as_context(event: Event) -> Content:
    """Another agent's turn, told to this agent as context in the user's voice."""
    assert event.content is not None
    parts = []
    for part in event.content.parts:
        if part.text and not part.thought:
            parts.append(Part.from_text(f"For context: [{event.author}] said: {part.text}"))
        elif part.function_call is not None:
            args = json.dumps(part.function_call.args, default=str)
            parts.append(
                Part.from_text(
                    f"For context: [{event.author}] called tool `{part.function_call.name}` "
                    f"with arguments: {args}"
                )
            )
        elif part.function_response is not None:
            body = json.dumps(part.function_response.response, default=str)
            parts.append(
                Part.from_text(
                    f"For context: [{event.author}] tool `{part.function_response.name}` "
                    f"returned: {body}"
                )
            )
    return Content(role="user", parts=parts)
