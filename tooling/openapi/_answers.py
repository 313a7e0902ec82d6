"""An HTTP answer to what the model is told.

* 2xx: a JSON object is the response dict; other JSON is ``{"result": value}``; text is
  ``{"result": text}``; binary content is a ``Blob`` part; an empty body is
  ``{"status": "success", "http_status": <status>}``.
* 4xx/5xx: ``ToolError(code="http.error")`` naming the method, path and status, with
  ``details={"status": <status>, "body": <the body, cut at 2 KiB>}``.
* An answer that is not what the operation describes (HTML where JSON was described,
  invalid JSON) or larger than the bound is ``tool.failed``, with the start of the body.

Bodies are read with a bound: an error body only up to 2 KiB (the rest is never read), a
successful one up to :data:`MAX_ANSWER_BYTES`.
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any, Final

from .._errors import ToolError
from .._types import Blob
from ._media import is_json_media_type
from ._operations import OperationPlan

if TYPE_CHECKING:
    import httpx2

__all__: list[str] = []

#: How much of an error body the model is shown.
ERROR_BODY_BYTES: Final = 2048
#: The largest successful answer read (larger ones are ``tool.failed``).
MAX_ANSWER_BYTES: Final = 8 * 1024 * 1024


async def read_bounded(response: httpx2.Response, limit: int) -> tuple[bytes, bool]:
    """Up to ``limit`` bytes of the body, and whether there was more (not read)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return b"".join(chunks)[:limit], True
    return b"".join(chunks), False


def _text(data: bytes, response: httpx2.Response) -> str:
    encoding = response.charset_encoding or "utf-8"
    try:
        return data.decode(encoding, errors="replace")
    except LookupError:
        return data.decode("utf-8", errors="replace")


def _cut(text: str, more: bool) -> str:
    return text + "… [cut at 2 KiB]" if more else text


def http_error(
    plan: OperationPlan, response: httpx2.Response, data: bytes, more: bool
) -> ToolError:
    """The ``http.error`` for a 4xx/5xx answer."""
    status = response.status_code
    body: Any = _cut(_text(data, response), more)
    if not more and is_json_media_type(response.headers.get("content-type", "")):
        with contextlib.suppress(ValueError):
            body = json.loads(data)
    reason = response.reason_phrase or ""
    return ToolError(
        f"{plan.label} answered HTTP {status}{' ' + reason if reason else ''}",
        code="http.error",
        details={"status": status, "body": body},
    )


def _expects_json(plan: OperationPlan) -> bool:
    types = plan.answer_media_types
    return bool(types) and all(is_json_media_type(t) for t in types)


def _unexpected(
    plan: OperationPlan, what: str, data: bytes, response: httpx2.Response
) -> ToolError:
    start = _text(data[:ERROR_BODY_BYTES], response)
    return ToolError(
        f"{plan.label} answered HTTP {response.status_code} with {what}; its body starts: "
        f"{start[:500]}",
        code="tool.failed",
    )


def success_answer(plan: OperationPlan, response: httpx2.Response, data: bytes) -> dict[str, Any]:
    """The response dict for a 2xx answer whose whole body is ``data``."""
    status = response.status_code
    if not data:
        return {"status": "success", "http_status": status}
    media_type = response.headers.get("content-type", "")
    essence = media_type.split(";", 1)[0].strip().lower()
    if is_json_media_type(media_type) or (not essence and _expects_json(plan)):
        try:
            value = json.loads(data)
        except ValueError:
            raise _unexpected(plan, "a body that is not valid JSON", data, response) from None
        return value if isinstance(value, dict) else {"result": value}
    if _expects_json(plan) and essence in ("text/html", "application/xhtml+xml"):
        raise _unexpected(plan, f"{essence} where the API describes JSON", data, response)
    if essence.startswith("text/") or essence.endswith(("+xml", "/xml")) or not essence:
        return {"result": _text(data, response)}
    return {"result": Blob(essence, data)}
