"""The credential step: a tool with ``auth=`` gets a valid credential before it runs,
and a new one (once) when the resource refuses it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._errors import ToolError
from .confirmation import WaitingForUser, credential_response
from .running import run_within_limit

if TYPE_CHECKING:
    from .._base import BaseTool, CheckedArguments
    from .._context import ToolContext
    from .._types import ToolCall, ToolResponse
    from .dispatch import Dispatch
    from .strategy import DispatchSettings

__all__: list[str] = []

_loaded: Any = None


def _auth() -> Any:
    """``tooling.auth``'s broker and errors, imported on the first call that needs them
    (so a scheduler without ``auth=`` tools never loads them)."""
    global _loaded
    if _loaded is None:
        from ..auth import _broker, _errors

        _loaded = (_broker.broker_for, _errors.CredentialRequired, _errors.Unauthorized)
    return _loaded


async def obtain_credential(
    settings: DispatchSettings, tool: BaseTool, ctx: ToolContext, rejected: Any = None
) -> None:
    """Set ``ctx.credential`` for ``tool.auth`` (a new one when ``rejected`` was refused).

    Raises ``WaitingForUser`` when the user must supply or authorize it, and
    ``ToolError`` (``auth.*``) when it cannot be had.
    """
    broker_for, credential_required, _ = _loaded or _auth()
    assert tool.auth is not None
    service = ctx.credential_service or settings.credential_service()
    try:
        ctx.credential = await broker_for(service).credential(
            tool.auth,
            ctx,
            app_name=getattr(ctx, "app_name", ""),
            user_id=ctx.user_id,
            rejected=rejected,
        )
    except credential_required as needed:
        raise WaitingForUser(
            credential_response(tool.name, needed.auth_config),
            ToolError(
                f"tool {tool.name!r} waits for the user's credential",
                code="tool.confirmation_required",
            ),
            "credential",
        ) from None


async def run_authorized(
    dispatch: Dispatch,
    tool: BaseTool,
    call: ToolCall,
    checked: CheckedArguments,
    ctx: ToolContext,
    started: float,
) -> ToolResponse:
    """Run a tool with ``auth=``: refused with a 401 (``Unauthorized``) once, it runs once
    more with a new credential; a second refusal is the call's error."""
    unauthorized = (_loaded or _auth())[2]
    try:
        return await run_within_limit(dispatch, tool, call, checked, ctx, started)
    except unauthorized:
        await obtain_credential(dispatch.settings, tool, ctx, rejected=ctx.credential)
    return await run_within_limit(dispatch, tool, call, checked, ctx, started)
