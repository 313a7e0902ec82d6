"""``OpenAPIToolset``: every operation of an OpenAPI 3.0 or 3.1 spec as a ``RestApiTool``.

The spec is read, checked and planned when the toolset is built (a broken spec is a
``ValueError`` naming the operation and the JSON pointer); the tools share one
:class:`HttpSide`: the base URL, the default headers, the timeout, the credentials and
one ``httpx2.AsyncClient``, opened on first use and closed by ``close()`` (a client the
user gave stays theirs: it is never closed here).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._base import BaseTool, BaseToolset, ToolFilter
from .._errors import ToolError
from .._types import Diagnostic
from ._document import Document, load
from ._operations import plan_operations
from ._requests import BaseUrl
from ._security import SecuritySide
from ._tool import RestApiTool

if TYPE_CHECKING:
    import httpx2

    from .._context import ReadonlyContext

__all__ = ["OpenAPIToolset"]


def _server_url(document: Mapping[str, Any]) -> str | None:
    """The spec's first server URL, its variables replaced by their defaults."""
    servers = document.get("servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], Mapping):
        return None
    server = servers[0]
    url = server.get("url")
    if not isinstance(url, str):
        return None
    variables = server.get("variables") or {}

    def default(match: re.Match[str]) -> str:
        spec = variables.get(match[1]) if isinstance(variables, Mapping) else None
        value = spec.get("default") if isinstance(spec, Mapping) else None
        return str(value) if value is not None else match[0]

    return re.sub(r"{([^}]+)}", default, url)


class HttpSide:
    """What every tool of one toolset shares to make its requests."""

    def __init__(
        self,
        *,
        base_url: str | None,
        server_url: str | None,
        headers: Mapping[str, str] | None,
        timeout: float | None,
        client: httpx2.AsyncClient | None,
        security: SecuritySide,
    ) -> None:
        self.base_url = base_url
        self.server_url = server_url
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.security = security
        self._own_client = client is None
        self._client = client
        self._loop: asyncio.AbstractEventLoop | None = None
        self._parsed: BaseUrl | None = None

    def base(self) -> BaseUrl:
        """The parsed base URL (``tool.failed`` when there is none)."""
        url = self.base_url or self.server_url
        if self._parsed is not None and self._parsed.url == url:
            return self._parsed
        if not url:
            raise ToolError(
                "the API has no base URL: the spec lists no server; give base_url=",
                code="tool.failed",
            )
        try:
            self._parsed = BaseUrl.parse(url)
        except ValueError as exc:
            hint = " (a relative server URL needs base_url=)" if not self.base_url else ""
            raise ToolError(f"{exc}{hint}", code="tool.failed") from None
        return self._parsed

    def client(self) -> httpx2.AsyncClient:
        """The toolset's client, opened on first use (again on another event loop)."""
        if not self._own_client:
            assert self._client is not None
            return self._client
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop or self._client.is_closed:
            import httpx2

            self._client = httpx2.AsyncClient(
                follow_redirects=False,
                timeout=httpx2.Timeout(self.timeout),
                trust_env=False,
            )
            self._loop = loop
        return self._client

    def scrub(self, text: str) -> str:
        return self.security.secrets.scrub(text)

    def scrub_error(self, error: ToolError) -> ToolError:
        """``error`` (changed in place) with no credential the toolset sent in its
        message or details: a server may echo a request back in its answer."""
        secrets = self.security.secrets
        if not secrets.values:
            return error
        error.message = secrets.scrub(error.message)
        error.args = (error.message,)
        if error.details is not None:
            text = json.dumps(error.details, ensure_ascii=False)
            cleaned = secrets.scrub(text)
            if cleaned != text:
                error.details = json.loads(cleaned)
        return error

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if self._own_client and client is not None and self._loop is asyncio.get_running_loop():
            await client.aclose()


class OpenAPIToolset(BaseToolset):
    """A REST API described by OpenAPI, one :class:`RestApiTool` per operation.

    Args:
        spec: The OpenAPI 3.0 or 3.1 document: a dict, JSON or YAML text, or a
            ``pathlib.Path`` to a ``.json``/``.yaml`` file (YAML needs PyYAML, the
            ``openapi`` extra). Swagger 2.0 is refused.
        base_url: Where requests go (else the spec's first server). Requests never go
            anywhere else: path values are percent-encoded, and redirects to another
            origin are not followed.
        tool_filter: Tool names to keep, or ``predicate(tool, readonly_context)``.
        tool_name_prefix: Prefix for every tool name (``f"{prefix}_{name}"``).
        auth: Credentials by security scheme name (``{"api_key": ApiKey(...)}``), or one
            credential used for every scheme it fits. An operation whose scheme has no
            credential asks the user for one (``credential_required``).
        headers: Headers sent with every request.
        timeout: Seconds a call may take, answer included (``tool.timeout`` past it).
        client: Your own ``httpx2.AsyncClient`` (then not closed by :meth:`close`).

    Raises:
        ValueError: The spec cannot be read or an operation cannot become a tool; the
            message names the operation and the JSON pointer.
    """

    def __init__(
        self,
        spec: Mapping[str, Any] | str | os.PathLike[str],
        *,
        base_url: str | None = None,
        tool_filter: ToolFilter | None = None,
        tool_name_prefix: str | None = None,
        auth: Mapping[str, Any] | Any | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = 30.0,
        client: httpx2.AsyncClient | None = None,
    ) -> None:
        super().__init__(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
        root, source = load(spec)
        document = Document(
            root, "3.1" if str(root["openapi"]).startswith("3.1") else "3.0", source
        )
        if base_url is not None:
            BaseUrl.parse(base_url)  # a bad base URL is an error now, not at the first call
        security = SecuritySide.read(root, auth)
        plans, left_out = plan_operations(document)
        choices = [security.choose(plan) for plan in plans]
        self._http = HttpSide(
            base_url=base_url,
            server_url=_server_url(root),
            headers=headers,
            timeout=timeout,
            client=client,
            security=security,
        )
        self._tools: list[BaseTool] = [
            RestApiTool(plan, self._http, choice)
            for plan, choice in zip(plans, choices, strict=True)
        ]
        self.diagnostics: list[Diagnostic] = [*left_out]
        """What was noticed about the spec: operations left out (with why)."""
        for diagnostic in [*left_out, *(d for p in plans for d in p.diagnostics)]:
            if diagnostic.level == "warning":
                warnings.warn(diagnostic.message, UserWarning, stacklevel=2)
        self.title = str((root.get("info") or {}).get("title") or "")
        """The spec's ``info.title``."""

    @property
    def base_url(self) -> str | None:
        """Where requests go: ``base_url`` if given, else the spec's first server URL.
        Setting it points every tool of the toolset elsewhere."""
        return self._http.base_url or self._http.server_url

    @base_url.setter
    def base_url(self, url: str | None) -> None:
        if url is not None:
            BaseUrl.parse(url)
        self._http.base_url = url

    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        """One :class:`RestApiTool` per operation (built once, with the toolset)."""
        return list(self._tools)

    async def close(self) -> None:
        """Close the HTTP client the toolset opened (a ``client=`` of yours stays open)."""
        await self._http.aclose()
