"""A call that waits for the user says so in a typed field, not only in its response dict."""

from __future__ import annotations

from tooling import (
    Confirmation,
    ExecutionStrategy,
    Scheduler,
    ToolCall,
    ToolContext,
    ToolError,
    tool,
)


@tool(require_confirmation=True)
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@tool
def connect(service: str, tool_context: ToolContext) -> str:
    """Connect to a service with the user's credential."""
    tool_context.request_credential({"type": "oauth2", "service": service})
    return "connected"


@tool
def mimic() -> str:
    """Raise an error that merely looks like a confirmation request."""
    raise ToolError("not really waiting", code="tool.confirmation_required")


@tool
def plain() -> str:
    """Answer at once."""
    return "ok"


async def test_each_kind_of_wait_is_named_and_other_calls_wait_for_nothing() -> None:
    scheduler = Scheduler([delete, connect, mimic, plain], strategy=ExecutionStrategy.PARALLEL)
    calls = [
        ToolCall("a", "delete", {"path": "x"}),
        ToolCall("b", "connect", {"service": "mail"}),
        ToolCall("c", "mimic", {}),
        ToolCall("d", "plain", {}),
    ]
    responses = await scheduler.dispatch(calls)
    assert [r.waiting_for for r in responses] == ["confirmation", "credential", None, None]
    assert responses[0].response["status"] == "confirmation_required"
    assert responses[1].response["status"] == "credential_required"
    # A tool's own error with that code is an error, not a request to the user.
    assert responses[2].error is not None and responses[2].waiting_for is None


async def test_a_confirmed_call_waits_for_nothing() -> None:
    scheduler = Scheduler([delete])
    call = ToolCall("a", "delete", {"path": "x"})
    (first,) = await scheduler.dispatch([call])
    assert first.waiting_for == "confirmation"
    fingerprint = first.response["confirmation"]["fingerprint"]
    (second,) = await scheduler.dispatch(
        [call], confirmations={"a": Confirmation(confirmed=True, fingerprint=fingerprint)}
    )
    assert second.waiting_for is None
    assert second.response == {"result": "deleted x"}
