"""The Anthropic Messages API's wire shapes: the history as messages of content blocks,
and a response (whole or streamed) as our ``LlmResponse``. The shapes are described in
``agent_core.models.anthropic``'s docstring; nothing here imports the SDK."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from tooling.integration import provider_name

from .._content import Content, FunctionCall, FunctionResponse, Part, ProviderPart
from . import _common as common
from .base import LlmResponse

__all__: list[str] = []

#: The generate_content_config settings this API takes. (The sampling settings,
#: ``temperature``, ``top_p`` and ``top_k``, are deprecated there: newer models refuse
#: them and the SDK no longer has them.)
SETTINGS = frozenset({"max_output_tokens", "stop_sequences", "system_instruction", "tool_config"})
_FINISH = {
    "end_turn": "STOP",
    "tool_use": "STOP",
    "stop_sequence": "STOP",
    "pause_turn": "STOP",
    "max_tokens": "MAX_TOKENS",
    "model_context_window_exceeded": "MAX_TOKENS",
    "refusal": "SAFETY",
}
_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})
_API = "Anthropic Messages"


# -- requests ------------------------------------------------------------------------------


def messages(contents: Sequence[Content]) -> list[dict[str, Any]]:
    """The history as Messages API messages (one per role change)."""
    ids = common.CallIds()
    out: list[dict[str, Any]] = []
    for content in contents:
        role = "assistant" if content.role == "model" else "user"
        blocks = (
            _assistant_blocks(content, ids) if role == "assistant" else _user_blocks(content, ids)
        )
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            previous = out[-1]["content"]
            # Tool results lead their user message.
            results = [b for b in blocks if b["type"] == "tool_result"]
            others = [b for b in blocks if b["type"] != "tool_result"]
            leading = sum(1 for b in previous if b["type"] == "tool_result")
            previous[leading:leading] = results
            previous.extend(others)
        else:
            out.append({"role": role, "content": blocks})
    return out


def _assistant_blocks(content: Content, ids: common.CallIds) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in content.parts:
        provider = part.provider_part
        if provider is not None:
            if provider.provider == "anthropic":  # a server tool's block, as it came
                blocks.append(dict(provider.data))
            else:
                blocks.append({"type": "text", "text": provider.stand_in()})
        elif part.function_call is not None:
            call = part.function_call
            args = call.args if isinstance(call.args, dict) else {"arguments": call.args}
            blocks.append(
                {
                    "type": "tool_use",
                    "id": ids.for_call(call),
                    "name": provider_name(call.name, "anthropic"),
                    "input": args,
                }
            )
        elif part.thought:
            if part.text is not None and part.thought_signature:
                blocks.append(
                    {
                        "type": "thinking",
                        "thinking": part.text,
                        "signature": part.thought_signature.decode("utf-8", "replace"),
                    }
                )
        elif part.text:
            blocks.append({"type": "text", "text": part.text})
    return blocks


def _user_blocks(content: Content, ids: common.CallIds) -> list[dict[str, Any]]:
    responses = [p.function_response for p in content.parts if p.function_response is not None]
    first, late = ids.first_and_late(responses)
    blocks = [_tool_result(r, ids) for r in first]
    blocks += [{"type": "text", "text": common.late_text(r)} for r in late]
    for index, part in enumerate(content.parts):
        if part.text and not part.thought:
            blocks.append({"type": "text", "text": part.text})
        elif part.inline_data is not None or part.file_data is not None:
            blocks.append(_media(index, part))
    return blocks


def _tool_result(response: FunctionResponse, ids: common.CallIds) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": ids.for_response(response),
        "content": [{"type": "text", "text": common.response_text(response.response)}],
    }
    for index, part in enumerate(response.parts or ()):
        block["content"].append(_media(index, part))
    if response.response.get("status") == "error":
        block["is_error"] = True
    return block


def _media(index: int, part: Part) -> dict[str, Any]:
    mime = common.mime_type(part)
    kind = "image" if mime in _IMAGE_TYPES else "document" if mime == "application/pdf" else None
    if kind is None:
        return {"type": "text", "text": common.stand_in(index, part, _API)}
    if part.inline_data is not None:
        data = base64.b64encode(part.inline_data.data).decode("ascii")
        source = {"type": "base64", "media_type": mime, "data": data}
    else:
        assert part.file_data is not None
        source = {"type": "url", "url": part.file_data.uri}
    return {"type": kind, "source": source}


# -- responses -----------------------------------------------------------------------------


def read_response(message: Any) -> LlmResponse:
    """A ``Message`` (the SDK's object) as our ``LlmResponse``."""
    blocks = list(message.content or ())
    parts = [p for p in (_block_part(b) for b in blocks) if p is not None]
    out = common.final_response(parts, _finish_reason(message.stop_reason), _usage(message.usage))
    out.citations = _citations(
        (getattr(b, "text", ""), getattr(b, "citations", None))
        for b in blocks
        if getattr(b, "type", None) == "text"
    )
    return out


def _citations(texts: Any) -> list[dict[str, Any]] | None:
    """The sources text blocks cite; ``start``/``end`` is the citing block's span in the
    turn's text."""
    out: list[dict[str, Any]] = []
    offset = 0
    for text, cited in texts:
        for citation in cited or ():
            get = citation.get if isinstance(citation, dict) else citation.__dict__.get
            uri = get("url") or get("document_title") or get("source") or ""
            out.append(
                {
                    "title": get("title") or get("document_title") or "",
                    "uri": uri,
                    "start": offset,
                    "end": offset + len(text or ""),
                }
            )
        offset += len(text or "")
    return out or None


def _provider_block(data: dict[str, Any]) -> Part:
    kind = str(data.get("type", "block"))
    summary = ""
    arguments = data.get("input")
    if isinstance(arguments, dict):
        summary = str(arguments.get("query") or arguments.get("url") or arguments.get("code") or "")
    return Part(provider_part=ProviderPart("anthropic", kind, data, summary))


def _block_part(block: Any) -> Part | None:
    kind = getattr(block, "type", None)
    if kind == "text":
        return Part(text=block.text) if block.text else None
    if kind == "tool_use":
        args: Any = block.input
        if not isinstance(args, dict):
            args = common.arguments_text(args)
        return Part(function_call=FunctionCall(id=block.id, name=block.name, args=args))
    if kind == "thinking":
        signature = getattr(block, "signature", None)
        return Part(
            text=block.thinking,
            thought=True,
            thought_signature=signature.encode() if signature else None,
        )
    if kind and hasattr(block, "model_dump"):
        # A server tool's call or result (server_tool_use, web_search_tool_result, ...),
        # or a block this module does not know: kept verbatim, to go back as it came.
        return _provider_block(block.model_dump(mode="json", exclude_none=True))
    return None


def _finish_reason(reason: str | None) -> str | None:
    if reason is None:
        return None
    return _FINISH.get(reason, "OTHER")


def _usage(usage: Any) -> dict[str, int] | None:
    if usage is None:
        return None
    # input_tokens leaves out the tokens read from or written to the prompt cache.
    read = getattr(usage, "cache_read_input_tokens", None) or 0
    written = getattr(usage, "cache_creation_input_tokens", None) or 0
    return {
        "input_tokens": (usage.input_tokens or 0) + read + written,
        "output_tokens": usage.output_tokens or 0,
    }


class StreamAssembler:
    """Streamed events in, text pieces out as they arrive, and the whole turn at the end.

    Blocks are kept by ``index``; a ``tool_use`` block's input is assembled from its
    ``input_json_delta`` pieces (text that is not a JSON object stays text, which the loop
    answers with ``tool.invalid_arguments``).
    """

    def __init__(self) -> None:
        self._blocks: dict[int, dict[str, Any]] = {}
        self._stop: str | None = None
        self._input_tokens = 0
        self._output_tokens = 0
        self._has_usage = False

    def add(self, event: Any) -> str | None:
        """Take in one event; returns its new text, if it carries some."""
        kind = event.type
        if kind == "content_block_delta":
            block = self._blocks.setdefault(event.index, {"type": "text", "pieces": []})
            delta = event.delta
            if delta.type == "text_delta":
                block["pieces"].append(delta.text)
                return str(delta.text) or None
            if delta.type == "input_json_delta":
                block["pieces"].append(delta.partial_json)
            elif delta.type == "thinking_delta":
                block["pieces"].append(delta.thinking)
            elif delta.type == "signature_delta":
                block["signature"] = delta.signature
            elif delta.type == "citations_delta":
                block.setdefault("citations", []).append(delta.citation)
        elif kind == "content_block_start":
            start = event.content_block
            block = {"type": start.type, "pieces": [], "start": start}
            if start.type == "text" and start.text:
                block["pieces"].append(start.text)
            self._blocks[event.index] = block
        elif kind == "message_start":
            self._count(event.message.usage)
        elif kind == "message_delta":
            if event.delta.stop_reason is not None:
                self._stop = event.delta.stop_reason
            self._count(event.usage)
        return None

    def _count(self, usage: Any) -> None:
        if usage is None:
            return
        self._has_usage = True
        counted = _usage(usage) if usage.input_tokens is not None else None
        if counted is not None:
            self._input_tokens = counted["input_tokens"]
        self._output_tokens = usage.output_tokens or self._output_tokens

    def final(self) -> LlmResponse:
        """The turn, its blocks in index order."""
        parts: list[Part] = []
        for index in sorted(self._blocks):
            block = self._blocks[index]
            text = "".join(block["pieces"])
            start = block.get("start")
            if block["type"] == "text":
                if text:
                    parts.append(Part(text=text))
            elif block["type"] == "tool_use" and start is not None:
                args: Any = common.parse_arguments(text)
                parts.append(
                    Part(function_call=FunctionCall(id=start.id, name=start.name, args=args))
                )
            elif block["type"] == "thinking":
                signature = block.get("signature") or getattr(start, "signature", None)
                parts.append(
                    Part(
                        text=text,
                        thought=True,
                        thought_signature=signature.encode() if signature else None,
                    )
                )
            elif start is not None and hasattr(start, "model_dump"):
                data = start.model_dump(mode="json", exclude_none=True)
                if text:  # a server tool's input, streamed as JSON pieces
                    data["input"] = common.parse_arguments(text)
                parts.append(_provider_block(data))
        cited = _citations(
            ("".join(b["pieces"]), b.get("citations"))
            for _, b in sorted(self._blocks.items())
            if b["type"] == "text"
        )
        usage = (
            {"input_tokens": self._input_tokens, "output_tokens": self._output_tokens}
            if self._has_usage
            else None
        )
        out = common.final_response(parts, _finish_reason(self._stop), usage)
        out.citations = cited
        return out
