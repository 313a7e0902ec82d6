"""How the SQL stores write state and events: JSON text, state split by scope.

State is stored key by key, so that a delta merges key by key: the last committed write
of a key wins and writes of different keys never overwrite each other. App and user keys
are stored without their prefix. Values and events are JSON text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .._events import Event
from ..sessions.state import split_delta

__all__: list[str] = []


def dump_json(value: Any, what: str) -> str:
    """``value`` as JSON text; a value JSON cannot hold raises ``TypeError`` naming ``what``."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what} cannot be stored: it is not JSON-serializable ({exc})") from exc


def decode_state(rows: Iterable[tuple[Any, ...]]) -> dict[str, Any]:
    """``(key, JSON value)`` rows as a state dict."""
    return {key: json.loads(value) for key, value in rows}


def event_json(event: Event, state_delta: dict[str, Any]) -> str:
    """``event`` as stored: JSON text with ``state_delta`` (its delta without ``temp:``)."""
    delta = event.actions.state_delta
    event.actions.state_delta = state_delta
    try:
        return event.to_json()
    finally:
        event.actions.state_delta = delta


class EncodedDelta:
    """A state delta split by scope, its values already JSON text (encoded before any
    database work, so a value that cannot be stored fails before anything is written)."""

    __slots__ = ("app", "session", "user")

    def __init__(self, delta: dict[str, Any]) -> None:
        scoped = split_delta(delta)
        self.app = [(k, dump_json(v, f"state value app:{k}")) for k, v in scoped.app.items()]
        self.user = [(k, dump_json(v, f"state value user:{k}")) for k, v in scoped.user.items()]
        self.session = [(k, dump_json(v, f"state value {k}")) for k, v in scoped.session.items()]

    def own_state(self) -> dict[str, Any]:
        """The session's own keys, decoded again (what a new session's state starts as)."""
        return decode_state(self.session)
