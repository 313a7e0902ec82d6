"""OpenAI's Chat Completions API (``POST /chat/completions``): our request in, its
response out. Also what most OpenAI-compatible servers speak.

The wire shapes, checked 2026-12-01 against the openai SDK's types (``openai.types.chat``)
and https://platform.openai.com/docs/api-reference/chat:

* the history is a list of messages: ``system`` (the instruction), ``user`` (text, or
  ``text`` and ``image_url`` parts), ``assistant`` (``content`` and ``tool_calls``, each
  ``{"id", "type": "function", "function": {"name", "arguments"}}``) and one ``tool``
  message per response (``tool_call_id``, text ``content``: this API takes no images in
  a tool message, so a tool's images go as a text stand-in naming the part);
* tools are ``to_openai()``'s dicts as they are;
* the response's first choice has ``message`` (``content``, ``refusal``, ``tool_calls``)
  and ``finish_reason`` (``stop``, ``length``, ``tool_calls``, ``content_filter``);
  ``usage`` has ``prompt_tokens`` and ``completion_tokens``;
* streamed, each chunk's ``choices[0].delta`` carries text (``content``) or call
  fragments (``tool_calls``, by ``index``: the id and name first, then pieces of the
  arguments); with ``stream_options: {"include_usage": true}`` a last chunk with no
  choices carries ``usage``; the stream ends with ``data: [DONE]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tooling.integration import provider_name

from .._content import Content, FunctionCall, Part
from . import _common as common
from .base import LlmRequest, LlmResponse

__all__: list[str] = []

#: The generate_content_config settings this API takes.
SETTINGS = frozenset(
    {
        "temperature",
        "top_p",
        "max_output_tokens",
        "stop_sequences",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "system_instruction",
        "tool_config",
    }
)
_FINISH = {
    "stop": "STOP",
    "tool_calls": "STOP",
    "function_call": "STOP",
    "length": "MAX_TOKENS",
    "content_filter": "SAFETY",
}
_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})
_API = "OpenAI Chat Completions"


# -- requests ------------------------------------------------------------------------------


def build_request(
    llm_request: LlmRequest,
    model: str,
    settings: common.Settings,
    declarations: Sequence[dict[str, Any]],
) -> dict[str, Any]:
    """The keyword arguments of ``client.chat.completions.create`` for this request."""
    messages: list[dict[str, Any]] = []
    instructions = common.instruction(settings, llm_request.system_instruction)
    if instructions:
        messages.append({"role": "system", "content": instructions})
    messages.extend(chat_messages(llm_request.contents))
    body: dict[str, Any] = {"model": model, "messages": messages}
    if declarations:
        body["tools"] = list(declarations)
        choice = _tool_choice(settings, declarations)
        if choice is not None:
            body["tool_choice"] = choice
    for name, key in (
        ("temperature", "temperature"),
        ("top_p", "top_p"),
        ("max_output_tokens", "max_completion_tokens"),
        ("stop_sequences", "stop"),
        ("seed", "seed"),
        ("presence_penalty", "presence_penalty"),
        ("frequency_penalty", "frequency_penalty"),
    ):
        value = getattr(settings, name)
        if value is not None:
            body[key] = value
    return body


def _tool_choice(settings: common.Settings, declarations: Sequence[dict[str, Any]]) -> Any:
    mode = settings.tool_mode
    if mode == "NONE":
        return "none"
    if mode == "ANY":
        if len(declarations) == 1 and settings.allowed_tools:
            name = declarations[0]["function"]["name"]
            return {"type": "function", "function": {"name": name}}
        return "required"
    if mode in ("AUTO", "VALIDATED"):
        return "auto"
    return None


def chat_messages(contents: Sequence[Content]) -> list[dict[str, Any]]:
    """The history as Chat Completions messages."""
    ids = common.CallIds()
    messages: list[dict[str, Any]] = []
    for content in contents:
        if content.role == "model":
            message = _assistant(content, ids)
            if message is not None:
                messages.append(message)
        else:
            _user(content, ids, messages)
    return messages


def _assistant(content: Content, ids: common.CallIds) -> dict[str, Any] | None:
    text = "".join(p.text for p in content.parts if p.text and not p.thought)
    calls = [
        {
            "id": ids.for_call(p.function_call),
            "type": "function",
            "function": {
                "name": provider_name(p.function_call.name, "openai"),
                "arguments": common.arguments_text(p.function_call.args),
            },
        }
        for p in content.parts
        if p.function_call is not None
    ]
    if not text and not calls:
        return None
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return message


def _user(content: Content, ids: common.CallIds, messages: list[dict[str, Any]]) -> None:
    responses = [p.function_response for p in content.parts if p.function_response is not None]
    first, late = ids.first_and_late(responses)
    for response in first:
        texts = [common.response_text(response.response)]
        texts += [common.stand_in(i, p, _API) for i, p in enumerate(response.parts or ())]
        messages.append(
            {
                "role": "tool",
                "tool_call_id": ids.for_response(response),
                "content": "\n".join(texts),
            }
        )
    parts: list[dict[str, Any]] = [{"type": "text", "text": common.late_text(r)} for r in late]
    for index, part in enumerate(content.parts):
        if part.text is not None and not part.thought:
            parts.append({"type": "text", "text": part.text})
        elif part.inline_data is not None or part.file_data is not None:
            if common.mime_type(part) in _IMAGE_TYPES:
                parts.append({"type": "image_url", "image_url": {"url": common.data_url(part)}})
            else:
                parts.append({"type": "text", "text": common.stand_in(index, part, _API)})
    if not parts:
        return
    if all(p["type"] == "text" for p in parts):
        messages.append({"role": "user", "content": "".join(p["text"] for p in parts)})
    else:
        messages.append({"role": "user", "content": parts})


# -- responses -----------------------------------------------------------------------------


def read_response(completion: Any) -> LlmResponse:
    """A ``ChatCompletion`` (the SDK's object) as our ``LlmResponse``."""
    usage = _usage(getattr(completion, "usage", None))
    if not completion.choices:
        return LlmResponse(
            error_code="NO_CANDIDATES", error_message="The model returned nothing.", usage=usage
        )
    choice = completion.choices[0]
    message = choice.message
    parts: list[Part] = []
    text = message.content or getattr(message, "refusal", None)
    if text:
        parts.append(Part(text=text))
    for call in message.tool_calls or ():
        function = getattr(call, "function", None)
        if function is not None:
            parts.append(_call_part(call.id, function.name, function.arguments or ""))
    return common.final_response(parts, _finish_reason(choice.finish_reason), usage)


def _call_part(call_id: str | None, name: str, arguments: str) -> Part:
    args: Any = common.parse_arguments(arguments)
    return Part(function_call=FunctionCall(id=call_id or None, name=name, args=args))


def _finish_reason(reason: str | None) -> str | None:
    if reason is None:
        return None
    return _FINISH.get(reason, "OTHER")


def _usage(usage: Any) -> dict[str, int] | None:
    if usage is None:
        return None
    return {
        "input_tokens": usage.prompt_tokens or 0,
        "output_tokens": usage.completion_tokens or 0,
    }


class StreamAssembler:
    """Streamed chunks in, text pieces out as they arrive, and the whole turn at the end.

    Calls are assembled by their ``index``: the first fragment names the call and its id,
    later ones add pieces of the arguments.
    """

    def __init__(self) -> None:
        self._text: list[str] = []
        self._calls: dict[int, list[Any]] = {}  # index -> [id, name, argument pieces]
        self._finish: str | None = None
        self._usage: dict[str, int] | None = None
        self.error: LlmResponse | None = None

    def add(self, chunk: Any) -> str | None:
        """Take in one chunk; returns its new text, if it carries some."""
        if getattr(chunk, "usage", None) is not None:
            self._usage = _usage(chunk.usage)
        if not chunk.choices:
            return None
        choice = chunk.choices[0]
        if choice.finish_reason is not None:
            self._finish = choice.finish_reason
        delta = choice.delta
        if delta is None:
            return None
        for fragment in delta.tool_calls or ():
            call = self._calls.setdefault(fragment.index, [None, "", []])
            if fragment.id:
                call[0] = fragment.id
            function = fragment.function
            if function is not None:
                if function.name:
                    call[1] += function.name
                if function.arguments:
                    call[2].append(function.arguments)
        text = delta.content or getattr(delta, "refusal", None)
        if text:
            self._text.append(text)
            return str(text)
        return None

    def final(self) -> LlmResponse:
        """The turn: text, then the calls in index order."""
        parts: list[Part] = []
        if self._text:
            parts.append(Part(text="".join(self._text)))
        for index in sorted(self._calls):
            call_id, name, pieces = self._calls[index]
            parts.append(_call_part(call_id, name, "".join(pieces)))
        return common.final_response(parts, _finish_reason(self._finish), self._usage)
