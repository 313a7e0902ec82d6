"""Exporters: Gemini (both forms), OpenAI (plain and strict), Anthropic, MCP.

Tools here are hand-written ``BaseTool`` subclasses whose schemas come either literally or
from pydantic (``create_model(...).model_json_schema()`` with titles stripped), so these
tests do not depend on the decorator. Oracles: ``google.genai.types.FunctionDeclaration``
/ ``Schema``, ``agents.strict_schema.ensure_strict_json_schema`` and ``mcp.types.Tool``.
"""

from __future__ import annotations

import copy
import datetime
import decimal
import enum
import itertools
import json
import pathlib
import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Annotated, Any, Literal, Optional

import pytest
from agents.strict_schema import ensure_strict_json_schema
from google.genai import types as genai_types
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import types as mcp_types
from pydantic import BaseModel, Field, create_model

from tooling import BaseTool, Diagnostic
from tooling import _jsonschema as ops
from tooling import _schema_rewrites as rewrites
from tooling._export import anthropic, gemini, mcp, openai

# -- helpers ------------------------------------------------------------------------------


def strip_titles(node: Any) -> Any:
    """Remove every ``title`` keyword (not properties named "title")."""
    if isinstance(node, list):
        return [strip_titles(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: strip_titles(sub) for name, sub in value.items()}
        elif key in ("default", "enum", "const", "examples"):
            out[key] = value
        else:
            out[key] = strip_titles(value)
    return out


def params_schema(**fields: Any) -> dict[str, Any]:
    """The parameters schema the spec builder would give for these fields."""
    model = create_model("Args", **fields)
    schema = strip_titles(model.model_json_schema(mode="validation"))
    schema["additionalProperties"] = False
    return schema


class HandTool(BaseTool):
    """A hand-written tool: schemas given directly."""

    def __init__(
        self,
        parameters: dict[str, Any],
        *,
        name: str = "hand",
        description: str = "A hand-written tool.",
        response: dict[str, Any] | None = None,
        read_only: bool = False,
        idempotent: bool = False,
        destructive: bool | None = None,
    ) -> None:
        self.name = name
        self.description = description
        self.parameters_json_schema = parameters
        self.response_json_schema = response
        self.read_only = read_only
        self.idempotent = idempotent
        self.destructive = destructive

    async def run(self, args: Any, ctx: Any = None) -> dict[str, Any]:
        return {}


def lossy_params(diagnostics: list[Diagnostic]) -> set[str | None]:
    assert all(d.code == "export.lossy" and d.level == "warning" for d in diagnostics)
    return {d.parameter for d in diagnostics}


# The legacy allow-list, written out again from Google's Schema reference
# (https://ai.google.dev/api/caching#Schema) rather than imported.
DOCUMENTED_LEGACY_KEYS = {
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "items",
    "properties",
    "required",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "anyOf",
    "default",
    "example",
    "minProperties",
    "maxProperties",
}
LEGACY_TYPES = {"string", "number", "integer", "boolean", "array", "object", "null"}


def legacy_nodes(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield schema
    for sub in (schema.get("properties") or {}).values():
        yield from legacy_nodes(sub)
    if isinstance(schema.get("items"), dict):
        yield from legacy_nodes(schema["items"])
    for sub in schema.get("anyOf") or []:
        yield from legacy_nodes(sub)


def assert_legacy_rules(schema: dict[str, Any]) -> None:
    """The documented subset only; ``type`` compared case-insensitively (the SDK dumps
    ``"OBJECT"``)."""
    assert str(schema.get("type")).lower() == "object"
    for node in legacy_nodes(schema):
        assert set(node) <= DOCUMENTED_LEGACY_KEYS, set(node) - DOCUMENTED_LEGACY_KEYS
        if "type" in node:
            assert node["type"].lower() in LEGACY_TYPES
        if "enum" in node:
            assert all(isinstance(v, str) for v in node["enum"])
            assert node.get("format") == "enum"
        if "properties" in node:
            assert node["properties"], "an empty properties map is rejected by the API"
            assert set(node.get("required", ())) <= set(node["properties"])
        for branch in node.get("anyOf") or []:
            assert str(branch.get("type")).lower() != "null", "anyOf-with-null must be nullable"
    # The whole dict is a valid google.genai Schema, and nothing was dropped on the way.
    validated = genai_types.Schema.model_validate(schema)
    dumped = validated.model_dump(by_alias=True, exclude_none=True, mode="json")
    assert _lower_types(dumped) == _lower_types(json.loads(json.dumps(schema)))


def _lower_types(node: Any) -> Any:
    if isinstance(node, list):
        return [_lower_types(n) for n in node]
    if isinstance(node, dict):
        return {
            k: (v.lower() if k == "type" and isinstance(v, str) else _lower_types(v))
            for k, v in node.items()
        }
    return node


STRICT_ALLOWED_KEYS = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "enum",
    "const",
    "$ref",
    "$defs",
    "description",
    "title",
    "pattern",
    "format",
    "multipleOf",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
}


def strict_nodes(schema: Any) -> Iterator[dict[str, Any]]:
    if not isinstance(schema, dict):
        return
    yield schema
    for sub in (schema.get("properties") or {}).values():
        yield from strict_nodes(sub)
    for sub in (schema.get("$defs") or {}).values():
        yield from strict_nodes(sub)
    yield from strict_nodes(schema.get("items"))
    for sub in schema.get("anyOf") or []:
        yield from strict_nodes(sub)


def assert_strict_rules(parameters: dict[str, Any]) -> None:
    assert parameters["type"] == "object"
    assert "anyOf" not in parameters
    for node in strict_nodes(parameters):
        assert set(node) <= STRICT_ALLOWED_KEYS, set(node) - STRICT_ALLOWED_KEYS
        typ = node.get("type")
        if typ == "object" or "properties" in node:
            assert node["additionalProperties"] is False
            assert node.get("required", []) == list(node.get("properties", {}))
        if "$ref" in node:
            assert set(node) == {"$ref"}, "a $ref must not have sibling keywords"
        if "format" in node:
            assert node["format"] in openai.STRICT_FORMATS
        if typ == "array":
            assert "items" in node
        assert node.keys() & {"type", "anyOf", "$ref", "enum", "const"}, node
    # The oracle: the Agents SDK's strict conversion has nothing left to do.
    assert ensure_strict_json_schema(copy.deepcopy(parameters)) == parameters


def assert_mcp_valid(result: dict[str, Any]) -> mcp_types.Tool:
    tool = mcp_types.Tool.model_validate(result)
    assert tool.input_schema.get("type") == "object"
    if tool.output_schema is not None:
        assert tool.output_schema.get("type") == "object"
    return tool


# -- realistic inputs ---------------------------------------------------------------------


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Node(BaseModel):
    """A tree node."""

    value: int
    children: list[Node] = []


class Inner(BaseModel):
    x: int = 3
    y: Optional[str] = None  # noqa: UP045 (the Optional spelling is what users write)


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"]
    bark: str


class Employee(BaseModel):
    name: str
    manager: Optional[Manager] = None  # noqa: UP045


class Manager(BaseModel):
    name: str
    reports: list[Employee] = []


Employee.model_rebuild()

# Every kind of parameter the DESIGN lists, except open mappings (tested apart because
# strict OpenAI refuses them).
CLOSED_FIELDS: dict[str, Any] = {
    "count": (int, ...),
    "ratio": (float, 0.5),
    "flag": (bool, False),
    "text": (str, "hi"),
    "maybe": (Optional[int], None),  # noqa: UP045
    "either": (int | str, 5),
    "numbers": (list[int], ...),
    "pair": (tuple[int, str], ...),
    "same_pair": (tuple[int, int], (1, 2)),
    "many": (tuple[int, ...], ()),
    "unique": (set[int], ...),
    "choice": (Literal["x", "y"], "x"),
    "number_choice": (Literal[1, 2], 1),
    "mixed_choice": (Literal["a", 1], "a"),
    "maybe_choice": (Literal["a", None], None),
    "always": (Literal[True], True),
    "color": (Color, Color.RED),
    "maybe_color": (Optional[Color], None),  # noqa: UP045
    "level": (Level, ...),
    "tree": (Node, ...),
    "inner": (Optional[Inner], None),  # noqa: UP045
    "described": (Annotated[Inner, Field(description="An inner thing.")], ...),
    "with_default": (Inner, Inner()),
    "pet": (Annotated[Cat | Dog, Field(discriminator="kind")], ...),
    "employee": (Employee, ...),
    "when": (datetime.datetime, ...),
    "day": (datetime.date, ...),
    "wait": (datetime.timedelta, ...),
    "ident": (uuid.UUID, ...),
    "amount": (decimal.Decimal, ...),
    "blob": (bytes, ...),
    "path": (pathlib.Path, ...),
    "bounded": (Annotated[int, Field(ge=0, le=10)], ...),
    "positive": (Annotated[int, Field(gt=0, multiple_of=3)], ...),
    "fraction": (Annotated[float, Field(gt=0, lt=1)], ...),
    "code": (Annotated[str, Field(min_length=1, max_length=8, pattern="^[A-Z]+$")], ...),
    "anything": (Any, None),
    "items_any": (list[Any], []),
}

OPEN_FIELDS: dict[str, Any] = {
    "counts": (dict[str, int], ...),
    "loose": (dict, {}),
}


def closed_schema() -> dict[str, Any]:
    return params_schema(**CLOSED_FIELDS)


def all_schema() -> dict[str, Any]:
    return params_schema(**CLOSED_FIELDS, **OPEN_FIELDS)


RESPONSE_SCHEMA = {
    "type": "object",
    "properties": {"result": {"type": "integer"}},
    "required": ["result"],
}

# -- Gemini -------------------------------------------------------------------------------


def test_import_does_not_load_google_genai() -> None:
    code = (
        "import sys, tooling, tooling._export, tooling._export.gemini, "
        "tooling._export.openai, tooling._export.anthropic, tooling._export.mcp; "
        "assert 'google.genai' not in sys.modules, 'google.genai imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=pathlib.Path(__file__).parents[1])


def test_gemini_default_form_carries_json_schema() -> None:
    schema = all_schema()
    before = copy.deepcopy(schema)
    tool = HandTool(schema, response=RESPONSE_SCHEMA)
    declaration, diagnostics = gemini.export(tool, legacy=False)
    assert isinstance(declaration, genai_types.FunctionDeclaration)
    assert diagnostics == []
    assert declaration.name == "hand"
    assert declaration.description == "A hand-written tool."
    assert declaration.parameters is None
    assert declaration.parameters_json_schema == schema
    # Shared, not copied (exports are read-only): a copy per export doubled the memory.
    assert declaration.parameters_json_schema is schema
    assert declaration.response_json_schema == RESPONSE_SCHEMA
    assert schema == before
    # Round trip through the SDK's own validation.
    genai_types.FunctionDeclaration.model_validate(declaration.model_dump())


def test_gemini_default_form_without_response_schema() -> None:
    declaration, _ = gemini.export(HandTool(closed_schema()), legacy=False)
    assert declaration.response_json_schema is None
    assert declaration.response is None


def test_gemini_legacy_realistic_schema() -> None:
    schema = closed_schema()
    before = copy.deepcopy(schema)
    declaration, diagnostics = gemini.export(HandTool(schema), legacy=True)
    assert schema == before
    assert declaration.parameters_json_schema is None
    assert isinstance(declaration.parameters, genai_types.Schema)
    legacy, again = gemini.legacy_schema(schema)
    assert again == diagnostics
    assert_legacy_rules(legacy)
    assert declaration.parameters == genai_types.Schema.model_validate(legacy)
    props = legacy["properties"]
    assert props["maybe"] == {"type": "integer", "nullable": True}
    assert props["choice"] == {
        "type": "string",
        "format": "enum",
        "enum": ["x", "y"],
        "default": "x",
    }
    # Integers use the documented integer enum form: values as strings, type integer.
    assert props["number_choice"]["type"] == "integer"
    assert props["number_choice"]["enum"] == ["1", "2"]
    assert props["level"] == {"type": "integer", "format": "enum", "enum": ["1", "2"]}
    assert props["maybe_choice"] == {
        "type": "string",
        "format": "enum",
        "enum": ["a"],
        "nullable": True,
    }
    assert {b["type"] for b in props["mixed_choice"]["anyOf"]} == {"string", "integer"}
    assert props["color"]["enum"] == ["red", "green"]
    assert props["maybe_color"]["nullable"] is True
    # Optional nested model: inlined, nullable; the outer description wins.
    assert props["inner"]["nullable"] is True
    assert set(props["inner"]["properties"]) == {"x", "y"}
    assert props["described"]["description"] == "An inner thing."
    # Discriminated union: anyOf of the two inlined models, no diagnostic.
    assert len(props["pet"]["anyOf"]) == 2
    # Bounds: exact for integers, lossy for numbers.
    assert props["positive"]["minimum"] == 1
    assert props["fraction"] == {"type": "number", "minimum": 0, "maximum": 1}
    assert props["same_pair"]["items"] == {"type": "integer"}
    assert props["pair"]["items"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    lossy = lossy_params(diagnostics)
    assert {"pair", "unique", "positive", "fraction", "always", "tree", "employee"} <= lossy
    assert not lossy & {"count", "maybe", "choice", "number_choice", "level", "pet", "same_pair"}


def test_gemini_legacy_recursion_is_cut_with_a_diagnostic() -> None:
    schema = params_schema(tree=(Node, ...))
    legacy, diagnostics = gemini.legacy_schema(schema)
    assert_legacy_rules(legacy)
    tree = legacy["properties"]["tree"]
    assert tree["description"] == "A tree node."
    cut = tree["properties"]["children"]["items"]
    assert cut["type"] == "object"
    assert "recursive" in cut["description"] and "Node" in cut["description"]
    assert [d.parameter for d in diagnostics] == ["tree"]
    assert "recursive" in diagnostics[0].message
    assert ops.recursive_defs(schema) == {"Node"}


def test_gemini_legacy_mutual_recursion() -> None:
    schema = params_schema(boss=(Manager, ...))
    legacy, diagnostics = gemini.legacy_schema(schema)
    assert_legacy_rules(legacy)
    manager = legacy["properties"]["boss"]
    employee = manager["properties"]["reports"]["items"]
    assert employee["properties"]["name"] == {"type": "string"}
    cut = employee["properties"]["manager"]
    assert cut["nullable"] is True and "recursive" in cut["description"]
    assert lossy_params(diagnostics) == {"boss"}
    assert ops.recursive_defs(schema) == {"Employee", "Manager"}


def test_gemini_legacy_open_dict_is_lossy_but_plain_dict_is_not() -> None:
    legacy, diagnostics = gemini.legacy_schema(params_schema(**OPEN_FIELDS))
    assert_legacy_rules(legacy)
    assert legacy["properties"]["counts"] == {"type": "object"}
    assert legacy["properties"]["loose"] == {"type": "object", "default": {}}
    assert lossy_params(diagnostics) == {"counts"}


def test_gemini_legacy_without_parameters_has_no_empty_properties() -> None:
    for schema in (params_schema(), {"type": "object", "properties": {}}, {}):
        declaration, diagnostics = gemini.export(HandTool(schema), legacy=True)
        assert declaration.parameters is not None
        assert declaration.parameters.properties is None
        assert diagnostics == []
        legacy, _ = gemini.legacy_schema(schema)
        assert legacy == {"type": "object"}


def test_gemini_legacy_keyword_details() -> None:
    schema = {
        "type": "object",
        "properties": {
            "score": {"type": "number", "enum": [0.5, 1.5], "description": "A score."},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "typed": {"type": ["string", "null"], "examples": ["a", "b"]},
            "union": {"type": ["string", "integer"]},
            "merged": {"allOf": [{"type": "integer"}, {"minimum": 2}]},
            "negated": {"type": "string", "not": {"const": "x"}},
            "below": {"type": "integer", "exclusiveMaximum": 10, "maximum": 5},
            "oneof": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        },
        "required": ["score", "missing"],
        "additionalProperties": False,
    }
    before = copy.deepcopy(schema)
    legacy, diagnostics = gemini.legacy_schema(schema)
    assert schema == before
    assert_legacy_rules(legacy)
    props = legacy["properties"]
    assert props["score"]["type"] == "number" and "enum" not in props["score"]
    assert props["score"]["description"] == "A score. Allowed values: 0.5, 1.5."
    assert props["typed"] == {"type": "string", "nullable": True, "example": "a"}
    assert props["union"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert props["merged"] == {"type": "integer", "minimum": 2}
    assert props["below"]["maximum"] == 5
    assert legacy["required"] == ["score"]
    assert lossy_params(diagnostics) == {"score", "tags", "negated", "oneof"}


def test_gemini_legacy_ref_siblings_override_the_definition() -> None:
    schema = params_schema(
        tree=(Annotated[Node, Field(description="The root.")], ...),
    )
    legacy, _ = gemini.legacy_schema(schema)
    assert legacy["properties"]["tree"]["description"] == "The root."


def test_gemini_legacy_described_model_enum_and_optional_model_keep_their_shape() -> None:
    # A description (or a default) next to a $ref must not turn the parameter into "any".
    described = params_schema(
        addr=(Inner, Field(description="The address.")),
        color=(Color, Field(Color.RED, description="The color.")),
        level=(Level, Level.LOW),
        maybe=(Optional[Inner], Field(None, description="Perhaps.")),  # noqa: UP045
    )
    plain = params_schema(
        addr=(Inner, ...),
        color=(Color, Color.RED),
        level=(Level, Level.LOW),
        maybe=(Optional[Inner], None),  # noqa: UP045
    )
    legacy, diagnostics = gemini.legacy_schema(described)
    bare, _ = gemini.legacy_schema(plain)
    props = legacy["properties"]
    inner = {
        "type": "object",
        "properties": {
            "x": {"type": "integer", "default": 3},
            "y": {"type": "string", "nullable": True},
        },
    }
    assert props["addr"] == {**inner, "description": "The address."}
    assert props["color"] == {
        "type": "string",
        "format": "enum",
        "enum": ["red", "green"],
        "default": "red",
        "description": "The color.",
    }
    assert props["level"] == {
        "type": "integer",
        "format": "enum",
        "enum": ["1", "2"],
        "default": 1,
    }
    assert props["maybe"] == {**inner, "nullable": True, "description": "Perhaps."}
    assert diagnostics == []
    assert bare["properties"]["addr"] == inner
    assert_legacy_rules(legacy)
    genai_types.Schema.model_validate(legacy)


# -- OpenAI -------------------------------------------------------------------------------


def test_openai_plain_is_the_schema_unchanged() -> None:
    schema = all_schema()
    before = copy.deepcopy(schema)
    result, diagnostics = openai.export(HandTool(schema, name="plain"), strict=False)
    assert diagnostics == []
    assert result == {
        "type": "function",
        "function": {
            "name": "plain",
            "description": "A hand-written tool.",
            "parameters": schema,
            "strict": False,
        },
    }
    assert result["function"]["parameters"] is schema  # shared, read-only
    assert schema == before


def test_openai_strict_realistic_schema() -> None:
    schema = closed_schema()
    before = copy.deepcopy(schema)
    result, diagnostics = openai.export(HandTool(schema), strict=True)
    assert schema == before
    assert result["function"]["strict"] is True
    parameters = result["function"]["parameters"]
    assert_strict_rules(parameters)
    props = parameters["properties"]
    # Optional -> nullable, and the default moves to the description.
    assert props["maybe"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert props["ratio"] == {
        "anyOf": [{"type": "number"}, {"type": "null"}],
        "description": "Default: 0.5; null means the default.",
    }
    assert props["count"] == {"type": "integer"}
    # A described $ref is wrapped, not given siblings; recursion stays a $ref.
    assert props["described"] == {
        "anyOf": [{"$ref": "#/$defs/Inner"}],
        "description": "An inner thing.",
    }
    assert parameters["$defs"]["Node"]["properties"]["children"]["anyOf"][0] == {
        "type": "array",
        "items": {"$ref": "#/$defs/Node"},
    }
    # Nested models are closed too, their optional fields nullable.
    inner = parameters["$defs"]["Inner"]
    assert inner["required"] == ["x", "y"]
    assert inner["properties"]["y"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert props["pet"]["anyOf"] == [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]
    assert props["when"]["format"] == "date-time"
    assert props["ident"]["format"] == "uuid"
    assert "format" not in props["blob"] and "format" not in props["path"]
    assert props["code"] == {"type": "string", "pattern": "^[A-Z]+$"}
    assert props["positive"] == {"type": "integer", "exclusiveMinimum": 0, "multipleOf": 3}
    lossy = lossy_params(diagnostics)
    assert {"pair", "unique", "blob", "path", "code", "anything", "items_any"} <= lossy
    assert not lossy & {"count", "maybe", "described", "tree", "pet", "when", "positive"}


def test_openai_strict_refuses_open_mappings() -> None:
    for name, field in OPEN_FIELDS.items():
        tool = HandTool(params_schema(ok=(int, ...), **{name: field}), name="mapper")
        with pytest.raises(ValueError, match=rf"'mapper'.*parameter '{name}'.*open mapping"):
            openai.export(tool, strict=True)
        # Not strict: fine.
        openai.export(tool, strict=False)


def test_openai_strict_refuses_open_mapping_inside_a_model() -> None:
    class Holder(BaseModel):
        counts: dict[str, int]

    tool = HandTool(params_schema(holder=(list[Holder], ...)), name="nested")
    with pytest.raises(ValueError, match=r"'nested'.*parameter 'holder'"):
        openai.export(tool, strict=True)


def test_openai_strict_extra_allow_model_is_closed_with_a_diagnostic() -> None:
    schema = {
        "type": "object",
        "properties": {"opts": {"$ref": "#/$defs/Opts"}},
        "required": ["opts"],
        "additionalProperties": False,
        "$defs": {
            "Opts": {
                "type": "object",
                "properties": {"a": {"type": "integer"}},
                "additionalProperties": True,
            }
        },
    }
    parameters, diagnostics = openai.strict_schema(schema)
    assert_strict_rules(parameters)
    assert parameters["$defs"]["Opts"]["additionalProperties"] is False
    assert lossy_params(diagnostics) == {"opts"}


def test_openai_strict_keeps_only_referenced_definitions() -> None:
    schema = params_schema(a=(int, ...))
    schema["$defs"] = {"Unused": {"type": "object", "additionalProperties": {"type": "integer"}}}
    parameters, diagnostics = openai.strict_schema(schema)
    assert "$defs" not in parameters
    assert diagnostics == []
    assert_strict_rules(parameters)


def test_openai_strict_no_parameters() -> None:
    for schema in (params_schema(), {"type": "object", "properties": {}}, {}):
        parameters, diagnostics = openai.strict_schema(schema)
        assert parameters == {
            "type": "object",
            "properties": {},
            "required": [],
            "additionalProperties": False,
        }
        assert diagnostics == []
        assert_strict_rules(parameters)


def test_openai_strict_required_default_and_nullable_default() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "default": 4},
            "m": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": 7},
            "ref": {"$ref": "#/$defs/E", "default": "a"},
        },
        "required": ["n"],
        "additionalProperties": False,
        "$defs": {"E": {"type": "string", "enum": ["a", "b"]}},
    }
    parameters, _ = openai.strict_schema(schema)
    assert_strict_rules(parameters)
    props = parameters["properties"]
    assert props["n"] == {"type": "integer", "description": "Default: 4."}
    assert props["m"]["description"] == "Default: 7."
    assert props["ref"] == {
        "anyOf": [{"$ref": "#/$defs/E"}, {"type": "null"}],
        "description": 'Default: "a"; null means the default.',
    }


# -- Anthropic ----------------------------------------------------------------------------


def test_anthropic_is_the_schema_unchanged() -> None:
    schema = all_schema()
    before = copy.deepcopy(schema)
    result, diagnostics = anthropic.export(HandTool(schema, name="anth"))
    assert diagnostics == []
    assert result == {"name": "anth", "description": "A hand-written tool.", "input_schema": schema}
    assert result["input_schema"] is schema  # shared, read-only
    assert schema == before


# -- MCP ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "hints"),
    [
        ({}, (False, False, True)),
        ({"read_only": True}, (True, False, False)),
        ({"read_only": True, "idempotent": True, "destructive": True}, (True, True, True)),
        ({"idempotent": True, "destructive": False}, (False, True, False)),
    ],
)
def test_mcp_annotations_follow_the_flags(
    flags: dict[str, Any], hints: tuple[bool, bool, bool]
) -> None:
    result, diagnostics = mcp.export(HandTool(closed_schema(), **flags))
    assert diagnostics == []
    assert result["annotations"] == {
        "readOnlyHint": hints[0],
        "idempotentHint": hints[1],
        "destructiveHint": hints[2],
    }
    assert "outputSchema" not in result
    tool = assert_mcp_valid(result)
    assert tool.annotations is not None
    assert tool.annotations.read_only_hint is hints[0]
    assert tool.annotations.destructive_hint is hints[2]


def assert_mcp_input(exported: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """``exported`` is ``schema`` with only its untyped object and array parameters typed
    (for clients that send every value as text); returns those types by name."""
    assert {k: v for k, v in exported.items() if k != "properties"} == {
        k: v for k, v in schema.items() if k != "properties"
    }
    typed = {}
    for name, prop in schema.get("properties", {}).items():
        kind, _ = mcp.structured_kind(prop, schema.get("$defs", {}))
        if kind is None or "type" in prop:
            assert exported["properties"][name] == prop, name  # copied unchanged
            continue
        typed[name] = exported["properties"][name]["type"]
        allowed = [kind, [kind, "null"]] if name in schema.get("required", ()) else [kind]
        assert typed[name] in allowed, (name, typed[name])
    return typed


def test_mcp_input_and_object_output_schema() -> None:
    schema = all_schema()
    before = copy.deepcopy(schema)
    result, _ = mcp.export(HandTool(schema, response=RESPONSE_SCHEMA, name="m"))
    assert schema == before
    assert result["name"] == "m"
    assert result["inputSchema"] is not schema
    assert assert_mcp_input(result["inputSchema"], schema)
    assert result["outputSchema"] == RESPONSE_SCHEMA
    assert result["outputSchema"] is not RESPONSE_SCHEMA
    assert_mcp_valid(result)


def test_mcp_output_schema_union_of_models_gets_object_type() -> None:
    response = {
        "anyOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}],
        "$defs": {
            "Cat": strip_titles(Cat.model_json_schema()),
            "Dog": strip_titles(Dog.model_json_schema()),
        },
    }
    before = copy.deepcopy(response)
    result, diagnostics = mcp.export(HandTool(closed_schema(), response=response))
    assert response == before
    assert diagnostics == []
    assert result["outputSchema"] == {**response, "type": "object"}
    assert_mcp_valid(result)


def test_mcp_output_schema_non_object_is_wrapped_like_the_response() -> None:
    response = {
        "type": "array",
        "items": {"$ref": "#/$defs/Cat"},
        "$defs": {"Cat": strip_titles(Cat.model_json_schema())},
    }
    result, diagnostics = mcp.export(HandTool(closed_schema(), response=response))
    assert diagnostics == []
    assert result["outputSchema"] == {
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/Cat"}}},
        "required": ["result"],
        "$defs": {"Cat": response["$defs"]["Cat"]},
    }
    assert "$defs" in response  # the input was not touched
    assert_mcp_valid(result)


def test_mcp_output_schema_mixed_union_is_flagged() -> None:
    response = {"anyOf": [{"$ref": "#/$defs/Cat"}, {"type": "integer"}], "$defs": {"Cat": {}}}
    result, diagnostics = mcp.export(HandTool(closed_schema(), response=response))
    assert result["outputSchema"]["type"] == "object"
    assert lossy_params(diagnostics) == {None}


# -- through BaseTool: caching, warnings, diagnostics ---------------------------------


def test_base_tool_caches_exports_and_warns_once() -> None:
    tool = HandTool(params_schema(tree=(Node, ...), tags=(set[str], ...)), name="cached")
    with pytest.warns(UserWarning, match="cached: Gemini legacy schema"):
        first = tool.to_gemini(legacy=True)
    assert tool.to_gemini(legacy=True) is first
    assert {d.parameter for d in tool.diagnostics} == {"tree", "tags"}
    assert tool.to_gemini() is tool.to_gemini()
    assert tool.to_gemini() is not first
    assert tool.to_openai() is tool.to_openai()
    with pytest.warns(UserWarning, match="OpenAI strict schema"):
        strict = tool.to_openai(strict=True)
    assert tool.to_openai(strict=True) is strict
    assert tool.to_anthropic() is tool.to_anthropic()
    assert tool.to_mcp() is tool.to_mcp()


def test_renamed_copy_exports_under_the_new_name() -> None:
    tool = HandTool(params_schema(a=(int, ...)), name="orig")
    original = tool.to_openai()
    renamed = tool.renamed("pre_orig")
    assert renamed.to_openai()["function"]["name"] == "pre_orig"
    assert tool.to_openai() is original and original["function"]["name"] == "orig"


# -- schema ops ---------------------------------------------------------------------------


def test_split_null_forms() -> None:
    assert rewrites.split_null(
        {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}
    ) == (
        {"type": "integer", "default": None},
        True,
    )
    several = {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]}
    assert rewrites.split_null(several) == (
        {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        True,
    )
    assert rewrites.split_null({"type": ["string", "null"]}) == ({"type": "string"}, True)
    assert rewrites.split_null({"enum": ["a", None]}) == ({"enum": ["a"]}, True)
    assert rewrites.split_null({"type": "null"}) == ({"type": "null"}, False)
    assert rewrites.split_null({"type": "integer"}) == ({"type": "integer"}, False)


def test_tuple_to_items() -> None:
    same = {"type": "array", "prefixItems": [{"type": "integer"}] * 2, "minItems": 2}
    assert rewrites.tuple_to_items(same) == (
        {"type": "array", "minItems": 2, "items": {"type": "integer"}},
        False,
    )
    mixed = {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]}
    assert rewrites.tuple_to_items(mixed)[1] is True


def test_admits_null() -> None:
    root = {"$defs": {"N": {"type": "null"}, "I": {"type": "integer"}}}
    assert ops.admits_null({"$ref": "#/$defs/N"}, root)
    assert not ops.admits_null({"$ref": "#/$defs/I"}, root)
    assert ops.admits_null({})
    assert ops.admits_null({"anyOf": [{"type": "integer"}, {"type": "null"}]})
    assert not ops.admits_null({"enum": ["a"]})
    assert ops.admits_null({"type": ["integer", "null"]})


def test_resolve_ref_and_names() -> None:
    root = {"$defs": {"a/b": {"type": "integer"}}, "properties": {"x": {"type": "string"}}}
    assert ops.ref_name("#/$defs/a~1b") == "a/b"
    assert ops.ref_name("#/properties/x") is None
    assert ops.resolve_ref(root, "#/$defs/a~1b") == {"type": "integer"}
    assert ops.resolve_ref(root, "#/properties/x") == {"type": "string"}
    with pytest.raises(ValueError):
        ops.resolve_ref(root, "#/$defs/missing")
    with pytest.raises(ValueError):
        ops.resolve_ref(root, "https://example.com/schema")


def test_dropping_titles_keeps_properties_named_title() -> None:
    schema = {
        "type": "object",
        "title": "T",
        "properties": {"title": {"type": "string", "title": "Title"}},
    }
    legacy, _ = gemini.legacy_schema(schema)
    assert "title" not in legacy
    assert legacy["properties"]["title"]["type"].lower() == "string"
    assert "title" not in legacy["properties"]["title"]


# -- every exporter, every sample: rules hold and inputs are untouched -------------------

SAMPLES: dict[str, dict[str, Any]] = {
    "closed": closed_schema(),
    "open": all_schema(),
    "empty": params_schema(),
    "recursive": params_schema(tree=(Node, ...), boss=(Optional[Manager], None)),  # noqa: UP045
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_export_leaves_inputs_untouched(name: str) -> None:
    schema = SAMPLES[name]
    response = {"anyOf": [{"$ref": "#/$defs/Node"}], "$defs": {"Node": {"type": "object"}}}
    snapshot = copy.deepcopy((schema, response))
    tool = HandTool(schema, response=response)
    gemini.export(tool, legacy=False)
    legacy, _ = gemini.export(tool, legacy=True)
    assert legacy.parameters is not None
    assert_legacy_rules(legacy.parameters.model_dump(by_alias=True, exclude_none=True, mode="json"))
    openai.export(tool, strict=False)
    if name == "open":
        with pytest.raises(ValueError):
            openai.export(tool, strict=True)
    else:
        strict, _ = openai.export(tool, strict=True)
        assert_strict_rules(strict["function"]["parameters"])
    anthropic.export(tool)
    assert_mcp_valid(mcp.export(tool)[0])
    assert (schema, response) == snapshot


# -- property tests -----------------------------------------------------------------------

_model_names = (f"Gen{i}" for i in itertools.count())
NO_DEFAULT = object()

PRIMITIVES = st.sampled_from(
    [(int, 3), (str, "s"), (float, 1.5), (bool, True), (datetime.date, datetime.date(2020, 1, 2))]
)


def _optional(inner: tuple[Any, Any]) -> tuple[Any, Any]:
    return Optional[inner[0]], None  # noqa: UP045


def _list(inner: tuple[Any, Any]) -> tuple[Any, Any]:
    return list[inner[0]], []


def _dict(inner: tuple[Any, Any]) -> tuple[Any, Any]:
    return dict[str, inner[0]], {}


@st.composite
def _literal(draw: st.DrawFn) -> tuple[Any, Any]:
    pool = draw(st.sampled_from([["a", "b", "c"], [1, 2, 3], ["a", 1], [True]]))
    values = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3, unique=True))
    return Literal[tuple(values)], values[0]


@st.composite
def _model(draw: st.DrawFn, inner: st.SearchStrategy[tuple[Any, Any]]) -> tuple[Any, Any]:
    fields = draw(st.lists(inner, min_size=1, max_size=3))
    defaults = draw(st.lists(st.booleans(), min_size=len(fields), max_size=len(fields)))
    spec = {
        f"f{i}": (ann, value if use and value is not NO_DEFAULT else ...)
        for i, ((ann, value), use) in enumerate(zip(fields, defaults, strict=True))
    }
    return create_model(next(_model_names), **spec), NO_DEFAULT


ANNOTATIONS = st.recursive(
    PRIMITIVES | _literal() | st.just((Color, Color.RED)) | st.just((Level, Level.LOW)),
    lambda inner: inner.map(_optional) | inner.map(_list) | inner.map(_dict) | _model(inner),
    max_leaves=6,
)


@st.composite
def signatures(draw: st.DrawFn) -> dict[str, Any]:
    params = draw(st.lists(ANNOTATIONS, min_size=0, max_size=4))
    defaults = draw(st.lists(st.booleans(), min_size=len(params), max_size=len(params)))
    fields = {
        f"p{i}": (ann, value if use and value is not NO_DEFAULT else ...)
        for i, ((ann, value), use) in enumerate(zip(params, defaults, strict=True))
    }
    return params_schema(**fields)


def _has_open_mapping(schema: Any) -> bool:
    if isinstance(schema, dict):
        extra = schema.get("additionalProperties")
        if extra is not None and extra is not False:
            return True
        return any(_has_open_mapping(v) for v in schema.values())
    if isinstance(schema, list):
        return any(_has_open_mapping(v) for v in schema)
    return False


@settings(max_examples=50, deadline=None)
@given(signatures())
def test_property_gemini_legacy(schema: dict[str, Any]) -> None:
    before = copy.deepcopy(schema)
    declaration, diagnostics = gemini.export(HandTool(schema), legacy=True)
    assert schema == before
    legacy, _ = gemini.legacy_schema(schema)
    assert_legacy_rules(legacy)
    assert set(legacy.get("properties", {})) == set(schema["properties"])
    assert declaration.parameters == genai_types.Schema.model_validate(legacy)
    assert {d.parameter for d in diagnostics} <= set(schema["properties"])
    genai_types.FunctionDeclaration.model_validate(gemini.export(HandTool(schema))[0].model_dump())


@settings(max_examples=50, deadline=None)
@given(signatures())
def test_property_openai_strict(schema: dict[str, Any]) -> None:
    before = copy.deepcopy(schema)
    tool = HandTool(schema, name="prop")
    if _has_open_mapping(schema):
        with pytest.raises(ValueError, match="'prop'"):
            openai.export(tool, strict=True)
    else:
        result, diagnostics = openai.export(tool, strict=True)
        parameters = result["function"]["parameters"]
        assert_strict_rules(parameters)
        assert list(parameters["properties"]) == list(schema["properties"])
        for name in set(schema["properties"]) - set(schema.get("required", ())):
            assert ops.admits_null(parameters["properties"][name], parameters), name
        assert {d.parameter for d in diagnostics} <= set(schema["properties"])
    assert schema == before


@settings(max_examples=50, deadline=None)
@given(signatures(), st.booleans(), st.booleans(), st.sampled_from([None, True, False]))
def test_property_mcp_and_anthropic(
    schema: dict[str, Any], read_only: bool, idempotent: bool, destructive: bool | None
) -> None:
    before = copy.deepcopy(schema)
    tool = HandTool(
        schema,
        response=schema,
        read_only=read_only,
        idempotent=idempotent,
        destructive=destructive,
    )
    result, _ = mcp.export(tool)
    validated = assert_mcp_valid(result)
    assert_mcp_input(validated.input_schema, schema)
    assert result["annotations"]["destructiveHint"] is tool.is_destructive
    assert anthropic.export(tool)[0]["input_schema"] == schema
    assert openai.export(tool)[0]["function"]["parameters"] == schema
    assert schema == before


def test_openai_strict_rejects_references_it_cannot_keep() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/definitions/A"}},
        "definitions": {"A": {"type": "integer"}},
    }
    with pytest.raises(ValueError, match=r"'odd'.*unsupported \$ref"):
        openai.export(HandTool(schema, name="odd"), strict=True)
    # The legacy Gemini form inlines any local reference.
    legacy, _ = gemini.legacy_schema(schema)
    assert legacy["properties"]["a"] == {"type": "integer"}


def test_openai_strict_root_self_reference_is_kept() -> None:
    schema = {
        "type": "object",
        "properties": {"next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}},
        "required": ["next"],
    }
    parameters, diagnostics = openai.strict_schema(schema)
    assert diagnostics == []
    assert parameters["properties"]["next"] == {"anyOf": [{"$ref": "#"}, {"type": "null"}]}
    assert_strict_rules(parameters)
    legacy, lossy = gemini.legacy_schema(schema)
    assert_legacy_rules(legacy)
    assert lossy_params(lossy) == {"next"}


def test_gemini_legacy_narrows_any_to_scalars_and_says_so() -> None:
    schema = {
        "type": "object",
        "properties": {"x": {"description": "Anything."}, "xs": {"type": "array", "items": {}}},
        "required": ["x"],
        "additionalProperties": False,
    }
    legacy, diagnostics = gemini.legacy_schema(schema)
    scalars = [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]
    assert legacy["properties"]["x"] == {
        "anyOf": scalars,
        "nullable": True,
        "description": "Anything.",
    }
    assert legacy["properties"]["xs"]["items"] == {"anyOf": scalars, "nullable": True}
    assert {d.parameter for d in diagnostics if d.code == "export.lossy"} == {"x", "xs"}
    genai_types.Schema.model_validate(legacy)
