"""What the credential step raises: a tool's 401, and a call that must wait for the user."""

from __future__ import annotations

from typing import Any

from .._errors import ToolError

__all__ = ["Unauthorized"]


class Unauthorized(ToolError):
    """Raised by a tool whose credential the resource refused (an HTTP 401).

    The scheduler then refreshes the token (or fetches a new one) and runs the call once
    more; refused again, the call answers ``auth.unauthorized``. Never a retry loop.
    """

    def __init__(self, message: str = "the resource refused the credential (HTTP 401)") -> None:
        super().__init__(message, code="auth.unauthorized")


class CredentialRequired(Exception):
    """The user must supply or authorize a credential: the call ends pending.

    ``auth_config`` is what the request to the user carries (no secret in it).
    """

    def __init__(self, auth_config: dict[str, Any]) -> None:
        super().__init__("a credential is required")
        self.auth_config = auth_config
