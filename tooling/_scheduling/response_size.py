"""Responses too large for a model are cut, with a marker; the whole value is kept aside."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic_core import to_json

from .._errors import ToolError

if TYPE_CHECKING:
    pass
from .._types import ToolResponse

__all__: list[str] = []


#: A response over this many bytes of JSON is cut for the model.
MAX_RESPONSE_BYTES = 256 * 1024


SMALL_SCALARS = frozenset({int, float, bool, type(None)})


def clearly_small(body: dict[str, Any]) -> bool:
    """True for a few scalars or short strings: far under the limit, no need to measure."""
    if len(body) > 32:
        return False
    for value in body.values():
        kind = type(value)
        if kind is str:
            if len(value) > 1024:
                return False
        elif kind not in SMALL_SCALARS:
            return False
    return True


def cut_for_model(response: ToolResponse) -> ToolResponse:
    """Cut a response over the size limit for the model, keeping the whole on the side."""
    body = response.response
    if clearly_small(body):
        return response
    text = to_json(body, fallback=str)
    if len(text) <= MAX_RESPONSE_BYTES:
        return response
    error = ToolError(
        f"the response was {len(text)} bytes of JSON, over the {MAX_RESPONSE_BYTES}-byte "
        "limit; 'partial' holds its beginning",
        code="tool.output_too_large",
    )
    cut = {**error.to_response(), "status": "tool.output_too_large", "partial": ""}
    # 'partial' is JSON text inside a JSON string: its quotes and backslashes are escaped
    # again, so the cut response itself must be measured, not the text kept.
    room = MAX_RESPONSE_BYTES - len(to_json(cut))
    end = room
    while True:
        keep = text[:end].decode("utf-8", "ignore")
        over = len(to_json(keep)) - 2 - room  # without the string's own quotes
        if over <= 0:
            break
        end -= over  # each byte dropped shortens the escaped text by at least one
    cut["partial"] = keep
    response.full_response = body
    response.response = cut
    response.error = error
    return response
