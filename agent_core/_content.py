"""Conversation content: ``Content`` made of ``Part``s, in the Gemini wire shape.

These are our own small types; ``google.genai`` types are built from them only at the
Gemini boundary (``agent_core.models.gemini``), so importing this costs nothing extra.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from tooling import Blob, FileRef

__all__ = ["Content", "FunctionCall", "FunctionResponse", "Part", "ProviderPart"]


@dataclass(slots=True)
class FunctionCall:
    """A model's request to call tool ``name`` with ``args``; ``id`` pairs it with its response.

    ``args`` is a dict when the model behaved; whatever else it sent (a list, a text, a
    number, null) is kept as sent, and the loop answers the call with
    ``tool.invalid_arguments``.
    """

    id: str | None
    name: str
    args: Any = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_text(self.name, "a function call's name")
        if self.id is not None:
            _check_text(self.id, "a function call's id")

    def to_dict(self) -> dict[str, Any]:
        """The Gemini wire shape."""
        out: dict[str, Any] = {"name": self.name, "args": self.args}
        if self.id is not None:
            out["id"] = self.id
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FunctionCall:
        """Read the wire shape (``{"id", "name", "args"}``)."""
        args = data.get("args", {})
        return cls(
            id=data.get("id"),
            name=_required(data, "name", "function call"),
            args=dict(args) if isinstance(args, dict) else args,
        )


@dataclass(slots=True)
class FunctionResponse:
    """A tool's answer to the call with the same ``id``.

    ``will_continue`` is true on the intermediate responses of a long-running tool;
    ``parts`` carries binary data or file references the tool returned. ``artifact`` is
    what the tool kept for the application (a ``ToolResult``'s artifact, as JSON
    values): stored with the event, never sent to a model.
    """

    id: str | None
    name: str
    response: dict[str, Any]
    will_continue: bool | None = None
    parts: list[Part] | None = None
    artifact: Any = None

    def __post_init__(self) -> None:
        _check_text(self.name, "a function response's name")
        if not isinstance(self.response, dict):
            raise TypeError(
                f"a function response's response must be a dict, not {type(self.response).__name__}"
            )
        if self.parts is not None:
            self.parts = _parts(self.parts, "a function response's parts")

    def to_dict(self) -> dict[str, Any]:
        """The Gemini wire shape (camelCase keys)."""
        out: dict[str, Any] = {"name": self.name, "response": self.response}
        if self.id is not None:
            out["id"] = self.id
        if self.will_continue is not None:
            out["willContinue"] = self.will_continue
        if self.parts:
            out["parts"] = [p.to_dict() for p in self.parts]
        if self.artifact is not None:
            out["artifact"] = self.artifact
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FunctionResponse:
        """Read the wire shape (``{"id", "name", "response", "willContinue", "parts",
        "artifact"}``)."""
        parts = data.get("parts")
        return cls(
            id=data.get("id"),
            name=_required(data, "name", "function response"),
            response=dict(data.get("response") or {}),
            will_continue=data.get("willContinue", data.get("will_continue")),
            parts=[Part.from_dict(p) for p in parts] if parts else None,
            artifact=data.get("artifact"),
        )


@dataclass(slots=True)
class ProviderPart:
    """Output of a provider-run tool, kept exactly as the provider sent it.

    ``provider`` is ``"gemini"``, ``"openai"`` or ``"anthropic"``; ``data`` is the
    provider's own JSON for it (a Gemini part such as ``executableCode``, an OpenAI
    output item such as ``web_search_call``, an Anthropic block such as
    ``server_tool_use``); ``kind`` names it (the item or block type). It goes back to the
    same provider verbatim; another provider gets ``summary`` as text instead.
    """

    provider: str
    kind: str
    data: dict[str, Any]
    summary: str = ""

    def __post_init__(self) -> None:
        _check_text(self.provider, "a provider part's provider")
        _check_text(self.kind, "a provider part's kind")
        if not isinstance(self.data, dict):
            kind = type(self.data).__name__
            raise TypeError(f"a provider part's data must be a dict, not {kind}")

    def stand_in(self) -> str:
        """The text another provider is sent in its place."""
        what = f"[{self.kind} run by {self.provider}]"
        return f"{what} {self.summary}" if self.summary else what

    def to_dict(self) -> dict[str, Any]:
        """The wire shape (``{"provider", "kind", "data", "summary"}``)."""
        out: dict[str, Any] = {"provider": self.provider, "kind": self.kind, "data": self.data}
        if self.summary:
            out["summary"] = self.summary
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ProviderPart:
        """Read the wire shape."""
        return cls(
            provider=_required(data, "provider", "provider part"),
            kind=_required(data, "kind", "provider part"),
            data=dict(_required(data, "data", "provider part")),
            summary=str(data.get("summary") or ""),
        )


@dataclass(slots=True)
class Part:
    """One piece of content: text, a function call or response, inline data or a file,
    or what a provider-run tool produced (``provider_part``)."""

    text: str | None = None
    function_call: FunctionCall | None = None
    function_response: FunctionResponse | None = None
    inline_data: Blob | None = None
    file_data: FileRef | None = None
    thought: bool | None = None
    #: Opaque bytes some models attach to a part and need back unchanged.
    thought_signature: bytes | None = None
    #: What a provider-run tool (a web search, code run by the provider) produced.
    provider_part: ProviderPart | None = None

    def __post_init__(self) -> None:
        # google.genai users write the nested fields as dicts: read them here, so that a
        # wrong value is a TypeError now, not an AttributeError deep in the loop.
        if self.function_call is not None and type(self.function_call) is not FunctionCall:
            self.function_call = _nested(self.function_call, FunctionCall, "function_call")
        if self.function_response is not None and type(self.function_response) is not (
            FunctionResponse
        ):
            self.function_response = _nested(
                self.function_response, FunctionResponse, "function_response"
            )
        if self.inline_data is not None and not isinstance(self.inline_data, Blob):
            self.inline_data = _blob(_wire(self.inline_data, "inline_data"))
        if self.file_data is not None and not isinstance(self.file_data, FileRef):
            self.file_data = _file_ref(_wire(self.file_data, "file_data"))
        if self.provider_part is not None and type(self.provider_part) is not ProviderPart:
            self.provider_part = _nested(self.provider_part, ProviderPart, "provider_part")

    @classmethod
    def from_text(cls, text: str) -> Part:
        """A text part."""
        return cls(text=text)

    @classmethod
    def from_function_call(cls, name: str, args: dict[str, Any], id: str | None = None) -> Part:
        """A part holding a call of tool ``name`` with ``args``."""
        return cls(function_call=FunctionCall(id=id, name=name, args=dict(args)))

    @classmethod
    def from_function_response(
        cls, name: str, response: dict[str, Any], id: str | None = None
    ) -> Part:
        """A part holding the ``response`` of tool ``name`` to call ``id``."""
        return cls(function_response=FunctionResponse(id=id, name=name, response=response))

    def to_dict(self) -> dict[str, Any]:
        """The Gemini wire shape (camelCase keys)."""
        out: dict[str, Any] = {}
        if self.text is not None:
            out["text"] = self.text
        if self.thought is not None:
            out["thought"] = self.thought
        if self.thought_signature is not None:
            out["thoughtSignature"] = base64.b64encode(self.thought_signature).decode("ascii")
        if self.function_call is not None:
            out["functionCall"] = self.function_call.to_dict()
        if self.function_response is not None:
            out["functionResponse"] = self.function_response.to_dict()
        if self.inline_data is not None:
            out["inlineData"] = {
                "mimeType": self.inline_data.mime_type,
                "data": base64.b64encode(self.inline_data.data).decode("ascii"),
            }
        if self.file_data is not None:
            out["fileData"] = {"fileUri": self.file_data.uri, "mimeType": self.file_data.mime_type}
        if self.provider_part is not None:
            out["providerPart"] = self.provider_part.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Part:
        """Read the wire shape (camelCase; snake_case is accepted too)."""
        call = data.get("functionCall", data.get("function_call"))
        response = data.get("functionResponse", data.get("function_response"))
        inline = data.get("inlineData", data.get("inline_data"))
        file = data.get("fileData", data.get("file_data"))
        signature = data.get("thoughtSignature", data.get("thought_signature"))
        provider = data.get("providerPart", data.get("provider_part"))
        return cls(
            provider_part=ProviderPart.from_dict(provider) if provider is not None else None,
            thought_signature=base64.b64decode(signature) if signature else None,
            text=data.get("text"),
            thought=data.get("thought"),
            function_call=FunctionCall.from_dict(call) if call is not None else None,
            function_response=FunctionResponse.from_dict(response)
            if response is not None
            else None,
            inline_data=_blob(inline) if inline is not None else None,
            file_data=_file_ref(file) if file is not None else None,
        )


@dataclass(slots=True)
class Content:
    """A turn of the conversation: ``role`` (``"user"`` or ``"model"``) and its parts."""

    role: str
    parts: list[Part] = field(default_factory=list)

    def __post_init__(self) -> None:
        for part in self.parts:
            if type(part) is not Part:
                self.parts = _parts(self.parts, "a content's parts")
                return

    @property
    def text(self) -> str:
        """The text parts joined (thoughts left out)."""
        return "".join(p.text for p in self.parts if p.text is not None and not p.thought)

    def to_dict(self) -> dict[str, Any]:
        """The Gemini wire shape."""
        return {"role": self.role, "parts": [p.to_dict() for p in self.parts]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Content:
        """Read the wire shape (``{"role", "parts"}``)."""
        return cls(
            role=data.get("role", "user"), parts=[Part.from_dict(p) for p in data.get("parts", [])]
        )


# -- reading wire-shape dicts ------------------------------------------------------------------


def _check_text(value: object, what: str) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be str, not {type(value).__name__}")


def _required(data: dict[str, Any], key: str, what: str) -> Any:
    if key not in data:
        raise TypeError(f"a {what} needs a {key!r}; got keys {sorted(map(str, data))}")
    return data[key]


def _wire(value: object, field_name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(
            f"Part.{field_name} must be its type or its wire-shape dict, not {type(value).__name__}"
        )
    return value


def _nested(value: object, kind: type[Any], field_name: str) -> Any:
    if isinstance(value, kind):
        return value
    return kind.from_dict(_wire(value, field_name))


def _parts(parts: Any, what: str) -> list[Part]:
    if not isinstance(parts, list | tuple):
        raise TypeError(f"{what} must be a list of Part, not {type(parts).__name__}")
    out: list[Part] = []
    for part in parts:
        if isinstance(part, Part):
            out.append(part)
        elif isinstance(part, dict):
            out.append(Part.from_dict(part))
        else:
            raise TypeError(f"{what} must be Parts or their wire-shape dicts, not {part!r:.80}")
    return out


def _blob(data: dict[str, Any]) -> Blob:
    raw = data.get("data", b"")
    if isinstance(raw, str):
        raw = base64.b64decode(raw)
    if not isinstance(raw, bytes | bytearray):
        raise TypeError(f"inline data must be bytes or base64 text, not {type(raw).__name__}")
    mime = data.get("mimeType", data.get("mime_type", "application/octet-stream"))
    return Blob(mime, bytes(raw))


def _file_ref(data: dict[str, Any]) -> FileRef:
    return FileRef(
        data.get("fileUri", data.get("file_uri", "")),
        data.get("mimeType", data.get("mime_type", "application/octet-stream")),
    )
