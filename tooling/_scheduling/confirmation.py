"""Confirmation requests: the fingerprint that binds an answer to exact arguments."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

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
