"""Serving behind bearer tokens: ``McpAuth`` and the JWT verifier it uses by default.

Built on the SDK's resource-server support (its bearer middleware answers 401 with the
protected resource metadata when a token is missing or invalid). A verified token's
scopes are the call's granted scopes, so a tool's ``scopes=`` decide who may call it,
and ``tools/list`` shows only the tools those scopes allow.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.auth.provider import AccessToken as SdkAccessToken
    from mcp.server.auth.provider import TokenVerifier
    from mcp.server.auth.settings import AuthSettings

__all__ = ["McpAuth"]

logger = logging.getLogger("tooling")

#: Seconds before the issuer's keys may be fetched again for a token naming an unknown key.
REFETCH_AFTER = 60.0

_ALGORITHMS = ["RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "EdDSA"]


@dataclass(frozen=True)
class McpAuth:
    """Bearer tokens an MCP server over streamable HTTP accepts.

    ``issuer_url``: the authorization server that issues them. ``audience``: the ``aud``
    a token must carry (this server's identifier). ``verifier``: the SDK's
    ``TokenVerifier`` to check tokens with; by default they are JWT access tokens checked
    against the issuer's published keys (its ``jwks_uri``, found from its metadata),
    issuer, audience and expiry. ``resource_url``: this server's URL, for the protected
    resource metadata a 401 points to (default: ``audience`` when it is a URL, else the
    URL the server is served at). ``required_scopes``: scopes every request needs.
    """

    issuer_url: str
    audience: str
    verifier: Any = None
    resource_url: str | None = None
    required_scopes: tuple[str, ...] = field(default=())

    def token_verifier(self) -> TokenVerifier:
        """The verifier given, or a :class:`JwtVerifier` for the issuer and audience."""
        if self.verifier is not None:
            return self.verifier  # type: ignore[no-any-return]
        return JwtVerifier(self.issuer_url, self.audience)

    def settings(self, served_at: str | None) -> AuthSettings:
        """The SDK's settings: this server as a resource server of the issuer."""
        from mcp.server.auth.settings import AuthSettings

        resource = self.resource_url
        if resource is None:
            resource = self.audience if self.audience.startswith(("http://", "https://")) else None
        resource = resource or served_at
        return AuthSettings(
            issuer_url=self.issuer_url,
            resource_server_url=resource,
            required_scopes=list(self.required_scopes) or None,
            validate_token_resource=False,  # the verifier checks the audience
        )


class JwtVerifier:
    """Checks JWT access tokens (RFC 9068) with the issuer's published keys.

    The issuer's metadata (``/.well-known/oauth-authorization-server``, else
    ``/.well-known/openid-configuration``) names its ``jwks_uri``; the keys are fetched
    once, and again (once) when a token names a key not seen yet. Scopes come from the
    ``scope`` claim (space-separated) or ``scp`` (a list). The keys are fetched again at
    most once a minute, however many tokens name unknown keys.
    """

    def __init__(self, issuer_url: str, audience: str) -> None:
        self.issuer_url = issuer_url.rstrip("/")
        self.audience = audience
        self._keys: dict[str, Any] = {}
        self._jwks_uri: str | None = None
        self._fetched_at = float("-inf")

    async def _fetch_keys(self) -> None:
        import httpx2
        import jwt

        async with httpx2.AsyncClient(timeout=10.0) as http:
            if self._jwks_uri is None:
                for suffix in ("oauth-authorization-server", "openid-configuration"):
                    answer = await http.get(f"{self.issuer_url}/.well-known/{suffix}")
                    if answer.status_code == 200:
                        self._jwks_uri = answer.json().get("jwks_uri")
                        if self._jwks_uri:
                            break
                if not self._jwks_uri:
                    raise ValueError(f"the issuer {self.issuer_url} publishes no jwks_uri")
            keys = (await http.get(self._jwks_uri)).json()
        found = jwt.PyJWKSet.from_dict(keys)
        self._keys = {k.key_id or "": k for k in found.keys}

    async def verify_token(self, token: str) -> SdkAccessToken | None:
        """The token's access info when it is valid, else None (the request gets a 401)."""
        import jwt
        from mcp.server.auth.provider import AccessToken as SdkAccessToken

        try:
            kid = jwt.get_unverified_header(token).get("kid") or ""
            if kid not in self._keys and time.monotonic() - self._fetched_at >= REFETCH_AFTER:
                self._fetched_at = time.monotonic()
                await self._fetch_keys()
            key = self._keys.get(kid) or (next(iter(self._keys.values())) if not kid else None)
            if key is None:
                return None
            claims = jwt.decode(
                token,
                key.key,
                algorithms=_ALGORITHMS,
                audience=self.audience,
                issuer=self.issuer_url,
                options={"require": ["exp", "iss", "aud"]},
            )
        except Exception as exc:  # any bad token is just not accepted
            logger.info("a bearer token was refused (%s)", type(exc).__name__)
            return None
        scope = claims.get("scope")
        scopes = scope.split() if isinstance(scope, str) else list(claims.get("scp") or [])
        return SdkAccessToken(
            token=token,
            client_id=str(claims.get("client_id") or claims.get("azp") or claims.get("sub") or ""),
            scopes=[str(s) for s in scopes],
            expires_at=int(claims["exp"]),
            subject=claims.get("sub"),
            claims={"iss": claims.get("iss")},
        )

    def __repr__(self) -> str:
        return f"JwtVerifier({self.issuer_url!r}, audience={self.audience!r})"


def token_scopes(request: Any) -> frozenset[str]:
    """The scopes of the verified token the HTTP ``request`` carried (none without one)."""
    from mcp.server.auth.middleware.auth_context import get_access_token
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

    scope = getattr(request, "scope", None)
    user = scope.get("user") if isinstance(scope, dict) else None
    if isinstance(user, AuthenticatedUser):
        return frozenset(user.access_token.scopes)
    token = get_access_token()
    return frozenset(token.scopes) if token is not None else frozenset()
