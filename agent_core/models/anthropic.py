"""``AnthropicModel``: Claude through the official ``anthropic`` SDK's async client.

The SDK is imported when a model is built, never by ``import agent_core`` or a mere
reference to ``agent_core.AnthropicModel``.

The wire shapes of the Messages API (``POST /v1/messages``), built and read in
``_anthropic_messages``, checked 2026-12-01 against the anthropic SDK's types and
https://docs.anthropic.com/en/api/messages:

* the history is a list of ``user`` and ``assistant`` messages of content blocks:
  ``text``, ``image`` and ``document`` (base64 or URL sources), ``tool_use`` (``id``,
  ``name``, ``input`` object) in the assistant's, and ``tool_result`` (``tool_use_id``,
  ``content`` text and image blocks, ``is_error``) in the user's. All the results of one
  turn's calls go in the one user message that follows it, before any other block;
  consecutive messages of one role are merged;
* ``system`` is the instruction; ``max_tokens`` is required (there are no sampling
  settings: ``temperature`` and ``top_p`` are deprecated); tools are ``to_anthropic()``'s
  ``{"name", "description", "input_schema"}``; ``tool_choice`` is ``auto``, ``any``,
  ``tool`` (one name) or ``none``;
* the response's ``content`` holds ``text``, ``tool_use`` and ``thinking`` blocks (a
  thinking block's ``signature`` is kept on the part and sent back with it);
  ``stop_reason`` is ``end_turn``, ``tool_use``, ``stop_sequence``, ``max_tokens``,
  ``refusal``, ``pause_turn`` or ``model_context_window_exceeded``; ``usage`` counts
  ``input_tokens`` (plus cache reads and writes) and ``output_tokens``;
* streamed: ``message_start`` (usage so far), then per block ``content_block_start``,
  ``content_block_delta`` (``text_delta``, ``input_json_delta`` pieces of the call's
  JSON, ``thinking_delta``, ``signature_delta``) and ``content_block_stop``, then
  ``message_delta`` (``stop_reason``, cumulative usage) and ``message_stop``; an
  ``error`` event may come at any point.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tooling.integration import provider_name

from . import _common as common
from ._anthropic_messages import SETTINGS, StreamAssembler, messages, read_response
from ._sdk_model import Assembler, SdkModel
from .base import LlmRequest, LlmResponse

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

    from tooling.builtin import BuiltinTool

__all__ = ["AnthropicModel"]


class AnthropicModel(SdkModel["AsyncAnthropic"]):
    """A Claude model, called with the ``anthropic`` SDK's ``AsyncAnthropic`` client.

    The key is ``api_key``, else ``ANTHROPIC_API_KEY``; ``base_url`` sends requests
    elsewhere, else the SDK's own ``ANTHROPIC_BASE_URL``. ``max_tokens`` (which the API
    requires) applies unless ``generate_content_config`` sets ``max_output_tokens``. The
    client is built at the first call (one per event loop), so building a model needs no
    key; building one imports the SDK (``pip install 'agent-tooling[anthropic]'``).

    Tools are declared with ``to_anthropic()``. API errors (a bad key, a rate limit still
    hit after the SDK's retries, a bad request) come back as error responses carrying the
    HTTP status as ``error_code`` and Anthropic's message, never as exceptions.
    """

    provider = "anthropic"

    key_variable = "ANTHROPIC_API_KEY"
    key_page = "https://console.anthropic.com/settings/keys"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int = 4096,
    ) -> None:
        try:
            import anthropic  # noqa: F401
        except ImportError as exc:
            raise ImportError(
                "AnthropicModel needs the anthropic package: pip install 'agent-tooling[anthropic]'"
            ) from exc
        super().__init__(model, api_key=api_key, base_url=base_url)
        self.max_tokens = max_tokens

    def request_body(self, llm_request: LlmRequest) -> dict[str, Any]:
        """The keyword arguments this model gives ``client.messages.create``."""
        settings = common.read_settings(llm_request.config)
        common.warn_unused(self, settings, SETTINGS, "Anthropic Messages")
        body: dict[str, Any] = {
            "model": llm_request.model or self.model,
            "max_tokens": settings.max_output_tokens or self.max_tokens,
            "messages": messages(llm_request.contents),
        }
        system = common.instruction(settings, llm_request.system_instruction)
        if system:
            body["system"] = system
        offered = common.offered_tools(llm_request.tools, settings)
        if offered:
            body["tools"] = [t.to_anthropic() for t in offered]
            choice = _tool_choice(settings, offered)
            if choice is not None:
                body["tool_choice"] = choice
        if settings.stop_sequences is not None:
            body["stop_sequences"] = settings.stop_sequences
        return body

    def supports_builtin(self, tool: BuiltinTool) -> bool:
        """Anthropic runs web search, code execution and web fetch (server tools)."""
        return tool.supported_by("anthropic")

    async def _create(self, client: AsyncAnthropic, body: dict[str, Any], *, stream: bool) -> Any:
        if stream:
            return await client.messages.create(**body, stream=True)
        return await client.messages.create(**body)

    def _read_response(self, response: Any) -> LlmResponse:
        return read_response(response)

    def _assembler(self) -> Assembler:
        return StreamAssembler()

    def _api_errors(self) -> type[Exception]:
        import anthropic

        return anthropic.APIError

    def _error_response(self, exc: Exception) -> LlmResponse:
        return _error_response(exc)

    def _new_client(self) -> AsyncAnthropic:
        import anthropic

        return anthropic.AsyncAnthropic(api_key=self.key(), base_url=self.base_url)

    async def _close_client(self, client: AsyncAnthropic) -> None:
        await client.close()


def _tool_choice(settings: common.Settings, offered: Sequence[Any]) -> dict[str, Any] | None:
    mode = settings.tool_mode
    if mode == "NONE":
        return {"type": "none"}
    if mode == "ANY":
        if len(offered) == 1 and settings.allowed_tools:
            return {"type": "tool", "name": provider_name(offered[0].name, "anthropic")}
        return {"type": "any"}
    if mode in ("AUTO", "VALIDATED"):
        return {"type": "auto"}
    return None


def _error_response(exc: Exception) -> LlmResponse:
    """An SDK error as an error response: the HTTP status (or, for an error event in a
    stream, Anthropic's error type), and Anthropic's message and error type."""
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    error = body.get("error") if isinstance(body, dict) else None
    message = getattr(exc, "api_message", None) or (
        error.get("message") if isinstance(error, dict) else None
    )
    kind = getattr(exc, "type", None) or (error.get("type") if isinstance(error, dict) else None)
    text = str(message or getattr(exc, "message", None) or exc)
    if kind and str(kind) not in text:
        text = f"{text} ({kind})"
    if isinstance(status, int) and status >= 400:
        return LlmResponse(error_code=str(status), error_message=text)
    return LlmResponse(error_code=str(kind or type(exc).__name__), error_message=text)
