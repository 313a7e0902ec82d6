"""Checks of a tool's options against its function: a conflict key names a parameter,
``auth=`` is an ``AuthConfig`` a call can be given a credential for."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._base import ConflictKeyRule
from .target import Isolation, Target

if TYPE_CHECKING:
    from ..auth._credentials import AuthConfig

__all__: list[str] = []


def checked_conflict_key(rule: ConflictKeyRule | None, target: Target) -> ConflictKeyRule | None:
    """``rule`` if it names a parameter of the tool or is callable; else a ``TypeError``."""
    if rule is None or callable(rule):
        return rule
    if not isinstance(rule, str):
        raise TypeError(
            f"tool {target.qualname}: conflict_key must be a parameter name or a function of "
            f"the arguments, not {type(rule).__name__}"
        )
    names = [p.name for p in target.parameters]
    if rule not in names:
        raise TypeError(
            f"tool {target.qualname}: conflict_key {rule!r} is not one of its parameters "
            f"({', '.join(names) or 'it has none'})"
        )
    return rule


def checked_auth(auth: Any, target: Target, isolation: Isolation) -> AuthConfig | None:
    """``auth`` if it is an ``AuthConfig`` a call can be given a credential for."""
    if auth is None:
        return None
    from ..auth._credentials import AuthConfig

    if not isinstance(auth, AuthConfig):
        raise TypeError(
            f"tool {target.qualname}: auth= takes a tooling.auth.AuthConfig, not "
            f"{type(auth).__name__}"
        )
    if isolation == "process":
        raise ValueError(
            f"tool {target.qualname}: credentials stay in the caller's process, so auth= "
            "cannot be combined with isolation='process'"
        )
    return auth
