"""Response parts (``Blob``, ``FileRef``) as JSON, to cross to and from a worker process."""

from __future__ import annotations

import base64

from .._types import Blob, FileRef

__all__: list[str] = []


def encode_parts(parts: tuple[Blob | FileRef, ...]) -> list[dict[str, str]]:
    """``Blob``/``FileRef`` parts as JSON objects (blob data in base64)."""
    return [
        {"blob": base64.b64encode(p.data).decode("ascii"), "mime_type": p.mime_type}
        if isinstance(p, Blob)
        else {"file": p.uri, "mime_type": p.mime_type}
        for p in parts
    ]


def decode_parts(encoded: list[dict[str, str]]) -> tuple[Blob | FileRef, ...]:
    """The parts :func:`encode_parts` encoded."""
    return tuple(
        Blob(p["mime_type"], base64.b64decode(p["blob"]))
        if "blob" in p
        else FileRef(p["file"], p["mime_type"])
        for p in encoded
    )
