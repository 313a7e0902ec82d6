"""A local OAuth 2 authorization server for the docs and tests: Authlib on Starlette.

Needs Authlib (a development dependency: ``pip install -e '.[dev]'``). Not for
production: clients, codes and tokens live in memory, and ``/authorize`` approves at once.

Authlib's ``AuthorizationServer`` with its client credentials, authorization code (PKCE
required), refresh token (rotating: a used refresh token is revoked) grants and the
RFC 7009 revocation endpoint, given a small Starlette integration and served by uvicorn
on 127.0.0.1 in a thread. ``/authorize`` approves at once for the user named by the
``login`` query parameter (the tests play the browser); ``/api/me`` is a resource that
answers 401 for a missing, expired or revoked token. Counters say how many token
requests of each grant arrived.
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

os.environ.setdefault("AUTHLIB_INSECURE_TRANSPORT", "1")  # plain http on 127.0.0.1

import uvicorn
from authlib.oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import ClientMixin, OAuth2Request, grants
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc9068 import JWTBearerTokenGenerator
from joserfc.jwk import KeySet, RSAKey
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

REDIRECT_URI = "http://127.0.0.1/callback"


@dataclass
class Client(ClientMixin):  # type: ignore[misc]
    client_id: str
    client_secret: str
    grant_types: tuple[str, ...]
    scope: str = "read write"
    redirect_uris: tuple[str, ...] = (REDIRECT_URI,)
    auth_method: str = "client_secret_basic"

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str:
        return self.redirect_uris[0]

    def get_allowed_scope(self, scope: str) -> str:
        if not scope:
            return ""
        allowed = set(self.scope.split())
        return " ".join(s for s in scope.split() if s in allowed)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri in self.redirect_uris

    def check_client_secret(self, client_secret: str) -> bool:
        return secrets.compare_digest(client_secret, self.client_secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == self.auth_method or (endpoint == "revocation")

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.grant_types


@dataclass
class Token:
    client_id: str
    user: str | None
    access_token: str
    refresh_token: str | None
    scope: str
    issued_at: float
    expires_in: int
    revoked: bool = False
    refresh_revoked: bool = False

    def check_client(self, client: Client) -> bool:
        return client.client_id == self.client_id

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return self.expires_in

    def is_expired(self) -> bool:
        return time.time() >= self.issued_at + self.expires_in

    def is_revoked(self) -> bool:
        return self.revoked

    def get_user(self) -> str | None:
        return self.user

    def get_client(self) -> Any:
        return self.client_id


@dataclass
class AuthCode:
    code: str
    client_id: str
    redirect_uri: str
    scope: str
    user: str
    code_challenge: str | None
    code_challenge_method: str | None

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


@dataclass
class Store:
    clients: dict[str, Client] = field(default_factory=dict)
    tokens: list[Token] = field(default_factory=list)
    codes: dict[str, AuthCode] = field(default_factory=dict)
    requests: Counter[str] = field(default_factory=Counter)
    #: Each token request's form (grant type, scope...), in arrival order.
    forms: list[dict[str, str]] = field(default_factory=list)
    #: Fault switches: "garbage" (HTML with 200), "error500", or None.
    fault: str | None = None

    def by_access(self, value: str) -> Token | None:
        return next((t for t in self.tokens if t.access_token == value), None)

    def by_refresh(self, value: str) -> Token | None:
        return next((t for t in self.tokens if t.refresh_token == value), None)


class _Request(OAuth2Request):  # type: ignore[misc]
    def __init__(
        self,
        method: str,
        uri: str,
        headers: dict[str, str],
        form: dict[str, str],
        args: dict[str, str],
    ) -> None:
        super().__init__(method, uri, headers=headers)
        self._form = form
        self._args = args
        self.payload = BasicOAuth2Payload({**args, **form})

    @property
    def args(self) -> dict[str, str]:
        return self._args

    @property
    def form(self) -> dict[str, str]:
        return self._form


class Server(AuthorizationServer):  # type: ignore[misc]
    """Authlib's server, with the Starlette glue an integration provides."""

    def __init__(self, store: Store, expires_in: int) -> None:
        super().__init__(scopes_supported=["openid", "read", "write"])
        self.store = store

        def generate(
            client: Client,
            grant_type: str,
            user: Any = None,
            scope: str | None = None,
            expires_in: int | None = None,
            include_refresh_token: bool = True,
        ) -> dict[str, Any]:
            token: dict[str, Any] = {
                "token_type": "Bearer",
                "access_token": "at-" + secrets.token_urlsafe(24),
                "expires_in": self.expires_in,
            }
            if scope:
                token["scope"] = scope
            if include_refresh_token and grant_type != "client_credentials":
                token["refresh_token"] = "rt-" + secrets.token_urlsafe(24)
            return token

        self.expires_in = expires_in
        self.register_token_generator("default", generate)

    def query_client(self, client_id: str) -> Client | None:
        return self.store.clients.get(client_id)

    def save_token(self, token: dict[str, Any], request: OAuth2Request) -> None:
        user = request.user
        self.store.tokens.append(
            Token(
                client_id=request.client.client_id,
                user=user if isinstance(user, str) else None,
                access_token=token["access_token"],
                refresh_token=token.get("refresh_token"),
                scope=token.get("scope", ""),
                issued_at=time.time(),
                expires_in=token["expires_in"],
            )
        )

    def create_oauth2_request(self, request: Any) -> OAuth2Request:
        return request

    def create_json_request(self, request: Any) -> Any:
        return request

    def handle_response(self, status: int, body: Any, headers: Any) -> Response:
        headers = dict(headers)
        if isinstance(body, dict):
            return JSONResponse(body, status_code=status, headers=headers)
        return Response(body or b"", status_code=status, headers=headers)

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass


class CodeGrant(grants.AuthorizationCodeGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")

    def save_authorization_code(self, code: str, request: OAuth2Request) -> None:
        data = request.payload.data
        self.server.store.codes[code] = AuthCode(
            code=code,
            client_id=request.client.client_id,
            redirect_uri=data.get("redirect_uri", ""),
            scope=request.scope or "",
            user=request.user,
            code_challenge=data.get("code_challenge"),
            code_challenge_method=data.get("code_challenge_method"),
        )

    def query_authorization_code(self, code: str, client: Client) -> AuthCode | None:
        found = self.server.store.codes.get(code)
        return found if found is not None and found.client_id == client.client_id else None

    def delete_authorization_code(self, authorization_code: AuthCode) -> None:
        self.server.store.codes.pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code: AuthCode) -> str:
        return authorization_code.user


class Challenge(CodeChallenge):  # type: ignore[misc]
    def get_authorization_code_challenge(self, authorization_code: AuthCode) -> str | None:
        return authorization_code.code_challenge

    def get_authorization_code_challenge_method(self, authorization_code: AuthCode) -> str | None:
        return authorization_code.code_challenge_method


class RefreshGrant(grants.RefreshTokenGrant):  # type: ignore[misc]
    INCLUDE_NEW_REFRESH_TOKEN = True  # rotation: every refresh gives a new refresh token
    TOKEN_ENDPOINT_AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")

    def authenticate_refresh_token(self, refresh_token: str) -> Token | None:
        token = self.server.store.by_refresh(refresh_token)
        if token is not None and not token.refresh_revoked and not token.revoked:
            return token
        return None

    def authenticate_user(self, refresh_token: Token) -> str | None:
        return refresh_token.user or "client"

    def revoke_old_credential(self, refresh_token: Token) -> None:
        refresh_token.refresh_revoked = True
        refresh_token.revoked = True


class Revocation(RevocationEndpoint):  # type: ignore[misc]
    CLIENT_AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")

    def query_token(self, token_string: str, token_type_hint: str | None) -> Token | None:
        store = self.server.store
        return store.by_access(token_string) or store.by_refresh(token_string)

    def revoke_token(self, token: Token, request: OAuth2Request) -> None:
        token.revoked = True
        token.refresh_revoked = True


class JwtTokens(JWTBearerTokenGenerator):  # type: ignore[misc]
    """RFC 9068 JWT access tokens for one audience, signed with the server's RSA key."""

    def __init__(self, issuer: str, audience: str, keys: KeySet, expires_in: int) -> None:
        super().__init__(issuer, expires_generator=lambda client, grant_type: expires_in)
        self.audience = audience
        self.keys = keys

    def get_jwks(self) -> KeySet:
        return self.keys

    def get_audiences(self, client: Any, user: Any, scope: Any) -> str:
        return self.audience


KEYS = KeySet([RSAKey.generate_key(2048, parameters={"kid": "k1"})])


def build_app(store: Store, expires_in: int) -> tuple[Starlette, Server]:
    server = Server(store, expires_in)
    server.register_grant(grants.ClientCredentialsGrant)
    server.register_grant(CodeGrant, [Challenge(required=True)])
    server.register_grant(RefreshGrant)
    server.register_endpoint(Revocation)

    async def wrap(request: Request) -> _Request:
        form = dict(parse_qsl((await request.body()).decode(), keep_blank_values=True))
        return _Request(
            request.method,
            str(request.url),
            request.headers,
            form,  # type: ignore[arg-type]
            dict(request.query_params),
        )

    async def token(request: Request) -> Response:
        wrapped = await wrap(request)
        # Handlers all run on the server's one event loop, one at a time between awaits.
        store.requests[wrapped.form.get("grant_type", "?")] += 1
        store.requests["total"] += 1
        store.forms.append(dict(wrapped.form))
        if store.fault == "garbage":
            return PlainTextResponse("<html>maintenance</html>", media_type="text/html")
        if store.fault == "error500":
            return PlainTextResponse("Internal Server Error", status_code=500)
        return server.create_token_response(wrapped)

    async def authorize(request: Request) -> Response:
        wrapped = await wrap(request)
        login = request.query_params.get("login")
        grant = server.get_consent_grant(wrapped, end_user=login)
        if request.query_params.get("deny"):
            return server.create_authorization_response(wrapped, grant_user=None, grant=grant)
        return server.create_authorization_response(wrapped, grant_user=login, grant=grant)

    async def revoke(request: Request) -> Response:
        return server.create_endpoint_response("revocation", await wrap(request))

    async def me(request: Request) -> Response:
        header = request.headers.get("authorization", "")
        found = (
            store.by_access(header.removeprefix("Bearer "))
            if header.startswith("Bearer ")
            else None
        )
        if found is None or found.is_expired() or found.revoked:
            return JSONResponse({"error": "invalid_token"}, status_code=401)
        return JSONResponse({"user": found.user, "client": found.client_id, "scope": found.scope})

    async def jwks(request: Request) -> Response:
        return JSONResponse(KEYS.as_dict(private=False))

    async def metadata(request: Request) -> Response:
        base = str(request.base_url).rstrip("/")
        return JSONResponse(
            {"issuer": base, "token_endpoint": f"{base}/token", "jwks_uri": f"{base}/jwks"}
        )

    async def discovery(request: Request) -> Response:
        base = str(request.base_url).rstrip("/")
        return JSONResponse(
            {
                "issuer": base,
                "authorization_endpoint": f"{base}/authorize",
                "token_endpoint": f"{base}/token",
                "revocation_endpoint": f"{base}/revoke",
                "scopes_supported": ["openid", "read", "write"],
            }
        )

    app = Starlette(
        routes=[
            Route("/token", token, methods=["POST"]),
            Route("/authorize", authorize, methods=["GET"]),
            Route("/revoke", revoke, methods=["POST"]),
            Route("/api/me", me, methods=["GET"]),
            Route("/.well-known/openid-configuration", discovery, methods=["GET"]),
            Route("/.well-known/oauth-authorization-server", metadata, methods=["GET"]),
            Route("/jwks", jwks, methods=["GET"]),
        ]
    )
    return app, server


@dataclass
class RunningServer:
    url: str
    store: Store
    server: Server

    @property
    def token_url(self) -> str:
        return f"{self.url}/token"

    @property
    def authorization_url(self) -> str:
        return f"{self.url}/authorize"

    def issue_jwts(self, audience: str) -> None:
        """Client credentials tokens are JWTs for ``audience`` from now on (RFC 9068)."""
        tokens = JwtTokens(self.url, audience, KEYS, self.server.expires_in)
        self.server.register_token_generator("client_credentials", tokens)

    def expire_access_tokens(self) -> None:
        """Every access token issued so far has expired (refresh tokens still work)."""
        for token in self.store.tokens:
            token.issued_at -= 10 * token.expires_in

    def add_client(self, client_id: str, secret: str, *grant_types: str, **options: Any) -> Client:
        client = Client(client_id, secret, tuple(grant_types), **options)
        self.store.clients[client_id] = client
        return client


@contextmanager
def oauth_server(expires_in: int = 3600) -> Iterator[RunningServer]:
    """An authorization server on 127.0.0.1 (a free port), stopped on leaving."""
    store = Store()
    app, server = build_app(store, expires_in)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not running.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the OAuth server did not start")
        time.sleep(0.01)
    port = running.servers[0].sockets[0].getsockname()[1]
    try:
        yield RunningServer(f"http://127.0.0.1:{port}", store, server)
    finally:
        running.should_exit = True
        thread.join(timeout=10)
