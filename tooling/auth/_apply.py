"""Where a credential goes on an HTTP request, as its scheme says."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field

from ._credentials import AccessToken, ApiKey, BasicCredentials, BearerToken
from ._schemes import ApiKeyScheme, HttpScheme, OAuth2Scheme, OpenIdConnectScheme

__all__ = ["RequestAuth", "request_auth"]


@dataclass(frozen=True)
class RequestAuth:
    """Headers, query parameters and cookies that carry a credential (secrets inside:
    put them on the request, never in a log)."""

    headers: dict[str, str] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)
    cookies: dict[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        return (
            f"RequestAuth(headers={sorted(self.headers)}, params={sorted(self.params)}, "
            f"cookies={sorted(self.cookies)})"
        )


def request_auth(
    scheme: ApiKeyScheme | HttpScheme | OAuth2Scheme | OpenIdConnectScheme,
    credential: AccessToken | ApiKey | BearerToken | BasicCredentials,
) -> RequestAuth:
    """What to add to a request so it carries ``credential`` as ``scheme`` says.

    ``TypeError`` when the credential does not fit the scheme.
    """
    if isinstance(scheme, ApiKeyScheme):
        if not isinstance(credential, ApiKey | AccessToken | BearerToken):
            raise TypeError(f"an apiKey scheme takes an ApiKey, not {type(credential).__name__}")
        value = (
            credential.value if isinstance(credential, ApiKey) else credential.token
        ).get_secret_value()
        where = {"header": "headers", "query": "params", "cookie": "cookies"}[scheme.location]
        return RequestAuth(**{where: {scheme.name: value}})
    if isinstance(scheme, HttpScheme) and scheme.scheme == "basic":
        if not isinstance(credential, BasicCredentials):
            raise TypeError(
                f"a basic scheme takes BasicCredentials, not {type(credential).__name__}"
            )
        pair = f"{credential.username}:{credential.password.get_secret_value()}"
        return RequestAuth(
            headers={"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}
        )
    if isinstance(credential, AccessToken):
        return RequestAuth(headers={"Authorization": credential.authorization})
    if isinstance(credential, BearerToken):
        return RequestAuth(
            headers={"Authorization": f"Bearer {credential.token.get_secret_value()}"}
        )
    raise TypeError(f"a {scheme.type} scheme takes a token, not {type(credential).__name__}")
