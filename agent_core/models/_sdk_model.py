"""``SdkModel``: what a model called through a provider SDK's async client shares.

The OpenAI and Anthropic adapters differ only in their wire shapes; the rest is one
template here: the key (given, else an environment variable) looked up when the first
client is built, one client per event loop (:class:`~._common.LoopClient`), a call that
yields one response or the streamed text pieces then the assembled turn, and the SDK's
API errors turned into error responses. Nothing here imports a provider's SDK.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncGenerator
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from . import _common as common
from .base import BaseLlm, LlmRequest, LlmResponse

__all__: list[str] = []

ClientT = TypeVar("ClientT")


class Assembler(Protocol):
    """Streamed events in, new text out; the whole turn (or a stream error) at the end."""

    def add(self, event: Any) -> str | None: ...

    def final(self) -> LlmResponse: ...


class SdkModel(BaseLlm, Generic[ClientT]):
    """A model behind a provider SDK's async client (built at the first call, per loop).

    A subclass names its key's environment variable and where keys come from, builds
    and closes the client, and speaks its API: :meth:`request_body`, :meth:`_create`,
    :meth:`_read_response`, :meth:`_assembler`, :meth:`_api_errors` and
    :meth:`_error_response`.
    """

    #: The environment variable holding the key, and the page where keys are made.
    key_variable: ClassVar[str] = ""
    key_page: ClassVar[str] = ""

    def __init__(self, model: str, *, api_key: str | None, base_url: str | None) -> None:
        super().__init__(model)
        self.base_url = base_url
        self._api_key = api_key
        self._clients: common.LoopClient[ClientT] = common.LoopClient(
            self._new_client, self._close_client
        )

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Ask the model; an API error becomes an error response."""
        client = await self._clients.get()
        body = self.request_body(llm_request)
        try:
            if not stream:
                yield self._read_response(await self._create(client, body, stream=False))
                return
            events = await self._create(client, body, stream=True)
            assembler = self._assembler()
            try:
                async for event in events:
                    text = assembler.add(event)
                    error: LlmResponse | None = getattr(assembler, "error", None)
                    if error is not None:
                        yield error
                        return
                    if text:
                        yield common.partial_text(text)
            finally:
                await events.close()
            yield assembler.final()
        except self._api_errors() as exc:
            yield self._error_response(exc)

    async def aclose(self) -> None:
        """Close the client, if one was built on the running event loop."""
        await self._clients.aclose()

    def key(self) -> str:
        """The API key: the one given, else the environment variable's (or a clear error)."""
        return common.api_key(self._api_key, self.key_variable, repr(self), self.key_page)

    # -- what each API says differently ------------------------------------------------------

    @abstractmethod
    def request_body(self, llm_request: LlmRequest) -> dict[str, Any]:
        """The keyword arguments this model gives the SDK's ``create`` for a request."""

    @abstractmethod
    def _new_client(self) -> ClientT: ...

    @abstractmethod
    async def _close_client(self, client: ClientT) -> None: ...

    @abstractmethod
    async def _create(self, client: ClientT, body: dict[str, Any], *, stream: bool) -> Any:
        """The SDK call: a response, or (``stream``) an async stream of events."""

    @abstractmethod
    def _read_response(self, response: Any) -> LlmResponse: ...

    @abstractmethod
    def _assembler(self) -> Assembler: ...

    @abstractmethod
    def _api_errors(self) -> type[Exception]:
        """The SDK's base class of API errors (imported when an error is being matched)."""

    @abstractmethod
    def _error_response(self, exc: Exception) -> LlmResponse: ...
