"""Credentials for an operation's ``security`` requirements, applied to its request.

The spec's ``components.securitySchemes`` say where each credential goes (an API key in a
header, query parameter or cookie; HTTP bearer or basic; an OAuth 2 or OpenID Connect
access token as a bearer token). An operation's ``security`` (else the spec's) lists
alternatives: the first whose schemes all have a credential is used; an empty one means
the operation may be called without. When none can be met, the call asks the user
through ``ctx.request_credential`` (the call answers ``credential_required``) with an
auth config that names the scheme and never holds a secret; on resume the user's answer
(``ctx.get_auth_response``) is read: ``{"api_key": ...}``, ``{"token": ...}`` (or
``"access_token"``), ``{"username": ..., "password": ...}``.

Secrets are only ever put into the request; :func:`Secrets.scrub` removes them from any
text that is shown.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._errors import ToolError
from ._document import SpecError

if TYPE_CHECKING:
    from .._context import ToolContext
    from ._operations import OperationPlan
    from ._requests import RequestParts

__all__: list[str] = []


def _secret(value: Any) -> str:
    """The text of a secret field (``SecretStr`` or plain)."""
    reveal = getattr(value, "get_secret_value", None)
    return str(reveal() if callable(reveal) else value)


@dataclass(frozen=True)
class Scheme:
    """A security scheme of the spec, as far as a request needs it."""

    name: str  # its key under securitySchemes
    type: str  # apiKey, http, oauth2, openIdConnect, mutualTLS
    location: str = "header"  # apiKey: header, query, cookie
    parameter: str = ""  # apiKey: the header/query/cookie name
    http_scheme: str = "bearer"  # http: bearer, basic
    raw: Mapping[str, Any] = field(default_factory=dict)

    def auth_config(self, scopes: list[str]) -> dict[str, Any]:
        """What the user is asked a credential for: public facts only."""
        config: dict[str, Any] = {"openapi_scheme": self.name, "type": self.type}
        if self.type == "apiKey":
            config.update({"in": self.location, "name": self.parameter})
        elif self.type == "http":
            config["scheme"] = self.http_scheme
        if scopes:
            config["scopes"] = sorted(scopes)
        return config


def read_schemes(document: Mapping[str, Any]) -> dict[str, Scheme]:
    """The spec's ``components.securitySchemes``."""
    components = document.get("components") or {}
    found = components.get("securitySchemes") if isinstance(components, Mapping) else None
    if not isinstance(found, Mapping):
        return {}
    out: dict[str, Scheme] = {}
    for name, node in found.items():
        where = f"#/components/securitySchemes/{name}"
        if not isinstance(node, Mapping) or not isinstance(node.get("type"), str):
            raise SpecError(f"the security scheme at {where} has no 'type'")
        kind = node["type"]
        if kind == "apiKey":
            if node.get("in") not in ("header", "query", "cookie") or not node.get("name"):
                raise SpecError(f"the apiKey scheme at {where} needs 'name' and 'in'")
            out[name] = Scheme(name, kind, str(node["in"]), str(node["name"]), raw=node)
        elif kind == "http":
            scheme = str(node.get("scheme", "bearer")).lower()
            out[name] = Scheme(name, kind, http_scheme=scheme, raw=node)
        else:
            out[name] = Scheme(name, kind, raw=node)
    return out


@dataclass
class Applied:
    """Credentials chosen for one call: header, query and cookie values to add."""

    headers: dict[str, str] = field(default_factory=dict)
    query: list[tuple[str, str]] = field(default_factory=list)
    cookies: dict[str, str] = field(default_factory=dict)

    def apply(self, parts: RequestParts) -> None:
        """Add the credentials to ``parts``, over any argument of the same name."""
        if self.query:
            names = {name for name, _ in self.query}
            parts.query = [(k, v) for k, v in parts.query if k not in names] + self.query
        for name, value in self.headers.items():
            for existing in [k for k in parts.headers if k.lower() == name.lower()]:
                del parts.headers[existing]
            parts.headers[name] = value
        parts.cookies.update(self.cookies)


class Secrets:
    """The secret values a toolset holds, to remove from text that is shown."""

    def __init__(self) -> None:
        self.values: set[str] = set()

    def add(self, value: str) -> str:
        if len(value) >= 4:
            self.values.add(value)
        return value

    def scrub(self, text: str) -> str:
        for value in self.values:
            text = text.replace(value, "***")
        return text


def _from_answer(scheme: Scheme, answer: Mapping[str, Any]) -> Any:
    """A credential from the user's answer to a ``request_credential`` call."""
    if scheme.type == "apiKey":
        value = answer.get("api_key", answer.get("value"))
        return {"api_key": value} if isinstance(value, str) and value else None
    if scheme.type == "http" and scheme.http_scheme == "basic":
        user, password = answer.get("username"), answer.get("password")
        if isinstance(user, str) and isinstance(password, str):
            return {"username": user, "password": password}
        return None
    token = answer.get("token", answer.get("access_token"))
    return {"token": token} if isinstance(token, str) and token else None


def _put(scheme: Scheme, credential: Any, applied: Applied, secrets: Secrets) -> bool:
    """Add ``credential`` for ``scheme`` to ``applied``; False when it does not fit."""
    if isinstance(credential, Mapping):  # the user's answer, read by _from_answer
        value = credential.get("api_key") or credential.get("token")
        user, password = credential.get("username"), credential.get("password")
    else:
        value = None
        for attribute in ("value", "token"):
            if hasattr(credential, attribute):
                value = _secret(getattr(credential, attribute))
        user = getattr(credential, "username", None)
        password = _secret(credential.password) if hasattr(credential, "password") else None
    if scheme.type == "apiKey":
        if not value:
            return False
        secret = secrets.add(str(value))
        if scheme.location == "header":
            applied.headers[scheme.parameter] = secret
        elif scheme.location == "query":
            applied.query.append((scheme.parameter, secret))
        else:
            applied.cookies[scheme.parameter] = secret
        return True
    if scheme.type == "http" and scheme.http_scheme == "basic":
        if user is None or password is None:
            return False
        secrets.add(str(password))
        pair = base64.b64encode(f"{user}:{password}".encode()).decode()
        applied.headers["Authorization"] = "Basic " + secrets.add(pair)
        return True
    if scheme.type in ("http", "oauth2", "openIdConnect"):
        if not value:
            return False
        applied.headers["Authorization"] = "Bearer " + secrets.add(str(value))
        return True
    return False  # mutualTLS and unknown types: configure the client= instead


@dataclass
class SecuritySide:
    """The schemes of a spec and the credentials the toolset was given for them."""

    schemes: dict[str, Scheme]
    given: dict[str, Any]
    secrets: Secrets = field(default_factory=Secrets)

    def check(self, plan: OperationPlan) -> None:
        """Every scheme an operation names is declared (a :class:`SpecError` if not)."""
        for requirement in plan.security or ():
            for name in requirement:
                if name not in self.schemes:
                    raise SpecError(
                        f"operation {plan.name!r} ({plan.label}, {plan.pointer}) requires the "
                        f"security scheme {name!r}, which components.securitySchemes lacks"
                    )

    async def credentials_for(self, plan: OperationPlan, ctx: ToolContext | None) -> Applied | None:
        """The credentials to send, or None after asking the user for one."""
        if not plan.security:
            return Applied()
        first_missing: tuple[Scheme, list[str]] | None = None
        for requirement in plan.security:
            applied = Applied()
            for name, scopes in requirement.items():
                scheme = self.schemes[name]
                credential = self.given.get(name)
                if credential is None and ctx is not None:
                    answer = ctx.get_auth_response(scheme.auth_config(scopes))
                    credential = _from_answer(scheme, answer) if answer is not None else None
                if credential is None or not _put(scheme, credential, applied, self.secrets):
                    if first_missing is None:
                        first_missing = (scheme, scopes)
                    break
            else:
                return applied
        assert first_missing is not None
        scheme, scopes = first_missing
        if ctx is None:
            raise ToolError(
                f"{plan.label} needs a credential for the security scheme {scheme.name!r}; "
                "give it with auth= or call the tool with a context that can ask the user",
                code="tool.failed",
            )
        ctx.request_credential(scheme.auth_config(scopes))
        return None
