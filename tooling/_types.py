"""Small value types shared by tools, contexts and the scheduler."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

if TYPE_CHECKING:
    from ._errors import ToolError

__all__ = [
    "Blob",
    "Confirmation",
    "Diagnostic",
    "FileRef",
    "MemoryHit",
    "ToolCall",
    "ToolProgress",
    "ToolResponse",
    "ToolResult",
]


class Blob:
    """Binary data with its MIME type, sent to the model as an inline part.

    A plain class on purpose (not a dataclass or model): result serialization treats it
    as an opaque value to lift out into a response part, never as a mapping of fields.
    """

    __slots__ = ("data", "mime_type")

    def __init__(self, mime_type: str, data: bytes) -> None:
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"Blob data must be bytes, not {type(data).__name__}")
        self.mime_type = mime_type
        self.data = bytes(data)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Blob):
            return NotImplemented
        return self.mime_type == other.mime_type and self.data == other.data

    def __hash__(self) -> int:
        return hash((self.mime_type, self.data))

    def __repr__(self) -> str:
        return f"Blob(mime_type={self.mime_type!r}, data=<{len(self.data)} bytes>)"


class FileRef:
    """A reference to a file by URI, sent to the model as a file part."""

    __slots__ = ("mime_type", "uri")

    def __init__(self, uri: str, mime_type: str) -> None:
        self.uri = uri
        self.mime_type = mime_type

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FileRef):
            return NotImplemented
        return self.uri == other.uri and self.mime_type == other.mime_type

    def __hash__(self) -> int:
        return hash((self.uri, self.mime_type))

    def __repr__(self) -> str:
        return f"FileRef(uri={self.uri!r}, mime_type={self.mime_type!r})"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """Something noticed while building a tool's spec or exporting it.

    ``code`` is one of ``description.conflict``, ``docstring.unknown_parameter``,
    ``docstring.undocumented_parameter``, ``schema.unsupported_return`` or
    ``export.lossy``; ``parameter`` names the parameter concerned, when there is one.
    """

    level: Literal["info", "warning"]
    code: str
    message: str
    parameter: str | None = None


@dataclass(frozen=True, slots=True)
class MemoryHit:
    """One result of :meth:`ToolContext.search_memory`."""

    text: str
    author: str
    session_id: str
    timestamp: float


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A model's request to run tool ``name`` with ``args`` (a dict or JSON text)."""

    id: str
    name: str
    args: Mapping[str, Any] | str = field(default_factory=dict)


@dataclass(slots=True)
class ToolResponse:
    """What one tool call produced.

    ``response`` is the dict the model receives; ``error`` the :class:`ToolError` when the
    call failed (``response`` is then its ``to_response()``); ``exception`` the original
    exception behind a failure; ``final`` is false for the intermediate responses of a
    long-running generator tool; ``parts`` the ``Blob``/``FileRef`` values lifted out of
    the result (referenced from ``response`` as ``{"part": i, "mime_type": ...}``).
    When a response was too large for the model, ``response`` is the cut version and
    ``full_response`` the whole value. ``folded_ids``: when calls with equal arguments to a
    ``read_only`` and ``idempotent`` tool were folded into one run, the ids of all of them
    (the one that ran first), on each of their responses; empty otherwise.
    ``waiting_for``: ``"confirmation"`` or ``"credential"`` when the call was not run (or
    not finished) because it waits for the user's answer (``response`` then holds the
    request, ``error`` has code ``tool.confirmation_required``); None otherwise.
    ``artifact``: what the tool kept for the application with :class:`ToolResult`
    (never part of ``response``, never sent to a model); None otherwise.
    """

    id: str
    name: str
    response: dict[str, Any]
    error: ToolError | None = None
    exception: BaseException | None = None
    final: bool = True
    duration_s: float = 0.0
    parts: tuple[Blob | FileRef, ...] = ()
    full_response: dict[str, Any] | None = None
    folded_ids: tuple[str, ...] = ()
    waiting_for: Literal["confirmation", "credential"] | None = None
    artifact: Any = None


ContentT = TypeVar("ContentT")


@dataclass(frozen=True, slots=True, init=False)
class ToolResult(Generic[ContentT]):
    """A tool's answer in two halves: ``content`` for the model, ``artifact`` for the app.

    A tool returns ``ToolResult(content, artifact=value)``: ``content`` is what the model
    receives (made into the response dict like any return value); ``artifact`` (any
    value: a data frame, the raw API answer, a file's bytes) stays with the application,
    on ``ToolResponse.artifact`` and, when it is JSON, on the stored function response.
    A return annotation ``ToolResult[T]`` gives the tool the response schema of ``T``.
    """

    content: ContentT
    artifact: Any

    def __init__(self, content: ContentT, *, artifact: Any = None) -> None:
        object.__setattr__(self, "content", content)
        object.__setattr__(self, "artifact", artifact)


@dataclass(frozen=True, slots=True)
class ToolProgress:
    """A chunk of progress text a tool emitted on one of its streams.

    ``dropped`` is non-zero on a truncation marker: the number of chunks lost in that run.
    """

    id: str
    name: str
    stream: str
    chunk: str
    dropped: int = 0


@dataclass(frozen=True, slots=True)
class Confirmation:
    """A user's answer to a confirmation request, keyed by call id when resuming."""

    confirmed: bool
    fingerprint: str
    payload: Any = None
