"""Credential stores on disk and in PostgreSQL: rotated refresh tokens survive fresh
runners (the authorization server refuses a reused one), tokens encrypted at rest with a
key, and the stores named by URL."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from cryptography.fernet import Fernet
from pydantic import SecretStr

from agent_core import (
    Agent,
    Part,
    PostgresCredentialService,
    Runner,
    ScriptedModel,
    SqliteCredentialService,
    credential_service_from_url,
)
from examples._authorization_server import REDIRECT_URI, RunningServer, oauth_server
from tooling import Scheduler, SimpleToolContext, ToolCall, ToolContext, tool
from tooling.auth import (
    AccessToken,
    AuthConfig,
    AuthorizationCodeFlow,
    CredentialKey,
    CredentialService,
    CredentialServiceError,
    InMemoryCredentialService,
    OAuth2Client,
    OAuth2Scheme,
    StoredCredential,
    Unauthorized,
)
from tooling.auth import _broker as broker_module
from tooling.integration import auth_config_key

KEY = CredentialKey("app", "ana", "sha256:abc", ("read",))
RECORD = StoredCredential(
    token=AccessToken(token=SecretStr("at-very-secret"), expires_at=time.time() + 60),
    refresh_token=SecretStr("rt-very-secret"),
    issued_at=time.time(),
)


@pytest.fixture
def server() -> Iterator[RunningServer]:
    with oauth_server() as running:
        running.add_client("app", "app-secret", "authorization_code", "refresh_token")
        yield running


def config(server: RunningServer) -> AuthConfig:
    return AuthConfig(
        scheme=OAuth2Scheme(
            flows=AuthorizationCodeFlow(
                authorization_url=server.authorization_url,
                token_url=server.token_url,
                scopes=["read"],
            )
        ),
        credential=OAuth2Client(
            client_id="app", client_secret=SecretStr("app-secret"), redirect_uri=REDIRECT_URI
        ),
    )


def whoami(server: RunningServer) -> Any:
    @tool(auth=config(server))
    async def whoami(tool_context: ToolContext) -> dict[str, Any]:
        """Who the token belongs to."""
        assert isinstance(tool_context.credential, AccessToken)
        async with httpx2.AsyncClient(verify=False) as http:  # plain http on 127.0.0.1
            answer = await http.get(
                f"{server.url}/api/me",
                headers={"Authorization": tool_context.credential.authorization},
            )
        if answer.status_code == 401:
            raise Unauthorized()
        return dict(answer.json())

    return whoami


async def authorize_once(server: RunningServer, service: CredentialService) -> None:
    """Ana authorizes the app once (the credential pause, then the redirect)."""
    scheduler = Scheduler([whoami(server)])

    def ctx(answers: dict[str, Any] | None = None) -> Any:
        return lambda call: SimpleToolContext(
            function_call_id=call.id,
            credentials=service,
            user_id="ana",
            app_name="app",
            auth_responses=answers,
        )

    call = [ToolCall(id="c1", name="whoami", args={})]
    (paused,) = await scheduler.dispatch(call, context_factory=ctx())
    auth = paused.response["credential"]["auth_config"]
    redirect = httpx2.get(auth["auth_uri"] + "&login=ana").headers["location"]
    answers = {auth_config_key(auth): {"auth_response_uri": redirect}}
    (done,) = await scheduler.dispatch(call, context_factory=ctx(answers))
    assert done.response["user"] == "ana"


class Clock:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.shift = 0.0
        monkeypatch.setattr(broker_module, "now", lambda: time.time() + self.shift)


async def rotations(
    server: RunningServer, open_service: Any, monkeypatch: pytest.MonkeyPatch, n: int
) -> None:
    """``n`` runs, each by a fresh runner on a fresh service over the same store, each an
    hour after the last (so each refreshes, and the server rotates the refresh token)."""
    clock = Clock(monkeypatch)
    with open_service() as service:
        await authorize_once(server, service)
    for i in range(n):
        clock.shift += 3590
        model = ScriptedModel([[Part.from_function_call("whoami", {})], f"run {i}"])
        with open_service() as service:
            runner = Runner(
                Agent("a", model, tools=[whoami(server)]),
                app_name="app",
                credential_service=service,
            )
            events = [
                e
                async for e in runner.run_async(user_id="ana", session_id=f"s{i}", new_message="hi")
            ]
        (response,) = [r.response for e in events for r in e.get_function_responses()]
        assert response.get("user") == "ana", (i, response)
    assert server.store.requests["refresh_token"] == n
    assert server.store.requests["authorization_code"] == 1
    live = [t for t in server.store.tokens if t.refresh_token and not t.refresh_revoked]
    assert len(live) == 1  # the one refresh token left is the one the store holds


async def test_fifty_refresh_rotations_across_fresh_runners_on_one_sqlite_file_lose_no_token(
    server: RunningServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "credentials.db"
    await rotations(server, lambda: SqliteCredentialService(path), monkeypatch, 50)


async def test_rotations_on_postgres_lose_no_token(
    server: RunningServer, postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await rotations(server, lambda: PostgresCredentialService(postgres_dsn), monkeypatch, 5)


# -- the stores' own behaviour -------------------------------------------------------------


def sqlite(tmp_path: Path, **kw: Any) -> SqliteCredentialService:
    return SqliteCredentialService(tmp_path / "c.db", **kw)


async def round_trip(service: Any) -> None:
    assert await service.load_credential(KEY) is None
    await service.save_credential(KEY, RECORD)
    assert await service.load_credential(KEY) == RECORD
    other = CredentialKey("app", "bob", KEY.scheme, KEY.scopes)
    assert await service.load_credential(other) is None
    replaced = StoredCredential(token=AccessToken(token=SecretStr("at-2")))
    await service.save_credential(KEY, replaced)
    assert await service.load_credential(KEY) == replaced
    await service.delete_credential(KEY)
    assert await service.load_credential(KEY) is None


async def test_a_sqlite_store_round_trips_records_per_key(tmp_path: Path) -> None:
    with sqlite(tmp_path) as service:
        await round_trip(service)


async def test_a_postgres_store_round_trips_records_per_key(postgres_dsn: str) -> None:
    async with PostgresCredentialService(postgres_dsn, key=Fernet.generate_key()) as service:
        await round_trip(service)


async def test_with_a_key_no_token_is_readable_in_the_file(tmp_path: Path) -> None:
    key = Fernet.generate_key()
    with sqlite(tmp_path, key=key) as service:
        await service.save_credential(KEY, RECORD)
    raw = (tmp_path / "c.db").read_bytes() + b"".join(
        p.read_bytes() for p in tmp_path.glob("c.db-*")
    )
    assert b"at-very-secret" not in raw and b"rt-very-secret" not in raw

    with sqlite(tmp_path, key=key) as service:
        assert await service.load_credential(KEY) == RECORD
    with sqlite(tmp_path) as service, pytest.raises(CredentialServiceError, match="encrypted"):
        await service.load_credential(KEY)
    with (
        sqlite(tmp_path, key=Fernet.generate_key()) as service,
        pytest.raises(CredentialServiceError, match="cannot be decrypted"),
    ):
        await service.load_credential(KEY)


async def test_the_key_may_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_CORE_CREDENTIAL_KEY", Fernet.generate_key().decode())
    with sqlite(tmp_path) as service:
        assert service.encrypted
        await service.save_credential(KEY, RECORD)
        assert await service.load_credential(KEY) == RECORD
    monkeypatch.delenv("AGENT_CORE_CREDENTIAL_KEY")
    with sqlite(tmp_path) as service, pytest.raises(CredentialServiceError):
        await service.load_credential(KEY)


async def test_a_plain_store_is_read_with_a_key_and_written_encrypted_from_then_on(
    tmp_path: Path,
) -> None:
    with sqlite(tmp_path) as service:
        await service.save_credential(KEY, RECORD)
    key = Fernet.generate_key()
    with sqlite(tmp_path, key=key) as service:
        assert await service.load_credential(KEY) == RECORD
        await service.save_credential(KEY, RECORD)
    with sqlite(tmp_path) as service, pytest.raises(CredentialServiceError):
        await service.load_credential(KEY)


def test_a_malformed_key_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a Fernet key"):
        SqliteCredentialService(tmp_path / "c.db", key="not-a-key")


def test_credential_services_are_named_by_url(tmp_path: Path) -> None:
    assert isinstance(credential_service_from_url("memory://"), InMemoryCredentialService)
    service = credential_service_from_url(f"sqlite:///{tmp_path}/c.db")
    assert isinstance(service, SqliteCredentialService)
    assert service.path == f"{tmp_path}/c.db" and not service.encrypted
    service.close()
    encrypted = credential_service_from_url(f"sqlite:///{tmp_path}/e.db", key=Fernet.generate_key())
    assert isinstance(encrypted, SqliteCredentialService) and encrypted.encrypted
    encrypted.close()
    postgres = credential_service_from_url("postgresql://u:hunter2@db.invalid/x")
    assert isinstance(postgres, PostgresCredentialService)
    assert "hunter2" not in repr(postgres)
    postgres.close()
    with pytest.raises(ValueError, match="unknown scheme"):
        credential_service_from_url("redis://x")


async def test_processes_refreshing_at_once_keep_the_rotated_token(
    server: RunningServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four runners with their own services on one SQLite file (as four processes would
    be: no lock in common) all find the token about to expire at the same moment."""
    import asyncio
    import threading

    path = tmp_path / "credentials.db"
    with SqliteCredentialService(path) as service:
        await authorize_once(server, service)
    Clock(monkeypatch).shift = 3590
    start = threading.Barrier(4)

    def one(i: int) -> dict[str, Any]:
        async def run() -> dict[str, Any]:
            async with SqliteCredentialService(path) as service:
                scheduler = Scheduler([whoami(server)])
                ctx = lambda call: SimpleToolContext(  # noqa: E731
                    function_call_id=call.id, credentials=service, user_id="ana", app_name="app"
                )
                start.wait()
                (response,) = await scheduler.dispatch(
                    [ToolCall(id=f"c{i}", name="whoami", args={})], context_factory=ctx
                )
                return response.response

        return asyncio.run(run())

    results = await asyncio.gather(*(asyncio.to_thread(one, i) for i in range(4)))

    assert [r.get("user") for r in results] == ["ana"] * 4, results
    with SqliteCredentialService(path) as service:
        record = await service.load_credential(config(server).key("app", "ana"))
    assert record is not None and record.refresh_token is not None
    live = [
        t.refresh_token for t in server.store.tokens if t.refresh_token and not t.refresh_revoked
    ]
    assert live == [record.refresh_token.get_secret_value()]
