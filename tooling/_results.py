"""A tool's return value made into the response dict a model receives."""

from __future__ import annotations

import math
from typing import Any

from pydantic_core import PydanticSerializationError, to_jsonable_python

from ._errors import ToolError
from ._jsonsafe import SURELY_SHORT_INT_BITS, unencodable
from ._types import Blob, FileRef, ToolResult

__all__: list[str] = []


def split_result(value: Any) -> tuple[Any, Any]:
    """``(content, artifact)`` of a tool's return value: a ``ToolResult``'s two halves,
    else the value itself and no artifact."""
    if type(value) is ToolResult:
        return value.content, value.artifact
    return value, None


#: A ``Blob`` larger than this cannot go to the model inline.
MAX_INLINE_BYTES = 10 * 1024 * 1024

_PLAIN = frozenset({str, int, bool, type(None)})


def to_response(
    value: Any, tool_name: str | None
) -> tuple[dict[str, Any], tuple[Blob | FileRef, ...]]:
    """JSON-safe ``value`` (a dict, else ``{"result": value}``) and the parts lifted out of it.

    Pydantic models, dataclasses, enums, datetimes, UUIDs, paths and decimals become JSON
    values; bytes become base64 text; non-finite floats become null; an instance of a
    plain class becomes a dict of its public fields (see :func:`_public_fields`). Each
    ``Blob`` or ``FileRef`` is replaced by ``{"part": i, "mime_type": ...}``, ``i`` its
    index in the returned parts. Raises ``ToolError`` (``tool.failed``) for what cannot be
    made JSON, logged at WARNING as every failure is, naming ``tool_name`` (None: the
    caller logs it, as a worker process's parent does).
    """
    try:
        return _to_response(value)
    except UnsendableResult as error:
        if tool_name is not None:
            log_result_failure(tool_name, error)
        raise


class UnsendableResult(ToolError):
    """A tool's result that cannot be sent to the model (``tool.failed``)."""


def log_result_failure(tool_name: str, error: ToolError) -> None:
    """Log a result that could not be sent to the model, as every failure is logged."""
    import logging  # on the failure path only

    logging.getLogger("tooling").warning("tool %r failed: %s", tool_name, error.message)


def _to_response(value: Any) -> tuple[dict[str, Any], tuple[Blob | FileRef, ...]]:
    kind = type(value)
    if kind in _PLAIN or (kind is float and math.isfinite(value)):
        if (kind is str and not value.isascii()) or (
            kind is int and value.bit_length() > SURELY_SHORT_INT_BITS
        ):
            _refuse_unencodable(value)
        return {"result": value}, ()

    parts: list[Blob | FileRef] = []
    problems: list[ToolError] = []

    def lift(obj: Any) -> Any:
        if isinstance(obj, Blob | FileRef):
            if isinstance(obj, Blob) and len(obj.data) > MAX_INLINE_BYTES:
                problems.append(
                    UnsendableResult(
                        f"the tool returned {len(obj.data)} bytes of {obj.mime_type}; inline "
                        f"data is limited to {MAX_INLINE_BYTES} bytes (return a FileRef instead)"
                    )
                )
                return None
            parts.append(obj)
            return {"part": len(parts) - 1, "mime_type": obj.mime_type}
        from pathlib import PurePath

        if isinstance(obj, PurePath):  # pydantic knows Path but not the pure flavours
            return str(obj)
        fields = _public_fields(obj)
        if fields is None:
            raise TypeError(f"{type(obj).__name__} is not JSON-serializable")
        if id(obj) in encoding:  # pydantic sees a fresh dict each time: find cycles here
            raise ValueError(f"a {type(obj).__name__} that contains itself")
        encoding.add(id(obj))
        try:
            return to_jsonable_python(
                fields, fallback=lift, bytes_mode="base64", inf_nan_mode="null"
            )
        finally:
            encoding.discard(id(obj))

    encoding: set[int] = set()

    try:
        jsonable = to_jsonable_python(
            value, fallback=lift, bytes_mode="base64", inf_nan_mode="null"
        )
    except (PydanticSerializationError, TypeError, ValueError, RecursionError) as exc:
        if problems:
            raise problems[0] from None
        raise UnsendableResult(f"the tool's result cannot be sent to the model: {exc}") from exc
    if problems:
        raise problems[0]
    _refuse_unencodable(jsonable)
    if type(jsonable) is not dict:
        jsonable = {"result": jsonable}
    return jsonable, tuple(parts)


def _public_fields(obj: Any) -> dict[str, Any] | None:
    """The public fields of an instance of a plain class, or None when it has none.

    Its instance attributes (``vars(obj)``, then ``__slots__`` along the class's bases)
    whose names do not start with ``_``, in definition order. Classes, functions, modules
    and the like have no fields here: they are not data.
    """
    import inspect

    if isinstance(obj, type) or inspect.isroutine(obj) or inspect.ismodule(obj):
        return None
    fields: dict[str, Any] = {}
    found = False
    try:
        attributes = vars(obj)
    except TypeError:
        pass
    else:
        found = True
        fields.update((k, v) for k, v in attributes.items() if not k.startswith("_"))
    for klass in type(obj).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name in ("__dict__", "__weakref__"):
                continue
            found = True
            if not name.startswith("_") and hasattr(obj, name):
                fields[name] = getattr(obj, name)
    return fields if found and fields else None


def _refuse_unencodable(value: Any) -> None:
    problem = unencodable(value)
    if problem is not None:
        raise UnsendableResult(f"the tool's result cannot be sent to the model: it holds {problem}")
