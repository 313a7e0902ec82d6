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


def to_response(value: Any) -> tuple[dict[str, Any], tuple[Blob | FileRef, ...]]:
    """JSON-safe ``value`` (a dict, else ``{"result": value}``) and the parts lifted out of it.

    Pydantic models, dataclasses, enums, datetimes, UUIDs, paths and decimals become JSON
    values; bytes become base64 text; non-finite floats become null. Each ``Blob`` or
    ``FileRef`` is replaced by ``{"part": i, "mime_type": ...}``, ``i`` its index in the
    returned parts. Raises ``ToolError`` (``tool.failed``) for what cannot be made JSON.
    """
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
                    ToolError(
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
        raise TypeError(f"{type(obj).__name__} is not JSON-serializable")

    try:
        jsonable = to_jsonable_python(
            value, fallback=lift, bytes_mode="base64", inf_nan_mode="null"
        )
    except (PydanticSerializationError, TypeError, ValueError, RecursionError) as exc:
        if problems:
            raise problems[0] from None
        raise ToolError(f"the tool's result cannot be sent to the model: {exc}") from exc
    if problems:
        raise problems[0]
    _refuse_unencodable(jsonable)
    if type(jsonable) is not dict:
        jsonable = {"result": jsonable}
    return jsonable, tuple(parts)


def _refuse_unencodable(value: Any) -> None:
    problem = unencodable(value)
    if problem is not None:
        import logging  # on the failure path only

        message = f"the tool's result cannot be sent to the model: it holds {problem}"
        logging.getLogger("tooling").warning("%s", message)
        raise ToolError(message)
