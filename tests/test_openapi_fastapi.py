"""OpenAPIToolset against a real FastAPI app under uvicorn: the spec is FastAPI's own
(OpenAPI 3.1), every call a real HTTP request on 127.0.0.1."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from tests._openapi_servers import inventory_app, serve_asgi
from tooling import Scheduler, SimpleToolContext, ToolCall, ToolError
from tooling.openapi import OpenAPIToolset, RestApiTool


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    app, seen = inventory_app()
    spec = app.openapi()
    with serve_asgi(app) as url:
        yield url, spec, seen


def toolset(served: tuple[str, dict[str, Any], dict[str, Any]], **options: Any) -> OpenAPIToolset:
    url, spec, _ = served
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return OpenAPIToolset(spec, base_url=url, **options)


def tools_of(ts: OpenAPIToolset) -> dict[str, RestApiTool]:
    tools = asyncio.run(ts.get_tools())
    return {t.name: t for t in tools if isinstance(t, RestApiTool)}


async def call(ts: OpenAPIToolset, name: str, args: dict[str, Any], ctx: Any = None) -> Any:
    try:
        (tool,) = [t for t in await ts.get_tools() if t.name == name]
        return await tool.run(args, ctx)
    finally:
        await ts.close()


def test_the_spec_is_fastapis_own_3_1(served: Any) -> None:
    assert served[1]["openapi"].startswith("3.1")


def test_one_tool_per_operation_named_from_the_operation_id(served: Any) -> None:
    tools = tools_of(toolset(served))
    assert "list_items" in tools  # operationId listItems
    assert "read_item_items_item_id_get" in tools  # FastAPI's generated id, snake_case
    assert tools["list_items"].description == "List the items"
    assert tools["read_item_items_item_id_get"].description.startswith("Read Item")
    assert "Read one item by its id." in tools["read_item_items_item_id_get"].description


def test_flags_follow_the_http_method(served: Any) -> None:
    tools = tools_of(toolset(served))
    get, post = tools["list_items"], tools["create_item_items_post"]
    put, delete = tools["replace_item_items_item_id_put"], tools["delete_item_items_item_id_delete"]
    assert (get.read_only, get.concurrency_safe, get.idempotent, get.is_destructive) == (
        True,
        True,
        True,
        False,
    )
    assert (post.read_only, post.idempotent, post.is_destructive) == (False, False, False)
    assert (put.read_only, put.idempotent, put.is_destructive) == (False, True, False)
    assert (delete.idempotent, delete.is_destructive) == (True, True)


def test_arguments_and_required_ness(served: Any) -> None:
    tools = tools_of(toolset(served))
    listing = tools["list_items"].parameters_json_schema
    assert set(listing["properties"]) == {"limit", "kind", "tags"}
    assert "required" not in listing
    assert listing["properties"]["limit"]["default"] == 10
    create = tools["create_item_items_post"].parameters_json_schema
    # an object body's properties become arguments; the body is required, so are its
    # required properties
    assert list(create["properties"]) == ["name", "price", "kind", "tags", "note"]
    assert create["required"] == ["name", "price"]
    assert create["properties"]["price"]["exclusiveMinimum"] == 0
    assert create["properties"]["kind"]["enum"] == ["tool", "toy"]
    replace = tools["replace_item_items_item_id_put"].parameters_json_schema
    assert replace["required"] == ["item_id", "name", "price"]


def test_a_required_one_of_body_is_one_required_argument(served: Any) -> None:
    tool = tools_of(toolset(served))["area_shapes_area_post"]
    schema = tool.parameters_json_schema
    assert schema["required"] == ["body"]
    assert "oneOf" in schema["properties"]["body"]
    assert schema["properties"]["body"]["discriminator"] == {"propertyName": "kind"}


def test_recursive_models_stay_defs_references(served: Any) -> None:
    tool = tools_of(toolset(served))["count_trees_count_post"]
    schema = tool.parameters_json_schema
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}
    assert schema["$defs"]["Tree"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}


def test_response_schema_is_the_first_2xx_json_answer(served: Any) -> None:
    tools = tools_of(toolset(served))
    create = tools["create_item_items_post"].response_json_schema
    assert create is not None and create["required"] == ["name", "price"]
    listing = tools["list_items"].response_json_schema
    assert listing is not None and listing["properties"]["result"]["type"] == "array"
    assert tools["delete_item_items_item_id_delete"].response_json_schema is None


def test_calls_go_through_real_http(served: Any) -> None:
    ts = toolset(served)
    created = asyncio.run(
        call(ts, "create_item_items_post", {"name": "kite", "price": 3, "kind": "toy"})
    )
    assert created == {"name": "kite", "price": 3.0, "kind": "toy", "tags": [], "note": None}
    listed = asyncio.run(call(ts, "list_items", {"kind": "toy"}))
    assert [i["name"] for i in listed["result"]] == ["kite"]
    read = asyncio.run(call(ts, "read_item_items_item_id_get", {"item_id": "hammer"}))
    assert read == {"item_id": "hammer", "name": "hammer"}
    deleted = asyncio.run(call(ts, "delete_item_items_item_id_delete", {"item_id": "kite"}))
    assert deleted == {"status": "success", "http_status": 204}


def test_query_arrays_are_exploded(served: Any) -> None:
    ts = toolset(served)
    found = asyncio.run(call(ts, "list_items", {"tags": ["steel"]}))
    assert [i["name"] for i in found["result"]] == ["hammer"]
    assert served[2]["raw_paths"][-1] == "/items"
    none = asyncio.run(call(ts, "list_items", {"tags": ["steel", "wood"]}))
    assert none == {"result": []}


def test_a_one_of_body_is_sent(served: Any) -> None:
    ts = toolset(served)
    answer = asyncio.run(call(ts, "area_shapes_area_post", {"body": {"kind": "square", "side": 3}}))
    assert answer == {"area": 9.0}


def test_a_header_parameter_is_sent(served: Any) -> None:
    ts = toolset(served)
    answer = asyncio.run(call(ts, "echo_echo_value_get", {"value": "v", "x-request-id": "r-1"}))
    assert answer == {"value": "v", "x_request_id": "r-1"}


def test_a_header_value_cannot_inject_lines(served: Any) -> None:
    ts = toolset(served)
    with pytest.raises(ToolError) as caught:
        asyncio.run(
            call(ts, "echo_echo_value_get", {"value": "v", "x-request-id": "a\r\nX-Evil: 1"})
        )
    assert caught.value.code == "tool.invalid_arguments"


def test_invalid_arguments_send_nothing(served: Any) -> None:
    ts = toolset(served)
    before = len(served[2]["raw_paths"])
    with pytest.raises(ToolError) as caught:
        asyncio.run(call(ts, "create_item_items_post", {"price": "cheap", "colour": "red"}))
    assert caught.value.code == "tool.invalid_arguments"
    kinds = {(tuple(d["loc"]), d["type"]) for d in caught.value.details or []}
    assert (("name",), "missing") in kinds and (("colour",), "extra_forbidden") in kinds
    assert len(served[2]["raw_paths"]) == before


def test_strict_mode_nulls_for_optional_arguments_are_left_out(served: Any) -> None:
    ts = toolset(served)
    answer = asyncio.run(call(ts, "list_items", {"limit": None, "kind": None, "tags": None}))
    assert [i["name"] for i in answer["result"]] == ["hammer"]


@pytest.mark.parametrize(
    "value", ["../admin", "a/b", "?x=1", "%2e%2e", "..", "http://127.0.0.2/admin", "#frag"]
)
def test_path_values_reach_only_the_operations_path(served: Any, value: str) -> None:
    ts = toolset(served)
    admin_before = served[2]["admin"]
    try:
        answer = asyncio.run(call(ts, "echo_echo_value_get", {"value": value}))
    except ToolError as err:
        assert err.code == "http.error"  # not found: the value was one segment
    else:
        assert answer["value"] == value
    raw = served[2]["raw_paths"][-1]
    assert raw.startswith("/echo/") and raw.count("/") == 2 and "?" not in raw
    assert served[2]["admin"] == admin_before


def test_an_http_error_carries_status_and_body(served: Any) -> None:
    ts = toolset(served)
    with pytest.raises(ToolError) as caught:
        asyncio.run(call(ts, "read_item_items_item_id_get", {"item_id": "nope"}))
    err = caught.value
    assert err.code == "http.error"
    assert "GET /items/{item_id}" in err.message and "404" in err.message
    assert err.details == {"status": 404, "body": {"detail": "no item 'nope'"}}


def test_a_500_with_a_10_mb_body_is_cut_at_2_kib(served: Any) -> None:
    ts = toolset(served)
    with pytest.raises(ToolError) as caught:
        asyncio.run(call(ts, "huge_error_huge_error_get", {}))
    detail = caught.value.details
    assert isinstance(detail, dict) and detail["status"] == 500
    assert len(detail["body"].encode()) < 2200 and detail["body"].startswith("xxxx")


def test_a_hanging_server_is_a_timeout(served: Any) -> None:
    ts = toolset(served, timeout=0.3)
    with pytest.raises(ToolError) as caught:
        asyncio.run(call(ts, "slow_slow_get", {}))
    assert caught.value.code == "tool.timeout"


def test_html_where_json_is_described_is_a_clear_failure(served: Any) -> None:
    ts = toolset(served)
    with pytest.raises(ToolError) as caught:
        asyncio.run(call(ts, "html_html_get", {}))
    assert caught.value.code == "tool.failed"
    assert "text/html where the API describes JSON" in caught.value.message


def test_text_answers_are_results(served: Any) -> None:
    ts = toolset(served)
    assert asyncio.run(call(ts, "text_text_get", {})) == {"result": "plain words"}


def test_a_redirect_elsewhere_is_not_followed(served: Any) -> None:
    ts = toolset(served)
    with pytest.raises(ToolError) as caught:
        asyncio.run(call(ts, "redirect_away_redirect_away_get", {}))
    assert caught.value.code == "tool.failed" and "not followed" in caught.value.message


def test_a_redirect_within_the_api_is_followed(served: Any) -> None:
    ts = toolset(served)
    answer = asyncio.run(call(ts, "redirect_home_redirect_home_get", {}))
    assert answer == {"item_id": "hammer", "name": "hammer"}


def test_a_server_that_is_not_there_is_tool_failed(served: Any) -> None:
    ts = OpenAPIToolset(served[1], base_url="http://127.0.0.1:9")
    with pytest.raises(ToolError) as caught:
        asyncio.run(call(ts, "list_items", {}))
    assert caught.value.code == "tool.failed" and "cannot reach" in caught.value.message


def test_gets_run_side_by_side_under_auto(served: Any) -> None:
    ts = toolset(served)

    async def both() -> list[Any]:
        tools = await ts.get_tools()
        scheduler = Scheduler(tools)
        try:
            return await scheduler.dispatch(
                [
                    ToolCall("1", "list_items", {}),
                    ToolCall("2", "read_item_items_item_id_get", {"item_id": "hammer"}),
                ]
            )
        finally:
            scheduler.close()
            await ts.close()

    first, second = asyncio.run(both())
    assert first.error is None and second.response["name"] == "hammer"


def test_a_missing_credential_asks_for_one_and_the_answer_resumes(served: Any) -> None:
    ts = toolset(served)

    async def twice() -> tuple[Any, Any]:
        tools = {t.name: t for t in await ts.get_tools()}
        scheduler = Scheduler(list(tools.values()))
        try:
            (first,) = await scheduler.dispatch([ToolCall("c1", "secure_secure_get", {})])
            config = first.response["credential"]["auth_config"]

            from tooling.integration import auth_config_key

            ctx = SimpleToolContext(
                function_call_id="c1",
                auth_responses={auth_config_key(config): {"api_key": "user-key-99"}},
            )
            (second,) = await scheduler.dispatch(
                [ToolCall("c1", "secure_secure_get", {})], context_factory=lambda c: ctx
            )
            return first, second
        finally:
            scheduler.close()
            await ts.close()

    first, second = asyncio.run(twice())
    assert first.waiting_for == "credential"
    assert first.response["status"] == "credential_required"
    config = first.response["credential"]["auth_config"]
    assert config["scheme"] == {"type": "apiKey", "name": "X-API-Key", "location": "header"}
    assert config["kind"] == "api_key"
    assert second.error is None, second.response
    assert second.response == {"key_ends": "99"}


def test_an_api_key_from_auth_goes_in_its_header(served: Any) -> None:
    from tooling.auth import ApiKey

    ts = toolset(served, auth={"APIKeyHeader": ApiKey(value="key-1234")})
    assert asyncio.run(call(ts, "secure_secure_get", {})) == {"key_ends": "34"}
    assert served[2]["headers"][-1]["x-api-key"] == "key-1234"


def test_one_credential_goes_to_every_scheme_it_fits(served: Any) -> None:
    from tooling.auth import ApiKey

    ts = toolset(served, auth=ApiKey(value="key-5678"))
    assert asyncio.run(call(ts, "secure_secure_get", {})) == {"key_ends": "78"}


def test_an_argument_cannot_replace_the_credential(served: Any) -> None:
    from tooling.auth import ApiKey

    ts = toolset(served, auth=ApiKey(value="key-5678"), headers={"X-API-Key": "from-headers"})
    assert asyncio.run(call(ts, "secure_secure_get", {})) == {"key_ends": "78"}


def test_auth_naming_an_unknown_scheme_is_refused(served: Any) -> None:
    from tooling.auth import ApiKey

    with pytest.raises(ValueError, match="nope"):
        toolset(served, auth={"nope": ApiKey(value="k")})
