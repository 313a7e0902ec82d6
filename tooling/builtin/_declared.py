"""Provider-run tools, declared once and mapped to each provider's own form.

A :class:`BuiltinTool` is never run by a scheduler: the model's provider runs it inside
its own turn (a web search, code in the provider's sandbox) and sends back what it did.
Each subclass knows its declaration per provider; a provider that does not offer the
capability is absent from ``providers``, and the agent loop then offers ``fallback``,
drops the tool (``optional=True``) or ends the run with ``tool.unsupported`` before any
request.

The shapes below were checked against the providers' SDK types:
google-genai ``types.Tool`` (``google_search``, ``code_execution``, ``url_context``,
``file_search``), openai ``responses.WebSearchToolParam``/``FileSearchToolParam`` and the
``code_interpreter`` tool with an automatic container, anthropic
``WebSearchTool20250305Param``, ``CodeExecutionTool20250825Param`` and
``WebFetchTool20250910Param``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from .._base import BaseTool
from .._errors import ToolError
from .._types import Diagnostic

if TYPE_CHECKING:
    from google.genai import types as genai_types

    from .._context import ToolContext

__all__ = [
    "BuiltinTool",
    "CodeExecution",
    "FileSearch",
    "WebFetch",
    "WebSearch",
    "google_search",
]

Provider = Literal["gemini", "openai", "anthropic"]


class BuiltinTool(BaseTool):
    """A tool the model's provider runs; declared here, never run by a scheduler.

    ``fallback`` is a tool offered instead where the provider lacks this one;
    ``optional=True`` drops it there (one warning) when there is no fallback.
    """

    #: The capability's name, also the tool's name in the agent's tool list.
    kind: ClassVar[str]
    #: The providers that run it.
    providers: ClassVar[frozenset[str]]

    read_only = True
    concurrency_safe = True

    def __init__(self, *, fallback: BaseTool | None = None, optional: bool = False) -> None:
        self.name = self.kind
        self.fallback = fallback
        self.optional = optional

    @property
    def takes_context(self) -> bool:
        """False: nothing runs here that could use a context."""
        return False

    def supported_by(self, provider: str) -> bool:
        """Whether ``provider`` (``"gemini"``, ``"openai"``, ``"anthropic"``) runs it."""
        return provider in self.providers

    async def run(
        self, args: Mapping[str, Any] | str, ctx: ToolContext | None = None
    ) -> dict[str, Any]:
        """Answers ``tool.unsupported``: the provider runs this tool, not the scheduler."""
        return ToolError(
            f"{self.name!r} is run by the model's provider; it cannot be called here",
            code="tool.unsupported",
        ).to_response()

    # -- declarations --------------------------------------------------------------------

    def _unsupported(self, provider: str) -> ValueError:
        return ValueError(f"{self.name!r} has no {provider} form: {provider} does not run it")

    def _lossy(self, provider: str, dropped: Sequence[str]) -> list[Diagnostic]:
        return [
            Diagnostic(
                "warning",
                "export.lossy",
                f"{provider} has no setting for {setting!r}; it is left out",
                parameter=setting,
            )
            for setting in dropped
        ]

    def to_gemini(self, *, legacy: bool = False) -> genai_types.Tool:  # type: ignore[override]
        """The ``google.genai.types.Tool`` that switches the capability on."""
        if "gemini" not in self.providers:
            raise self._unsupported("gemini")
        declared: genai_types.Tool = self._cached_export("gemini", self._gemini)
        return declared

    def to_openai(self, *, strict: bool = False) -> dict[str, Any]:
        """The OpenAI Responses API tool dict (Chat Completions has no hosted tools)."""
        if "openai" not in self.providers:
            raise self._unsupported("openai")
        return self._cached_export("openai", self._openai)

    def to_anthropic(self) -> dict[str, Any]:
        """The Anthropic Messages API server-tool dict."""
        if "anthropic" not in self.providers:
            raise self._unsupported("anthropic")
        return self._cached_export("anthropic", self._anthropic)

    def to_mcp(self) -> dict[str, Any]:
        """Raises ``ValueError``: a provider-run tool cannot be served over MCP."""
        raise self._unsupported("MCP")

    def _gemini(self) -> tuple[Any, list[Diagnostic]]:
        raise self._unsupported("gemini")

    def _openai(self) -> tuple[dict[str, Any], list[Diagnostic]]:
        raise self._unsupported("openai")

    def _anthropic(self) -> tuple[dict[str, Any], list[Diagnostic]]:
        raise self._unsupported("anthropic")

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class WebSearch(BuiltinTool):
    """Search the web: Gemini ``google_search``, OpenAI ``web_search``, Anthropic
    ``web_search_20250305``.

    ``max_uses`` caps searches per request (Anthropic only); ``allowed_domains`` (Gemini
    has none; OpenAI and Anthropic) and ``blocked_domains`` (Gemini's
    ``exclude_domains``, Anthropic) restrict the results. Anthropic takes one of the two
    lists, not both.
    """

    kind = "web_search"
    providers = frozenset({"gemini", "openai", "anthropic"})

    def __init__(
        self,
        max_uses: int | None = None,
        allowed_domains: Sequence[str] | None = None,
        blocked_domains: Sequence[str] | None = None,
        *,
        fallback: BaseTool | None = None,
        optional: bool = False,
    ) -> None:
        super().__init__(fallback=fallback, optional=optional)
        if max_uses is not None and max_uses < 1:
            raise ValueError("max_uses must be at least 1")
        self.max_uses = max_uses
        self.allowed_domains = tuple(allowed_domains) if allowed_domains else None
        self.blocked_domains = tuple(blocked_domains) if blocked_domains else None
        self.description = "Search the web (run by the model's provider)."

    def _gemini(self) -> tuple[Any, list[Diagnostic]]:
        from google.genai import types

        dropped = [
            s
            for s, v in (("max_uses", self.max_uses), ("allowed_domains", self.allowed_domains))
            if v
        ]
        search = types.GoogleSearch(
            exclude_domains=list(self.blocked_domains) if self.blocked_domains else None
        )
        return types.Tool(google_search=search), self._lossy("gemini", dropped)

    def _openai(self) -> tuple[dict[str, Any], list[Diagnostic]]:
        tool: dict[str, Any] = {"type": "web_search"}
        if self.allowed_domains:
            tool["filters"] = {"allowed_domains": list(self.allowed_domains)}
        dropped = [
            s
            for s, v in (("max_uses", self.max_uses), ("blocked_domains", self.blocked_domains))
            if v
        ]
        return tool, self._lossy("openai", dropped)

    def _anthropic(self) -> tuple[dict[str, Any], list[Diagnostic]]:
        tool: dict[str, Any] = {"type": "web_search_20250305", "name": "web_search"}
        if self.max_uses is not None:
            tool["max_uses"] = self.max_uses
        found: list[Diagnostic] = []
        if self.allowed_domains:
            tool["allowed_domains"] = list(self.allowed_domains)
            if self.blocked_domains:
                found = self._lossy("anthropic", ["blocked_domains"])
        elif self.blocked_domains:
            tool["blocked_domains"] = list(self.blocked_domains)
        return tool, found

    def __repr__(self) -> str:
        settings = [
            f"{k}={v!r}"
            for k, v in (
                ("max_uses", self.max_uses),
                ("allowed_domains", self.allowed_domains),
                ("blocked_domains", self.blocked_domains),
            )
            if v is not None
        ]
        return f"WebSearch({', '.join(settings)})"


class CodeExecution(BuiltinTool):
    """Run code in the provider's sandbox: Gemini ``code_execution``, OpenAI
    ``code_interpreter`` (an automatic container), Anthropic ``code_execution_20250825``.

    Give ``fallback=LocalCodeExecution().tool`` for providers without it.
    """

    kind = "code_execution"
    providers = frozenset({"gemini", "openai", "anthropic"})

    def __init__(self, *, fallback: BaseTool | None = None, optional: bool = False) -> None:
        super().__init__(fallback=fallback, optional=optional)
        self.description = "Run code in a sandbox (run by the model's provider)."

    def _gemini(self) -> tuple[Any, list[Diagnostic]]:
        from google.genai import types

        return types.Tool(code_execution=types.ToolCodeExecution()), []

    def _openai(self) -> tuple[dict[str, Any], list[Diagnostic]]:
        return {"type": "code_interpreter", "container": {"type": "auto"}}, []

    def _anthropic(self) -> tuple[dict[str, Any], list[Diagnostic]]:
        return {"type": "code_execution_20250825", "name": "code_execution"}, []


class WebFetch(BuiltinTool):
    """Read the pages at URLs the conversation names: Gemini ``url_context``, Anthropic
    ``web_fetch_20250910`` (OpenAI has no such tool)."""

    kind = "web_fetch"
    providers = frozenset({"gemini", "anthropic"})

    def __init__(
        self,
        max_uses: int | None = None,
        *,
        fallback: BaseTool | None = None,
        optional: bool = False,
    ) -> None:
        super().__init__(fallback=fallback, optional=optional)
        if max_uses is not None and max_uses < 1:
            raise ValueError("max_uses must be at least 1")
        self.max_uses = max_uses
        self.description = "Fetch web pages (run by the model's provider)."

    def _gemini(self) -> tuple[Any, list[Diagnostic]]:
        from google.genai import types

        dropped = ["max_uses"] if self.max_uses is not None else []
        return types.Tool(url_context=types.UrlContext()), self._lossy("gemini", dropped)

    def _anthropic(self) -> tuple[dict[str, Any], list[Diagnostic]]:
        tool: dict[str, Any] = {"type": "web_fetch_20250910", "name": "web_fetch"}
        if self.max_uses is not None:
            tool["max_uses"] = self.max_uses
        return tool, []


class FileSearch(BuiltinTool):
    """Search the provider's own document stores: Gemini ``file_search`` (store names),
    OpenAI ``file_search`` (vector store ids); Anthropic has no such tool."""

    kind = "file_search"
    providers = frozenset({"gemini", "openai"})

    def __init__(
        self,
        store_ids: Sequence[str],
        *,
        max_results: int | None = None,
        fallback: BaseTool | None = None,
        optional: bool = False,
    ) -> None:
        super().__init__(fallback=fallback, optional=optional)
        if isinstance(store_ids, str) or not store_ids:
            raise ValueError("store_ids must be a non-empty list of store ids")
        self.store_ids = tuple(store_ids)
        self.max_results = max_results
        self.description = "Search documents in the provider's stores."

    def _gemini(self) -> tuple[Any, list[Diagnostic]]:
        from google.genai import types

        search = types.FileSearch(
            file_search_store_names=list(self.store_ids), top_k=self.max_results
        )
        return types.Tool(file_search=search), []

    def _openai(self) -> tuple[dict[str, Any], list[Diagnostic]]:
        tool: dict[str, Any] = {"type": "file_search", "vector_store_ids": list(self.store_ids)}
        if self.max_results is not None:
            tool["max_num_results"] = self.max_results
        return tool, []

    def __repr__(self) -> str:
        return f"FileSearch({list(self.store_ids)!r})"


#: Google Search, as google-adk names it: ``WebSearch()`` with no settings.
google_search = WebSearch()
