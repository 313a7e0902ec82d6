"""OpenAPIToolset on hand-written specs: the Petstore-shaped 3.0 YAML of the example
served by its small local app, every generated tool through the exporters' checks for
every provider, the spec faults a toolset must name, and a property: for generated
operations, required-ness and enums in our schema equal the spec's."""

from __future__ import annotations

import asyncio
import copy
import json
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._openapi_servers import inventory_app
from tests.test_exporters import assert_legacy_rules, assert_mcp_valid, assert_strict_rules
from tooling import BaseTool, ToolError
from tooling._export import gemini
from tooling.openapi import OpenAPIToolset, RestApiTool

ROOT = Path(__file__).resolve().parent.parent
PETSTORE = ROOT / "examples" / "openapi_petstore" / "petstore.yaml"


def tools(spec: Any, **options: Any) -> dict[str, RestApiTool]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        toolset = OpenAPIToolset(spec, **options)
    found = asyncio.run(toolset.get_tools())
    return {t.name: t for t in found if isinstance(t, RestApiTool)}


def minimal(paths: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": paths, **extra}


def ok(schema: Any = None) -> dict[str, Any]:
    content = {"application/json": {"schema": schema}} if schema is not None else None
    return {"200": {"description": "ok", **({"content": content} if content else {})}}


# -- the Petstore-shaped YAML spec, served by a small local app --------------------------


@pytest.fixture(scope="module")
def store_url() -> str:
    from examples.openapi_petstore import api

    api.reset()
    return api.serve()


def test_the_yaml_petstore_gives_its_operations() -> None:
    found = tools(PETSTORE)
    assert list(found) == [
        "list_pets",
        "create_pet",
        "show_pet_by_id",
        "delete_pet",
        "get_inventory",
    ]
    listing = found["list_pets"].parameters_json_schema
    assert listing["properties"]["status"] == {
        "anyOf": [{"type": "string", "enum": ["available", "pending", "sold"]}, {"type": "null"}],
        "description": "Only pets with this status.",
    }
    assert listing["properties"]["limit"]["default"] == 20
    assert listing["properties"]["limit"]["format"] == "int32"
    show = found["show_pet_by_id"]
    assert show.parameters_json_schema["required"] == ["petId"]  # a path-level parameter
    pet = show.response_json_schema
    assert pet is not None and [p["required"] for p in pet["allOf"]] == [["name"], ["id"]]


def test_yaml_and_json_text_and_a_dict_give_the_same_tools() -> None:
    import yaml

    document = yaml.safe_load(PETSTORE.read_text())
    from_path = {n: t.parameters_json_schema for n, t in tools(PETSTORE).items()}
    assert {n: t.parameters_json_schema for n, t in tools(document).items()} == from_path
    as_yaml = {n: t.parameters_json_schema for n, t in tools(PETSTORE.read_text()).items()}
    assert as_yaml == from_path
    as_json = {n: t.parameters_json_schema for n, t in tools(json.dumps(document)).items()}
    assert as_json == from_path


def test_the_spec_server_with_its_variables_is_the_default_base_url() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert OpenAPIToolset(PETSTORE).base_url == "http://127.0.0.1:8080/v1"


def test_calls_reach_the_local_app(store_url: str) -> None:
    from tooling.auth import ApiKey

    async def session() -> tuple[Any, ...]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            toolset = OpenAPIToolset(PETSTORE, base_url=store_url, auth=ApiKey(value="demo-key"))
        found = {t.name: t for t in await toolset.get_tools()}
        try:
            listed = await found["list_pets"].run({"tags": ["dog", "cat"], "limit": 5})
            one = await found["show_pet_by_id"].run({"petId": 2})
            counts = await found["get_inventory"].run({})
            gone = await found["delete_pet"].run({"petId": 3})
            return listed, one, counts, gone
        finally:
            await toolset.close()

    listed, one, counts, gone = asyncio.run(session())
    assert [p["name"] for p in listed["result"]] == ["Rex", "Tom"]
    assert one["name"] == "Tom"
    assert counts == {"available": 2, "sold": 1}
    assert gone == {"status": "success", "http_status": 204}


def test_a_refused_key_is_an_error_without_the_key(store_url: str) -> None:
    from tooling.auth import ApiKey

    async def once() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            toolset = OpenAPIToolset(PETSTORE, base_url=store_url, auth=ApiKey(value="wrong-key"))
        tool = next(t for t in await toolset.get_tools() if t.name == "get_inventory")
        try:
            await tool.run({})
        finally:
            await toolset.close()

    with pytest.raises(ToolError) as caught:
        asyncio.run(once())
    assert caught.value.code == "auth.unauthorized"
    assert "wrong-key" not in str(caught.value.to_response())


# -- every generated tool, every provider ----------------------------------------------


def _all_tools() -> list[BaseTool]:
    app, _ = inventory_app()
    return [*tools(PETSTORE).values(), *tools(app.openapi()).values()]


def _has_open_mapping(schema: Any) -> bool:
    if isinstance(schema, dict):
        if schema.get("type") == "object" and "properties" not in schema:
            return schema.get("additionalProperties", True) is not False
        if isinstance(schema.get("additionalProperties"), dict):
            return True
        return any(_has_open_mapping(v) for v in schema.values())
    if isinstance(schema, list):
        return any(_has_open_mapping(v) for v in schema)
    return False


@pytest.mark.parametrize("tool", _all_tools(), ids=lambda t: t.name)
def test_every_generated_tool_exports_to_every_provider(tool: BaseTool) -> None:
    schema = copy.deepcopy(tool.parameters_json_schema)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        legacy, _ = gemini.legacy_schema(tool.parameters_json_schema)
        assert_legacy_rules(legacy)
        from google.genai import types as genai_types

        genai_types.FunctionDeclaration.model_validate(tool.to_gemini().model_dump())
        genai_types.FunctionDeclaration.model_validate(tool.to_gemini(legacy=True).model_dump())
        if _has_open_mapping(tool.parameters_json_schema):
            with pytest.raises(ValueError, match=tool.name):
                tool.to_openai(strict=True)
        else:
            strict = tool.to_openai(strict=True)["function"]["parameters"]
            assert_strict_rules(strict)
            assert list(strict["properties"]) == list(schema["properties"])
        assert tool.to_openai()["function"]["parameters"] == schema
        assert tool.to_anthropic()["input_schema"] == schema
        assert_mcp_valid(tool.to_mcp())
    assert tool.parameters_json_schema == schema  # exports never change the tool's schema


# -- faults in the spec: a clear error naming where, or a diagnostic --------------------


def test_swagger_2_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"Swagger 2\.0.*not supported"):
        OpenAPIToolset({"swagger": "2.0", "info": {}, "paths": {}})


def test_a_document_that_is_not_openapi_is_refused() -> None:
    with pytest.raises(ValueError, match="no 'openapi' version"):
        OpenAPIToolset({"paths": {}})
    with pytest.raises(ValueError, match="not valid JSON"):
        OpenAPIToolset('{"openapi": ')


def test_a_broken_ref_names_the_operation_and_the_pointer() -> None:
    spec = minimal(
        {
            "/pets": {
                "get": {
                    "operationId": "listPets",
                    "responses": ok({"$ref": "#/components/schemas/Missing"}),
                }
            }
        }
    )
    with pytest.raises(ValueError) as caught:
        OpenAPIToolset(spec)
    message = str(caught.value)
    assert "#/components/schemas/Missing" in message
    assert "#/paths/~1pets/get/responses/200/content/application~1json/schema" in message


def test_a_loop_of_bare_refs_is_an_error() -> None:
    spec = minimal(
        {"/a": {"get": {"operationId": "a", "responses": ok({"$ref": "#/components/schemas/A"})}}},
        components={
            "schemas": {
                "A": {"$ref": "#/components/schemas/B"},
                "B": {"$ref": "#/components/schemas/A"},
            }
        },
    )
    with pytest.raises(ValueError, match="circular \\$ref"):
        OpenAPIToolset(spec)


def test_a_parameter_ref_loop_is_an_error() -> None:
    spec = minimal(
        {"/a": {"get": {"parameters": [{"$ref": "#/components/parameters/P"}], "responses": ok()}}},
        components={"parameters": {"P": {"$ref": "#/components/parameters/P"}}},
    )
    with pytest.raises(ValueError, match="circular"):
        OpenAPIToolset(spec)


def test_an_undeclared_path_parameter_is_an_error() -> None:
    spec = minimal({"/pets/{id}": {"get": {"operationId": "getPet", "responses": ok()}}})
    with pytest.raises(ValueError, match=r"getPet.*\{id\}"):
        OpenAPIToolset(spec)


def test_an_unknown_security_scheme_is_an_error() -> None:
    spec = minimal({"/a": {"get": {"security": [{"nope": []}], "responses": ok()}}})
    with pytest.raises(ValueError, match="'nope'"):
        OpenAPIToolset(spec)


def test_unknown_formats_are_kept_with_a_diagnostic() -> None:
    spec = minimal(
        {
            "/a": {
                "get": {
                    "operationId": "a",
                    "parameters": [
                        {
                            "name": "when",
                            "in": "query",
                            "schema": {"type": "string", "format": "fancy-date"},
                        }
                    ],
                    "responses": ok(),
                }
            }
        }
    )
    (tool,) = tools(spec).values()
    assert tool.parameters_json_schema["properties"]["when"]["format"] == "fancy-date"
    assert [d.code for d in tool.diagnostics] == ["openapi.unknown_format"]
    with pytest.warns(UserWarning, match="fancy-date"):
        strict = tool.to_openai(strict=True)["function"]["parameters"]
    assert strict["properties"]["when"]["anyOf"][0] == {"type": "string"}  # dropped, said


def test_duplicate_operation_ids_are_numbered_with_a_diagnostic() -> None:
    spec = minimal(
        {
            "/a": {"get": {"operationId": "listThings", "responses": ok()}},
            "/b": {"get": {"operationId": "listThings", "responses": ok()}},
        }
    )
    with pytest.warns(UserWarning, match="listThings"):
        toolset = OpenAPIToolset(spec)
    first, second = asyncio.run(toolset.get_tools())
    assert (first.name, second.name) == ("list_things", "list_things_2")
    assert "openapi.duplicate_operation_id" in [d.code for d in second.diagnostics]


def test_operations_without_ids_are_named_from_method_and_path() -> None:
    spec = minimal(
        {
            "/pets/{petId}/photos": {
                "parameters": [
                    {"name": "petId", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "get": {"responses": ok()},
                "post": {"responses": ok()},
            },
            "/2fa": {"put": {"responses": ok()}},
        }
    )
    assert list(tools(spec)) == ["get_pets_pet_id_photos", "post_pets_pet_id_photos", "put_2fa"]


def test_names_follow_the_tool_name_rule() -> None:
    spec = minimal(
        {
            "/a": {"get": {"operationId": "getHTTPResponse.v2", "responses": ok()}},
            "/b": {"get": {"operationId": "x" * 80, "responses": ok()}},
            "/c": {"get": {"operationId": "9lives", "responses": ok()}},
        }
    )
    assert list(tools(spec)) == ["get_http_response_v2", "x" * 64, "op_9lives"]


def test_non_json_bodies() -> None:
    spec = minimal(
        {
            "/upload": {
                "post": {
                    "operationId": "upload",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/octet-stream": {
                                "schema": {"type": "string", "format": "binary"}
                            }
                        },
                    },
                    "responses": ok(),
                }
            },
            "/maybe": {
                "post": {
                    "operationId": "maybe",
                    "requestBody": {
                        "content": {"multipart/form-data": {"schema": {"type": "object"}}}
                    },
                    "responses": ok(),
                }
            },
            "/note": {
                "post": {
                    "operationId": "note",
                    "requestBody": {
                        "required": True,
                        "content": {"text/plain": {"schema": {"type": "string"}}},
                    },
                    "responses": ok(),
                }
            },
            "/form": {
                "post": {
                    "operationId": "form",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/x-www-form-urlencoded": {
                                "schema": {
                                    "type": "object",
                                    "required": ["q"],
                                    "properties": {"q": {"type": "string"}},
                                }
                            }
                        },
                    },
                    "responses": ok(),
                }
            },
        }
    )
    with pytest.warns(UserWarning) as warned:
        toolset = OpenAPIToolset(spec)
    messages = " ".join(str(w.message) for w in warned)
    assert "octet-stream" in messages and "multipart/form-data" not in messages
    found = {t.name: t for t in asyncio.run(toolset.get_tools())}
    assert sorted(found) == ["form", "maybe", "note"]  # a required binary body: left out
    assert [d.code for d in toolset.diagnostics] == ["openapi.unsupported_body"]
    assert "upload" in toolset.diagnostics[0].message
    assert found["maybe"].parameters_json_schema["properties"] == {}
    assert found["note"].parameters_json_schema["required"] == ["body"]
    assert found["form"].parameters_json_schema["required"] == ["q"]


def test_a_ref_to_another_file_is_read_relative_to_the_spec(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "pet.yaml").write_text(
        "Pet:\n  type: object\n  required: [name]\n  properties:\n"
        "    name: {type: string}\n    owner: {$ref: '#/Owner'}\n"
        "Owner:\n  type: object\n  properties:\n    email: {type: string, format: email}\n"
    )
    (tmp_path / "api.yaml").write_text(
        "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /pets:\n    post:\n"
        "      operationId: addPet\n      requestBody:\n        required: true\n"
        "        content:\n          application/json:\n"
        "            schema: {$ref: 'models/pet.yaml#/Pet'}\n"
        "      responses: {'200': {description: ok}}\n"
    )
    (tool,) = tools(tmp_path / "api.yaml").values()
    assert tool.parameters_json_schema["required"] == ["name"]
    assert tool.parameters_json_schema["properties"]["owner"]["properties"]["email"] == {
        "type": "string",
        "format": "email",
    }


def test_a_remote_ref_is_never_fetched() -> None:
    spec = minimal({"/a": {"get": {"responses": ok({"$ref": "https://example.com/s.json#/X"})}}})
    with pytest.raises(ValueError, match="never fetched"):
        OpenAPIToolset(spec)


def test_a_bad_base_url_is_refused_when_built() -> None:
    with pytest.raises(ValueError, match="absolute http"):
        OpenAPIToolset(minimal({}), base_url="ftp://host/")


def test_no_base_url_is_a_clear_call_error() -> None:
    (tool,) = tools(minimal({"/a": {"get": {"operationId": "a", "responses": ok()}}})).values()
    with pytest.raises(ToolError, match="no base URL"):
        asyncio.run(tool.run({}))


# -- the property: required-ness and enums are the spec's ---------------------------------

_names = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
_enums = st.lists(
    st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1, max_size=5),
    min_size=1,
    max_size=4,
    unique=True,
)
_scalar = st.one_of(
    st.just({"type": "string"}),
    st.just({"type": "integer", "format": "int32"}),
    st.builds(lambda e: {"type": "string", "enum": e}, _enums),
    st.builds(lambda e: {"type": "string", "enum": e, "nullable": True}, _enums),
    st.builds(lambda e: {"$ref": "#/components/schemas/Choice", "x-enum": e}, _enums),
)


def _enum_of(schema: dict[str, Any], components: dict[str, Any]) -> Any:
    """The enum a spec schema gives (following a reference to a component)."""
    if "$ref" in schema:
        return components["Choice"].get("enum")
    return schema.get("enum")


def _our_enum(schema: dict[str, Any]) -> Any:
    """The enum our schema gives (inside a null branch too)."""
    if "anyOf" in schema:
        return next((b["enum"] for b in schema["anyOf"] if "enum" in b), None)
    return schema.get("enum")


@st.composite
def operations(draw: st.DrawFn) -> dict[str, Any]:
    params = draw(
        st.dictionaries(
            _names,
            st.tuples(st.sampled_from(["query", "header", "path"]), st.booleans(), _scalar),
            max_size=4,
        )
    )
    choice = draw(_enums)
    components = {"Choice": {"type": "string", "enum": choice}}
    by_ref = draw(st.booleans())
    body_props = draw(st.dictionaries(_names, st.tuples(st.booleans(), _scalar), max_size=4))
    body_kind = draw(st.sampled_from(["none", "object", "oneOf"]))
    body_required = draw(st.booleans())
    operation: dict[str, Any] = {
        "operationId": "op",
        "parameters": [
            {"name": n, "in": place, "required": req, "schema": schema}
            for n, (place, req, schema) in params.items()
        ],
        "responses": ok(),
    }
    if body_kind == "object":
        schema = {
            "type": "object",
            "properties": {n: s for n, (_, s) in body_props.items()},
            "required": [n for n, (r, _) in body_props.items() if r],
        }
    elif body_kind == "oneOf":
        schema = {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "integer"}}]}
    if body_kind != "none":
        if by_ref:
            components["Body"] = schema
            schema = {"$ref": "#/components/schemas/Body"}
        operation["requestBody"] = {
            "required": body_required,
            "content": {"application/json": {"schema": schema}},
        }
    path = "/op/" + "/".join(f"{{{n}}}" for n, (p, _, _) in params.items() if p == "path")
    spec = minimal({path.rstrip("/"): {"post": operation}}, components={"schemas": components})
    return {"spec": spec, "params": params, "body": (body_kind, body_required, body_props)}


@settings(max_examples=60, deadline=None)
@given(operations())
def test_property_required_ness_and_enums_are_the_specs(case: dict[str, Any]) -> None:
    (tool,) = tools(case["spec"]).values()
    schema = tool.parameters_json_schema
    properties, required = schema["properties"], set(schema.get("required", ()))
    components = case["spec"]["components"]["schemas"]
    expected_required = {
        n for n, (place, req, _) in case["params"].items() if req or place == "path"
    }
    names = set(case["params"])
    for name, (_, _, param_schema) in case["params"].items():
        assert _our_enum(properties[name]) == _enum_of(param_schema, components)
    kind, body_required, body_props = case["body"]
    if kind == "object" and body_props:
        for prop, (prop_required, prop_schema) in body_props.items():
            name = prop if prop not in names else f"body_{prop}"
            assert _our_enum(properties[name]) == _enum_of(prop_schema, components)
            if body_required and prop_required:
                expected_required.add(name)
    elif kind != "none":
        name = "body" if "body" not in names else "body_body"
        if body_required:
            expected_required.add(name)
        if kind == "oneOf":
            assert len(properties[name]["oneOf"]) == 2
    assert required == expected_required


# -- the fast argument check agrees with jsonschema ----------------------------------------

_leaf_schemas = st.one_of(
    st.just({"type": "string"}),
    st.just({"type": "integer"}),
    st.just({"type": "number", "minimum": 0, "exclusiveMaximum": 10}),
    st.just({"type": "boolean"}),
    st.just({"type": "string", "minLength": 1, "maxLength": 3}),
    st.builds(
        lambda e: {"enum": e},
        st.lists(
            st.sampled_from([1, 1.5, True, "a", None, 0]), min_size=1, max_size=3, unique_by=repr
        ),
    ),
    st.just({"anyOf": [{"type": "integer", "maximum": 5}, {"type": "null"}]}),
    st.just({"type": ["string", "null"], "format": "date"}),
)
_arg_schemas = st.one_of(
    _leaf_schemas,
    st.builds(
        lambda s, n: {"type": "array", "items": s, "maxItems": n}, _leaf_schemas, st.integers(0, 3)
    ),
)
_json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 12),
        st.floats(-2, 12, allow_nan=False),
        st.sampled_from(["", "a", "abcd", "2024-01-01"]),
    ),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from("ab"), inner),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(_names, _arg_schemas, min_size=1, max_size=3),
    st.data(),
)
def test_property_the_fast_check_never_accepts_what_jsonschema_refuses(
    properties: dict[str, Any], data: st.DataObject
) -> None:
    from jsonschema import Draft202012Validator

    from tooling.openapi._fastcheck import fast_checker

    required = data.draw(st.lists(st.sampled_from(sorted(properties)), unique=True))
    schema = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    check = fast_checker(schema)
    assert check is not None
    keys = st.sampled_from([*properties, "other"])
    arguments = data.draw(st.dictionaries(keys, _json_values, max_size=4))
    if check(arguments):
        assert Draft202012Validator(schema).is_valid(arguments), arguments


def test_the_fast_check_takes_the_common_schemas() -> None:
    found = tools(PETSTORE)
    listing = found["list_pets"]
    assert listing._fast is not None and listing._fast({"status": "sold", "limit": 3})
    assert not listing._fast({"status": "lost"})  # then jsonschema writes the error
    with pytest.raises(ToolError) as caught:
        listing.check_arguments({"status": "lost"})
    assert caught.value.details and caught.value.details[0]["loc"] == ["status"]


def test_a_file_name_given_as_text_gets_a_hint() -> None:
    with pytest.raises(ValueError, match=r"pass pathlib.Path\('api.yaml'\)"):
        OpenAPIToolset("api.yaml")


def _one_param(schema: dict[str, Any]) -> dict[str, Any]:
    return minimal(
        {
            "/a": {
                "get": {
                    "operationId": "a",
                    "parameters": [{"name": "p", "in": "query", "schema": schema}],
                    "responses": ok(),
                }
            }
        }
    )


def test_a_type_json_schema_lacks_is_an_error_naming_where() -> None:
    with pytest.raises(ValueError, match=r"operation a .*parameters/0/schema/type.*'file'"):
        OpenAPIToolset(_one_param({"type": "file"}))


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": "["},
        {"type": "integer", "minimum": "5"},
        {"type": "object", "properties": {"x": {"type": "string", "required": True}}},
        {"type": "string", "maxLength": -1},
    ],
)
def test_a_malformed_keyword_is_ignored_with_a_diagnostic(schema: dict[str, Any]) -> None:
    with pytest.warns(UserWarning, match="openapi|ignored"):
        toolset = OpenAPIToolset(_one_param(schema))
    (tool,) = asyncio.run(toolset.get_tools())
    assert "openapi.invalid_schema" in [d.code for d in tool.diagnostics]
    value = {"x": "y"} if schema["type"] == "object" else ("5" if schema["type"] == "string" else 5)
    assert tool.check_arguments({"p": value}).values == {"p": value}  # checking works


def _param_schema(version: str, schema: dict[str, Any], **components: Any) -> Any:
    spec = minimal(
        {
            "/a": {
                "get": {
                    "operationId": "a",
                    "parameters": [{"name": "p", "in": "query", "schema": schema}],
                    "responses": ok(),
                }
            }
        },
        components={"schemas": components},
    )
    spec["openapi"] = version
    (tool,) = tools(spec).values()
    return tool.parameters_json_schema["properties"]["p"]


def test_the_3_0_dialect_becomes_json_schema() -> None:
    converted = _param_schema(
        "3.0.3",
        {
            "type": "number",
            "minimum": 0,
            "exclusiveMinimum": True,
            "maximum": 9,
            "exclusiveMaximum": False,
            "example": 3,
            "x-internal": "yes",
            "nullable": True,
            "description": "a number",
        },
    )
    assert converted == {
        "anyOf": [{"type": "number", "exclusiveMinimum": 0, "maximum": 9}, {"type": "null"}],
        "description": "a number",
    }


def test_3_1_schemas_stay_json_schema_and_ref_siblings_narrow() -> None:
    assert _param_schema("3.1.0", {"type": ["string", "null"], "const": "x"}) == {
        "type": ["string", "null"],
        "const": "x",
    }
    described = _param_schema(
        "3.1.0",
        {"$ref": "#/components/schemas/Code", "description": "the code"},
        Code={"type": "string", "pattern": "^[A-Z]+$"},
    )
    assert described == {"type": "string", "pattern": "^[A-Z]+$", "description": "the code"}
    narrowed = _param_schema(
        "3.1.0",
        {"$ref": "#/components/schemas/Code", "maxLength": 3},
        Code={"type": "string"},
    )
    assert narrowed == {"allOf": [{"type": "string"}, {"maxLength": 3}]}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.text(max_size=90)),
            st.sampled_from(["get", "post", "delete"]),
            st.text(max_size=40).map(lambda t: "/" + t.replace("{", "").replace("}", "")),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_property_tool_names_follow_the_rule_and_are_unique(
    operations_: list[tuple[str | None, str, str]],
) -> None:
    from tooling.openapi._naming import number_duplicates, tool_name

    pattern = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
    names = number_duplicates([tool_name(i, m, p) for i, m, p in operations_])
    assert len(set(names)) == len(names)
    assert all(pattern.fullmatch(n) for n in names), names


@given(st.from_regex(r"[a-z]+([A-Z][a-z]+){0,3}", fullmatch=True))
def test_property_camel_case_ids_become_snake_case(operation_id: str) -> None:
    from tooling.openapi._naming import tool_name

    name = tool_name(operation_id, "get", "/x")
    assert name == re.sub(r"([A-Z])", r"_\1", operation_id).lower()[:64].rstrip("_")
