"""Confirmations asked of an MCP client by elicitation.

A call the ``Scheduler`` holds for confirmation becomes a form elicitation with one
boolean field: on handshake-era connections (through 2025-11-25) a server-to-client
``elicitation/create`` request while the call waits; on 2026-07-28 connections an
``InputRequiredResult`` whose ``requestState`` is the confirmation's fingerprint, answered
by the client's retry. Either way the answer is a ``Confirmation`` bound to that
fingerprint, so a "yes" cannot run other arguments than the ones shown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .._types import Confirmation

__all__: list[str] = []

#: The key of the elicitation in an ``InputRequiredResult``.
_KEY = "confirm"

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "confirm": {
            "type": "boolean",
            "title": "Run it",
            "description": "Whether to run the tool with these arguments",
            "default": True,
        }
    },
    "required": ["confirm"],
}


def can_ask(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the client declared it can answer form elicitations."""
    capabilities = ctx.session.client_capabilities
    return capabilities is not None and capabilities.elicitation is not None


def _message(confirmation: Mapping[str, Any]) -> str:
    args = json.dumps(confirmation.get("args", {}), ensure_ascii=False, indent=2, default=str)
    return f"{confirmation.get('hint', '')}\n\nTool: {confirmation.get('tool')}\nArguments: {args}"


def _request(confirmation: Mapping[str, Any]) -> types.ElicitRequest:
    params = types.ElicitRequestFormParams(message=_message(confirmation), requested_schema=_SCHEMA)
    return types.ElicitRequest(params=params)


def _accepted(result: types.ElicitResult) -> bool:
    return result.action == "accept" and (result.content or {}).get("confirm", True) is not False


async def ask_now(
    ctx: ServerRequestContext[Any, Any], confirmation: Mapping[str, Any]
) -> Confirmation:
    """Ask with an ``elicitation/create`` request on the call's own stream (handshake era)."""
    result = await ctx.session.elicit_form(
        _message(confirmation), _SCHEMA, related_request_id=ctx.request_id
    )
    return Confirmation(_accepted(result), str(confirmation["fingerprint"]))


def uses_retry(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether this connection asks through ``InputRequiredResult`` (2026-07-28 on)."""
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def ask_by_retry(confirmation: Mapping[str, Any]) -> types.InputRequiredResult:
    """The result asking the client to confirm and call again (2026-07-28 on)."""
    return types.InputRequiredResult(
        input_requests={_KEY: _request(confirmation)},
        request_state=str(confirmation["fingerprint"]),
    )


def retry_answer(params: types.CallToolRequestParams) -> Confirmation | None:
    """The confirmation a retried call carries, if it answers our question."""
    answer = (params.input_responses or {}).get(_KEY)
    if not isinstance(answer, types.ElicitResult) or not params.request_state:
        return None
    return Confirmation(_accepted(answer), params.request_state)
