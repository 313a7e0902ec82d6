"""What JSON text can hold: checks for values bound for a model or a session store.

Two things look like JSON data and still break later (in a session store, in a model
provider's API): a string holding a lone surrogate (it has no UTF-8 form), and an int
with more digits than Python turns into text (``sys.get_int_max_str_digits()``). State
values are held to the stricter rule of plain JSON types, so that what a tool reads back
is what it wrote, whichever session service stores it.
"""

from __future__ import annotations

import functools
import math
import sys
from typing import Any

from pydantic_core import PydanticSerializationError, to_json

__all__ = ["state_value_problem"]

#: An int of at most this many bits has at most 4,215 digits: under the digit limit
#: Python ships with (4,300), so it needs no closer look.
SURELY_SHORT_INT_BITS = 14_000

#: How deep a state value may nest (deeper is refused, which also catches cycles).
MAX_STATE_DEPTH = 200


def unencodable(value: Any) -> str | None:
    """What in ``value`` (JSON data: dicts, lists, scalars) JSON text cannot hold, or None.

    pydantic's encoder refuses lone surrogates, and an int past the digit limit makes
    text longer than the limit: so a value whose JSON is short and encodes is fine (the
    common case, checked in Rust); only the others are walked.
    """
    try:
        text = to_json(value)
    except (PydanticSerializationError, ValueError, TypeError, RecursionError):
        return _walk(value) or "a value that cannot be written as JSON"
    limit = _limit()
    if limit and len(text) > limit:
        return _walk(value)
    return None


def _walk(value: Any) -> str | None:
    stack = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is str:
            if not item.isascii() and not _utf8(item):
                return _where(value, item, "a string holding a lone surrogate (not UTF-8)")
        elif kind is dict:
            extend(item)  # the keys
            extend(item.values())
        elif kind is list:
            extend(item)
        elif kind is int:
            if item.bit_length() > SURELY_SHORT_INT_BITS and _too_long(item):
                return _where(value, item, f"an integer of more than {_limit()} digits")
        elif kind in _SCALARS:
            continue
        elif isinstance(item, str | int | dict | list | tuple):  # subclasses, tuples
            extend([_plain(item)])
    return None


_SCALARS = frozenset({float, bool, type(None)})


def _plain(item: Any) -> Any:
    """A subclass instance (or tuple) as the plain JSON type it stands for."""
    if isinstance(item, bool):
        return bool(item)
    if isinstance(item, str):
        return str(item)
    if isinstance(item, int):
        return int(item)
    if isinstance(item, dict):
        return dict(item)
    return list(item)


def state_value_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a state value, or None.

    State values are JSON: str, int, float (finite), bool, None, lists and str-keyed
    dicts of them, nested at most ``MAX_STATE_DEPTH`` levels.
    """
    return _state_problem(value, 0)


def _state_problem(value: Any, depth: int) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return None if value.isascii() or _utf8(value) else "a string with a lone surrogate"
    if isinstance(value, int):
        return f"an integer of more than {_limit()} digits" if _too_long(value) else None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{value!r} (not a JSON number)"
    if depth >= MAX_STATE_DEPTH:
        return f"a value nested more than {MAX_STATE_DEPTH} levels deep (or cyclic)"
    if isinstance(value, list):
        for item in value:
            problem = _state_problem(item, depth + 1)
            if problem is not None:
                return problem
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"a dict key of type {type(key).__name__} (keys must be str)"
            problem = _state_problem(key, depth + 1) or _state_problem(item, depth + 1)
            if problem is not None:
                return problem
        return None
    return f"a {type(value).__name__}"


def printable(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters, lone surrogates written as escapes."""
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _limit() -> int:
    return sys.get_int_max_str_digits()


def _too_long(number: int) -> bool:
    if number.bit_length() <= SURELY_SHORT_INT_BITS:
        return False
    limit = _limit()
    return bool(limit) and abs(number) >= _power_of_ten(limit)


@functools.cache
def _power_of_ten(digits: int) -> int:
    return int(10**digits)


def _where(root: Any, target: Any, what: str) -> str:
    """``what``, with the path at which ``target`` sits in ``root`` (``at a.b[2]``)."""
    stack: list[tuple[Any, str]] = [(root, "")]
    while stack:
        item, path = stack.pop()
        if item is target:
            return f"{what} at {printable(path)}" if path else what
        if isinstance(item, dict):
            for key, child in item.items():
                if key is target:
                    return f"{what} in a key of {printable(path)}" if path else f"{what} in a key"
                stack.append((child, f"{path}.{key}" if path else str(key)))
        elif isinstance(item, list | tuple):
            stack.extend((child, f"{path}[{i}]") for i, child in enumerate(item))
    return what
