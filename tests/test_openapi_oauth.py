"""An OpenAPI operation secured by OAuth 2 (client credentials), against a real Authlib
authorization server on 127.0.0.1: the scheduler gets the token through tooling.auth,
twenty parallel GETs cause one token request, and an expired token is replaced once."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import SecretStr

from examples._authorization_server import RunningServer, oauth_server
from tooling import Scheduler, ToolCall
from tooling.auth import OAuth2Client
from tooling.openapi import OpenAPIToolset


@pytest.fixture
def server() -> Iterator[RunningServer]:
    with oauth_server() as running:
        running.add_client("svc", "svc-secret", "client_credentials")
        yield running


def spec(server: RunningServer) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "me", "version": "1"},
        "paths": {
            "/api/me": {
                "get": {
                    "operationId": "whoAmI",
                    "security": [{"oauth": ["read"]}],
                    "responses": {"200": {"description": "who the token belongs to"}},
                }
            }
        },
        "components": {
            "securitySchemes": {
                "oauth": {
                    "type": "oauth2",
                    "flows": {
                        "clientCredentials": {
                            "tokenUrl": server.token_url,
                            "scopes": {"read": "read things", "write": "write things"},
                        }
                    },
                }
            }
        },
    }


def toolset(server: RunningServer) -> OpenAPIToolset:
    client = OAuth2Client(client_id="svc", client_secret=SecretStr("svc-secret"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return OpenAPIToolset(spec(server), base_url=server.url, auth={"oauth": client})


def test_the_operations_scheme_becomes_the_tools_auth(server: RunningServer) -> None:
    (tool,) = asyncio.run(toolset(server).get_tools())
    assert tool.auth is not None and tool.auth.scheme.type == "oauth2"
    assert tool.auth.scopes == ("read",)  # the operation's scopes, not every scope listed


def test_twenty_parallel_gets_cause_one_token_request(server: RunningServer) -> None:
    ts = toolset(server)

    async def run() -> list[Any]:
        scheduler = Scheduler(await ts.get_tools())
        try:
            return await scheduler.dispatch([ToolCall(f"c{i}", "who_am_i", {}) for i in range(20)])
        finally:
            scheduler.close()
            await ts.close()

    responses = asyncio.run(run())
    assert all(r.error is None for r in responses), responses[0].response
    assert {r.response["client"] for r in responses} == {"svc"}
    assert responses[0].response["scope"] == "read"
    assert server.store.requests["client_credentials"] == 1
    assert "svc-secret" not in repr([r.response for r in responses])


def test_a_refused_token_is_replaced_once(server: RunningServer) -> None:
    ts = toolset(server)

    async def run() -> tuple[Any, Any]:
        scheduler = Scheduler(await ts.get_tools())
        try:
            (first,) = await scheduler.dispatch([ToolCall("a", "who_am_i", {})])
            for token in server.store.tokens:
                token.revoked = True
            (second,) = await scheduler.dispatch([ToolCall("b", "who_am_i", {})])
            return first, second
        finally:
            scheduler.close()
            await ts.close()

    first, second = asyncio.run(run())
    assert first.error is None and second.error is None, second.response
    assert server.store.requests["client_credentials"] == 2  # the 401 got a new token
