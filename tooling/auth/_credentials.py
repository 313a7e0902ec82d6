"""Credentials, the token a tool is handed, and ``AuthConfig`` (a scheme and its credential).

Secret fields are ``SecretStr``: a repr, ``str()``, an error or JSON written by pydantic
shows ``'**********'``. Only :meth:`SecretStr.get_secret_value` gives the value, where a
request is made.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SecretStr, model_validator

from ._schemes import AuthScheme, HttpScheme, OAuth2Scheme, OpenIdConnectScheme, positional

__all__ = [
    "AccessToken",
    "ApiKey",
    "AuthConfig",
    "BasicCredentials",
    "BearerToken",
    "Credential",
    "CredentialKey",
    "OAuth2Client",
]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def __init__(self, *args: Any, **data: Any) -> None:
        positional(type(self), args, data)
        super().__init__(**data)


class ApiKey(_Model):
    """An API key, for an :class:`ApiKeyScheme`."""

    value: SecretStr


class BearerToken(_Model):
    """A bearer token, for ``HttpScheme(scheme="bearer")``."""

    token: SecretStr


class BasicCredentials(_Model):
    """A user name and password, for ``HttpScheme(scheme="basic")``."""

    username: str
    password: SecretStr


class OAuth2Client(_Model):
    """An OAuth 2 client registration: what a token request identifies itself with.

    ``scopes``: what to ask for (default: every scope the flow lists). ``redirect_uri``:
    where the authorization server sends the user back (authorization code).
    ``token_endpoint_auth_method``: how the client authenticates at the token endpoint
    (``client_secret_basic`` by default, ``client_secret_post``, or ``none`` for a
    public client, which PKCE protects).
    """

    client_id: str
    client_secret: SecretStr | None = None
    scopes: tuple[str, ...] = ()
    redirect_uri: str | None = None
    token_endpoint_auth_method: Literal["client_secret_basic", "client_secret_post", "none"] = (
        "client_secret_basic"
    )


#: What an :class:`AuthConfig` may carry.
Credential = ApiKey | BearerToken | BasicCredentials | OAuth2Client


class AccessToken(_Model):
    """An OAuth 2 access token, as a tool is handed it (``tool_context.credential``).

    ``expires_at``: seconds since the epoch (None: the server gave no lifetime).
    The refresh token never reaches a tool: it stays in the credential service.
    """

    token: SecretStr
    expires_at: float | None = None
    scopes: tuple[str, ...] = ()
    token_type: str = "Bearer"

    def expired(self, leeway: float = 0.0, *, now: float | None = None) -> bool:
        """True when the token has expired, or will within ``leeway`` seconds."""
        if self.expires_at is None:
            return False
        return (time.time() if now is None else now) >= self.expires_at - leeway

    @property
    def authorization(self) -> str:
        """The ``Authorization`` header value: ``"Bearer <token>"``."""
        kind = "Bearer" if self.token_type.lower() == "bearer" else self.token_type
        return f"{kind} {self.token.get_secret_value()}"


@dataclass(frozen=True, slots=True)
class CredentialKey:
    """Where a credential is stored: per app, user, scheme (with client) and scopes.

    ``scheme`` is a fingerprint of the scheme and the client id, never a secret.
    ``str(key)`` is the stable text stores index by.
    """

    app_name: str
    user_id: str
    scheme: str
    scopes: tuple[str, ...] = ()

    def __str__(self) -> str:
        return json.dumps(
            [self.app_name, self.user_id, self.scheme, list(self.scopes)],
            separators=(",", ":"),
            ensure_ascii=False,
        )


_ALLOWED: dict[str, tuple[type, ...]] = {
    "apiKey": (ApiKey,),
    "bearer": (BearerToken,),
    "basic": (BasicCredentials,),
    "oauth2": (OAuth2Client,),
    "openIdConnect": (OAuth2Client,),
}


def _scheme_kind(scheme: Any) -> str:
    if isinstance(scheme, HttpScheme):
        return scheme.scheme
    return str(scheme.type)


class AuthConfig(_Model):
    """A scheme and the credential to use with it: what ``@tool(auth=...)`` takes.

    ``credential`` may be left out for an API key or bearer scheme: the user is
    then asked for it (the call answers ``credential_required``). An OAuth 2 or OpenID
    Connect scheme needs an :class:`OAuth2Client`.
    """

    scheme: AuthScheme
    credential: ApiKey | BearerToken | BasicCredentials | OAuth2Client | None = Field(default=None)
    _fingerprint: str | None = PrivateAttr(default=None)
    _scopes: tuple[str, ...] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _fits(self) -> AuthConfig:
        kind = _scheme_kind(self.scheme)
        credential = self.credential
        if credential is None:
            if kind in ("oauth2", "openIdConnect"):
                raise ValueError(f"an {kind} scheme needs an OAuth2Client credential")
            if kind == "basic":
                raise ValueError("a basic scheme needs a BasicCredentials credential")
            return self
        if not isinstance(credential, _ALLOWED[kind]):
            wanted = " or ".join(t.__name__ for t in _ALLOWED[kind])
            raise ValueError(
                f"a {kind} scheme takes a {wanted} credential, not {type(credential).__name__}"
            )
        return self

    @property
    def scopes(self) -> tuple[str, ...]:
        """The scopes asked for, sorted: the client's, else every scope the flow lists."""
        if self._scopes is None:
            self._scopes = self._asked_scopes()
        return self._scopes

    def _asked_scopes(self) -> tuple[str, ...]:
        credential = self.credential
        if isinstance(credential, OAuth2Client) and credential.scopes:
            return tuple(sorted(set(credential.scopes)))
        scheme = self.scheme
        if isinstance(scheme, OAuth2Scheme):
            flow = scheme.flows.client_credentials or scheme.flows.authorization_code
            return tuple(sorted(flow.scopes)) if flow is not None else ()
        if isinstance(scheme, OpenIdConnectScheme):
            return tuple(sorted(scheme.scopes))
        return ()

    @property
    def fingerprint(self) -> str:
        """``sha256:`` of the scheme and the client id (no secret): names the scheme in
        a :class:`CredentialKey`."""
        found = self._fingerprint
        if found is None:
            credential = self.credential
            client = credential.client_id if isinstance(credential, OAuth2Client) else None
            text = json.dumps(
                [self.scheme.model_dump(mode="json", exclude={"description"}), client],
                sort_keys=True,
                separators=(",", ":"),
            )
            found = "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:32]
            self._fingerprint = found
        return found

    def key(self, app_name: str, user_id: str) -> CredentialKey:
        """Where this config's credential is stored for ``user_id`` of ``app_name``."""
        return CredentialKey(app_name, user_id, self.fingerprint, self.scopes)

    def public(self) -> dict[str, Any]:
        """What may be shown to a user or a model: the scheme, the client id and scopes,
        never a secret."""
        shown: dict[str, Any] = {"scheme": self.scheme.model_dump(mode="json", exclude_none=True)}
        credential = self.credential
        if isinstance(credential, OAuth2Client):
            shown["client_id"] = credential.client_id
            shown["scopes"] = list(self.scopes)
        return shown
