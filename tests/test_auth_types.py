"""The scheme and credential types: OpenAPI spellings, validation, and secrets kept hidden."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import SecretStr, ValidationError

from tooling import FunctionTool, ToolContext, tool
from tooling.auth import (
    AccessToken,
    ApiKey,
    ApiKeyScheme,
    AuthConfig,
    AuthorizationCodeFlow,
    BasicCredentials,
    BearerToken,
    ClientCredentialsFlow,
    HttpScheme,
    InMemoryCredentialService,
    OAuth2Client,
    OAuth2Scheme,
    OpenIdConnectScheme,
    StoredCredential,
    request_auth,
    scheme_from_openapi,
)
from tooling.auth._service import dump_stored, load_stored

SECRET = "s3cr3t-value-never-shown"

scope_names = st.lists(st.from_regex(r"[a-z][a-z0-9:._-]{0,12}", fullmatch=True), max_size=4)
urls = st.from_regex(r"https://[a-z]{1,10}\.example/[a-z]{0,8}", fullmatch=True)


@given(urls, urls, scope_names, st.booleans())
def test_an_openapi_oauth2_scheme_reads_back_as_the_same_model(
    auth_url: str, token_url: str, scopes: list[str], both: bool
) -> None:
    flows: dict[str, object] = {
        "authorizationCode": {
            "authorizationUrl": auth_url,
            "tokenUrl": token_url,
            "scopes": {s: f"about {s}" for s in scopes},
        }
    }
    if both:
        flows["clientCredentials"] = {"tokenUrl": token_url, "scopes": {s: "" for s in scopes}}
    scheme = scheme_from_openapi({"type": "oauth2", "flows": flows})
    assert isinstance(scheme, OAuth2Scheme)
    assert scheme.flows.authorization_code is not None
    assert scheme.flows.authorization_code.token_url == token_url
    assert sorted(scheme.flows.authorization_code.scopes) == sorted(set(scopes))
    assert (scheme.flows.client_credentials is not None) == both
    again = scheme_from_openapi(scheme.model_dump(by_alias=True))
    assert again == scheme


@given(
    st.sampled_from(["header", "query", "cookie"]),
    st.from_regex(r"[A-Za-z-]{1,20}", fullmatch=True),
)
def test_an_api_key_goes_where_its_scheme_says(location: str, name: str) -> None:
    scheme = scheme_from_openapi({"type": "apiKey", "in": location, "name": name})
    assert isinstance(scheme, ApiKeyScheme) and scheme.location == location
    parts = request_auth(scheme, ApiKey(value=SecretStr(SECRET)))
    where = {"header": parts.headers, "query": parts.params, "cookie": parts.cookies}[location]
    assert where == {name: SECRET}
    assert SECRET not in repr(parts)


def test_other_openapi_schemes_read_as_their_models() -> None:
    assert scheme_from_openapi({"type": "http", "scheme": "Bearer"}) == HttpScheme()
    assert scheme_from_openapi({"type": "http", "scheme": "basic"}) == HttpScheme(scheme="basic")
    oidc = scheme_from_openapi({"type": "openIdConnect", "openIdConnectUrl": "https://i/.wk"})
    assert isinstance(oidc, OpenIdConnectScheme) and oidc.discovery_url == "https://i/.wk"
    with pytest.raises(ValidationError):
        scheme_from_openapi({"type": "mutualTLS"})
    with pytest.raises(ValidationError, match="implicit and password flows are not supported"):
        scheme_from_openapi({"type": "oauth2", "flows": {"implicit": {"authorizationUrl": "x"}}})


def test_a_flow_given_alone_or_in_a_list_is_the_schemes_flow() -> None:
    flow = ClientCredentialsFlow(token_url="https://t/token", scopes=["a", "b"])
    assert OAuth2Scheme(flows=flow).flows.client_credentials == flow
    code = AuthorizationCodeFlow(authorization_url="https://a", token_url="https://t")
    both = OAuth2Scheme(flows=[flow, code])
    assert both.flows.client_credentials == flow and both.flows.authorization_code == code
    assert flow.scopes == {"a": "", "b": ""}


def test_a_credential_must_fit_its_scheme() -> None:
    oauth = OAuth2Scheme(flows=ClientCredentialsFlow(token_url="https://t/token"))
    with pytest.raises(ValidationError, match="needs an OAuth2Client"):
        AuthConfig(scheme=oauth)
    with pytest.raises(ValidationError, match="takes a ApiKey credential"):
        AuthConfig(scheme=ApiKeyScheme(name="k"), credential=BearerToken(token=SecretStr("t")))
    with pytest.raises(ValidationError, match="needs a BasicCredentials"):
        AuthConfig(scheme=HttpScheme(scheme="basic"))
    assert AuthConfig(scheme=ApiKeyScheme(name="k")).credential is None  # the user is asked


def test_secrets_never_show_in_a_repr_str_json_or_validation_error() -> None:
    values = [
        ApiKey(value=SecretStr(SECRET)),
        BearerToken(token=SecretStr(SECRET)),
        BasicCredentials(username="ana", password=SecretStr(SECRET)),
        OAuth2Client(client_id="c", client_secret=SecretStr(SECRET)),
        AccessToken(token=SecretStr(SECRET)),
        StoredCredential(
            token=AccessToken(token=SecretStr(SECRET)), refresh_token=SecretStr(SECRET)
        ),
    ]
    config = AuthConfig(
        scheme=OAuth2Scheme(flows=ClientCredentialsFlow(token_url="https://t/token")),
        credential=OAuth2Client(client_id="c", client_secret=SecretStr(SECRET)),
    )
    for value in [*values, config]:
        assert SECRET not in repr(value)
        assert SECRET not in str(value)
        assert SECRET not in value.model_dump_json()
    assert SECRET not in str(config.public()) and SECRET not in config.fingerprint
    with pytest.raises(ValidationError) as raised:
        AuthConfig(scheme=ApiKeyScheme(name="k"), credential=BearerToken(token=SecretStr(SECRET)))
    assert SECRET not in str(raised.value)


def test_a_stored_credential_round_trips_with_its_secrets_for_a_store() -> None:
    record = StoredCredential(
        token=AccessToken(token=SecretStr("at"), expires_at=12.5, scopes=("r",)),
        refresh_token=SecretStr("rt"),
        issued_at=2.0,
    )
    again = load_stored(dump_stored(record))
    assert again == record
    assert again.refresh_token is not None and again.refresh_token.get_secret_value() == "rt"


def test_keys_differ_by_app_user_client_and_scopes_and_reveal_no_secret() -> None:
    scheme = OAuth2Scheme(flows=ClientCredentialsFlow(token_url="https://t/token", scopes=["a"]))
    one = AuthConfig(scheme=scheme, credential=OAuth2Client(client_id="c1", client_secret=SECRET))
    other = AuthConfig(scheme=scheme, credential=OAuth2Client(client_id="c2"))
    scoped = AuthConfig(scheme=scheme, credential=OAuth2Client(client_id="c1", scopes=("b", "a")))
    keys = {
        one.key("app", "ana"),
        one.key("app", "bob"),
        one.key("other", "ana"),
        other.key("app", "ana"),
        scoped.key("app", "ana"),
    }
    assert len(keys) == 5
    assert scoped.key("app", "ana").scopes == ("a", "b")
    assert all(SECRET not in str(k) for k in keys)


def test_auth_takes_an_auth_config_and_is_kept_on_the_tool() -> None:
    config = AuthConfig(scheme=ApiKeyScheme(name="X-Key"), credential=ApiKey(value=SecretStr("k")))

    @tool(auth=config)
    def lookup(q: str, tool_context: ToolContext) -> str:
        return q

    assert lookup.auth is config
    with pytest.raises(TypeError, match="AuthConfig"):
        FunctionTool(lambda: 1, name="x", auth={"type": "apiKey"})  # type: ignore[arg-type]
    assert repr(InMemoryCredentialService()) == "InMemoryCredentialService(0 keys)"


def test_the_types_take_their_fields_positionally_as_the_docs_write_them() -> None:
    client = OAuth2Client("app", "s", ("read",), "http://127.0.0.1/cb")
    assert (client.client_id, client.scopes, client.redirect_uri) == (
        "app",
        ("read",),
        "http://127.0.0.1/cb",
    )
    assert client.client_secret is not None and client.client_secret.get_secret_value() == "s"
    assert ApiKeyScheme("X-Key", "query") == ApiKeyScheme(name="X-Key", location="query")
    flow = ClientCredentialsFlow("https://t/token", ["a"])
    config = AuthConfig(OAuth2Scheme(flow), OAuth2Client("c"))
    assert config.scopes == ("a",)
    assert BasicCredentials("ana", "pw").password.get_secret_value() == "pw"
    with pytest.raises(TypeError, match="two values"):
        ApiKey("a", value="b")
    with pytest.raises(TypeError, match="at most 1"):
        BearerToken("a", "b")


def test_auth_cannot_go_to_a_worker_process() -> None:
    config = AuthConfig(ApiKeyScheme("X-Key"), ApiKey("k"))
    with pytest.raises(ValueError, match="caller's process"):
        FunctionTool(_module_level_tool, auth=config, isolation="process")


def _module_level_tool() -> int:
    return 1
