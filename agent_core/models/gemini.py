"""``GeminiModel``: Google's Gemini API through google-genai's async client.

``google.genai`` is imported when a ``GeminiModel`` is built, never by ``import
agent_core`` or a mere reference to the class (``issubclass(x, agent_core.GeminiModel)``).
The conversions between our ``Content``/``Part`` and ``google.genai.types`` live in
``agent_core.models._genai`` and are reachable from here by name.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncGenerator
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .._content import Content
from ._common import LoopClient
from .base import BaseLlm, LlmRequest, LlmResponse

if TYPE_CHECKING:
    from google import genai

    from tooling.builtin import BuiltinTool

__all__ = ["GeminiModel"]

#: The conversions, served by ``agent_core.models._genai`` (which imports google.genai)
#: when asked for by name here.
_SDK_NAMES = frozenset(
    {
        "build_config",
        "content_from_genai",
        "content_to_genai",
        "error_response",
        "part_from_genai",
        "part_to_genai",
        "response_from_genai",
    }
)


def _sdk() -> ModuleType:
    from . import _genai  # imports google.genai

    return _genai


def __getattr__(name: str) -> Any:
    if name in _SDK_NAMES:
        return getattr(_sdk(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_API_KEY_VARS = ("GOOGLE_API_KEY", "GEMINI_API_KEY")


class GeminiModel(BaseLlm):
    """A Gemini model, called with google-genai's async client.

    The key is ``api_key``, else the ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY``
    environment variable; it is looked up, and the client built, at the first call (so
    building an agent needs no key). ``base_url`` sends requests elsewhere (a proxy, a
    test server). The client's connections belong to one event loop: a call from another
    loop (each ``asyncio.run``, say) builds a new client, off the loop, in a thread.

    Tools are declared with each tool's ``to_gemini()``; google-genai's automatic
    function calling is turned off (the agent loop runs the tools). An API error comes
    back as an ``LlmResponse`` with ``error_code`` (the HTTP code) and ``error_message``
    (the provider's message) rather than as an exception.
    """

    provider = "gcp.gemini"

    def __init__(
        self, model: str, *, api_key: str | None = None, base_url: str | None = None
    ) -> None:
        super().__init__(model)
        _sdk()  # google.genai is imported here: a reference to the class costs nothing
        self.base_url = base_url
        self._api_key = api_key
        self._clients: LoopClient[genai.Client] = LoopClient(self._new_client, _close)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Call Gemini with the request; an API error becomes an error response."""
        client = await self._clients.get()
        model = llm_request.model or self.model
        sdk = _sdk()
        contents = [sdk.content_to_genai(c) for c in llm_request.contents]
        config = sdk.build_config(llm_request)
        if not stream:
            try:
                response = await client.aio.models.generate_content(
                    model=model, contents=contents, config=config
                )
            except sdk.genai_errors.APIError as exc:
                yield sdk.error_response(exc)
                return
            yield sdk.response_from_genai(response)
            return

        aggregate = sdk.StreamAggregate()
        try:
            chunks = await client.aio.models.generate_content_stream(
                model=model, contents=contents, config=config
            )
        except sdk.genai_errors.APIError as exc:
            yield sdk.error_response(exc)
            return
        try:
            async for chunk in chunks:
                blocked = aggregate.add(chunk)
                if blocked is not None:
                    yield blocked
                    return
                for piece in aggregate.new_text:
                    yield LlmResponse(content=Content("model", [piece]), partial=True)
        except sdk.genai_errors.APIError as exc:
            yield sdk.error_response(exc)
            return
        finally:
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                await aclose()
        yield aggregate.final()

    def supports_builtin(self, tool: BuiltinTool) -> bool:
        """Gemini runs web search, code execution, URL context and file search."""
        return tool.supported_by("gemini")

    @property
    def builtins_beside_functions(self) -> bool:
        """False before Gemini 3: those models refuse built-in tools beside function
        declarations in one request."""
        match = re.match(r"(?:models/)?gemini-(\d+)", self.model)
        return match is None or int(match.group(1)) >= 3

    async def aclose(self) -> None:
        """Close the client, if one was built on the running event loop."""
        await self._clients.aclose()

    def _new_client(self) -> genai.Client:
        from google import genai

        http_options = _sdk().types.HttpOptions(base_url=self.base_url) if self.base_url else None
        # Built off the event loop (LoopClient): a client takes ~0.1 s (TLS setup).
        return genai.Client(
            vertexai=False, api_key=self._resolve_api_key(), http_options=http_options
        )

    def _resolve_api_key(self) -> str:
        if self._api_key:
            return self._api_key
        for var in _API_KEY_VARS:
            key = os.environ.get(var)
            if key:
                return key
        raise RuntimeError(
            f"GeminiModel({self.model!r}) has no API key: pass GeminiModel(..., api_key=...) "
            "or set the GOOGLE_API_KEY (or GEMINI_API_KEY) environment variable. Keys come "
            "from https://aistudio.google.com/apikey; to run without one, use ScriptedModel."
        )


async def _close(client: genai.Client) -> None:
    await client.aio.aclose()
