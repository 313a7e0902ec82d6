"""State scoping rules as small pure functions.

A state key's prefix says where it lives:

- ``app:name`` is shared by every user of the app,
- ``user:name`` is shared by all sessions of one user,
- ``temp:name`` lasts one invocation and is never stored,
- any other key belongs to the session.

Services store app and user keys without their prefix (``name``) and session keys as
they are; the merged ``Session.state`` the agents see puts the prefixes back, so the
keys there are exactly the keys that were written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = [
    "APP_PREFIX",
    "TEMP_PREFIX",
    "USER_PREFIX",
    "ScopedDelta",
    "is_temp",
    "merge_state",
    "split_delta",
    "without_temp",
]

#: Prefix of keys shared by every user of the app.
APP_PREFIX = "app:"
#: Prefix of keys shared by all sessions of one user.
USER_PREFIX = "user:"
#: Prefix of keys that last one invocation and are never stored.
TEMP_PREFIX = "temp:"


class ScopedDelta(NamedTuple):
    """A state delta split by scope.

    ``app``, ``user`` and ``temp`` are keyed without their prefix; ``session`` holds the
    unprefixed keys as they are.
    """

    app: dict[str, Any]
    user: dict[str, Any]
    session: dict[str, Any]
    temp: dict[str, Any]


def is_temp(key: str) -> bool:
    """Whether ``key`` is a ``temp:`` key (never stored)."""
    return key.startswith(TEMP_PREFIX)


def split_delta(delta: Mapping[str, Any]) -> ScopedDelta:
    """Split ``delta`` into its app, user, session and temp parts by key prefix.

    The order of the keys within each part is the order in ``delta``. Values are not
    copied.
    """
    app: dict[str, Any] = {}
    user: dict[str, Any] = {}
    session: dict[str, Any] = {}
    temp: dict[str, Any] = {}
    for key, value in delta.items():
        if key.startswith(APP_PREFIX):
            app[key[len(APP_PREFIX) :]] = value
        elif key.startswith(USER_PREFIX):
            user[key[len(USER_PREFIX) :]] = value
        elif key.startswith(TEMP_PREFIX):
            temp[key[len(TEMP_PREFIX) :]] = value
        else:
            session[key] = value
    return ScopedDelta(app, user, session, temp)


def without_temp(delta: Mapping[str, Any]) -> dict[str, Any]:
    """A new dict of ``delta`` without its ``temp:`` keys (what may be stored)."""
    return {key: value for key, value in delta.items() if not key.startswith(TEMP_PREFIX)}


def merge_state(
    app_state: Mapping[str, Any],
    user_state: Mapping[str, Any],
    session_state: Mapping[str, Any],
) -> dict[str, Any]:
    """The merged view a session shows: its own keys, then ``app:`` and ``user:`` keys.

    ``app_state`` and ``user_state`` are keyed without their prefix (as stored); the
    prefix is put back here. Values are not copied.
    """
    merged = dict(session_state)
    for key, value in app_state.items():
        merged[APP_PREFIX + key] = value
    for key, value in user_state.items():
        merged[USER_PREFIX + key] = value
    return merged
