"""A call waiting for the user: confirmation rules, requests made while running, and the
fingerprint that binds an answer to exact arguments."""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Mapping
from typing import Any, Literal

from .._base import BaseTool, CheckedArguments
from .._context import ToolContext
from .._errors import ToolError
from .._types import Confirmation

__all__: list[str] = []


def fingerprint(tool_name: str, validated_args: Mapping[str, Any]) -> str:
    """``"sha256:"`` + SHA-256 of the tool name, a newline, and the validated arguments
    (defaults filled in) as JSON with sorted keys.

    A confirmation carries it back, so a "yes" cannot be replayed for other arguments.
    """
    text = json.dumps(
        validated_args, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    digest = hashlib.sha256(f"{tool_name}\n{text}".encode("utf-8", "surrogatepass")).hexdigest()
    return f"sha256:{digest}"


#: The fingerprint as ``tooling.integration`` publishes it (a durable job's key uses it).
call_fingerprint = fingerprint


def confirmation_response(
    tool_name: str, hint: str, payload: Any, args: Mapping[str, Any], print_: str
) -> dict[str, Any]:
    """The response a model gets for a call waiting for the user's confirmation."""
    return {
        "status": "confirmation_required",
        "confirmation": {
            "hint": hint,
            "payload": payload,
            "tool": tool_name,
            "args": dict(args),
            "fingerprint": print_,
        },
    }


def credential_response(tool_name: str, auth_config: Mapping[str, Any]) -> dict[str, Any]:
    """The response a model gets for a call waiting for the user's credential."""
    return {
        "status": "credential_required",
        "credential": {"tool": tool_name, "auth_config": dict(auth_config)},
    }


class WaitingForUser(Exception):
    """A call ends waiting for the user (confirmation or credential)."""

    def __init__(
        self,
        response: dict[str, Any],
        error: ToolError,
        waiting_for: Literal["confirmation", "credential"],
    ) -> None:
        super().__init__(error.message)
        self.response = response
        self.error = error
        self.waiting_for = waiting_for


async def check_confirmation(
    tool: BaseTool,
    checked: CheckedArguments,
    ctx: ToolContext | None,
    answer: Confirmation | None,
) -> bool:
    """Whether the user confirmed this call (``answer``, given on resume); raises
    ``WaitingForUser`` when they must confirm it first, ``ToolError`` when they declined."""
    rule = tool.require_confirmation
    if rule is False and answer is None:
        return False
    args = checked.values
    if callable(rule):
        verdict = rule(args)
        needed = bool(await verdict if inspect.isawaitable(verdict) else verdict)
    else:
        needed = bool(rule)
    print_ = fingerprint(tool.name, args)
    if answer is not None and answer.fingerprint == print_:
        if not answer.confirmed:
            raise ToolError(f"the user declined to run {tool.name!r}", code="tool.rejected")
        if ctx is not None:
            ctx.tool_confirmation = answer
        return True
    if needed:
        raise waiting_for_confirmation(tool.name, args, print_, f"Confirm running {tool.name}.")
    return False


def waiting_for_confirmation(
    tool_name: str, args: dict[str, Any], print_: str, hint: str, payload: Any = None
) -> WaitingForUser:
    """The call of ``tool_name`` with ``args`` waits for the user's confirmation."""
    return WaitingForUser(
        confirmation_response(tool_name, hint, payload, args, print_),
        ToolError(
            f"tool {tool_name!r} waits for the user's confirmation: {hint}",
            code="tool.confirmation_required",
        ),
        "confirmation",
    )


def check_requests(
    tool: BaseTool, checked: CheckedArguments, ctx: ToolContext, confirmed: bool
) -> None:
    """A tool that asked for confirmation or a credential while running ends waiting for
    the user (``WaitingForUser``), unless the call was confirmed or the credential given."""
    actions = ctx.actions
    if actions.requested_confirmation is not None and not confirmed:
        args = checked.values
        request = actions.requested_confirmation
        raise waiting_for_confirmation(
            tool.name, args, fingerprint(tool.name, args), request["hint"], request.get("payload")
        )
    if (
        actions.requested_credential is not None
        and ctx.get_auth_response(actions.requested_credential) is None
    ):
        raise WaitingForUser(
            credential_response(tool.name, actions.requested_credential),
            ToolError(
                f"tool {tool.name!r} waits for the user's credential",
                code="tool.confirmation_required",
            ),
            "credential",
        )
