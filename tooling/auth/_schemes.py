"""Security schemes, as OpenAPI's ``securitySchemes`` describe them (pydantic models).

Each model reads the OpenAPI spelling too (``in``, ``tokenUrl``, ``authorizationUrl``,
``clientCredentials``, ``openIdConnectUrl``...), so a spec's scheme object validates as
it is: :func:`scheme_from_openapi`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator, model_validator
from pydantic.alias_generators import to_camel

__all__ = [
    "ApiKeyScheme",
    "AuthScheme",
    "AuthorizationCodeFlow",
    "ClientCredentialsFlow",
    "HttpScheme",
    "OAuth2Flows",
    "OAuth2Scheme",
    "OpenIdConnectScheme",
    "scheme_from_openapi",
]


def positional(model: type[BaseModel], args: tuple[Any, ...], data: dict[str, Any]) -> None:
    """Put positional ``args`` into ``data`` under the model's field names, in order
    (``type``, a scheme's tag, is never positional): ``ApiKey("k")``, as in the docs."""
    names = [n for n in model.model_fields if n != "type"]
    if len(args) > len(names):
        raise TypeError(f"{model.__name__} takes at most {len(names)} positional arguments")
    for name, value in zip(names, args, strict=False):
        if name in data:
            raise TypeError(f"{model.__name__} got two values for {name!r}")
        data[name] = value


class _Model(BaseModel):
    model_config = ConfigDict(
        frozen=True,
        extra="ignore",
        populate_by_name=True,
        alias_generator=to_camel,
        serialize_by_alias=False,
    )

    def __init__(self, *args: Any, **data: Any) -> None:
        positional(type(self), args, data)
        super().__init__(**data)


def _scope_map(value: Any) -> Any:
    """Scopes as OpenAPI gives them (name -> description), or a list of names."""
    if isinstance(value, str):
        return {name: "" for name in value.split()}
    if isinstance(value, Sequence) and not isinstance(value, bytes):
        return {str(name): "" for name in value}
    return value


class ApiKeyScheme(_Model):
    """An API key sent in a header, a query parameter or a cookie named ``name``."""

    type: Literal["apiKey"] = "apiKey"
    name: str
    location: Literal["header", "query", "cookie"] = Field("header", alias="in")
    description: str | None = None


class HttpScheme(_Model):
    """HTTP authentication: ``bearer`` (a token in ``Authorization``) or ``basic``."""

    type: Literal["http"] = "http"
    scheme: Literal["bearer", "basic"] = "bearer"
    bearer_format: str | None = None
    description: str | None = None

    @field_validator("scheme", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value


class ClientCredentialsFlow(_Model):
    """OAuth 2 client credentials: the application's own token, never a user prompt."""

    token_url: str
    scopes: dict[str, str] = Field(default_factory=dict)
    refresh_url: str | None = None

    @field_validator("scopes", mode="before")
    @classmethod
    def _scopes(cls, value: Any) -> Any:
        return _scope_map(value)


class AuthorizationCodeFlow(_Model):
    """OAuth 2 authorization code, always with PKCE (S256): a user authorizes once."""

    authorization_url: str
    token_url: str
    scopes: dict[str, str] = Field(default_factory=dict)
    refresh_url: str | None = None

    @field_validator("scopes", mode="before")
    @classmethod
    def _scopes(cls, value: Any) -> Any:
        return _scope_map(value)


class OAuth2Flows(_Model):
    """The flows an OAuth 2 scheme offers (OpenAPI's ``flows`` object)."""

    client_credentials: ClientCredentialsFlow | None = None
    authorization_code: AuthorizationCodeFlow | None = None


class OAuth2Scheme(_Model):
    """OAuth 2 with its flows.

    ``flows`` takes an :class:`OAuth2Flows`, one flow, a list of flows, or OpenAPI's
    ``flows`` object. When both flows are offered, client credentials is used (it needs
    no user). ``scope_on_refresh``: send ``scope`` with a refresh request (off by
    default: RFC 6749 makes it optional, and some servers refuse it).
    """

    type: Literal["oauth2"] = "oauth2"
    flows: OAuth2Flows
    scope_on_refresh: bool = False
    description: str | None = None

    @field_validator("flows", mode="before")
    @classmethod
    def _flows(cls, value: Any) -> Any:
        items = (
            [value] if isinstance(value, ClientCredentialsFlow | AuthorizationCodeFlow) else value
        )
        if isinstance(items, list | tuple):
            found: dict[str, Any] = {}
            for item in items:
                if isinstance(item, ClientCredentialsFlow):
                    found["client_credentials"] = item
                elif isinstance(item, AuthorizationCodeFlow):
                    found["authorization_code"] = item
                else:
                    raise ValueError(f"not an OAuth 2 flow: {type(item).__name__}")
            return found
        return value

    @model_validator(mode="after")
    def _has_a_flow(self) -> OAuth2Scheme:
        if self.flows.client_credentials is None and self.flows.authorization_code is None:
            raise ValueError(
                "an OAuth2Scheme needs a client credentials or an authorization code flow "
                "(implicit and password flows are not supported)"
            )
        return self


class OpenIdConnectScheme(_Model):
    """OpenID Connect: the provider's discovery document names its endpoints.

    Read into an :class:`OAuth2Scheme` (authorization code with PKCE) on first use.
    """

    type: Literal["openIdConnect"] = "openIdConnect"
    discovery_url: str = Field(alias="openIdConnectUrl")
    scopes: dict[str, str] = Field(default_factory=lambda: {"openid": ""})
    description: str | None = None

    @field_validator("scopes", mode="before")
    @classmethod
    def _scopes(cls, value: Any) -> Any:
        return _scope_map(value)


#: Any of the schemes, told apart by ``type`` as in OpenAPI.
AuthScheme = Annotated[
    ApiKeyScheme | HttpScheme | OAuth2Scheme | OpenIdConnectScheme, Field(discriminator="type")
]

_SCHEMES: TypeAdapter[ApiKeyScheme | HttpScheme | OAuth2Scheme | OpenIdConnectScheme] = TypeAdapter(
    AuthScheme
)


def scheme_from_openapi(
    scheme: Mapping[str, Any],
) -> ApiKeyScheme | HttpScheme | OAuth2Scheme | OpenIdConnectScheme:
    """The scheme an OpenAPI ``securitySchemes`` entry describes.

    Raises ``pydantic.ValidationError`` for an unknown ``type`` or a malformed entry, and
    ``ValueError`` for an OAuth 2 scheme with neither supported flow.
    """
    return _SCHEMES.validate_python(dict(scheme))
