"""``State``: the session state as one tool call sees it, with the call's own writes."""

from __future__ import annotations

import threading
from collections import ChainMap
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, cast, overload

from ._jsonsafe import state_value_problem

if TYPE_CHECKING:
    from _typeshed import SupportsKeysAndGetItem

__all__: list[str] = []

_NO_DELETE = (
    "state keys cannot be deleted: a tool call's state only records writes; "
    "assign None to the key instead (state[{key!r}] = None)"
)


class State(MutableMapping[str, Any]):
    """A dict-like view of the session state plus one tool call's writes.

    Reads see ``base`` (the session state, never modified here) overlaid with the
    call's ``delta``; writes go only into the delta and are visible to later reads.
    The delta is what the framework merges back into the session when the call ends.

    Keys are strings. By convention a key's prefix says how long it lives:
    ``app:`` (shared by every user of the app), ``user:`` (shared by one user's
    sessions), ``temp:`` (this invocation only, never persisted), or none (this
    session). Other ``prefix:`` forms are allowed; nothing beyond ``str`` is checked.

    Keys cannot be deleted (``del``, ``pop``, ``popitem`` and ``clear`` raise
    ``TypeError``): a delta can only say "this key now has this value", so assign
    ``None`` instead.

    Values must be JSON: str, int, float (finite), bool, None, lists and str-keyed dicts
    of them. Anything else (a datetime, a tuple, a set, NaN) raises ``TypeError`` at the
    write, so a value reads back the same from every session service.

    Values are stored as given, not copied: changing a mutable value in place (appending
    to a list read from the state) is not recorded. Assign the new value to record it.

    Every operation takes an internal lock, so a tool's worker threads may read and write
    the same ``State`` concurrently. ``base`` itself is kept by reference and must not be
    changed while the call runs.
    """

    #: Prefix of keys shared by every user of the app.
    APP_PREFIX = "app:"
    #: Prefix of keys shared by all sessions of one user.
    USER_PREFIX = "user:"
    #: Prefix of keys that last one invocation and are never persisted.
    TEMP_PREFIX = "temp:"

    __slots__ = ("_base", "_delta", "_lock")

    def __init__(
        self,
        base: Mapping[str, Any] | None = None,
        delta: dict[str, Any] | None = None,
    ) -> None:
        """Overlay ``delta`` (a new dict when omitted; kept by reference) on ``base``."""
        self._base: Mapping[str, Any] = base if base is not None else {}
        self._delta: dict[str, Any] = delta if delta is not None else {}
        self._lock = threading.RLock()

    # -- reads ---------------------------------------------------------------------------

    def __getitem__(self, key: str) -> Any:
        with self._lock:
            if key in self._delta:
                return self._delta[key]
            return self._base[key]

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._delta or key in self._base

    def __iter__(self) -> Iterator[str]:
        # Iterate a snapshot: other threads may write while the caller iterates.
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())

    def _keys(self) -> list[str]:
        with self._lock:
            keys = dict.fromkeys(self._base)
            keys.update(dict.fromkeys(self._delta))
            return list(keys)

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key`` (the call's write if any, else the session's), or ``default``."""
        with self._lock:
            if key in self._delta:
                return self._delta[key]
            return self._base.get(key, default)

    def to_dict(self) -> dict[str, Any]:
        """A new dict of the merged view: the session state with this call's writes applied."""
        with self._lock:
            merged = dict(self._base)
            merged.update(self._delta)
            return merged

    @property
    def delta(self) -> dict[str, Any]:
        """The call's writes (the very dict given as ``delta``, e.g. ``actions.state_delta``)."""
        return self._delta

    def has_delta(self) -> bool:
        """Whether this call has written anything."""
        with self._lock:
            return bool(self._delta)

    # -- writes --------------------------------------------------------------------------

    def __setitem__(self, key: str, value: Any) -> None:
        _check_write(key, value)
        with self._lock:
            self._delta[key] = value

    def setdefault(self, key: str, default: Any = None, /) -> Any:
        """``state[key]`` if present, else set it to ``default`` (atomically) and return it."""
        _check_write(key, default)
        with self._lock:
            if key in self._delta:
                return self._delta[key]
            if key in self._base:
                return self._base[key]
            self._delta[key] = default
            return default

    @overload
    def update(self, other: SupportsKeysAndGetItem[str, Any], /, **kwargs: Any) -> None: ...
    @overload
    def update(self, other: Iterable[tuple[str, Any]], /, **kwargs: Any) -> None: ...
    @overload
    def update(self, /, **kwargs: Any) -> None: ...

    def update(self, other: Any = (), /, **kwargs: Any) -> None:
        """Write several keys at once, like ``dict.update``; other threads see all or none.

        Every value is checked first: one that is not JSON writes nothing.
        """
        items = dict(other, **kwargs)
        for key, value in items.items():
            _check_write(key, value)
        with self._lock:
            self._delta.update(items)

    def __delitem__(self, key: str) -> NoReturn:
        raise TypeError(_NO_DELETE.format(key=key))

    def pop(self, key: str, default: Any = None, /) -> NoReturn:
        """Not supported: raises ``TypeError`` (assign ``None`` instead)."""
        raise TypeError(_NO_DELETE.format(key=key))

    def popitem(self) -> NoReturn:
        """Not supported: raises ``TypeError`` (assign ``None`` instead)."""
        raise TypeError(_NO_DELETE.format(key="<key>"))

    def clear(self) -> NoReturn:
        """Not supported: raises ``TypeError`` (assign ``None`` instead)."""
        raise TypeError(_NO_DELETE.format(key="<key>"))

    def __repr__(self) -> str:
        return f"State({self.to_dict()!r})"


def show_earlier_writes(state: State, writes: Sequence[dict[str, Any]]) -> None:
    """Let ``state`` see ``writes`` (newest first) over its base, under its own writes."""
    state._base = ChainMap(*writes, cast("dict[str, Any]", state._base))


def _check_write(key: Any, value: Any) -> None:
    if not isinstance(key, str):
        raise TypeError(f"state keys must be str, not {type(key).__name__}")
    problem = state_value_problem(key) or state_value_problem(value)
    if problem is not None:
        raise TypeError(
            f"state[{key!r}] must be JSON (str, int, float, bool, None, lists and str-keyed "
            f"dicts of them); this value holds {problem}"
        )
