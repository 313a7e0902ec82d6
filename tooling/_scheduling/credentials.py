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


async def obtain_credential(
    settings: DispatchSettings, tool: BaseTool, ctx: ToolContext, rejected: Any = None
) -> None:
    """Set ``ctx.credential`` for ``tool.auth`` (a new one when ``rejected`` was refused).

    Raises ``WaitingForUser`` when the user must supply or authorize it, and
    ``ToolError`` (``auth.*``) when it cannot be had.
    """
    from ..auth._broker import broker_for
    from ..auth._errors import CredentialRequired

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
    except CredentialRequired as needed:
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
    from ..auth._errors import Unauthorized

    try:
        return await run_within_limit(dispatch, tool, call, checked, ctx, started)
    except Unauthorized:
        await obtain_credential(dispatch.settings, tool, ctx, rejected=ctx.credential)
    return await run_within_limit(dispatch, tool, call, checked, ctx, started)
