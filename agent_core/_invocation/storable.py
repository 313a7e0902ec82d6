"""Making what a model or a tool sent storable: nothing JSON text cannot hold reaches a store.

Two things pass for JSON data in Python and break a session store later: a string
holding a lone surrogate (it has no UTF-8 form) and an int with more digits than Python
turns into text (``sys.get_int_max_str_digits()``). :func:`clean` finds them and gives a
storable copy (surrogates escaped as ``\\udXXX`` text, such an int written as text
saying how long it was); the loop answers a call that held one with an error response,
and :func:`storable_event` is the last guard before any event is stored.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from pydantic_core import to_json

from tooling.integration import state_value_problem

from .._events import Event

__all__: list[str] = []

logger = logging.getLogger("agent_core")

#: An int of at most this many bits has at most 4,215 digits: under the digit limit
#: Python ships with (4,300), so it needs no closer look.
_SURELY_SHORT_INT_BITS = 14_000


def clean(value: Any) -> tuple[Any, str | None]:
    """``value`` made storable, and what was wrong with it (None: it was fine).

    When nothing is wrong, ``value`` itself is given back (no copy is made).
    """
    if _surely_fine(value):
        return value, None
    problems: list[str] = []
    try:
        cleaned = _clean(value, problems)
    except RecursionError:
        return "[a value nested too deep to store]", "a value nested too deep to store"
    return cleaned, (problems[0] if problems else None)


def _surely_fine(value: Any) -> bool:
    """The common case, checked in Rust: pydantic's encoder refuses lone surrogates, and an
    int past the digit limit would make the text longer than the limit."""
    if type(value) is str and value.isascii():
        return True
    try:
        text = to_json(value)
    except Exception:  # a surrogate, or a value pydantic cannot encode: look closer
        return False
    limit = sys.get_int_max_str_digits()
    return not limit or len(text) <= limit


def _clean(value: Any, problems: list[str]) -> Any:
    if isinstance(value, str):
        if value.isascii() or _utf8(value):
            return value
        problems.append("a string holding a lone surrogate (not UTF-8)")
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, bool) or not isinstance(value, int | dict | list | tuple):
        return value
    if isinstance(value, int):
        if value.bit_length() <= _SURELY_SHORT_INT_BITS:
            return value
        limit = sys.get_int_max_str_digits()
        if not limit or abs(value) < 10**limit:
            return value
        problems.append(f"an integer of more than {limit} digits")
        return f"[an integer of about {int(value.bit_length() * 0.30103)} digits]"
    if isinstance(value, dict):
        changed = False
        out: dict[Any, Any] = {}
        for key, item in value.items():
            new_key = _clean(key, problems) if isinstance(key, str) else key
            new_item = _clean(item, problems)
            changed = changed or new_key is not key or new_item is not item
            out[new_key] = new_item
        return out if changed else value
    items = [_clean(item, problems) for item in value]
    if all(new is old for new, old in zip(items, value, strict=True)):
        return value
    return items if isinstance(value, list) else tuple(items)


def state_problem(delta: dict[str, Any]) -> str | None:
    """Why ``delta`` cannot be stored as state (None: it can).

    State values are JSON: str, int, float (finite), bool, None, lists and str-keyed
    dicts of them (``ToolContext.state`` checks each write; this catches what was put in
    ``actions.state_delta`` directly).
    """
    for key, value in delta.items():
        problem = state_value_problem(key) or state_value_problem(value)
        if problem is not None:
            return f"state[{key!r}] holds {problem}"
    return None


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def storable_event(event: Event) -> Event:
    """Make ``event`` storable in place (the same object is returned).

    Looks at everything a model or a tool can fill: texts, function calls and responses,
    the state and artifact deltas, the error message. What cannot be stored is escaped
    (see :func:`clean`) and a warning is logged; events are normally fine and unchanged.
    """
    found: list[str] = []

    def fix(value: Any) -> Any:
        cleaned, problem = clean(value)
        if problem is not None:
            found.append(problem)
        return cleaned

    if event.content is not None:
        for part in event.content.parts:
            if part.text is not None:
                part.text = fix(part.text)
            call = part.function_call
            if call is not None:
                call.name = fix(call.name)
                call.args = fix(call.args)
                if call.id is not None:
                    call.id = fix(call.id)
            response = part.function_response
            if response is not None:
                response.name = fix(response.name)
                response.response = fix(response.response)
                if response.id is not None:
                    response.id = fix(response.id)
    actions = event.actions
    if actions.state_delta:
        actions.state_delta = fix(actions.state_delta)
    if actions.artifact_delta:
        actions.artifact_delta = fix(actions.artifact_delta)
    if event.error_message is not None:
        event.error_message = fix(event.error_message)
    if found:
        logger.warning(
            "event %s of %s held %s; stored with it escaped", event.id, event.author, found[0]
        )
    return event
