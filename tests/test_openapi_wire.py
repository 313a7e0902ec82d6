"""What an OpenAPI tool puts on the wire, seen by a raw ASGI app (under uvicorn on
127.0.0.1) that echoes each request: query and path styles, headers, cookies, form
bodies, credentials, and credentials kept out of what the model is shown."""

from __future__ import annotations

import asyncio
import json
import warnings
from typing import Any

import pytest

from tests.test_openapi_specs import minimal, ok, tools
from tooling import ToolError
from tooling.openapi import OpenAPIToolset

# -- what goes on the wire, seen by a raw ASGI app that echoes the request --------------


async def _echo_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    echoed = {
        "method": scope["method"],
        "raw_path": scope["raw_path"].decode(),
        "query": scope["query_string"].decode(),
        "headers": {k.decode(): v.decode() for k, v in scope["headers"]},
        "body": body.decode(),
    }
    if echoed["raw_path"].endswith("/hop"):
        where = echoed["raw_path"].removesuffix("/hop") + "/landed"
        await send(
            {
                "type": "http.response.start",
                "status": 302,
                "headers": [(b"location", where.encode())],
            }
        )
        await send({"type": "http.response.body", "body": b""})
        return
    await send(
        {
            "type": "http.response.start",
            "status": 400 if "fail=1" in echoed["query"] else 200,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": json.dumps(echoed).encode()})


@pytest.fixture(scope="module")
def echo_url() -> Any:
    from tests._openapi_servers import serve_asgi

    with serve_asgi(_echo_app) as url:
        yield url


def _wire(echo_url: str, operation: dict[str, Any], args: dict[str, Any], path: str = "/x") -> Any:
    spec = minimal({path: {"post": {"operationId": "op", **operation, "responses": ok()}}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        toolset = OpenAPIToolset(spec, base_url=echo_url + "/base")

    async def once() -> Any:
        (tool,) = await toolset.get_tools()
        try:
            return await tool.run(args)
        finally:
            await toolset.close()

    return asyncio.run(once())


def _param(name: str, where: str, schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"name": name, "in": where, "schema": schema, **extra}


_ARRAY = {"type": "array", "items": {"type": "string"}}
_OBJECT = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}


@pytest.mark.parametrize(
    ("param", "value", "query"),
    [
        (_param("t", "query", _ARRAY), ["x", "y"], "t=x&t=y"),
        (_param("t", "query", _ARRAY, explode=False), ["x", "y"], "t=x%2Cy"),
        (_param("t", "query", _ARRAY, style="pipeDelimited", explode=False), ["x", "y"], "t=x%7Cy"),
        (_param("t", "query", _ARRAY, style="spaceDelimited", explode=False), ["x", "y"], "t=x+y"),
        (_param("o", "query", _OBJECT), {"a": 1, "b": "z"}, "a=1&b=z"),
        (_param("o", "query", _OBJECT, style="deepObject"), {"a": 1}, "o%5Ba%5D=1"),
        (_param("f", "query", {"type": "boolean"}), True, "f=true"),
        (
            {"name": "j", "in": "query", "content": {"application/json": {"schema": _OBJECT}}},
            {"a": 1},
            "j=%7B%22a%22%3A1%7D",
        ),
    ],
)
def test_query_styles(echo_url: str, param: dict[str, Any], value: Any, query: str) -> None:
    seen = _wire(echo_url, {"parameters": [param]}, {param["name"]: value})
    assert seen["query"] == query


@pytest.mark.parametrize(
    ("style", "explode", "value", "segment"),
    [
        ("simple", False, ["a", "b/c"], "a,b%2Fc"),
        ("label", False, "v", ".v"),
        ("matrix", False, "v", ";id=v"),
        ("matrix", True, ["a", "b"], ";id=a;id=b"),
        ("simple", False, "1.5", "1%2E5"),
    ],
)
def test_path_styles(echo_url: str, style: str, explode: bool, value: Any, segment: str) -> None:
    schema = _ARRAY if isinstance(value, list) else {"type": "string"}
    param = _param("id", "path", schema, required=True, style=style, explode=explode)
    seen = _wire(echo_url, {"parameters": [param]}, {"id": value}, path="/items/{id}")
    assert seen["raw_path"] == f"/base/items/{segment}"


def test_headers_cookies_and_a_form_body(echo_url: str) -> None:
    operation = {
        "parameters": [
            _param("X-Tag", "header", _ARRAY),
            _param("session", "cookie", {"type": "string"}),
            _param("Accept", "header", {"type": "string"}),  # ignored, as OpenAPI says
        ],
        "requestBody": {
            "required": True,
            "content": {
                "application/x-www-form-urlencoded": {
                    "schema": {"type": "object", "properties": {"q": {"type": "string"}}}
                }
            },
        },
    }
    seen = _wire(echo_url, operation, {"X-Tag": ["a", "b"], "session": "s 1;x", "q": "w&z"})
    assert seen["headers"]["x-tag"] == "a,b"
    assert seen["headers"]["cookie"] == "session=s%201%3Bx"
    assert seen["headers"]["content-type"] == "application/x-www-form-urlencoded"
    assert seen["body"] == "q=w%26z"
    assert (
        "Accept"
        not in tools(minimal({"/x": {"post": {**operation, "responses": ok()}}}))[
            "post_x"
        ].parameters_json_schema["properties"]
    )


def test_a_clashing_body_property_gets_a_prefix(echo_url: str) -> None:
    operation = {
        "parameters": [_param("name", "query", {"type": "string"})],
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {"name": {"type": "string"}},
                    }
                }
            },
        },
    }
    seen = _wire(echo_url, operation, {"name": "in-query", "body_name": "in-body"})
    assert seen["query"] == "name=in-query"
    assert json.loads(seen["body"]) == {"name": "in-body"}


def _keyed_spec(where: str) -> dict[str, Any]:
    return minimal(
        {
            "/x": {
                "get": {
                    "operationId": "op",
                    "parameters": [_param("fail", "query", {"type": "integer"})],
                    "responses": ok(),
                }
            }
        },
        security=[{"key": []}],
        components={"securitySchemes": {"key": {"type": "apiKey", "name": "k", "in": where}}},
    )


@pytest.mark.parametrize("where", ["header", "query", "cookie"])
def test_a_credential_echoed_back_in_an_error_is_hidden(echo_url: str, where: str) -> None:
    from tooling.auth import ApiKey

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        toolset = OpenAPIToolset(
            _keyed_spec(where), base_url=echo_url, auth=ApiKey(value="sekret-123")
        )

    async def once(args: dict[str, Any]) -> Any:
        (tool,) = await toolset.get_tools()
        return await tool.run(args)

    seen = asyncio.run(once({}))  # the key was sent where its scheme says
    assert "sekret-123" in json.dumps(seen)
    with pytest.raises(ToolError) as caught:
        asyncio.run(once({"fail": 1}))
    assert caught.value.code == "http.error"
    shown = json.dumps(caught.value.to_response())
    assert "sekret-123" not in shown and "***" in shown


def test_no_credential_in_a_connection_failure_or_its_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from tooling import Scheduler, ToolCall
    from tooling.auth import ApiKey

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        toolset = OpenAPIToolset(
            _keyed_spec("query"), base_url="http://127.0.0.1:9", auth=ApiKey(value="sekret-456")
        )

    async def once() -> Any:
        scheduler = Scheduler(await toolset.get_tools())
        try:
            return (await scheduler.dispatch([ToolCall("1", "op", {})]))[0]
        finally:
            scheduler.close()

    with caplog.at_level("DEBUG"):
        response = asyncio.run(once())
    assert response.error is not None and response.error.code == "tool.failed"
    assert "sekret-456" not in json.dumps(response.response)
    assert "sekret-456" not in caplog.text


def test_the_described_answer_types_are_asked_for(echo_url: str) -> None:
    operation = {"responses": ok({"type": "object"})}
    spec = minimal({"/x": {"get": {"operationId": "op", **operation}}})
    (tool,) = tools(spec, base_url=echo_url).values()
    seen = asyncio.run(tool.run({}))
    assert seen["headers"]["accept"] == "application/json"


def test_a_query_credential_is_sent_again_after_a_redirect(echo_url: str) -> None:
    from tooling.auth import ApiKey

    spec = _keyed_spec("query")
    spec["paths"] = {"/hop": spec["paths"]["/x"]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        toolset = OpenAPIToolset(spec, base_url=echo_url, auth=ApiKey(value="sekret-789"))

    async def once() -> Any:
        (tool,) = await toolset.get_tools()
        try:
            return await tool.run({"fail": 0})
        finally:
            await toolset.close()

    seen = asyncio.run(once())
    assert seen["raw_path"] == "/landed" and seen["query"] == "k=sekret-789"


def test_a_multipart_body_sends_its_fields_and_leaves_files_out(echo_url: str) -> None:
    operation = {
        "requestBody": {
            "required": True,
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "required": ["title"],
                        "properties": {
                            "title": {"type": "string"},
                            "tags": {"type": "array", "items": {"type": "string"}},
                            "attachment": {"type": "string", "format": "binary"},
                        },
                    }
                }
            },
        }
    }
    seen = _wire(echo_url, operation, {"title": "Hi", "tags": ["a", "b"]})
    assert seen["headers"]["content-type"].startswith("multipart/form-data; boundary=")
    body = seen["body"]
    assert 'name="title"' in body and "Hi" in body and body.count('name="tags"') == 2
    (tool,) = tools(minimal({"/x": {"post": {**operation, "responses": ok()}}})).values()
    assert list(tool.parameters_json_schema["properties"]) == ["title", "tags"]
    assert any("file field 'attachment'" in d.message for d in tool.diagnostics)


def test_a_multipart_body_whose_file_is_required_is_left_out() -> None:
    spec = minimal(
        {
            "/up": {
                "post": {
                    "operationId": "up",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "multipart/form-data": {
                                "schema": {
                                    "type": "object",
                                    "required": ["file"],
                                    "properties": {"file": {"type": "string", "format": "binary"}},
                                }
                            }
                        },
                    },
                    "responses": ok(),
                }
            }
        }
    )
    with pytest.warns(UserWarning, match="multipart/form-data"):
        toolset = OpenAPIToolset(spec)
    assert asyncio.run(toolset.get_tools()) == []
    assert [d.code for d in toolset.diagnostics] == ["openapi.unsupported_body"]


def _basic_spec() -> dict[str, Any]:
    return minimal(
        {"/x": {"get": {"operationId": "op", "responses": ok()}}},
        security=[{"basic": []}],
        components={"securitySchemes": {"basic": {"type": "http", "scheme": "basic"}}},
    )


def test_basic_credentials_go_in_the_authorization_header(echo_url: str) -> None:
    import base64

    from pydantic import SecretStr

    from tooling.auth import BasicCredentials

    credentials = BasicCredentials(username="ana", password=SecretStr("pw-1234"))
    (tool,) = tools(_basic_spec(), base_url=echo_url, auth=credentials).values()
    seen = asyncio.run(tool.run({}))
    expected = "Basic " + base64.b64encode(b"ana:pw-1234").decode()
    assert seen["headers"]["authorization"] == expected


def test_basic_credentials_are_never_asked_for() -> None:
    with pytest.warns(UserWarning, match="never asked for"):
        toolset = OpenAPIToolset(_basic_spec())
    (tool,) = asyncio.run(toolset.get_tools())
    assert tool.auth is None
    assert "openapi.missing_credential" in [d.code for d in tool.diagnostics]
