"""A fast check of arguments against the simple schemas most operations have.

jsonschema costs tens of microseconds per call even for two query parameters. Most
operations' arguments are scalars, enums and arrays of them, which a few Python
comparisons check. :func:`fast_checker` compiles such a schema into a function that
answers True only when jsonschema would accept the arguments; anything it is not sure
of (a keyword it does not know, a failure) goes to jsonschema, which also writes the
errors. A schema it cannot compile gives None: jsonschema alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

__all__: list[str] = []

Check = Callable[[Any], bool]

_ANNOTATIONS: Final = frozenset(
    {
        "description",
        "title",
        "default",
        "format",
        "deprecated",
        "readOnly",
        "writeOnly",
        "examples",
        "example",
    }
)
_ROOT_KEYS: Final = frozenset({"type", "properties", "required", "additionalProperties"})


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


_TYPES: Final[dict[str, Check]] = {
    "string": lambda v: isinstance(v, str),
    "integer": _is_integer,
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def _node(schema: Any) -> Check | None:
    if not isinstance(schema, dict):
        return None
    checks: list[Check] = []
    for key, value in schema.items():
        if key in _ANNOTATIONS:
            continue
        if key == "type":
            kinds = value if isinstance(value, list) else [value]
            if not all(isinstance(k, str) and k in _TYPES for k in kinds):
                return None
            checks.append(_any_of([_TYPES[k] for k in kinds]))
        elif key == "enum":
            if not isinstance(value, list) or not all(
                e is None or isinstance(e, str | int | float) for e in value
            ):
                return None
            checks.append(_one_of_values(list(value)))
        elif key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if isinstance(value, bool) or not isinstance(value, int | float):
                return None
            checks.append(_bound(key, value))
        elif key in ("minLength", "maxLength", "minItems", "maxItems"):
            if isinstance(value, bool) or not isinstance(value, int):
                return None
            checks.append(_length(key, value))
        elif key == "items":
            item = _node(value)
            if item is None:
                return None
            checks.append(_each(item))
        elif key == "anyOf":
            if not isinstance(value, list) or not value:
                return None
            branches = [_node(b) for b in value]
            if any(b is None for b in branches):
                return None
            checks.append(_any_of([b for b in branches if b is not None]))
        else:
            return None
    return _all_of(checks)


def _any_of(tests: list[Check]) -> Check:
    def check(value: Any) -> bool:
        return any(t(value) for t in tests)

    return check


def _all_of(tests: list[Check]) -> Check:
    def check(value: Any) -> bool:
        return all(t(value) for t in tests)

    return check


def _each(item: Check) -> Check:
    def check(value: Any) -> bool:
        return not isinstance(value, list) or all(item(v) for v in value)

    return check


def _one_of_values(allowed: list[Any]) -> Check:
    def check(value: Any) -> bool:
        if isinstance(value, list | dict):
            return False
        return any(isinstance(value, bool) == isinstance(e, bool) and value == e for e in allowed)

    return check


def _bound(key: str, limit: float) -> Check:
    def number(v: Any) -> bool:
        return isinstance(v, int | float) and not isinstance(v, bool)

    if key == "minimum":
        return lambda v: not number(v) or v >= limit
    if key == "maximum":
        return lambda v: not number(v) or v <= limit
    if key == "exclusiveMinimum":
        return lambda v: not number(v) or v > limit
    return lambda v: not number(v) or v < limit


def _length(key: str, limit: int) -> Check:
    kind = str if key.endswith("Length") else list
    if key.startswith("min"):
        return lambda v: not isinstance(v, kind) or len(v) >= limit
    return lambda v: not isinstance(v, kind) or len(v) <= limit


def fast_checker(schema: dict[str, Any]) -> Callable[[dict[str, Any]], bool] | None:
    """A function saying True only for arguments ``schema`` certainly accepts, or None
    when the schema holds more than scalars, enums and arrays of them."""
    if set(schema) - _ROOT_KEYS or schema.get("type") != "object":
        return None
    if schema.get("additionalProperties", True) is not False:
        return None
    properties = schema.get("properties") or {}
    required = schema.get("required") or []
    if not isinstance(properties, dict) or not isinstance(required, list):
        return None
    checks: dict[str, Check] = {}
    for name, sub in properties.items():
        check = _node(sub)
        if check is None:
            return None
        checks[name] = check
    needed = tuple(required)

    def valid(arguments: dict[str, Any]) -> bool:
        for name in needed:
            if name not in arguments:
                return False
        for name, value in arguments.items():
            check = checks.get(name)
            if check is None or not check(value):
                return False
        return True

    return valid
