"""An OpenAPI file as the TARGET of ``tooling inspect``, ``call`` and ``serve``, run as
subprocesses against the example's pet store API (served on 127.0.0.1 by the test)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests._mcp_helpers import ROOT, http_server
from tests.test_cli import one_error_line, tooling_cli
from tooling.mcp import HttpServer, McpToolset

PETSTORE = "examples/openapi_petstore/petstore.yaml"


@pytest.fixture(scope="module")
def store_url() -> str:
    from examples.openapi_petstore import api

    api.reset()
    return api.serve()


def test_inspect_shows_one_tool_per_operation() -> None:
    result = tooling_cli("inspect", PETSTORE, "--json", "--provider", "mcp", cwd=ROOT)
    assert result.returncode == 0, result.stderr
    reports = json.loads(result.stdout)
    assert [r["name"] for r in reports] == [
        "list_pets",
        "create_pet",
        "show_pet_by_id",
        "delete_pet",
        "get_inventory",
    ]
    listing = reports[0]
    assert listing["flags"]["read_only"] and listing["flags"]["concurrency_safe"]
    assert listing["schema"]["annotations"]["readOnlyHint"] is True
    assert reports[3]["schema"]["annotations"]["destructiveHint"] is True


def test_call_sends_the_request_to_the_base_url(store_url: str) -> None:
    result = tooling_cli(
        "call", f"{PETSTORE}:show_pet_by_id", '{"petId": 1}', "--base-url", store_url, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["name"] == "Rex"


def test_call_prints_an_http_error_and_exits_1(store_url: str) -> None:
    result = tooling_cli(
        "call", f"{PETSTORE}:show_pet_by_id", '{"petId": 77}', "--base-url", store_url, cwd=ROOT
    )
    assert result.returncode == 1
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "http.error" and error["details"]["status"] == 404


def test_a_json_file_that_is_not_openapi_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "data.json").write_text('{"hello": "world"}')
    result = tooling_cli("inspect", "data.json", cwd=tmp_path)
    assert result.returncode == 2
    assert "not an OpenAPI document" in one_error_line(result)


def test_swagger_2_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "old.yaml").write_text(
        "swagger: '2.0'\ninfo: {title: t, version: '1'}\npaths: {}\n"
    )
    result = tooling_cli("inspect", "old.yaml", cwd=tmp_path)
    assert result.returncode == 2 and "Swagger 2.0" in one_error_line(result)


def test_base_url_with_another_target_is_a_usage_error() -> None:
    result = tooling_cli(
        "inspect", "examples/function_tools", "--base-url", "http://127.0.0.1:1", cwd=ROOT
    )
    assert result.returncode == 2 and "--base-url" in one_error_line(result)


def test_serve_makes_any_rest_api_an_mcp_server(store_url: str) -> None:
    with http_server(PETSTORE, extra=("--base-url", store_url)) as (url, _):

        async def use() -> tuple[list[str], dict[str, object]]:
            toolset = McpToolset(HttpServer(url))
            try:
                tools = {t.name: t for t in await toolset.get_tools()}
                answer = await tools["list_pets"].run({"status": "sold"})
                return sorted(tools), answer
            finally:
                await toolset.close()

        names, answer = asyncio.run(use())
    assert names == ["create_pet", "delete_pet", "get_inventory", "list_pets", "show_pet_by_id"]
    assert [p["name"] for p in answer["result"]] == ["Nemo"]  # type: ignore[index]
