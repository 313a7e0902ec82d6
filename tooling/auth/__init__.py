"""Credentials and auth for tools: typed schemes, OAuth 2 flows, a credential service.

``@tool(auth=AuthConfig(scheme, credential))`` has the scheduler get the tool a valid
credential before it runs, handed over as ``tool_context.credential``: an
:class:`AccessToken` for OAuth 2 (client credentials fetched without a prompt;
authorization code with PKCE through the loop's ``request_credential`` pause), or the
:class:`ApiKey` / :class:`BearerToken` / :class:`BasicCredentials` itself. Tokens are
refreshed before they expire and once after a 401 (:class:`Unauthorized`), a rotated
refresh token is stored before the new access token is used, and one token request at a
time is made per key. Tokens live in a :class:`CredentialService` keyed by app, user,
scheme and scopes (:class:`InMemoryCredentialService` here; SQLite and PostgreSQL in
``agent_core``).

The modules: ``_schemes`` (OpenAPI's security schemes), ``_credentials`` (credentials,
``AccessToken``, ``AuthConfig``), ``_service`` (the store protocol), ``_oauth`` (PKCE
and token requests, over ``httpx2``), ``_broker`` (one credential per key, the flows),
``_apply`` (a credential on an HTTP request).
"""

from ._apply import RequestAuth, request_auth
from ._credentials import (
    AccessToken,
    ApiKey,
    AuthConfig,
    BasicCredentials,
    BearerToken,
    Credential,
    CredentialKey,
    OAuth2Client,
)
from ._errors import Unauthorized
from ._schemes import (
    ApiKeyScheme,
    AuthorizationCodeFlow,
    AuthScheme,
    ClientCredentialsFlow,
    HttpScheme,
    OAuth2Flows,
    OAuth2Scheme,
    OpenIdConnectScheme,
    scheme_from_openapi,
)
from ._service import (
    CredentialService,
    CredentialServiceError,
    InMemoryCredentialService,
    PendingAuthorization,
    StoredCredential,
)

__all__ = [
    "AccessToken",
    "ApiKey",
    "ApiKeyScheme",
    "AuthConfig",
    "AuthScheme",
    "AuthorizationCodeFlow",
    "BasicCredentials",
    "BearerToken",
    "ClientCredentialsFlow",
    "Credential",
    "CredentialKey",
    "CredentialService",
    "CredentialServiceError",
    "HttpScheme",
    "InMemoryCredentialService",
    "OAuth2Client",
    "OAuth2Flows",
    "OAuth2Scheme",
    "OpenIdConnectScheme",
    "PendingAuthorization",
    "RequestAuth",
    "StoredCredential",
    "Unauthorized",
    "request_auth",
    "scheme_from_openapi",
]
