"""OAuth 2 on the wire: PKCE, the authorization URL, the redirect, and token requests.

Token requests go through ``httpx2`` (the HTTP client the provider SDKs use), imported
only when one is made. Nothing here logs or raises a secret: errors carry the OAuth
error code and the server's description, cut short.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from pydantic import SecretStr

from ._credentials import OAuth2Client

__all__: list[str] = []

logger = logging.getLogger("tooling")

#: Seconds a token request may take before it counts as the endpoint being down.
TOKEN_REQUEST_TIMEOUT = 10.0
#: Longest server text (an error description) repeated in an error message.
_SERVER_TEXT = 200


class TokenEndpointError(Exception):
    """A token request failed: ``error`` is the OAuth error code (``invalid_grant``...)
    or ``unreachable`` / ``bad_response``; the message is safe to show."""

    def __init__(self, message: str, error: str) -> None:
        super().__init__(message)
        self.error = error


@dataclass(frozen=True, slots=True)
class TokenAnswer:
    """What a token endpoint gave."""

    access_token: SecretStr
    token_type: str
    expires_in: float | None
    refresh_token: SecretStr | None
    scope: tuple[str, ...] | None


def new_state() -> str:
    """An unguessable ``state`` value."""
    return secrets.token_urlsafe(32)


def new_code_verifier() -> str:
    """A PKCE code verifier (RFC 7636: 43 to 128 unreserved characters)."""
    return secrets.token_urlsafe(64)


def code_challenge(verifier: str) -> str:
    """The S256 challenge of ``verifier``."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def authorization_uri(
    authorization_url: str,
    client: OAuth2Client,
    scopes: tuple[str, ...],
    state: str,
    verifier: str,
) -> str:
    """The URL the user opens to authorize: the client, scopes, state and PKCE challenge."""
    parts = urlsplit(authorization_url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    query += [("response_type", "code"), ("client_id", client.client_id)]
    if client.redirect_uri:
        query.append(("redirect_uri", client.redirect_uri))
    if scopes:
        query.append(("scope", " ".join(scopes)))
    query += [
        ("state", state),
        ("code_challenge", code_challenge(verifier)),
        ("code_challenge_method", "S256"),
    ]
    return urlunsplit(parts._replace(query=urlencode(query)))


def read_redirect(uri: str) -> dict[str, str]:
    """The query (or fragment) parameters of the redirect the user came back with."""
    parts = urlsplit(uri)
    found = dict(parse_qsl(parts.query, keep_blank_values=True))
    if not found and parts.fragment:
        found = dict(parse_qsl(parts.fragment, keep_blank_values=True))
    return found


_ssl: Any = None


def _client() -> Any:
    """An ``httpx2.AsyncClient`` for one request; the TLS context (slow to build) is made
    once per process and shared."""
    global _ssl
    import httpx2

    if _ssl is None:
        _ssl = httpx2.create_ssl_context()
    return httpx2.AsyncClient(timeout=TOKEN_REQUEST_TIMEOUT, verify=_ssl)


def _cut(text: Any) -> str:
    value = str(text)
    return value if len(value) <= _SERVER_TEXT else value[:_SERVER_TEXT] + "..."


async def token_request(token_url: str, client: OAuth2Client, form: dict[str, str]) -> TokenAnswer:
    """POST ``form`` to ``token_url`` as ``client``; the token, or ``TokenEndpointError``."""
    import httpx2

    headers = {"Accept": "application/json"}
    data = dict(form)
    secret = client.client_secret.get_secret_value() if client.client_secret else None
    method = client.token_endpoint_auth_method
    if method == "client_secret_basic" and secret is not None:
        pair = f"{quote(client.client_id, safe='')}:{quote(secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
    else:
        data["client_id"] = client.client_id
        if method == "client_secret_post" and secret is not None:
            data["client_secret"] = secret
    where = urlsplit(token_url)
    shown = f"{where.scheme}://{where.netloc}{where.path}"
    logger.debug("token request (%s) to %s", form.get("grant_type"), shown)
    try:
        async with _client() as http:
            answer = await http.post(token_url, data=data, headers=headers)
    except httpx2.HTTPError as exc:
        raise TokenEndpointError(
            f"the token endpoint {shown} could not be reached ({type(exc).__name__})",
            "unreachable",
        ) from None
    try:
        body = answer.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise TokenEndpointError(
            f"the token endpoint {shown} answered HTTP {answer.status_code} with something "
            "that is not a JSON object",
            "bad_response",
        )
    if answer.status_code >= 400 or "error" in body:
        error = _cut(body.get("error") or f"http_{answer.status_code}")
        description = body.get("error_description")
        said = f": {_cut(description)}" if description else ""
        raise TokenEndpointError(
            f"the token endpoint {shown} refused the request (HTTP {answer.status_code}, "
            f"{error}{said})",
            error,
        )
    return _token_answer(body, shown)


def _token_answer(body: dict[str, Any], shown: str) -> TokenAnswer:
    token = body.get("access_token")
    if not isinstance(token, str) or not token:
        raise TokenEndpointError(
            f"the token endpoint {shown} answered without an access_token", "bad_response"
        )
    expires_in = body.get("expires_in")
    if isinstance(expires_in, str) and expires_in.isdigit():
        expires_in = int(expires_in)
    if not isinstance(expires_in, int | float) or isinstance(expires_in, bool) or expires_in <= 0:
        expires_in = None
    refresh = body.get("refresh_token")
    scope = body.get("scope")
    return TokenAnswer(
        access_token=SecretStr(token),
        token_type=str(body.get("token_type") or "Bearer"),
        expires_in=float(expires_in) if expires_in is not None else None,
        refresh_token=SecretStr(refresh) if isinstance(refresh, str) and refresh else None,
        scope=tuple(scope.split()) if isinstance(scope, str) else None,
    )


async def discover(discovery_url: str) -> dict[str, Any]:
    """An OpenID Connect discovery document (``authorization_endpoint``,
    ``token_endpoint``...); ``TokenEndpointError`` when it cannot be read."""
    import httpx2

    try:
        async with _client() as http:
            answer = await http.get(discovery_url, headers={"Accept": "application/json"})
        body = answer.json()
    except (httpx2.HTTPError, ValueError) as exc:
        raise TokenEndpointError(
            f"the OpenID Connect discovery document at {discovery_url} could not be read "
            f"({type(exc).__name__})",
            "unreachable",
        ) from None
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("authorization_endpoint"), str)
        or not isinstance(body.get("token_endpoint"), str)
    ):
        raise TokenEndpointError(
            f"the discovery document at {discovery_url} names no authorization and token endpoints",
            "bad_response",
        )
    return body


def now() -> float:
    """Seconds since the epoch (one place, so expiry reads one clock)."""
    return time.time()
