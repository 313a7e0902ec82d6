"""Tool results to MCP ``CallToolResult``s and back.

Serving: the response dict is ``structuredContent`` and its JSON one text block; each
``Blob`` part is an image or audio block (by MIME type) or an embedded resource, each
``FileRef`` a resource link. An error sets ``isError`` and travels as its JSON text only:
clients built on the TypeScript SDK check ``structuredContent`` against the tool's
``outputSchema`` even on an error, which an error response never matches (the Python
SDK's own server sends errors as text too).

Consuming: ``structuredContent`` is the response dict, else the text blocks are
``{"result": text}``; image, audio and embedded binary blocks become ``Blob`` values
(put back where the server's response dict refers to them by ``{"part": i}``), resource
links ``FileRef`` values. ``isError`` becomes a ``ToolError`` with the server's text.

A ``ToolResult``'s artifact travels in the result's ``_meta`` under ``"artifact"`` (when
it is JSON), both ways: what the model sees stays in the content.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import mcp_types as types
from pydantic_core import to_json, to_jsonable_python

from .._errors import ToolError
from .._types import Blob, FileRef, ToolResponse

__all__: list[str] = []


def _text(body: dict[str, Any]) -> str:
    """Compact JSON (a response dict is JSON-safe already; anything else is shown as text)."""
    return to_json(body, fallback=str).decode("utf-8")


def _part_block(index: int, part: Blob | FileRef) -> types.ContentBlock:
    if isinstance(part, FileRef):
        name = part.uri.rstrip("/").rsplit("/", 1)[-1] or part.uri
        return types.ResourceLink(name=name, uri=part.uri, mime_type=part.mime_type)
    data = base64.b64encode(part.data).decode("ascii")
    if part.mime_type.startswith("image/"):
        return types.ImageContent(data=data, mime_type=part.mime_type)
    if part.mime_type.startswith("audio/"):
        return types.AudioContent(data=data, mime_type=part.mime_type)
    resource = types.BlobResourceContents(uri=f"part:{index}", mime_type=part.mime_type, blob=data)
    return types.EmbeddedResource(resource=resource)


def to_call_result(
    response: ToolResponse, body: dict[str, Any] | None = None
) -> types.CallToolResult:
    """The ``CallToolResult`` for a final response (``body`` replaces its dict if given)."""
    shown = response.response if body is None else body
    content: list[types.ContentBlock] = [types.TextContent(text=_text(shown))]
    content.extend(_part_block(i, part) for i, part in enumerate(response.parts))
    meta = _artifact_meta(response.artifact) if response.artifact is not None else None
    if response.error is not None:  # text only: see the module docs
        return types.CallToolResult(content=content, is_error=True, meta=meta)
    return types.CallToolResult(content=content, structured_content=shown, meta=meta)


#: The ``_meta`` key under which a ``ToolResult``'s artifact travels.
ARTIFACT_KEY = "artifact"


def _artifact_meta(artifact: Any) -> dict[str, Any] | None:
    try:
        value = to_jsonable_python(artifact, bytes_mode="base64", inf_nan_mode="null")
        to_json(value)
    except Exception:  # not JSON: kept by the server's ToolResponse only
        return None
    return {ARTIFACT_KEY: value}


def artifact_from_result(result: types.CallToolResult) -> Any:
    """The artifact a server put in the result's ``_meta`` (None: none)."""
    meta = result.meta
    if isinstance(meta, dict):
        return meta.get(ARTIFACT_KEY)
    return None


def _decode(data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ToolError(f"the MCP server sent content that is not base64: {exc}") from None


def _parts(content: list[types.ContentBlock]) -> list[Blob | FileRef]:
    parts: list[Blob | FileRef] = []
    for block in content:
        if isinstance(block, types.ImageContent | types.AudioContent):
            parts.append(Blob(block.mime_type, _decode(block.data)))
        elif isinstance(block, types.EmbeddedResource) and isinstance(
            block.resource, types.BlobResourceContents
        ):
            mime = block.resource.mime_type or "application/octet-stream"
            parts.append(Blob(mime, _decode(block.resource.blob)))
        elif isinstance(block, types.ResourceLink):
            parts.append(FileRef(block.uri, block.mime_type or "application/octet-stream"))
    return parts


def _texts(content: list[types.ContentBlock]) -> list[str]:
    texts: list[str] = []
    for block in content:
        if isinstance(block, types.TextContent):
            texts.append(block.text)
        elif isinstance(block, types.EmbeddedResource) and isinstance(
            block.resource, types.TextResourceContents
        ):
            texts.append(block.resource.text)
    return texts


def _put_back(value: Any, parts: list[Blob | FileRef]) -> Any:
    """``value`` with each ``{"part": i, "mime_type": ...}`` replaced by ``parts[i]``."""
    if isinstance(value, dict):
        index = value.get("part")
        if (
            len(value) == 2
            and type(index) is int
            and isinstance(value.get("mime_type"), str)
            and 0 <= index < len(parts)
        ):
            return parts[index]
        return {k: _put_back(v, parts) for k, v in value.items()}
    if isinstance(value, list):
        return [_put_back(v, parts) for v in value]
    return value


def response_from_result(result: types.CallToolResult) -> dict[str, Any]:
    """The response dict for a successful result (``Blob``/``FileRef`` values in place)."""
    parts = _parts(result.content)
    structured = result.structured_content
    if isinstance(structured, dict):
        return _put_back(structured, parts) if parts else structured
    if structured is not None:
        return {"result": _put_back(structured, parts) if parts else structured}
    body: dict[str, Any] = {"result": "\n".join(_texts(result.content))}
    if parts:
        body["parts"] = parts
    return body


def error_from_result(result: types.CallToolResult) -> ToolError:
    """The ``ToolError`` for a result with ``isError`` set.

    The message is the server's text (written for the model). When the structured
    content is an error response of this package's shape, its code and details are kept.
    """
    text = "\n".join(_texts(result.content))
    structured = result.structured_content
    if structured is None and text.startswith("{"):
        try:
            structured = json.loads(text)
        except ValueError:
            structured = None
    if isinstance(structured, dict) and isinstance(structured.get("error"), dict):
        error = structured["error"]
        code, message = error.get("code"), error.get("message")
        if isinstance(code, str) and isinstance(message, str):
            details = error.get("details")
            return ToolError(
                message,
                code=code,
                details=details if isinstance(details, list | dict) else None,
            )
    return ToolError(text or "the MCP server reported an error", code="tool.failed")
