"""Credentials for an operation's ``security`` requirements, with ``tooling.auth``'s types.

``components.securitySchemes`` are read into ``tooling.auth`` schemes
(``scheme_from_openapi``). An operation's ``security`` (else the spec's) lists
alternatives; the one used is the first whose schemes all have a credential in
``auth=``, else the first the toolset can serve at all (an empty alternative, if
listed, means no credential is needed). Its first scheme becomes the tool's ``auth``
(an ``AuthConfig``), so the scheduler obtains the credential before each call exactly as
for a function tool with ``auth=``: an OAuth 2 client-credentials token is fetched, an
authorization code is asked for through the loop, and a missing API key or bearer
token pauses the call with ``credential_required`` (``request_credential``). An OAuth 2
scheme given no ``OAuth2Client`` asks the user for an access token (a bearer token).
Any further scheme of the same alternative takes the credential given for it in
``auth=``. A 401 answer is ``Unauthorized``: the scheduler gets a new credential once.

Secrets are only ever put into the request; :meth:`Secrets.scrub` removes them from any
text that is shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from .._errors import ToolError
from .._types import Diagnostic
from ..auth import (
    AccessToken,
    ApiKey,
    AuthConfig,
    BasicCredentials,
    BearerToken,
    HttpScheme,
    OAuth2Client,
    OAuth2Scheme,
    OpenIdConnectScheme,
    request_auth,
    scheme_from_openapi,
)
from ._document import SpecError

if TYPE_CHECKING:
    from .._context import ToolContext
    from ..auth import AuthScheme
    from ._operations import OperationPlan
    from ._requests import RequestParts

__all__: list[str] = []

Handed = AccessToken | ApiKey | BearerToken | BasicCredentials


class Secrets:
    """The secret values a toolset has sent, to remove from text that is shown."""

    def __init__(self) -> None:
        self.values: set[str] = set()

    def add(self, value: str) -> None:
        if len(value) >= 4:
            self.values.add(value)

    def scrub(self, text: str) -> str:
        for value in self.values:
            text = text.replace(value, "***")
        return text


@dataclass
class Choice:
    """The credentials one operation uses: its ``auth`` and the other schemes' ones."""

    auth: AuthConfig | None = None
    others: list[tuple[str, AuthScheme, Handed]] = field(default_factory=list)


def _is_oauth(scheme: Any) -> bool:
    return isinstance(scheme, OAuth2Scheme | OpenIdConnectScheme)


@dataclass
class SecuritySide:
    """The spec's schemes and the credentials the toolset was given for them."""

    schemes: dict[str, AuthScheme]
    given: dict[str, Any]
    unsupported: dict[str, str] = field(default_factory=dict)  # scheme name -> why
    secrets: Secrets = field(default_factory=Secrets)

    @classmethod
    def read(cls, document: Mapping[str, Any], auth: Any) -> SecuritySide:
        """The spec's ``components.securitySchemes``, and ``auth=`` by scheme name (one
        credential, or an ``AuthConfig``, goes to every scheme it fits)."""
        components = document.get("components") or {}
        found = components.get("securitySchemes") if isinstance(components, Mapping) else None
        schemes: dict[str, AuthScheme] = {}
        unsupported: dict[str, str] = {}
        for name, node in (found if isinstance(found, Mapping) else {}).items():
            where = f"#/components/securitySchemes/{name}"
            if not isinstance(node, Mapping) or not isinstance(node.get("type"), str):
                raise SpecError(f"the security scheme at {where} has no 'type'")
            try:
                schemes[str(name)] = scheme_from_openapi(node)
            except (ValidationError, ValueError) as exc:
                why = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
                unsupported[str(name)] = f"{node['type']} at {where}: {why}"
        side = cls(schemes, {}, unsupported)
        side.given = side._by_scheme(auth)
        return side

    def _by_scheme(self, auth: Any) -> dict[str, Any]:
        if auth is None:
            return {}
        known = {*self.schemes, *self.unsupported}
        if isinstance(auth, Mapping):
            unknown = sorted(set(auth) - known)
            if unknown:
                raise SpecError(
                    f"auth names security schemes the spec lacks: {', '.join(unknown)}; the "
                    f"spec's schemes are: {', '.join(sorted(known)) or '(none)'}"
                )
            return {name: _credential_of(value) for name, value in auth.items()}
        credential = _credential_of(auth)
        return {
            name: credential for name, scheme in self.schemes.items() if _fits(scheme, credential)
        }

    def choose(self, plan: OperationPlan) -> Choice:
        """Which credentials ``plan`` uses (a :class:`SpecError` for an unknown scheme)."""
        requirements = plan.security or []
        for requirement in requirements:
            for name in requirement:
                if name not in self.schemes and name not in self.unsupported:
                    raise SpecError(
                        f"operation {plan.name!r} ({plan.label}, {plan.pointer}) requires the "
                        f"security scheme {name!r}, which components.securitySchemes lacks"
                    )
        usable = [r for r in requirements if all(n in self.schemes for n in r)]
        if not requirements or any(not r for r in requirements):
            ready = [r for r in usable if r and all(n in self.given for n in r)]
            return self._choice(plan, ready[0]) if ready else Choice()
        ready = [r for r in usable if all(n in self.given for n in r)]
        if ready:
            return self._choice(plan, ready[0])
        if usable:
            return self._choice(plan, usable[0])
        reasons = "; ".join(self.unsupported[n] for r in requirements for n in r)
        plan.diagnostics.append(
            Diagnostic(
                "warning",
                "openapi.unsupported_security",
                f"{plan.label}: no security requirement can be met ({reasons}); the tool "
                "sends no credential",
            )
        )
        return Choice()

    def _choice(self, plan: OperationPlan, requirement: dict[str, list[str]]) -> Choice:
        (first, scopes), *rest = requirement.items()
        scheme = self.schemes[first]
        credential = self.given.get(first)
        if isinstance(credential, AccessToken):
            credential = BearerToken(token=credential.token)
        if isinstance(scheme, HttpScheme) and scheme.scheme == "basic" and credential is None:
            plan.diagnostics.append(
                Diagnostic(
                    "warning",
                    "openapi.missing_credential",
                    f"{plan.label} uses HTTP basic ({first!r}), whose user name and password "
                    "are never asked for: give BasicCredentials with auth=; none is sent",
                )
            )
            return Choice()
        if _is_oauth(scheme) and not isinstance(credential, OAuth2Client):
            if credential is None:
                # No client to get a token with: the user is asked for an access token.
                scheme = HttpScheme(scheme="bearer", description=f"OAuth 2 scheme {first}")
            else:
                scheme = HttpScheme(scheme="bearer")
        if isinstance(credential, OAuth2Client) and scopes and not credential.scopes:
            credential = credential.model_copy(update={"scopes": tuple(scopes)})
        try:
            auth = AuthConfig(scheme=scheme, credential=credential)
        except ValidationError as exc:
            raise SpecError(
                f"auth for the security scheme {first!r}: {exc.errors()[0]['msg']}"
            ) from None
        others: list[tuple[str, AuthScheme, Handed]] = []
        for name, _ in rest:
            value = self.given.get(name)
            if isinstance(value, Handed):
                others.append((name, self.schemes[name], value))
            else:
                plan.diagnostics.append(
                    Diagnostic(
                        "warning",
                        "openapi.missing_credential",
                        f"{plan.label} also requires the scheme {name!r}, which auth= gives "
                        "no API key, token or password for: it is not sent",
                    )
                )
        return Choice(auth, others)

    def apply(
        self, plan: OperationPlan, choice: Choice, ctx: ToolContext | None, parts: RequestParts
    ) -> None:
        """Put the call's credentials on ``parts``, over any argument of the same name."""
        if choice.auth is not None:
            handed = getattr(ctx, "credential", None) if ctx is not None else None
            if handed is None:
                given = choice.auth.credential
                if given is None or isinstance(given, OAuth2Client):
                    raise ToolError(
                        f"{plan.label} needs a credential: run the tool through a Scheduler "
                        "or an agent (which obtain it, or ask the user), or give it with auth=",
                        code="tool.failed",
                    )
                handed = given
            self._put(choice.auth.scheme, handed, parts)
        for _, scheme, credential in choice.others:
            self._put(scheme, credential, parts)

    def _put(self, scheme: AuthScheme, credential: Handed, parts: RequestParts) -> None:
        try:
            carried = request_auth(scheme, credential)
        except TypeError as exc:
            raise ToolError(str(exc), code="tool.failed") from None
        for value in (*carried.headers.values(), *carried.params.values()):
            self.secrets.add(value)
            self.secrets.add(value.split(" ", 1)[-1])
        for value in carried.cookies.values():
            self.secrets.add(value)
        if carried.params:
            parts.query = [(k, v) for k, v in parts.query if k not in carried.params]
            parts.query.extend(carried.params.items())
            parts.auth_query.extend(carried.params.items())
        for name, value in carried.headers.items():
            for existing in [k for k in parts.headers if k.lower() == name.lower()]:
                del parts.headers[existing]
            parts.headers[name] = value
        parts.cookies.update(carried.cookies)


def _fits(scheme: AuthScheme, credential: Any) -> bool:
    if isinstance(credential, ApiKey):
        return scheme.type == "apiKey"
    if isinstance(credential, BasicCredentials):
        return isinstance(scheme, HttpScheme) and scheme.scheme == "basic"
    if isinstance(credential, BearerToken | AccessToken):
        return (isinstance(scheme, HttpScheme) and scheme.scheme == "bearer") or _is_oauth(scheme)
    if isinstance(credential, OAuth2Client):
        return _is_oauth(scheme)
    return False


def _credential_of(value: Any) -> Any:
    """An ``AuthConfig`` gives its credential; a credential is itself."""
    return value.credential if isinstance(value, AuthConfig) else value
