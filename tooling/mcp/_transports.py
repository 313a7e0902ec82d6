"""Where an ``McpToolset`` finds its server: ``StdioServer`` and ``HttpServer``.

Each opens the official SDK's transport for it, and watches the stream from the server
so that the connection knows, before its next use, that the server has gone.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.client._transport import TransportStreams
    from mcp.shared._stream_protocols import ReadStream
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
    from mcp.shared.message import SessionMessage

    from ..auth._credentials import CredentialKey, OAuth2Client
    from ..auth._service import CredentialService

__all__ = [
    "HttpServer",
    "StdioServer",
]


@dataclass(frozen=True)
class StdioServer:
    """An MCP server started as a subprocess and spoken to over its stdin and stdout.

    ``env`` is added to a minimal inherited environment (``PATH``, ``HOME``, ...), as the
    SDK does; the server's stderr is the caller's stderr.
    """

    command: str
    args: Sequence[str] = ()
    env: Mapping[str, str] | None = None
    cwd: str | os.PathLike[str] | None = None

    def describe(self) -> str:
        """The command line, for messages."""
        return " ".join([self.command, *self.args])


@dataclass(frozen=True)
class HttpServer:
    """An MCP server reached over streamable HTTP at ``url``, with extra ``headers``.

    ``auth``: a ``tooling.auth.OAuth2Client`` with a secret, for a server behind OAuth:
    the SDK's OAuth client support finds the authorization server from the server's 401
    (its protected resource metadata), gets a client credentials token, sends it, and gets
    a new one when the server refuses it or it expires. ``auth_issuer``: the issuer the
    client is registered with (tokens are only asked of it). ``credential_service``: where
    the token is kept (a ``tooling.auth.CredentialService``, so other connections and
    processes reuse it; default: this connection's memory).
    """

    url: str
    headers: Mapping[str, str] | None = field(default=None)
    auth: OAuth2Client | None = field(default=None)
    auth_issuer: str | None = field(default=None)
    credential_service: CredentialService | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        auth = self.auth
        if auth is None:
            return
        from ..auth._credentials import OAuth2Client

        if not isinstance(auth, OAuth2Client) or auth.client_secret is None:
            raise TypeError(
                "HttpServer(auth=) takes a tooling.auth.OAuth2Client with a client_secret "
                "(client credentials)"
            )

    def describe(self) -> str:
        """The URL, for messages."""
        return self.url


class WatchedStream:
    """The stream of messages from the server, noting when it ends (the server has gone)."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception]) -> None:
        self._inner = inner
        self.ended = False

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self._inner.receive()
        except BaseException:
            self.ended = True
            raise

    async def aclose(self) -> None:
        self.ended = True
        await self._inner.aclose()

    def __aiter__(self) -> WatchedStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self._inner.__anext__()
        except BaseException:
            self.ended = True
            raise

    @property
    def last_context(self) -> Any:
        """The sender's context of the last message, when the inner stream keeps one."""
        return getattr(self._inner, "last_context", None)

    async def __aenter__(self) -> WatchedStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


@asynccontextmanager
async def open_transport(
    server: StdioServer | HttpServer, watch: list[WatchedStream]
) -> AsyncIterator[TransportStreams]:
    """The SDK transport for ``server``; the watched read stream is appended to ``watch``."""
    if isinstance(server, StdioServer):
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=server.command,
            args=list(server.args),
            env=dict(server.env) if server.env is not None else None,
            cwd=Path(server.cwd) if server.cwd is not None else None,
            # A line that is not UTF-8 is one bad message, skipped: with "strict" the
            # SDK's reader stops there and the connection hangs, alive but deaf.
            encoding_error_handler="replace",
        )
        async with stdio_client(params) as (read_stream, write_stream):
            watched = WatchedStream(read_stream)
            watch.append(watched)
            yield watched, write_stream
    else:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        # The SDK's own defaults: a response stream may stay open for a long time.
        http = httpx2.AsyncClient(
            headers=dict(server.headers or {}),
            timeout=httpx2.Timeout(30.0, read=300.0),
            auth=_oauth_provider(server) if server.auth is not None else None,
        )
        async with http, streamable_http_client(server.url, http_client=http) as streams:
            watched = WatchedStream(streams[0])
            watch.append(watched)
            yield watched, streams[1]


class _MemoryTokens:
    """The SDK's token storage, in memory for one connection's life."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class _StoredTokens(_MemoryTokens):
    """The SDK's token storage over a ``tooling.auth`` credential service."""

    def __init__(self, service: CredentialService, key: CredentialKey) -> None:
        super().__init__()
        self.service = service
        self.key = key

    async def get_tokens(self) -> OAuthToken | None:
        import time

        from mcp.shared.auth import OAuthToken

        record = await self.service.load_credential(self.key)
        token = record.token if record is not None else None
        if token is None:
            return None
        left = None if token.expires_at is None else int(token.expires_at - time.time())
        if left is not None and left <= 0:
            return None
        return OAuthToken(
            access_token=token.token.get_secret_value(),
            expires_in=left,
            scope=" ".join(token.scopes) or None,
            refresh_token=record.refresh_token.get_secret_value()
            if record is not None and record.refresh_token is not None
            else None,
        )

    async def set_tokens(self, tokens: OAuthToken) -> None:
        import time

        from pydantic import SecretStr

        from ..auth._credentials import AccessToken
        from ..auth._service import StoredCredential

        issued = time.time()
        record = StoredCredential(
            token=AccessToken(
                token=SecretStr(tokens.access_token),
                expires_at=issued + tokens.expires_in if tokens.expires_in else None,
                scopes=tuple((tokens.scope or "").split()),
            ),
            refresh_token=SecretStr(tokens.refresh_token) if tokens.refresh_token else None,
            issued_at=issued,
        )
        await self.service.save_credential(self.key, record)


def _token_key(server: HttpServer) -> CredentialKey:
    """Where an MCP server's token for this client is stored."""
    import hashlib

    from ..auth._credentials import CredentialKey

    assert server.auth is not None
    text = f"mcp\n{server.url}\n{server.auth_issuer or ''}\n{server.auth.client_id}"
    scheme = "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:32]
    return CredentialKey("mcp", "", scheme, tuple(sorted(server.auth.scopes)))


def _oauth_provider(server: HttpServer) -> Any:
    """The SDK's client credentials provider for ``server.auth``."""
    from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider

    client = server.auth
    assert client is not None and client.client_secret is not None
    method = client.token_endpoint_auth_method
    return ClientCredentialsOAuthProvider(
        server_url=server.url,
        storage=_MemoryTokens()
        if server.credential_service is None
        else _StoredTokens(server.credential_service, _token_key(server)),
        client_id=client.client_id,
        client_secret=client.client_secret.get_secret_value(),
        token_endpoint_auth_method="client_secret_post"
        if method == "client_secret_post"
        else "client_secret_basic",
        scope=" ".join(client.scopes) or None,
        issuer=server.auth_issuer,
    )
