"""Auth through the agent loop: the ``request_credential`` pause carries the authorization
URL, the front end's answer resumes the call, and no secret reaches an event, a model
request, a log line (DEBUG included) or a span (content capture on)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util._once import Once
from pydantic import SecretStr

from agent_core import Agent, Content, Event, Part, RunConfig, Runner, ScriptedModel
from examples._authorization_server import REDIRECT_URI, RunningServer, oauth_server
from tooling import ExecutionStrategy, ToolContext, tool
from tooling.auth import (
    AccessToken,
    AuthConfig,
    AuthorizationCodeFlow,
    ClientCredentialsFlow,
    InMemoryCredentialService,
    OAuth2Client,
    OAuth2Scheme,
    Unauthorized,
)

APP_SECRET = "app-secret-VALUE-7"
SVC_SECRET = "svc-secret-VALUE-9"


@pytest.fixture
def server() -> Iterator[RunningServer]:
    with oauth_server() as running:
        running.add_client("svc", SVC_SECRET, "client_credentials")
        running.add_client("app", APP_SECRET, "authorization_code", "refresh_token")
        yield running


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    trace._TRACER_PROVIDER_SET_ONCE = Once()  # type: ignore[attr-defined]
    trace.set_tracer_provider(provider)
    try:
        yield memory
    finally:
        trace._TRACER_PROVIDER_SET_ONCE = Once()  # type: ignore[attr-defined]
        trace._TRACER_PROVIDER = None  # type: ignore[attr-defined]
        provider.shutdown()


def tools(server: RunningServer) -> list[Any]:
    calendar = AuthConfig(
        scheme=OAuth2Scheme(
            flows=AuthorizationCodeFlow(
                authorization_url=server.authorization_url,
                token_url=server.token_url,
                scopes=["read"],
            )
        ),
        credential=OAuth2Client(
            client_id="app", client_secret=SecretStr(APP_SECRET), redirect_uri=REDIRECT_URI
        ),
    )
    service = AuthConfig(
        scheme=OAuth2Scheme(flows=ClientCredentialsFlow(token_url=server.token_url)),
        credential=OAuth2Client(client_id="svc", client_secret=SecretStr(SVC_SECRET)),
    )

    async def ask(credential: Any) -> dict[str, Any]:
        assert isinstance(credential, AccessToken)
        async with httpx2.AsyncClient(verify=False) as http:  # plain http on 127.0.0.1
            answer = await http.get(
                f"{server.url}/api/me", headers={"Authorization": credential.authorization}
            )
        if answer.status_code == 401:
            raise Unauthorized()
        return dict(answer.json())

    @tool(auth=calendar, read_only=True, concurrency_safe=True)
    async def my_calendar(tool_context: ToolContext) -> dict[str, Any]:
        """Whose calendar the token opens."""
        return await ask(tool_context.credential)

    @tool(auth=service, read_only=True, concurrency_safe=True)
    async def service_status(tool_context: ToolContext) -> dict[str, Any]:
        """Which client the service token belongs to."""
        return await ask(tool_context.credential)

    return [my_calendar, service_status]


def reply(request_id: str | None, response: dict[str, Any]) -> Content:
    return Content(
        role="user",
        parts=[Part.from_function_response("request_credential", response, id=request_id)],
    )


async def collect(runner: Runner, message: str | Content, **config: Any) -> list[Event]:
    return [
        e
        async for e in runner.run_async(
            user_id="ana",
            session_id="s1",
            new_message=message,
            run_config=RunConfig(**config),
        )
    ]


def secrets_of(server: RunningServer) -> list[str]:
    """Every secret there is: client secrets and each token the server issued."""
    found = [APP_SECRET, SVC_SECRET]
    for token in server.store.tokens:
        found.append(token.access_token)
        if token.refresh_token:
            found.append(token.refresh_token)
    return found


async def test_authorization_code_crosses_the_loop_and_no_secret_leaks(
    server: RunningServer, spans: InMemorySpanExporter, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    model = ScriptedModel(
        [
            [
                Part.from_function_call("my_calendar", {}),
                Part.from_function_call("service_status", {}),
            ],
            "Your calendar is open.",
        ]
    )
    agent = Agent("cal", model, tools=tools(server), tool_strategy=ExecutionStrategy.PARALLEL)
    runner = Runner(agent, app_name="app", credential_service=InMemoryCredentialService())

    first = await collect(runner, "open my calendar", trace_content=True)

    request = first[-1]
    (ask,) = request.get_function_calls()
    assert ask.name == "request_credential"
    auth_config = ask.args["authConfig"]
    assert auth_config["auth_uri"].startswith(server.authorization_url)
    assert "code_challenge=" in auth_config["auth_uri"]
    assert ask.args["originalFunctionCall"]["name"] == "my_calendar"
    # the service call (client credentials) did not wait for anyone
    answered = [r for e in first for r in e.get_function_responses()]
    assert [r.response["client"] for r in answered] == ["svc"]

    redirect = str(
        httpx2.get(auth_config["auth_uri"] + "&login=ana").headers["location"]
    )  # the user approves in the browser; the front end reads the redirect
    second = await collect(
        runner, reply(ask.id, {"auth_response_uri": redirect}), trace_content=True
    )

    results = [r.response for e in second for r in e.get_function_responses()]
    assert results == [{"user": "ana", "client": "app", "scope": "read"}]
    assert second[-1].content is not None and second[-1].content.text == "Your calendar is open."

    secrets = secrets_of(server)
    assert len(secrets) == 5  # two client secrets, two access tokens, a refresh token
    code = dict(httpx2.URL(redirect).params)["code"]
    events = "\n".join(e.to_json() for e in [*first, *second])
    sent = "\n".join(str(c.to_dict()) for r in model.requests for c in r.contents)
    # Every record on the client side (the test server's own Authlib logs are not ours).
    logged = "\n".join(
        f"{r.name} {r.getMessage()} {r.exc_text or ''}"
        for r in caplog.records
        if not r.name.startswith(("authlib", "uvicorn"))
    )
    assert "token request (authorization_code)" in logged
    attributes = "\n".join(str(dict(s.attributes or {})) for s in spans.get_finished_spans())
    assert "execute_tool my_calendar" in {s.name for s in spans.get_finished_spans()}
    for secret in secrets:
        assert secret not in events
        assert secret not in sent
        assert secret not in logged
        assert secret not in attributes
        assert secret not in repr(runner.credential_service._records)  # type: ignore[attr-defined]
    assert code not in sent  # the user's answer is between the user and the loop


async def test_a_refused_credential_service_is_an_error_event_not_an_exception(
    server: RunningServer,
) -> None:
    class Down:
        async def load_credential(self, key: Any) -> None:
            raise OSError("no route to host")

        async def save_credential(self, key: Any, credential: Any) -> None:
            raise OSError("no route to host")

        async def delete_credential(self, key: Any) -> None:
            raise OSError("no route to host")

    model = ScriptedModel([[Part.from_function_call("service_status", {})], "Sorry."])
    runner = Runner(
        Agent("ops", model, tools=tools(server)), app_name="app", credential_service=Down()
    )

    events = await collect(runner, "status?")

    (response,) = [r.response for e in events for r in e.get_function_responses()]
    assert response["error"]["code"] == "auth.unavailable"
    assert events[-1].content is not None and events[-1].content.text == "Sorry."
