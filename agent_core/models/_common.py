"""What the model adapters share (the OpenAI and Anthropic ones through ``_sdk_model``).

Each step is a small function or class the adapters call while they build a request or
read a response:

* :func:`read_settings`: ``generate_content_config`` (a google.genai
  ``GenerateContentConfig`` or a dict, snake_case or camelCase) as plain settings;
* :func:`offered_tools`: the tools offered this turn, narrowed by the config's
  ``allowed_function_names``;
* :class:`CallIds`: an id for every call and response of the history (these APIs need
  one; a call stored without one gets a made-up id its response then shares), and the
  order of the calls, so responses go back in call order;
* :func:`response_text`, :func:`arguments_text`, :func:`parse_arguments`,
  :func:`stand_in`: what a tool's response and a call's arguments look like on the wire;
* :func:`final_response`: the parts of a turn, its finish reason and usage as the one
  ``LlmResponse`` the loop receives;
* :class:`LoopClient`: one SDK client per event loop, built off the loop (Gemini's too).

Nothing here imports a provider's SDK.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import warnings
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .._content import Content, FunctionCall, FunctionResponse, Part
from .base import LlmResponse

if TYPE_CHECKING:
    from tooling import BaseTool

__all__: list[str] = []

_T = TypeVar("_T")
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")

#: Config keys that concern google-genai's own client, never a model: ignored quietly.
_CLIENT_ONLY = frozenset({"automatic_function_calling", "http_options"})


# -- settings ------------------------------------------------------------------------------


@dataclass(slots=True)
class Settings:
    """What a ``generate_content_config`` asks for, provider-neutral.

    ``tool_mode`` is Gemini's function calling mode (``AUTO``, ``ANY``, ``NONE``) and
    ``allowed_tools`` its ``allowed_function_names``; ``given`` lists every key that was
    set, so an adapter can say which ones its API has no place for.
    """

    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    max_output_tokens: int | None = None
    stop_sequences: list[str] | None = None
    seed: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    system_instruction: str | None = None
    tool_mode: str | None = None
    allowed_tools: list[str] | None = None
    given: frozenset[str] = frozenset()


def read_settings(config: Any) -> Settings:
    """The settings of ``config``: None, a dict, or a pydantic model such as
    ``google.genai.types.GenerateContentConfig`` (read without importing google.genai)."""
    data = _plain(config) if config is not None else {}
    if not isinstance(data, dict):
        raise TypeError(
            "generate_content_config must be a google.genai.types.GenerateContentConfig, a "
            f"dict or None, got {type(config).__name__}"
        )
    data = {k: v for k, v in data.items() if v is not None}
    calling = (data.get("tool_config") or {}).get("function_calling_config") or {}
    mode = calling.get("mode")
    allowed = calling.get("allowed_function_names")
    return Settings(
        temperature=data.get("temperature"),
        top_p=data.get("top_p"),
        top_k=data.get("top_k"),
        max_output_tokens=data.get("max_output_tokens"),
        stop_sequences=list(data["stop_sequences"]) if data.get("stop_sequences") else None,
        seed=data.get("seed"),
        presence_penalty=data.get("presence_penalty"),
        frequency_penalty=data.get("frequency_penalty"),
        system_instruction=_instruction_text(data.get("system_instruction")),
        tool_mode=str(mode).upper() if mode else None,
        allowed_tools=list(allowed) if allowed else None,
        given=frozenset(data) - _CLIENT_ONLY,
    )


def _plain(value: Any) -> Any:
    """``value`` as JSON-like data with snake_case keys (pydantic models dumped)."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        value = dump(mode="json", exclude_none=True)
    if isinstance(value, Mapping):
        return {_CAMEL.sub(r"_\1", str(k)).lower(): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _instruction_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict):  # a Content: {"parts": [{"text": ...}, ...]}
        value = value.get("parts") or []
    if isinstance(value, list):
        texts = [p.get("text") if isinstance(p, dict) else p for p in value]
        if all(isinstance(t, str) for t in texts):
            return "\n".join(str(t) for t in texts)
    raise ValueError(
        "generate_content_config.system_instruction must be text to be combined with the "
        "agent's instruction"
    )


def instruction(settings: Settings, agent_instruction: str) -> str:
    """The config's system instruction, then the agent's (as ``GeminiModel`` joins them)."""
    parts = [t for t in (settings.system_instruction, agent_instruction) if t]
    return "\n\n".join(parts)


def warn_unused(owner: object, settings: Settings, used: frozenset[str], api: str) -> None:
    """Warn once per model and key about settings ``api`` has no place for."""
    unused = settings.given - used
    if not unused:
        return
    warned: set[str] = owner.__dict__.setdefault("_warned_settings", set())
    new = sorted(unused - warned)
    if new:
        warned.update(new)
        warnings.warn(
            f"{owner!r}: generate_content_config {', '.join(new)} not used (the {api} API "
            "has no such setting)",
            UserWarning,
            stacklevel=4,
        )


def offered_tools(tools: Mapping[str, BaseTool], settings: Settings) -> list[BaseTool]:
    """The tools to declare: all of them, or those ``allowed_function_names`` names."""
    if settings.tool_mode == "NONE" or not settings.allowed_tools:
        return list(tools.values())
    allowed = set(settings.allowed_tools)
    return [t for name, t in tools.items() if name in allowed]


# -- history -------------------------------------------------------------------------------


@dataclass(slots=True)
class CallIds:
    """Ids for the calls and responses of one request's history, and the calls' order.

    A call that has an id keeps it. One stored without an id (the loop strips the ids it
    made up) gets ``gen_call_N``, and the next response of the same name without an id
    gets that id too, so the pair stays a pair.
    """

    _count: int = 0
    _waiting: dict[str, deque[str]] = field(default_factory=dict)
    _order: dict[str, int] = field(default_factory=dict)
    _answered: set[str] = field(default_factory=set)

    def for_call(self, call: FunctionCall) -> str:
        call_id = call.id
        if not call_id:
            call_id = self._made_up()
            self._waiting.setdefault(call.name, deque()).append(call_id)
        self._order.setdefault(call_id, len(self._order))
        return call_id

    def for_response(self, response: FunctionResponse) -> str:
        if response.id:
            return response.id
        waiting = self._waiting.get(response.name)
        return waiting.popleft() if waiting else self._made_up()

    def first_and_late(
        self, responses: Iterable[FunctionResponse]
    ) -> tuple[list[FunctionResponse], list[FunctionResponse]]:
        """``responses`` split into first answers to their calls (in call order) and late
        ones: a second answer to a call already answered in this history (a durable job's
        result after its pending answer), which these APIs take only as text."""
        first, late = [], []
        for response in self.in_call_order(responses):
            if response.id and response.id in self._answered:
                late.append(response)
            else:
                first.append(response)
                if response.id:
                    self._answered.add(response.id)
        return first, late

    def in_call_order(self, responses: Iterable[FunctionResponse]) -> list[FunctionResponse]:
        """``responses`` sorted by the order of their calls (unknown ids last, as given)."""
        rank = self._order
        return sorted(responses, key=lambda r: rank.get(r.id or "", len(rank)))

    def _made_up(self) -> str:
        self._count += 1
        return f"gen_call_{self._count}"


def late_text(response: FunctionResponse) -> str:
    """A late answer (see :meth:`CallIds.first_and_late`) as a user text naming its call."""
    job = response.response.get("job_id") if isinstance(response.response, dict) else None
    where = f" (job {job})" if isinstance(job, str) else ""
    return (
        f"The result of your earlier call {response.id} to {response.name}{where} arrived: "
        f"{response_text(response.response)}"
    )


def response_text(response: Mapping[str, Any]) -> str:
    """A tool's response dict as the JSON text these APIs take as a tool result."""
    return json.dumps(response, ensure_ascii=False, default=str)


def arguments_text(args: Any) -> str:
    """A call's arguments as JSON text (arguments the model sent as text stay as sent)."""
    if isinstance(args, str):
        return args
    return json.dumps(args, ensure_ascii=False, default=str)


def parse_arguments(text: str) -> Any:
    """A call's JSON arguments as a dict; text that is not a JSON object stays text, which
    the loop answers with ``tool.invalid_arguments`` for that call alone."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, dict) else text


def stand_in(index: int, part: Part, api: str) -> str:
    """The text sent instead of a part of a tool response that ``api`` cannot take."""
    if part.inline_data is not None:
        blob = part.inline_data
        return (
            f"[part {index} of the tool response: {blob.mime_type}, {len(blob.data)} bytes; "
            f"not shown, the {api} API takes no such data in a tool result]"
        )
    if part.file_data is not None:
        ref = part.file_data
        return f"[part {index} of the tool response: {ref.mime_type or 'a file'} at {ref.uri}]"
    return f"[part {index} of the tool response]"


def data_url(part: Part) -> str | None:
    """An inline image as a ``data:`` URL, or a file reference's URL; None otherwise."""
    if part.inline_data is not None:
        import base64

        blob = part.inline_data
        return f"data:{blob.mime_type};base64,{base64.b64encode(blob.data).decode('ascii')}"
    if part.file_data is not None:
        return part.file_data.uri
    return None


def mime_type(part: Part) -> str:
    if part.inline_data is not None:
        return part.inline_data.mime_type
    if part.file_data is not None:
        return part.file_data.mime_type
    return ""


# -- responses -----------------------------------------------------------------------------


def final_response(
    parts: list[Part],
    finish_reason: str | None,
    usage: dict[str, int] | None,
    *,
    detail: str | None = None,
) -> LlmResponse:
    """One turn's ``LlmResponse``; a turn that stopped with nothing said, for a reason
    other than ``STOP``, is an error (as with ``GeminiModel``)."""
    content = Content("model", parts) if parts else None
    if content is None and finish_reason not in (None, "STOP"):
        return LlmResponse(
            finish_reason=finish_reason,
            error_code=finish_reason,
            error_message=detail
            or f"The model stopped without an answer (finish reason {finish_reason}).",
            usage=usage,
        )
    return LlmResponse(content=content, finish_reason=finish_reason, usage=usage)


def partial_text(text: str) -> LlmResponse:
    """A streamed piece of text."""
    return LlmResponse(content=Content("model", [Part(text=text)]), partial=True)


# -- keys and clients ----------------------------------------------------------------------


def api_key(given: str | None, variable: str, owner: str, where: str) -> str:
    """The key passed in, else the environment variable's; a clear error without one."""
    key = given or os.environ.get(variable)
    if key:
        return key
    raise RuntimeError(
        f"{owner} has no API key: pass api_key=... or set the {variable} environment "
        f"variable. Keys come from {where}; to run without one, use ScriptedModel."
    )


class LoopClient(Generic[_T]):
    """One SDK client per event loop.

    An async HTTP client's connections belong to the loop that opened them: a call from
    another loop (each ``asyncio.run``, say) builds a new client, in a thread, since
    building one loads certificates.
    """

    def __init__(self, build: Callable[[], _T], close: Callable[[_T], Awaitable[None]]) -> None:
        self._build = build
        self._close = close
        self._client: _T | None = None
        self._loop: weakref.ref[asyncio.AbstractEventLoop] | None = None

    async def get(self) -> _T:
        loop = asyncio.get_running_loop()
        client = self._client
        if client is not None and self._loop is not None and self._loop() is loop:
            return client
        built = await asyncio.to_thread(self._build)
        client = self._client
        if client is not None and self._loop is not None and self._loop() is loop:
            await self._close(built)  # another task on this loop built one meanwhile
            return client
        self._client, self._loop = built, weakref.ref(loop)
        return built

    async def aclose(self) -> None:
        """Close the client, if one was built on the running event loop."""
        client, self._client = self._client, None
        owner, self._loop = self._loop, None
        if client is not None and owner is not None and owner() is asyncio.get_running_loop():
            await self._close(client)
