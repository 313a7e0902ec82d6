"""The OAuth 2 flows against a real authorization server (Authlib, on 127.0.0.1).

Client credentials without a prompt, authorization code with PKCE through the
credential pause, refresh before expiry and once after a 401 (rotated refresh tokens
stored before use), one token request for many parallel calls, users kept apart, and
each fault answered as an error (or the pause again), never an exception or a loop.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from pydantic import SecretStr

from examples._authorization_server import REDIRECT_URI, RunningServer, oauth_server
from tooling import ExecutionStrategy, Scheduler, SimpleToolContext, ToolCall, ToolContext, tool
from tooling.auth import (
    AccessToken,
    ApiKey,
    ApiKeyScheme,
    AuthConfig,
    AuthorizationCodeFlow,
    ClientCredentialsFlow,
    CredentialKey,
    InMemoryCredentialService,
    OAuth2Client,
    OAuth2Scheme,
    OpenIdConnectScheme,
    StoredCredential,
    Unauthorized,
)
from tooling.auth import _broker as broker_module
from tooling.integration import auth_config_key


@pytest.fixture
def server() -> Iterator[RunningServer]:
    with oauth_server() as running:
        running.add_client("svc", "svc-secret", "client_credentials")
        running.add_client("app", "app-secret", "authorization_code", "refresh_token")
        yield running


def client_credentials(server: RunningServer, **scheme: Any) -> AuthConfig:
    return AuthConfig(
        scheme=OAuth2Scheme(
            flows=ClientCredentialsFlow(token_url=server.token_url, scopes=["read"]), **scheme
        ),
        credential=OAuth2Client(client_id="svc", client_secret=SecretStr("svc-secret")),
    )


def authorization_code(server: RunningServer, **scheme: Any) -> AuthConfig:
    return AuthConfig(
        scheme=OAuth2Scheme(
            flows=AuthorizationCodeFlow(
                authorization_url=server.authorization_url,
                token_url=server.token_url,
                scopes=["read"],
            ),
            **scheme,
        ),
        credential=OAuth2Client(
            client_id="app", client_secret=SecretStr("app-secret"), redirect_uri=REDIRECT_URI
        ),
    )


def me_tool(server: RunningServer, config: AuthConfig, runs: list[str] | None = None) -> Any:
    """A tool that asks the server's resource who it is, with the credential it is given."""

    @tool(auth=config, read_only=True, concurrency_safe=True)
    async def whoami(tool_context: ToolContext) -> dict[str, Any]:
        """Ask the API who the token belongs to."""
        credential = tool_context.credential
        assert isinstance(credential, AccessToken)
        if runs is not None:
            runs.append(credential.token.get_secret_value())
        async with httpx2.AsyncClient(verify=False) as http:  # plain http on 127.0.0.1
            answer = await http.get(
                f"{server.url}/api/me", headers={"Authorization": credential.authorization}
            )
        if answer.status_code == 401:
            raise Unauthorized()
        return dict(answer.json())

    return whoami


def calls(n: int = 1, name: str = "whoami") -> list[ToolCall]:
    return [ToolCall(id=f"c{i}", name=name, args={}) for i in range(n)]


def contexts(
    service: InMemoryCredentialService, user: str = "alice", answers: dict[str, Any] | None = None
) -> Any:
    return lambda call: SimpleToolContext(
        function_call_id=call.id,
        credentials=service,
        user_id=user,
        app_name="app",
        auth_responses=answers,
    )


def authorize(auth_config: dict[str, Any], login: str = "alice", **extra: str) -> str:
    """Play the browser: open the authorization URL, approve, return the redirect URL."""
    query = "".join(f"&{k}={v}" for k, v in {"login": login, **extra}.items())
    answer = httpx2.get(auth_config["auth_uri"] + query)
    assert answer.status_code == 302, answer.text
    return str(answer.headers["location"])


def answer_for(auth_config: dict[str, Any], redirect: str) -> dict[str, Any]:
    return {auth_config_key(auth_config): {"auth_response_uri": redirect}}


async def pause(
    scheduler: Scheduler, service: InMemoryCredentialService, user: str = "alice", n: int = 1
) -> dict[str, Any]:
    responses = await scheduler.dispatch(calls(n), context_factory=contexts(service, user))
    assert {r.waiting_for for r in responses} == {"credential"}
    configs = [r.response["credential"]["auth_config"] for r in responses]
    assert all(c == configs[0] for c in configs)
    return configs[0]


async def authorized(
    server: RunningServer, scheduler: Scheduler, service: InMemoryCredentialService, user: str
) -> None:
    """Authorize ``user`` once, through the pause."""
    config = await pause(scheduler, service, user)
    answers = answer_for(config, authorize(config, user))
    (done,) = await scheduler.dispatch(calls(), context_factory=contexts(service, user, answers))
    assert done.error is None, done.response


def stored(service: InMemoryCredentialService) -> dict[CredentialKey, StoredCredential]:
    return service._records


class Clock:
    """The client's clock, moved forward by the tests (the server keeps real time)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.shift = 0.0
        monkeypatch.setattr(broker_module, "now", lambda: time.time() + self.shift)

    def near_expiry(self) -> None:
        """An hour later, less a few seconds: the tokens (an hour long) are about to expire."""
        self.shift += 3590


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    return Clock(monkeypatch)


# -- client credentials ------------------------------------------------------------------


async def test_client_credentials_fetch_a_token_without_asking_and_reuse_it(
    server: RunningServer,
) -> None:
    scheduler = Scheduler([me_tool(server, client_credentials(server))])

    first = await scheduler.dispatch(calls())
    second = await scheduler.dispatch(calls())

    assert first[0].response == {"user": None, "client": "svc", "scope": "read"}
    assert second[0].response == first[0].response
    assert first[0].waiting_for is None
    assert server.store.requests == {"client_credentials": 1, "total": 1}


async def test_twenty_parallel_calls_needing_one_token_make_one_token_request(
    server: RunningServer,
) -> None:
    scheduler = Scheduler(
        [me_tool(server, client_credentials(server))], strategy=ExecutionStrategy.PARALLEL
    )

    responses = await scheduler.dispatch(calls(20))

    assert [r.error for r in responses] == [None] * 20
    assert server.store.requests["total"] == 1


async def test_a_client_credentials_token_refused_with_a_401_is_replaced_once(
    server: RunningServer,
) -> None:
    runs: list[str] = []
    scheduler = Scheduler([me_tool(server, client_credentials(server), runs)])
    await scheduler.dispatch(calls())
    server.expire_access_tokens()  # the server stops honouring it before its time

    (response,) = await scheduler.dispatch(calls())

    assert response.error is None and response.response["client"] == "svc"
    assert len(runs) == 3 and runs[1] == runs[0] != runs[2]
    assert server.store.requests == {"client_credentials": 2, "total": 2}


async def test_a_401_after_the_new_token_is_the_calls_error_not_a_loop(
    server: RunningServer,
) -> None:
    runs: list[int] = []

    @tool(auth=client_credentials(server))
    async def always_refused(tool_context: ToolContext) -> str:
        runs.append(1)
        raise Unauthorized()

    (response,) = await Scheduler([always_refused]).dispatch(calls(name="always_refused"))

    assert response.error is not None and response.error.code == "auth.unauthorized"
    assert len(runs) == 2
    assert server.store.requests["total"] == 2


# -- authorization code with PKCE ----------------------------------------------------------


async def test_authorization_code_pauses_with_an_auth_uri_then_the_redirect_resumes(
    server: RunningServer,
) -> None:
    service = InMemoryCredentialService()
    scheduler = Scheduler([me_tool(server, authorization_code(server))])

    (paused,) = await scheduler.dispatch(calls(), context_factory=contexts(service))

    assert paused.waiting_for == "credential"
    assert paused.response["status"] == "credential_required"
    config = paused.response["credential"]["auth_config"]
    query = dict(httpx2.URL(config["auth_uri"]).params)
    assert query["state"] == config["state"]
    assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) == 43
    assert query["client_id"] == "app" and query["redirect_uri"] == REDIRECT_URI
    assert "app-secret" not in str(paused.response)
    assert server.store.requests["total"] == 0

    redirect = authorize(config)
    (done,) = await scheduler.dispatch(
        calls(), context_factory=contexts(service, answers=answer_for(config, redirect))
    )

    assert done.error is None and done.response == {
        "user": "alice",
        "client": "app",
        "scope": "read",
    }
    (again,) = await scheduler.dispatch(calls(), context_factory=contexts(service))
    assert again.response == done.response  # stored: no new authorization
    assert server.store.requests == {"authorization_code": 1, "total": 1}


async def test_twenty_parallel_resumed_calls_exchange_the_code_once(
    server: RunningServer,
) -> None:
    service = InMemoryCredentialService()
    scheduler = Scheduler(
        [me_tool(server, authorization_code(server))], strategy=ExecutionStrategy.PARALLEL
    )
    config = await pause(scheduler, service, n=20)  # one request, shared by all 20

    answers = answer_for(config, authorize(config))
    responses = await scheduler.dispatch(
        calls(20), context_factory=contexts(service, "alice", answers)
    )

    assert [r.response.get("user") for r in responses] == ["alice"] * 20
    assert server.store.requests == {"authorization_code": 1, "total": 1}


async def test_a_wrong_state_is_refused_and_nothing_is_exchanged(server: RunningServer) -> None:
    service = InMemoryCredentialService()
    scheduler = Scheduler([me_tool(server, authorization_code(server))])
    config = await pause(scheduler, service)
    redirect = authorize(config).replace(config["state"], "forged-state")

    (response,) = await scheduler.dispatch(
        calls(), context_factory=contexts(service, answers=answer_for(config, redirect))
    )

    assert response.error is not None and response.error.code == "auth.invalid_state"
    assert server.store.requests["total"] == 0


async def test_a_code_used_twice_is_a_clear_error(server: RunningServer) -> None:
    service = InMemoryCredentialService()
    scheduler = Scheduler([me_tool(server, authorization_code(server))])
    config = await pause(scheduler, service)
    redirect = authorize(config)
    code = dict(httpx2.URL(redirect).params)["code"]
    (record,) = stored(service).values()
    assert record.pending is not None
    spent = httpx2.post(  # the code is spent once already (a second tab, a replay)
        server.token_url,
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT_URI,
            "code_verifier": record.pending.code_verifier.get_secret_value(),
        },
        auth=("app", "app-secret"),
    )
    assert spent.status_code == 200

    (response,) = await scheduler.dispatch(
        calls(), context_factory=contexts(service, answers=answer_for(config, redirect))
    )

    assert response.error is not None and response.error.code == "auth.failed"
    assert "invalid_grant" in response.error.message
    assert code not in str(response.response)


async def test_an_authorization_the_user_refused_is_said_so(server: RunningServer) -> None:
    service = InMemoryCredentialService()
    scheduler = Scheduler([me_tool(server, authorization_code(server))])
    config = await pause(scheduler, service)

    (response,) = await scheduler.dispatch(
        calls(),
        context_factory=contexts(service, answers=answer_for(config, authorize(config, deny="1"))),
    )

    assert response.error is not None and response.error.code == "auth.denied"
    assert "access_denied" in response.error.message


async def test_user_a_token_never_reaches_user_b(server: RunningServer) -> None:
    service = InMemoryCredentialService()
    scheduler = Scheduler([me_tool(server, authorization_code(server))])
    await authorized(server, scheduler, service, "alice")

    (bob,) = await scheduler.dispatch(calls(), context_factory=contexts(service, "bob"))
    (alice,) = await scheduler.dispatch(calls(), context_factory=contexts(service, "alice"))

    assert bob.waiting_for == "credential"  # asked to authorize, not handed alice's token
    assert alice.response["user"] == "alice"
    await authorized(server, scheduler, service, "bob")
    (bob,) = await scheduler.dispatch(calls(), context_factory=contexts(service, "bob"))
    assert bob.response["user"] == "bob"


async def test_openid_connect_reads_the_endpoints_from_discovery(server: RunningServer) -> None:
    config = AuthConfig(
        scheme=OpenIdConnectScheme(
            discovery_url=f"{server.url}/.well-known/openid-configuration", scopes=["read"]
        ),
        credential=OAuth2Client(
            client_id="app", client_secret=SecretStr("app-secret"), redirect_uri=REDIRECT_URI
        ),
    )
    service = InMemoryCredentialService()
    scheduler = Scheduler([me_tool(server, config)])

    await authorized(server, scheduler, service, "alice")

    (response,) = await scheduler.dispatch(calls(), context_factory=contexts(service))
    assert response.response["user"] == "alice"


# -- refresh -------------------------------------------------------------------------------


async def test_a_token_near_expiry_is_refreshed_first_and_the_rotated_one_is_stored(
    server: RunningServer, clock: Clock
) -> None:
    service = InMemoryCredentialService()
    scheduler = Scheduler([me_tool(server, authorization_code(server))])
    await authorized(server, scheduler, service, "alice")
    (record,) = stored(service).values()
    first_refresh = record.refresh_token
    assert first_refresh is not None

    for _ in range(3):
        clock.near_expiry()
        (response,) = await scheduler.dispatch(calls(), context_factory=contexts(service))
        assert response.error is None and response.response["user"] == "alice"

    (record,) = stored(service).values()
    assert record.refresh_token is not None and record.refresh_token != first_refresh
    assert server.store.requests["refresh_token"] == 3
    reused = httpx2.post(  # the server really rotates: an old refresh token is refused
        server.token_url,
        data={"grant_type": "refresh_token", "refresh_token": first_refresh.get_secret_value()},
        auth=("app", "app-secret"),
    )
    assert reused.json()["error"] == "invalid_grant"


@pytest.mark.parametrize("send", [False, True])
async def test_scope_is_sent_on_refresh_only_when_the_scheme_says(
    server: RunningServer, send: bool, clock: Clock
) -> None:
    service = InMemoryCredentialService()
    scheduler = Scheduler([me_tool(server, authorization_code(server, scope_on_refresh=send))])
    await authorized(server, scheduler, service, "alice")
    clock.near_expiry()

    await scheduler.dispatch(calls(), context_factory=contexts(service))

    (refresh,) = [f for f in server.store.forms if f["grant_type"] == "refresh_token"]
    assert ("scope" in refresh) is send


async def test_a_401_refreshes_once_and_the_call_runs_again(server: RunningServer) -> None:
    service = InMemoryCredentialService()
    runs: list[str] = []
    scheduler = Scheduler([me_tool(server, authorization_code(server), runs)])
    await authorized(server, scheduler, service, "alice")
    server.expire_access_tokens()

    (response,) = await scheduler.dispatch(calls(), context_factory=contexts(service))

    assert response.error is None and response.response["user"] == "alice"
    assert server.store.requests["refresh_token"] == 1
    assert runs[-1] != runs[-2]


async def test_a_revoked_refresh_token_asks_the_user_again(
    server: RunningServer, clock: Clock
) -> None:
    service = InMemoryCredentialService()
    scheduler = Scheduler([me_tool(server, authorization_code(server))])
    await authorized(server, scheduler, service, "alice")
    (record,) = stored(service).values()
    assert record.refresh_token is not None
    revoked = httpx2.post(
        f"{server.url}/revoke",
        data={"token": record.refresh_token.get_secret_value()},
        auth=("app", "app-secret"),
    )
    assert revoked.status_code == 200
    clock.near_expiry()

    (response,) = await scheduler.dispatch(calls(), context_factory=contexts(service))

    assert response.waiting_for == "credential"
    assert server.store.requests["refresh_token"] == 1  # tried once, not in a loop


# -- credentials the user types in, and ones given in code ----------------------------------


async def test_a_missing_api_key_is_asked_for_once_then_stored() -> None:
    seen: list[str] = []

    @tool(auth=AuthConfig(scheme=ApiKeyScheme(name="X-Key")))
    def lookup(tool_context: ToolContext) -> str:
        assert isinstance(tool_context.credential, ApiKey)
        seen.append(tool_context.credential.value.get_secret_value())
        return "ok"

    service = InMemoryCredentialService()
    scheduler = Scheduler([lookup])
    (paused,) = await scheduler.dispatch(calls(name="lookup"), context_factory=contexts(service))
    config = paused.response["credential"]["auth_config"]
    assert paused.waiting_for == "credential" and config["kind"] == "api_key"

    answers = {auth_config_key(config): {"api_key": "key-123"}}
    (done,) = await scheduler.dispatch(
        calls(name="lookup"), context_factory=contexts(service, answers=answers)
    )
    (later,) = await scheduler.dispatch(calls(name="lookup"), context_factory=contexts(service))

    assert done.response == later.response == {"result": "ok"}
    assert seen == ["key-123", "key-123"]
    assert "key-123" not in str(done.response)


async def test_a_credential_given_in_code_is_handed_over_as_it_is() -> None:
    key = ApiKey(value=SecretStr("k-1"))

    @tool(auth=AuthConfig(scheme=ApiKeyScheme(name="X-Key"), credential=key))
    def lookup(tool_context: ToolContext) -> bool:
        return tool_context.credential is key

    (response,) = await Scheduler([lookup]).dispatch(calls(name="lookup"))
    assert response.response == {"result": True}


# -- faults ---------------------------------------------------------------------------------


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("fault", ["garbage", "error500"])
async def test_a_token_endpoint_answering_garbage_is_an_error_response(
    server: RunningServer, fault: str
) -> None:
    server.store.fault = fault
    scheduler = Scheduler([me_tool(server, client_credentials(server))])

    (response,) = await scheduler.dispatch(calls())

    assert response.error is not None and response.error.code == "auth.failed"
    assert "svc-secret" not in response.error.message
    assert server.store.requests["total"] == 1  # no retry loop


async def test_a_token_endpoint_that_is_down_is_an_error_response() -> None:
    config = AuthConfig(
        scheme=OAuth2Scheme(
            flows=ClientCredentialsFlow(token_url=f"http://127.0.0.1:{closed_port()}/token")
        ),
        credential=OAuth2Client(client_id="svc", client_secret=SecretStr("svc-secret")),
    )

    @tool(auth=config)
    def api(tool_context: ToolContext) -> str:
        return "never"

    (response,) = await Scheduler([api]).dispatch(calls(name="api"))

    assert response.error is not None and response.error.code == "auth.failed"
    assert "could not be reached" in response.error.message


class BrokenService:
    """A credential service whose database is gone."""

    async def load_credential(self, key: CredentialKey) -> StoredCredential | None:
        raise ConnectionError("db at postgresql://user:hunter2@db/creds is down")

    async def save_credential(self, key: CredentialKey, credential: StoredCredential) -> None:
        raise ConnectionError("down")

    async def delete_credential(self, key: CredentialKey) -> None:
        raise ConnectionError("down")


async def test_a_credential_service_that_cannot_be_reached_is_an_error_response(
    server: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    scheduler = Scheduler(
        [me_tool(server, client_credentials(server))], credential_service=BrokenService()
    )

    (response,) = await scheduler.dispatch(calls())

    assert response.error is not None and response.error.code == "auth.unavailable"
    assert "hunter2" not in response.error.message and "hunter2" not in caplog.text
    assert server.store.requests["total"] == 0


async def test_many_dispatches_on_their_own_event_loops_share_the_stored_token(
    server: RunningServer,
) -> None:
    scheduler = Scheduler([me_tool(server, client_credentials(server))])

    def one() -> Any:
        return asyncio.run(scheduler.dispatch(calls()))[0]

    results = await asyncio.gather(*(asyncio.to_thread(one) for _ in range(4)))

    assert all(r.error is None for r in results), [r.response for r in results]
    assert server.store.requests["total"] <= 4
