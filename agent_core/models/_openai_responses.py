"""OpenAI's Responses API (``POST /responses``): our request in, its response out.

The wire shapes, checked 2026-12-01 against the openai SDK's types
(``openai.types.responses``) and https://platform.openai.com/docs/api-reference/responses:

* the history is a list of input items: messages (``{"role": "user" | "assistant",
  "content": ...}``; user content as ``input_text``/``input_image`` parts), and
  ``function_call`` / ``function_call_output`` items paired by ``call_id``. A
  ``function_call_output``'s ``output`` is text, or a list of ``input_text`` and
  ``input_image`` parts when the tool returned images;
* the system instruction is ``instructions``; tools are ``{"type": "function", "name",
  "description", "parameters", "strict"}``;
* the response's ``output`` holds ``message`` items (``output_text``/``refusal`` parts),
  ``function_call`` items (``call_id``, ``name``, JSON text ``arguments``) and
  ``reasoning`` items (their summary becomes thought parts); ``status`` is ``completed``,
  ``incomplete`` (``incomplete_details.reason``) or ``failed`` (``error``);
* streamed, the events are ``response.output_item.added``/``.done`` (one per output
  item), ``response.output_text.delta``, ``response.function_call_arguments.delta``/
  ``.done``, then ``response.completed`` (or ``.incomplete``/``.failed``) with the whole
  response, or an ``error`` event.

Reasoning items are not sent back: a stored function call goes back by ``call_id`` only,
without the output item id that would require its reasoning item.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tooling.integration import provider_name

from .._content import Content, FunctionCall, Part, ProviderPart
from . import _common as common
from .base import LlmRequest, LlmResponse

__all__: list[str] = []

#: The generate_content_config settings this API takes.
SETTINGS = frozenset(
    {"temperature", "top_p", "max_output_tokens", "system_instruction", "tool_config"}
)
_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})
_INCOMPLETE = {"max_output_tokens": "MAX_TOKENS", "content_filter": "SAFETY"}
_API = "OpenAI Responses"


# -- requests ------------------------------------------------------------------------------


def build_request(
    llm_request: LlmRequest,
    model: str,
    settings: common.Settings,
    declarations: Sequence[dict[str, Any]],
) -> dict[str, Any]:
    """The keyword arguments of ``client.responses.create`` for this request."""
    body: dict[str, Any] = {
        "model": model,
        "input": input_items(llm_request.contents),
    }
    instructions = common.instruction(settings, llm_request.system_instruction)
    if instructions:
        body["instructions"] = instructions
    if declarations:
        body["tools"] = [_flat(d) for d in declarations]
        choice = _tool_choice(settings, declarations)
        if choice is not None:
            body["tool_choice"] = choice
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.top_p is not None:
        body["top_p"] = settings.top_p
    if settings.max_output_tokens is not None:
        body["max_output_tokens"] = settings.max_output_tokens
    return body


def _flat(declaration: dict[str, Any]) -> dict[str, Any]:
    """A Chat Completions tool dict (what ``to_openai`` gives) in the Responses shape."""
    if "function" not in declaration:  # a built-in tool: already in the Responses shape
        return dict(declaration)
    function = declaration["function"]
    return {"type": "function", **function}


def _tool_choice(settings: common.Settings, declarations: Sequence[dict[str, Any]]) -> Any:
    mode = settings.tool_mode
    if mode == "NONE":
        return "none"
    if mode == "ANY":
        if len(declarations) == 1 and settings.allowed_tools and "function" in declarations[0]:
            return {"type": "function", "name": declarations[0]["function"]["name"]}
        return "required"
    if mode in ("AUTO", "VALIDATED"):
        return "auto"
    return None


def input_items(contents: Sequence[Content]) -> list[dict[str, Any]]:
    """The history as Responses API input items."""
    ids = common.CallIds()
    items: list[dict[str, Any]] = []
    for content in contents:
        if content.role == "model":
            _model_items(content, ids, items)
        else:
            _user_items(content, ids, items)
    return items


def _model_items(content: Content, ids: common.CallIds, items: list[dict[str, Any]]) -> None:
    texts: list[str] = []
    for part in content.parts:
        provider = part.provider_part
        if provider is not None:
            if provider.provider == "openai":  # a built-in's output item, sent back as it came
                if texts:
                    items.append({"role": "assistant", "content": "".join(texts)})
                    texts = []
                items.append(dict(provider.data))
            else:
                texts.append(provider.stand_in())
        elif part.function_call is not None:
            if texts:
                items.append({"role": "assistant", "content": "".join(texts)})
                texts = []
            call = part.function_call
            items.append(
                {
                    "type": "function_call",
                    "call_id": ids.for_call(call),
                    "name": provider_name(call.name, "openai"),
                    "arguments": common.arguments_text(call.args),
                }
            )
        elif part.text and not part.thought:
            texts.append(part.text)
    if texts:
        items.append({"role": "assistant", "content": "".join(texts)})


def _user_items(content: Content, ids: common.CallIds, items: list[dict[str, Any]]) -> None:
    responses = [p.function_response for p in content.parts if p.function_response is not None]
    first, late = ids.first_and_late(responses)
    for response in first:
        items.append(
            {
                "type": "function_call_output",
                "call_id": ids.for_response(response),
                "output": _output(response.response, response.parts or []),
            }
        )
    parts: list[dict[str, Any]] = [
        {"type": "input_text", "text": common.late_text(r)} for r in late
    ]
    for index, part in enumerate(content.parts):
        if part.text is not None and not part.thought:
            parts.append({"type": "input_text", "text": part.text})
        elif part.inline_data is not None or part.file_data is not None:
            parts.append(_media(index, part))
    if parts:
        items.append({"role": "user", "content": parts})


def _output(response: dict[str, Any], media: list[Part]) -> Any:
    text = common.response_text(response)
    if not media:
        return text
    out: list[dict[str, Any]] = [{"type": "input_text", "text": text}]
    out.extend(_media(index, part) for index, part in enumerate(media))
    return out


def _media(index: int, part: Part) -> dict[str, Any]:
    if common.mime_type(part) in _IMAGE_TYPES:
        return {"type": "input_image", "image_url": common.data_url(part), "detail": "auto"}
    return {"type": "input_text", "text": common.stand_in(index, part, _API)}


# -- responses -----------------------------------------------------------------------------


def read_response(response: Any) -> LlmResponse:
    """A ``Response`` (the SDK's object) as our ``LlmResponse``."""
    parts: list[Part] = []
    for item in response.output or ():
        parts.extend(_item_parts(item))
    out = _finish(response, parts)
    out.citations = citations(response.output or ())
    return out


def _item_parts(item: Any) -> list[Part]:
    kind = getattr(item, "type", None)
    if kind == "message":
        out = []
        for piece in item.content or ():
            text = getattr(piece, "text", None)
            if text is None:
                text = getattr(piece, "refusal", None)
            if text:
                out.append(Part(text=text))
        return out
    if kind == "function_call":
        return [_call_part(item.call_id, item.name, item.arguments or "")]
    if kind == "reasoning":
        summary = getattr(item, "summary", None) or ()
        return [Part(text=s.text, thought=True) for s in summary if getattr(s, "text", None)]
    if kind and hasattr(item, "model_dump"):
        # A built-in's item (web_search_call, code_interpreter_call, file_search_call) or
        # one this module does not know: kept verbatim, sent back to OpenAI as it came.
        data = item.model_dump(mode="json", exclude_none=True)
        return [Part(provider_part=ProviderPart("openai", str(kind), data, _summary(data)))]
    return []


def _summary(item: dict[str, Any]) -> str:
    action = item.get("action")
    if isinstance(action, dict) and isinstance(action.get("query"), str):
        return f"searched: {action['query']}"
    if isinstance(item.get("code"), str):
        return str(item["code"])
    queries = item.get("queries")
    if isinstance(queries, list) and queries:
        return "searched: " + "; ".join(map(str, queries))
    return ""


def citations(items: Any) -> list[dict[str, Any]] | None:
    """The sources the answer's text cites: ``url_citation`` and ``file_citation``
    annotations of its message items."""
    out: list[dict[str, Any]] = []
    for item in items:
        if getattr(item, "type", None) != "message":
            continue
        for piece in item.content or ():
            for note in getattr(piece, "annotations", None) or ():
                kind = getattr(note, "type", None)
                if kind == "url_citation":
                    out.append(
                        {
                            "title": note.title or "",
                            "uri": note.url,
                            "start": note.start_index,
                            "end": note.end_index,
                        }
                    )
                elif kind == "file_citation":
                    out.append(
                        {
                            "title": getattr(note, "filename", None) or "",
                            "uri": note.file_id,
                            "start": note.index,
                            "end": note.index,
                        }
                    )
    return out or None


def _call_part(call_id: str | None, name: str, arguments: str) -> Part:
    args: Any = common.parse_arguments(arguments)
    return Part(function_call=FunctionCall(id=call_id or None, name=name, args=args))


def _finish(response: Any, parts: list[Part]) -> LlmResponse:
    usage = _usage(getattr(response, "usage", None))
    status = getattr(response, "status", None)
    if status == "failed" or getattr(response, "error", None) is not None:
        error = response.error
        return LlmResponse(
            error_code=str(getattr(error, "code", None) or "failed"),
            error_message=getattr(error, "message", None) or "The response failed.",
            usage=usage,
        )
    if status == "incomplete":
        details = getattr(response, "incomplete_details", None)
        reason = getattr(details, "reason", None)
        finish = _INCOMPLETE.get(str(reason), "OTHER")
        detail = f"The response is incomplete ({reason})." if reason else None
        return common.final_response(parts, finish, usage, detail=detail)
    if status == "cancelled":
        return LlmResponse(error_code="cancelled", error_message="The response was cancelled.")
    return common.final_response(parts, "STOP", usage)


def _usage(usage: Any) -> dict[str, int] | None:
    if usage is None:
        return None
    return {"input_tokens": usage.input_tokens or 0, "output_tokens": usage.output_tokens or 0}


class StreamAssembler:
    """Streamed events in, text pieces out as they arrive, and the whole turn at the end.

    Output items are kept by ``output_index``: a ``.done`` item replaces what its deltas
    built, and a call whose ``.done`` never came is assembled from its argument fragments.
    """

    def __init__(self) -> None:
        self._items: dict[int, Any] = {}
        self._done: set[int] = set()
        self._arguments: dict[int, list[str]] = {}
        self._texts: dict[int, list[str]] = {}
        self._end: Any = None
        self.error: LlmResponse | None = None

    def add(self, event: Any) -> str | None:
        """Take in one event; returns its new text, if it carries some."""
        kind = event.type
        if kind == "response.output_text.delta":
            self._texts.setdefault(event.output_index, []).append(event.delta)
            return str(event.delta) or None
        if kind == "response.function_call_arguments.delta":
            self._arguments.setdefault(event.output_index, []).append(event.delta)
        elif kind == "response.output_item.added":
            self._items.setdefault(event.output_index, event.item)
        elif kind == "response.output_item.done":
            self._items[event.output_index] = event.item
            self._done.add(event.output_index)
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            self._end = event.response
        elif kind == "error":
            self.error = LlmResponse(
                error_code=str(getattr(event, "code", None) or "error"),
                error_message=getattr(event, "message", None) or "The stream failed.",
            )
        return None

    def final(self) -> LlmResponse:
        """The turn: the items as assembled, with the final response's status and usage."""
        parts: list[Part] = []
        for index in sorted(self._items.keys() | self._texts.keys()):
            item: Any = self._items.get(index)
            if index in self._done:
                parts.extend(_item_parts(item))
            elif getattr(item, "type", None) == "function_call":
                arguments = "".join(self._arguments.get(index, ()))
                parts.append(_call_part(item.call_id, item.name, arguments))
            elif index in self._texts:
                parts.append(Part(text="".join(self._texts[index])))
        if self._end is None:
            return common.final_response(parts, None, None)
        if not parts and self._end.output:
            return read_response(self._end)
        out = _finish(self._end, parts)
        out.citations = citations(self._end.output or [self._items[i] for i in self._done])
        return out
