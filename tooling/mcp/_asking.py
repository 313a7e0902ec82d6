"""A server's elicitation during an ``McpTool`` call, as the loop's confirmation pause.

``McpToolset``'s client declares elicitation. When the server asks during a call (a
``tool.confirmation_required``-style form, as ``McpServer`` sends), there is no user to
ask right then: the question is noted on the call, answered "cancel" (so the server
does not run the tool), and the call ends asking the user to confirm, with the server's
message as the hint (``ToolContext.request_confirmation``). When the loop runs the call
again with the user's answer (``ToolContext.tool_confirmation``), the server's question
gets that answer: a yes accepts the form (its boolean fields set to true), a no declines.

Which call a question belongs to: on 2026-07-28 connections the question travels in the
call's own result, so it is answered in the calling task (a context variable says which
call); on handshake-era connections it arrives on its own, and belongs to the one call in
flight (with several, it is declined: no answer is guessed). A sampling request is refused
with an error saying this client does not sample.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types

from .._types import Confirmation

__all__: list[str] = []


@dataclass(eq=False)
class Asking:
    """One call's side of the server's questions: the user's answer, and what was asked."""

    answer: Confirmation | None
    asked: list[str] = field(default_factory=list)


#: The client's answer to a sampling request (and how its refusal is recognized).
SAMPLING_REFUSED = (
    "this MCP client (agent-tooling's McpToolset) does not answer sampling requests: the "
    "refusal is the client's, not a fault of the server"
)

_current: ContextVar[Asking | None] = ContextVar("mcp_asking", default=None)


class Questions:
    """The calls in flight on one connection, to answer the server's questions for."""

    def __init__(self) -> None:
        self._in_flight: set[Asking] = set()

    @contextmanager
    def call(self, answer: Confirmation | None) -> Iterator[Asking]:
        """The scope of one call (``answer``: the user's, when the call is resumed)."""
        asking = Asking(answer)
        token = _current.set(asking)
        self._in_flight.add(asking)
        try:
            yield asking
        finally:
            self._in_flight.discard(asking)
            _current.reset(token)

    def _owner(self) -> Asking | None:
        current = _current.get()
        if current is not None:
            return current
        if len(self._in_flight) == 1:
            return next(iter(self._in_flight))
        return None

    async def on_elicit(
        self, context: Any, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        """The answer to an ``elicitation/create`` (see the module docs)."""
        asking = self._owner()
        if asking is None or not isinstance(params, types.ElicitRequestFormParams):
            return types.ElicitResult(action="decline")
        if asking.answer is None:
            asking.asked.append(params.message)
            return types.ElicitResult(action="cancel")
        if not asking.answer.confirmed:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content=_yes(params.requested_schema))

    async def on_sampling(self, context: Any, params: Any) -> types.ErrorData:
        """Sampling is refused, in words that say the refusal is this client's."""
        return types.ErrorData(code=types.INVALID_REQUEST, message=SAMPLING_REFUSED)


def _yes(schema: Any) -> dict[str, str | int | float | bool | list[str] | None]:
    """A form's boolean fields set to true (a confirmation form's "yes")."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return {}
    return {
        name: True
        for name, prop in properties.items()
        if isinstance(prop, dict) and prop.get("type") == "boolean"
    }
