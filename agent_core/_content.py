"""Conversation content: ``Content`` made of ``Part``s, in the Gemini wire shape.

These are our own small types; ``google.genai`` types are built from them only at the
Gemini boundary (``agent_core.models.gemini``), so importing this costs nothing extra.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from tooling import Blob, FileRef

__all__ = ["Content", "FunctionCall", "FunctionResponse", "Part"]


@dataclass(slots=True)
class FunctionCall:
    """A model's request to call tool ``name`` with ``args``; ``id`` pairs it with its response."""

    id: str | None
    name: str
    args: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The Gemini wire shape."""
        out: dict[str, Any] = {"name": self.name, "args": self.args}
        if self.id is not None:
            out["id"] = self.id
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FunctionCall:
        """Read the wire shape (``{"id", "name", "args"}``)."""
        return cls(id=data.get("id"), name=data["name"], args=dict(data.get("args") or {}))


@dataclass(slots=True)
class FunctionResponse:
    """A tool's answer to the call with the same ``id``.

    ``will_continue`` is true on the intermediate responses of a long-running tool;
    ``parts`` carries binary data or file references the tool returned.
    """

    id: str | None
    name: str
    response: dict[str, Any]
    will_continue: bool | None = None
    parts: list[Part] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The Gemini wire shape (camelCase keys)."""
        out: dict[str, Any] = {"name": self.name, "response": self.response}
        if self.id is not None:
            out["id"] = self.id
        if self.will_continue is not None:
            out["willContinue"] = self.will_continue
        if self.parts:
            out["parts"] = [p.to_dict() for p in self.parts]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FunctionResponse:
        """Read the wire shape (``{"id", "name", "response", "willContinue", "parts"}``)."""
        parts = data.get("parts")
        return cls(
            id=data.get("id"),
            name=data["name"],
            response=dict(data.get("response") or {}),
            will_continue=data.get("willContinue"),
            parts=[Part.from_dict(p) for p in parts] if parts else None,
        )


@dataclass(slots=True)
class Part:
    """One piece of content: text, a function call or response, inline data or a file."""

    text: str | None = None
    function_call: FunctionCall | None = None
    function_response: FunctionResponse | None = None
    inline_data: Blob | None = None
    file_data: FileRef | None = None
    thought: bool | None = None
    #: Opaque bytes some models attach to a part and need back unchanged.
    thought_signature: bytes | None = None

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
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Part:
        """Read the wire shape (camelCase; snake_case is accepted too)."""
        call = data.get("functionCall", data.get("function_call"))
        response = data.get("functionResponse", data.get("function_response"))
        inline = data.get("inlineData", data.get("inline_data"))
        file = data.get("fileData", data.get("file_data"))
        signature = data.get("thoughtSignature", data.get("thought_signature"))
        return cls(
            thought_signature=base64.b64decode(signature) if signature else None,
            text=data.get("text"),
            thought=data.get("thought"),
            function_call=FunctionCall.from_dict(call) if call is not None else None,
            function_response=FunctionResponse.from_dict(response)
            if response is not None
            else None,
            inline_data=(
                Blob(
                    inline.get("mimeType", inline.get("mime_type", "application/octet-stream")),
                    base64.b64decode(inline.get("data", "")),
                )
                if inline is not None
                else None
            ),
            file_data=(
                FileRef(
                    file.get("fileUri", file.get("file_uri", "")),
                    file.get("mimeType", file.get("mime_type", "application/octet-stream")),
                )
                if file is not None
                else None
            ),
        )


@dataclass(slots=True)
class Content:
    """A turn of the conversation: ``role`` (``"user"`` or ``"model"``) and its parts."""

    role: str
    parts: list[Part] = field(default_factory=list)

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
