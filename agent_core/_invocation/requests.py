"""Calls waiting on the user: the requests the loop makes, and one typed reader of them.

A call that needs the user's confirmation or a credential ends pending; the loop then
stores one event of request calls (``request_confirmation``, ``request_credential``)
that a front end answers with function responses of the same names. A long-running
call whose result comes later waits too: it is listed in its event's
``long_running_tool_ids`` until a final response with its id arrives.

This module is the one place that knows those names and shapes. The loop, the CLI, the
replay model and the inspector read a session through :class:`Waiting` and
:class:`UserRequest`, never the request's argument dicts. It imports only the shared
vocabulary, so the layers below the loop (the replay model) may read it too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tooling import BaseTool, ToolCall, ToolError, ToolResponse

from .._content import Content, FunctionCall, FunctionResponse, Part
from .._events import Event, EventActions
from .._ids import new_id

__all__: list[str] = []

REQUEST_CONFIRMATION = "request_confirmation"
REQUEST_CREDENTIAL = "request_credential"
REQUESTS = (REQUEST_CONFIRMATION, REQUEST_CREDENTIAL)
#: Ids the loop gives to calls that came without one; stripped before the model sees them.
GENERATED_ID_PREFIX = "call-"

RequestKind = Literal["confirmation", "credential"]


# -- the typed request ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HeldCall:
    """A call the loop holds until the user answers: its id, name and arguments."""

    id: str
    name: str
    args: dict[str, Any]

    def function_call(self) -> FunctionCall:
        return FunctionCall(id=self.id, name=self.name, args=dict(self.args))

    @classmethod
    def read(cls, value: Any) -> HeldCall | None:
        """A stored ``{"id", "name", "args"}``; None when it is not one."""
        if not isinstance(value, Mapping):
            return None
        call_id, name, args = value.get("id"), value.get("name"), value.get("args", {})
        if not isinstance(call_id, str) or not isinstance(name, str):
            return None
        return cls(call_id, name, dict(args) if isinstance(args, Mapping) else {})


@dataclass(frozen=True, slots=True)
class UserRequest:
    """One stored request call: what it asks, for which call, and where it is.

    ``call`` is the call waiting on the answer (None when the stored request is malformed,
    which no front end can answer usefully); ``deferred`` the calls of the same turn held
    behind it. ``confirmation`` is the tool's confirmation request (``hint``,
    ``fingerprint``, ``payload``) and ``auth_config`` the credential's configuration.
    ``author`` and ``index`` say which agent asked and at which event of the session.
    """

    id: str
    kind: RequestKind
    call: HeldCall | None
    deferred: tuple[HeldCall, ...] = ()
    confirmation: Mapping[str, Any] = field(default_factory=dict)
    auth_config: Mapping[str, Any] = field(default_factory=dict)
    author: str = ""
    index: int = -1

    @property
    def name(self) -> str:
        """The request's function name (``request_confirmation``/``request_credential``)."""
        return REQUEST_CONFIRMATION if self.kind == "confirmation" else REQUEST_CREDENTIAL

    @property
    def tool_name(self) -> str:
        return self.call.name if self.call is not None else "?"

    @property
    def hint(self) -> str:
        hint = self.confirmation.get("hint", "")
        return hint if isinstance(hint, str) else str(hint)

    @property
    def fingerprint(self) -> str:
        return str(self.confirmation.get("fingerprint", ""))

    def held_calls(self) -> list[HeldCall]:
        """The call waiting on the answer, then the ones deferred behind it."""
        return [*([self.call] if self.call is not None else []), *self.deferred]

    @classmethod
    def read(cls, call: FunctionCall, *, author: str = "", index: int = -1) -> UserRequest | None:
        """The request a stored call is; None when the call is no request."""
        if call.name not in REQUESTS or not call.id:
            return None
        args = call.args if isinstance(call.args, Mapping) else {}
        deferred = args.get("deferredCalls")
        held = [HeldCall.read(item) for item in deferred] if isinstance(deferred, list) else []
        confirmation = args.get("toolConfirmation")
        auth_config = args.get("authConfig")
        return cls(
            id=call.id,
            kind="confirmation" if call.name == REQUEST_CONFIRMATION else "credential",
            call=HeldCall.read(args.get("originalFunctionCall")),
            deferred=tuple(h for h in held if h is not None),
            confirmation=confirmation if isinstance(confirmation, Mapping) else {},
            auth_config=auth_config if isinstance(auth_config, Mapping) else {},
            author=author,
            index=index,
        )


@dataclass(frozen=True, slots=True)
class LongRunningCall:
    """A long-running call stored without its final result yet (at event ``index``)."""

    call: FunctionCall
    author: str
    index: int


# -- reading a session ---------------------------------------------------------------------


class Waiting:
    """What a session's events say waits on the user, read once.

    A call is answered at the last stored event with a final response of its id (partial
    events and ``will_continue`` updates do not answer it). A request is open while
    neither it nor the call it holds is answered after it; a long-running call while it
    is not answered after the event that made it.
    """

    __slots__ = ("_answered", "_long_running", "_plain", "_requests")

    def __init__(self, events: Iterable[Event]) -> None:
        self._answered: dict[str, int] = {}
        self._requests: dict[str, UserRequest] = {}  # by id: the last one stored wins
        self._long_running: list[LongRunningCall] = []
        self._plain: list[LongRunningCall] = []  # the model's other calls
        for index, event in enumerate(events):
            if event.partial:
                continue
            long_running = event.long_running_tool_ids or ()
            for call in event.get_function_calls():
                request = UserRequest.read(call, author=event.author, index=index)
                if request is not None:
                    self._requests[request.id] = request
                elif call.id and call.id in long_running:
                    self._long_running.append(LongRunningCall(call, event.author, index))
                elif call.id and event.author != "user":
                    self._plain.append(LongRunningCall(call, event.author, index))
            for response in event.get_function_responses():
                if response.id and not response.will_continue:
                    self._answered[response.id] = index

    def answered_after(self, call_id: str | None, index: int) -> bool:
        """Whether the call ``call_id`` has a final response stored after event ``index``."""
        return bool(call_id) and self._answered.get(call_id or "", -1) > index

    def request(self, request_id: str | None) -> UserRequest | None:
        """The stored request of this id (open or not)."""
        return self._requests.get(request_id or "")

    def held_call_answered(self, request: UserRequest) -> bool:
        """Whether the call a request holds was answered after the request was made."""
        held = request.call.id if request.call is not None else None
        return self.answered_after(held, request.index)

    def is_open(self, request: UserRequest) -> bool:
        return not self.answered_after(request.id, request.index) and not (
            self.held_call_answered(request)
        )

    def open_requests(self) -> list[UserRequest]:
        """Requests still waiting for the user's answer, in the order they were made."""
        found = [r for r in self._requests.values() if self.is_open(r)]
        return sorted(found, key=lambda r: r.index)

    def open_long_running(self) -> list[LongRunningCall]:
        """Long-running calls still waiting for their result, in the order they were made."""
        return [c for c in self._long_running if not self.answered_after(c.call.id, c.index)]

    def interrupted(self) -> list[LongRunningCall]:
        """Calls stored without an answer that nothing waits for: neither long-running
        nor held by a request. The store failed (or the process stopped) between the
        model's turn and its answers; the tool may have run. In the order they were made.
        """
        held = {h.id for r in self._requests.values() for h in r.held_calls()}
        return [
            c
            for c in self._plain
            if c.call.id not in held and not self.answered_after(c.call.id, c.index)
        ]


def request_replies(message: Content) -> list[FunctionResponse]:
    """The answers to requests a user message carries."""
    return [
        p.function_response
        for p in message.parts
        if p.function_response is not None and p.function_response.name in REQUESTS
    ]


# -- what a dispatch leaves waiting ---------------------------------------------------------


def awaits_result(tool: BaseTool | None, final: ToolResponse) -> bool:
    """Whether a call's final response says its result comes later, from the user.

    That is a long-running plain tool that returned nothing: its answer is sent as a
    function response of the call's id in a later message.
    """
    return (
        tool is not None
        and tool.long_running
        and final.error is None
        and final.waiting_for is None
        and final.response == {"result": None}
    )


def request_event(
    author: str,
    invocation_id: str,
    pending: Sequence[tuple[ToolCall, ToolResponse]],
    deferred: Sequence[ToolCall],
) -> Event:
    """The event asking the user to confirm (or authorize) the pending calls."""
    parts: list[Part] = []
    actions = EventActions()
    later = [_stored(c) for c in deferred]
    for i, (call, final) in enumerate(pending):
        args: dict[str, Any] = {"originalFunctionCall": _stored(call)}
        body = final.response
        if final.waiting_for == "credential":
            name = REQUEST_CREDENTIAL
            args["authConfig"] = body["credential"]["auth_config"]
            actions.requested_auth_configs[call.id] = body["credential"]["auth_config"]
        else:
            name = REQUEST_CONFIRMATION
            args["toolConfirmation"] = body["confirmation"]
            actions.requested_tool_confirmations[call.id] = body["confirmation"]
        args["deferredCalls"] = later if i == 0 else []
        parts.append(Part.from_function_call(name, args, id=new_id("req")))
    return Event(
        author=author,
        invocation_id=invocation_id,
        content=Content(role="model", parts=parts),
        actions=actions,
        long_running_tool_ids={
            p.function_call.id for p in parts if p.function_call and p.function_call.id
        },
    )


def _stored(call: ToolCall) -> dict[str, Any]:
    """A held call as the request stores it (read back by :meth:`HeldCall.read`)."""
    return {"id": call.id, "name": call.name, "args": call.args}


def is_request_traffic(event: Event) -> bool:
    """Confirmation/credential requests and the user's answers: between user and loop only."""
    if event.content is None:
        return False
    names = [p.function_call.name for p in event.content.parts if p.function_call is not None]
    names += [
        p.function_response.name for p in event.content.parts if p.function_response is not None
    ]
    return bool(names) and all(n in REQUESTS for n in names)


def interrupted_events(
    events: Sequence[Event], invocation_id: str, message: Content
) -> list[Event]:
    """The answers to the session's interrupted calls (see :meth:`Waiting.interrupted`):
    one event per turn that made them, authored by its agent, each call answered with an
    error saying it was interrupted and may have run. Calls ``message`` answers are left
    to it."""
    answered_now = {p.function_response.id for p in message.parts if p.function_response}
    by_turn: dict[int, list[LongRunningCall]] = {}
    for lost in Waiting(events).interrupted():
        if lost.call.id not in answered_now:
            by_turn.setdefault(lost.index, []).append(lost)
    return [
        Event(
            author=calls[0].author,
            invocation_id=invocation_id,
            content=Content(role="user", parts=[_interrupted_part(c.call) for c in calls]),
        )
        for _, calls in sorted(by_turn.items())
    ]


def _interrupted_part(call: FunctionCall) -> Part:

    error = ToolError(
        f"the call to {call.name!r} was interrupted before its result was stored (the "
        "session store failed or the process stopped): the tool may have run, and what it "
        "did may have happened, but its result is lost. Check before calling it again.",
        code="tool.failed",
    )
    return Part(
        function_response=FunctionResponse(id=call.id, name=call.name, response=error.to_response())
    )


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
