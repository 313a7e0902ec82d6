"""``OpenAIModel``: OpenAI's models through the official ``openai`` SDK's async client.

The SDK is imported when a model is built, never by ``import agent_core`` or a mere
reference to ``agent_core.OpenAIModel``. The wire shapes of the two APIs live in
``_openai_responses`` (the default) and ``_openai_chat``; this module holds the client,
the tool declarations and the translation of API errors.
"""

from __future__ import annotations

import logging
import warnings
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from .._output import FINAL_RESULT, FinalResult
from . import _common as common
from . import _openai_chat, _openai_responses
from ._sdk_model import Assembler, SdkModel
from .base import LlmRequest, LlmResponse

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from tooling import BaseTool
    from tooling.builtin import BuiltinTool

__all__ = ["OpenAIModel"]

logger = logging.getLogger("agent_core")


class OpenAIModel(SdkModel["AsyncOpenAI"]):
    """An OpenAI model, called with the ``openai`` SDK's ``AsyncOpenAI`` client.

    ``api="responses"`` (the default) uses the Responses API, ``api="chat"`` Chat
    Completions (also what most OpenAI-compatible servers speak). The key is ``api_key``,
    else ``OPENAI_API_KEY``; ``base_url`` sends requests elsewhere, else the SDK's own
    ``OPENAI_BASE_URL``. The client is built at the first call (one per event loop), so
    building a model needs no key; building one imports the SDK (``pip install
    'agent-tooling[openai]'``).

    Tools are declared with ``to_openai(strict=True)``; a tool whose schema strict mode
    cannot express (an open ``dict``) is declared with ``strict=False`` instead, with a
    warning naming it. API errors (a bad key, a rate limit still hit after the SDK's
    retries, a bad request) come back as error responses carrying the HTTP status as
    ``error_code`` and OpenAI's message, never as exceptions.
    """

    provider = "openai"

    key_variable = "OPENAI_API_KEY"
    key_page = "https://platform.openai.com/api-keys"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        api: Literal["responses", "chat"] = "responses",
    ) -> None:
        if api not in ("responses", "chat"):
            raise ValueError(f"api must be 'responses' or 'chat', not {api!r}")
        _import_sdk()
        super().__init__(model, api_key=api_key, base_url=base_url)
        self.api = api
        self._wire = _openai_responses if api == "responses" else _openai_chat
        self._declarations: weakref.WeakKeyDictionary[BaseTool, dict[str, Any]] = (
            weakref.WeakKeyDictionary()
        )

    def __repr__(self) -> str:
        return f"OpenAIModel({self.model!r}, api={self.api!r})"

    def request_body(self, llm_request: LlmRequest) -> dict[str, Any]:
        """The keyword arguments this model gives the SDK's ``create`` for a request."""
        settings = common.read_settings(llm_request.config)
        common.warn_unused(self, settings, self._wire.SETTINGS, self.api)
        offered = common.offered_tools(llm_request.tools, settings)
        answer = _json_mode(offered)
        if answer is not None:  # the final answer only: the API's JSON mode gives it
            offered = []
        body: dict[str, Any] = self._wire.build_request(
            llm_request, llm_request.model or self.model, settings, self._declare(offered)
        )
        if answer is not None:
            function = self._declare([answer])[0]["function"]
            spec = {
                "name": FINAL_RESULT,
                "schema": function["parameters"],
                "strict": function["strict"],
            }
            if self.api == "chat":
                body["response_format"] = {"type": "json_schema", "json_schema": spec}
            else:
                body["text"] = {"format": {"type": "json_schema", **spec}}
        return body

    def supports_builtin(self, tool: BuiltinTool) -> bool:
        """On the Responses API: web search, code interpreter and file search. Chat
        Completions runs no built-in tools."""
        return self.api == "responses" and tool.supported_by("openai")

    async def _create(self, client: AsyncOpenAI, body: dict[str, Any], *, stream: bool) -> Any:
        if stream:
            body["stream"] = True
            if self.api == "chat":
                body["stream_options"] = {"include_usage": True}
        if self.api == "responses":
            return await client.responses.create(**body)
        return await client.chat.completions.create(**body)

    def _read_response(self, response: Any) -> LlmResponse:
        read: LlmResponse = self._wire.read_response(response)
        return read

    def _assembler(self) -> Assembler:
        assembler: Assembler = self._wire.StreamAssembler()
        return assembler

    def _api_errors(self) -> type[Exception]:
        import openai

        return openai.APIError

    def _error_response(self, exc: Exception) -> LlmResponse:
        return _error_response(exc)

    def _declare(self, tools: Sequence[BaseTool]) -> list[dict[str, Any]]:
        out = []
        for tool in tools:
            declaration = self._declarations.get(tool)
            if declaration is None:
                declaration = _declaration(tool)
                self._declarations[tool] = declaration
            out.append(declaration)
        return out

    def _new_client(self) -> AsyncOpenAI:
        import openai

        return openai.AsyncOpenAI(api_key=self.key(), base_url=self.base_url)

    async def _close_client(self, client: AsyncOpenAI) -> None:
        await client.close()


def _import_sdk() -> None:
    try:
        import openai  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            "OpenAIModel needs the openai package: pip install 'agent-tooling[openai]'"
        ) from exc


def _json_mode(offered: Sequence[BaseTool]) -> BaseTool | None:
    """The ``final_result`` tool of an ``output_schema`` agent when it is the only tool
    offered: then the answer is asked for in the API's JSON mode instead."""
    if len(offered) == 1 and isinstance(offered[0], FinalResult):
        return offered[0]
    return None


def _declaration(tool: BaseTool) -> dict[str, Any]:
    """``to_openai(strict=True)``, or the plain form (with a warning) when strict mode
    cannot express the tool's schema."""
    try:
        return tool.to_openai(strict=True)
    except ValueError as exc:
        message = (
            f"{tool.name}: declared to OpenAI without strict mode (the model's arguments are "
            f"then checked by the tool only): {exc}"
        )
        warnings.warn(message, UserWarning, stacklevel=5)
        logger.warning("%s", message)
        return tool.to_openai(strict=False)


def _error_response(exc: Exception) -> LlmResponse:
    """An SDK error as an error response: the HTTP status, and OpenAI's own message and
    code (``invalid_api_key``, ``rate_limit_exceeded``, ...)."""
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    message = body.get("message") if isinstance(body, dict) else None
    code = getattr(exc, "code", None) or getattr(exc, "type", None)
    text = str(message or getattr(exc, "message", None) or exc)
    if code and str(code) not in text:
        text = f"{text} ({code})"
    if isinstance(status, int) and status >= 400:
        return LlmResponse(error_code=str(status), error_message=text)
    return LlmResponse(error_code=str(code or type(exc).__name__), error_message=text)
