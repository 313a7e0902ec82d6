"""``parameters_json_schema``, ``response_json_schema`` and descriptions, exactly."""

import dataclasses
import datetime
import decimal
import enum
import uuid
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Self, Union

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from tooling import Diagnostic, FunctionTool, ToolContext, ToolError, tool

# -- helpers -------------------------------------------------------------------------------


def schema_of(func: Any) -> dict[str, Any]:
    schema = tool(func).parameters_json_schema
    Draft202012Validator.check_schema(schema)
    return schema


def one_param(annotation: Any, **extra: Any) -> dict[str, Any]:
    """The property schema of a one-parameter tool ``f(x: annotation)``."""

    def f(x):  # type: ignore[no-untyped-def]
        return None

    f.__annotations__ = {"x": annotation}
    schema = schema_of(f)
    assert schema["required"] == ["x"]
    assert list(schema["properties"]) == ["x"]
    return schema["properties"]["x"] if not extra.get("whole") else schema


def titles_in(node: Any, path: str = "") -> list[str]:
    """Paths of every ``title`` keyword in a schema (not properties named "title")."""
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "title" and isinstance(value, str):
                found.append(f"{path}/title")
            elif key in ("properties", "$defs", "patternProperties"):
                for name, sub in value.items():
                    found.extend(titles_in(sub, f"{path}/{key}/{name}"))
            else:
                found.extend(titles_in(value, f"{path}/{key}"))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            found.extend(titles_in(item, f"{path}/{i}"))
    return found


def diagnostics_of(t: FunctionTool, code: str) -> list[Diagnostic]:
    return [d for d in t.diagnostics if d.code == code]


# -- simple types ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (None, {"type": "null"}),
        (type(None), {"type": "null"}),
        (Any, {}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (list, {"type": "array", "items": {}}),
        (
            tuple[int, str],
            {
                "type": "array",
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "minItems": 2,
                "maxItems": 2,
            },
        ),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (set[str], {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
        (Sequence[int], {"type": "array", "items": {"type": "integer"}}),
        (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}),
        (Mapping[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
        (dict[str, Any], {"type": "object", "additionalProperties": True}),
        (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
        (Literal[1, 2], {"type": "integer", "enum": [1, 2]}),
        (Literal["only"], {"type": "string", "const": "only"}),
        (Optional[int], {"anyOf": [{"type": "integer"}, {"type": "null"}]}),  # noqa: UP045
        (int | None, {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
        (Union[int, str], {"anyOf": [{"type": "integer"}, {"type": "string"}]}),  # noqa: UP007
        (
            int | str | None,
            {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]},
        ),
        (Annotated[int, Field(ge=1, le=10)], {"type": "integer", "minimum": 1, "maximum": 10}),
        (
            Annotated[float, Field(gt=0, lt=1)],
            {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        ),
        (
            Annotated[str, Field(min_length=2, max_length=5, pattern="^a")],
            {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^a"},
        ),
        (
            Annotated[list[int], Field(min_length=1, max_length=3)],
            {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3},
        ),
        (datetime.datetime, {"type": "string", "format": "date-time"}),
        (datetime.date, {"type": "string", "format": "date"}),
        (datetime.time, {"type": "string", "format": "time"}),
        (uuid.UUID, {"type": "string", "format": "uuid"}),
        (Path, {"type": "string", "format": "path"}),
        (decimal.Decimal, {"anyOf": [{"type": "number"}, {"type": "string"}]}),
        (bytes, {"type": "string", "format": "binary"}),
    ],
    ids=repr,
)
def test_simple_type_schema(annotation: Any, expected: dict[str, Any]) -> None:
    assert one_param(annotation) == expected


def test_whole_schema_shape_for_simple_tool() -> None:
    def f(name: str, count: int = 3, ratio: float = 0.5, flag: bool = False) -> None:
        pass

    assert schema_of(f) == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "count": {"type": "integer", "default": 3},
            "ratio": {"type": "number", "default": 0.5},
            "flag": {"type": "boolean", "default": False},
        },
        "required": ["name"],
        "additionalProperties": False,
    }


def test_no_parameters() -> None:
    def f() -> None:
        pass

    schema = schema_of(f)
    assert schema == {"type": "object", "properties": {}, "additionalProperties": False}


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


def test_enum_goes_to_defs() -> None:
    def f(color: Color, level: Level = Level.LOW) -> None:
        pass

    assert schema_of(f) == {
        "type": "object",
        "properties": {
            "color": {"$ref": "#/$defs/Color"},
            "level": {"$ref": "#/$defs/Level", "default": 1},
        },
        "required": ["color"],
        "additionalProperties": False,
        "$defs": {
            "Color": {"type": "string", "enum": ["red", "green"]},
            "Level": {"type": "integer", "enum": [1, 2]},
        },
    }


class Point(TypedDict):
    x: int
    y: int


@dataclasses.dataclass
class Box:
    width: int
    label: str = "box"


class Inner(BaseModel):
    value: int = Field(description="The value.")


class Outer(BaseModel):
    inner: Inner
    extras: list[Inner] = []


class TreeNode(BaseModel):
    name: str
    children: list["TreeNode"] = []


def test_typed_dict() -> None:
    def f(p: Point) -> None:
        pass

    assert schema_of(f) == {
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/Point"}},
        "required": ["p"],
        "additionalProperties": False,
        "$defs": {
            "Point": {
                "type": "object",
                "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
                "required": ["x", "y"],
                "additionalProperties": False,
            }
        },
    }


def test_dataclass() -> None:
    def f(b: Box) -> None:
        pass

    schema = schema_of(f)
    assert schema["properties"] == {"b": {"$ref": "#/$defs/Box"}}
    box = schema["$defs"]["Box"]
    assert box["type"] == "object"
    assert box["properties"] == {
        "width": {"type": "integer"},
        "label": {"type": "string", "default": "box"},
    }
    assert box["required"] == ["width"]


def test_nested_models_under_defs() -> None:
    def f(outer: Outer) -> None:
        pass

    assert schema_of(f) == {
        "type": "object",
        "properties": {"outer": {"$ref": "#/$defs/Outer"}},
        "required": ["outer"],
        "additionalProperties": False,
        "$defs": {
            "Inner": {
                "type": "object",
                "properties": {"value": {"type": "integer", "description": "The value."}},
                "required": ["value"],
            },
            "Outer": {
                "type": "object",
                "properties": {
                    "inner": {"$ref": "#/$defs/Inner"},
                    "extras": {
                        "type": "array",
                        "items": {"$ref": "#/$defs/Inner"},
                        "default": [],
                    },
                },
                "required": ["inner"],
            },
        },
    }


def test_recursive_model() -> None:
    def f(tree: TreeNode) -> None:
        pass

    assert schema_of(f) == {
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/TreeNode"}},
        "required": ["tree"],
        "additionalProperties": False,
        "$defs": {
            "TreeNode": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {
                        "type": "array",
                        "items": {"$ref": "#/$defs/TreeNode"},
                        "default": [],
                    },
                },
                "required": ["name"],
            }
        },
    }


async def test_recursive_model_runs() -> None:
    @tool
    def count(tree: TreeNode) -> int:
        return 1 + sum(count(c) for c in tree.children)

    args = {"tree": {"name": "a", "children": [{"name": "b"}, {"name": "c", "children": []}]}}
    assert await count.run(args) == {"result": 3}


def test_optional_model_with_description() -> None:
    def f(inner: Inner | None = None) -> None:
        """Do.

        Args:
            inner: Maybe an inner.
        """

    schema = schema_of(f)
    assert schema["properties"]["inner"] == {
        "anyOf": [{"$ref": "#/$defs/Inner"}, {"type": "null"}],
        "default": None,
        "description": "Maybe an inner.",
    }
    assert "required" not in schema or schema["required"] == []


# -- the rules every schema follows ---------------------------------------------------------------


def kitchen_sink(
    title: str,
    count: Annotated[int, Field(ge=0, description="How many.")],
    tree: TreeNode,
    outer: Outer,
    point: Point,
    box: Box,
    color: Color = Color.RED,
    when: datetime.datetime | None = None,
    tags: list[str] = [],
    note: str = "n",
) -> None:
    """Everything at once.

    Args:
        title: The title.
        tree: A tree.
    """


def test_no_title_anywhere_but_property_named_title_survives() -> None:
    schema = schema_of(kitchen_sink)
    assert titles_in(schema) == []
    assert "title" in schema["properties"]
    assert schema["properties"]["title"] == {"type": "string", "description": "The title."}


def test_model_field_named_title_survives() -> None:
    class Doc(BaseModel):
        title: str
        body: str = ""

    def f(doc: Doc) -> None:
        pass

    schema = schema_of(f)
    assert titles_in(schema) == []
    assert schema["$defs"]["Doc"]["properties"] == {
        "title": {"type": "string"},
        "body": {"type": "string", "default": ""},
    }


def test_root_is_closed_object_with_signature_order_and_required() -> None:
    schema = schema_of(kitchen_sink)
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert list(schema["properties"]) == [
        "title", "count", "tree", "outer", "point", "box", "color", "when", "tags", "note",
    ]  # fmt: skip
    assert schema["required"] == ["title", "count", "tree", "outer", "point", "box"]
    assert schema["properties"]["color"]["default"] == "red"
    assert schema["properties"]["when"]["default"] is None
    assert schema["properties"]["tags"]["default"] == []
    assert schema["properties"]["note"]["default"] == "n"
    assert set(schema["$defs"]) == {"TreeNode", "Outer", "Inner", "Point", "Box", "Color"}
    Draft202012Validator.check_schema(schema)


def test_signature_order_not_alphabetical() -> None:
    def f(zeta: int, alpha: int, mid: int = 0, beta: int = 1) -> None:
        pass

    schema = schema_of(f)
    assert list(schema["properties"]) == ["zeta", "alpha", "mid", "beta"]
    assert schema["required"] == ["zeta", "alpha"]


def test_keyword_only_and_positional_only_parameters() -> None:
    def f(a: int, /, b: int, *, c: int = 2) -> None:
        pass

    schema = schema_of(f)
    assert list(schema["properties"]) == ["a", "b", "c"]
    assert schema["required"] == ["a", "b"]


async def test_positional_only_parameter_runs() -> None:
    @tool
    def f(a: int, /, b: int, *, c: int = 2) -> list[int]:
        return [a, b, c]

    assert await f.run({"a": 1, "b": 2}) == {"result": [1, 2, 2]}


def test_field_default_and_default_factory() -> None:
    def f(a: int = Field(5, ge=0), b: list[int] = Field(default_factory=list)) -> None:
        pass

    schema = schema_of(f)
    assert schema["properties"]["a"] == {"type": "integer", "default": 5, "minimum": 0}
    assert schema["properties"]["b"] == {"type": "array", "items": {"type": "integer"}}
    assert "required" not in schema or schema["required"] == []


def test_schema_validates_good_and_rejects_bad_instances() -> None:
    schema = schema_of(kitchen_sink)
    validator = Draft202012Validator(schema)
    good = {
        "title": "t",
        "count": 1,
        "tree": {"name": "root", "children": [{"name": "leaf"}]},
        "outer": {"inner": {"value": 1}},
        "point": {"x": 1, "y": 2},
        "box": {"width": 3},
    }
    assert list(validator.iter_errors(good)) == []
    assert list(validator.iter_errors({**good, "unknown": 1}))
    assert list(validator.iter_errors({**good, "count": -1}))
    missing = dict(good)
    del missing["tree"]
    assert list(validator.iter_errors(missing))


def test_context_parameter_not_in_schema() -> None:
    def f(query: str, ctx: ToolContext, limit: int = 5) -> None:
        pass

    schema = schema_of(f)
    assert list(schema["properties"]) == ["query", "limit"]
    assert schema["required"] == ["query"]


def test_schema_is_draft_2020_12_for_every_supported_type() -> None:
    def f(
        a: str,
        b: int,
        c: float,
        d: bool,
        e: None,
        g: Any,
        h: list[int],
        i: tuple[int, str],
        j: set[str],
        k: Sequence[int],
        m: dict[str, int],
        n: Mapping[str, float],
        o: Literal["x", "y"],
        p: Color,
        q: Optional[int],  # noqa: UP045
        r: Union[int, str],  # noqa: UP007
        s: Annotated[int, Field(ge=0)],
        t: Point,
        u: Box,
        v: Outer,
        w: TreeNode,
        x: datetime.datetime,
        y: datetime.date,
        z: datetime.time,
        aa: uuid.UUID,
        bb: Path,
        cc: decimal.Decimal,
        dd: bytes,
    ) -> None:
        pass

    schema = schema_of(f)  # check_schema inside
    assert titles_in(schema) == []
    assert len(schema["required"]) == len(schema["properties"]) == 28


# -- parameters named like BaseModel attributes, or with a leading underscore -------------------


async def test_reserved_and_underscore_names_end_to_end() -> None:
    @tool
    def f(json: int, copy: str, schema: bool, _private: int = 3, model_config: str = "m") -> dict:
        return {
            "json": json,
            "copy": copy,
            "schema": schema,
            "_private": _private,
            "model_config": model_config,
        }

    s = f.parameters_json_schema
    Draft202012Validator.check_schema(s)
    assert list(s["properties"]) == ["json", "copy", "schema", "_private", "model_config"]
    assert s["required"] == ["json", "copy", "schema"]
    assert s["properties"]["_private"] == {"type": "integer", "default": 3}
    assert await f.run({"json": 1, "copy": "c", "schema": True}) == {
        "json": 1,
        "copy": "c",
        "schema": True,
        "_private": 3,
        "model_config": "m",
    }
    assert await f.run(
        '{"json": 2, "copy": "d", "schema": false, "_private": 9, "model_config": "z"}'
    ) == {"json": 2, "copy": "d", "schema": False, "_private": 9, "model_config": "z"}


async def test_reserved_name_errors_use_real_name() -> None:
    @tool
    def f(json: int, copy: str = "c") -> dict:
        return {}

    with pytest.raises(ToolError) as info:
        await f.run({"json": "nope"})
    assert info.value.details[0]["loc"] == ["json"]
    with pytest.raises(ToolError) as info:
        await f.run({"copy": "x"})
    assert info.value.details[0]["loc"] == ["json"]
    assert info.value.details[0]["type"] == "missing"


async def test_internal_field_names_are_not_accepted_as_arguments() -> None:
    @tool
    def f(json: int) -> dict:
        return {"json": json}

    internal = f.spec.parameters[0].field
    assert internal != "json"
    with pytest.raises(ToolError) as info:
        await f.run({internal: 1})
    assert info.value.code == "tool.invalid_arguments"


async def test_reserved_name_next_to_param_named_like_its_alias() -> None:
    @tool
    def f(json: int, arg_0_: str) -> dict:
        return {"json": json, "arg_0_": arg_0_}

    assert list(f.parameters_json_schema["properties"]) == ["json", "arg_0_"]
    assert f.parameters_json_schema["required"] == ["json", "arg_0_"]
    assert await f.run({"json": 1, "arg_0_": "x"}) == {"json": 1, "arg_0_": "x"}


async def test_reserved_name_with_description_and_positional_only() -> None:
    @tool
    def f(dict: int, /, validate: bool = False) -> list:
        """Do.

        Args:
            dict: A number.
            validate: Whether.
        """
        return [dict, validate]

    props = f.parameters_json_schema["properties"]
    assert props["dict"] == {"type": "integer", "description": "A number."}
    assert props["validate"] == {"type": "boolean", "default": False, "description": "Whether."}
    assert await f.run({"dict": 4, "validate": True}) == {"result": [4, True]}


# -- descriptions and diagnostics --------------------------------------------------------------


def test_description_sources() -> None:
    def f(
        a: Annotated[int, Field(description="from field")],
        b: Annotated[int, "from annotated"],
        c: int,
        d: int = Field(0, description="from default field"),
        e: int = 0,
    ) -> None:
        """Do.

        Args:
            c: from docstring
        """

    t = tool(f)
    props = t.parameters_json_schema["properties"]
    assert props["a"]["description"] == "from field"
    assert props["b"]["description"] == "from annotated"
    assert props["c"]["description"] == "from docstring"
    assert props["d"]["description"] == "from default field"
    assert "description" not in props["e"]
    assert diagnostics_of(t, "description.conflict") == []


def test_field_beats_annotated_beats_docstring() -> None:
    def f(
        x: Annotated[int, Field(description="field"), "annotated"],
        y: Annotated[int, "annotated"],
    ) -> None:
        """Do.

        Args:
            x: docstring
            y: docstring
        """

    t = tool(f)
    with pytest.warns(UserWarning) as record:
        props = t.parameters_json_schema["properties"]
    assert len(record) == 3
    assert all("says" in str(w.message) for w in record)
    assert props["x"]["description"] == "field"
    assert props["y"]["description"] == "annotated"
    conflicts = diagnostics_of(t, "description.conflict")
    assert {d.parameter for d in conflicts} == {"x", "y"}
    assert all(d.level == "warning" for d in conflicts)
    # x disagrees with both the Annotated text and the docstring
    assert len([d for d in conflicts if d.parameter == "x"]) == 2


def test_conflict_field_vs_docstring_warns() -> None:
    def f(a: Annotated[int, Field(description="field a")]) -> None:
        """Do.

        Args:
            a: doc a
        """

    t = tool(f)
    with pytest.warns(UserWarning, match="'a'"):
        t.spec
    (conflict,) = diagnostics_of(t, "description.conflict")
    assert conflict == Diagnostic("warning", "description.conflict", conflict.message, "a")
    assert "field a" in conflict.message and "doc a" in conflict.message


def test_conflict_default_field_vs_annotated() -> None:
    def f(a: Annotated[int, "annotated"] = Field(1, description="field")) -> None:
        pass

    t = tool(f)
    with pytest.warns(UserWarning):
        assert t.parameters_json_schema["properties"]["a"]["description"] == "field"
    assert [d.parameter for d in diagnostics_of(t, "description.conflict")] == ["a"]


def test_agreeing_sources_do_not_conflict() -> None:
    def f(a: Annotated[int, "Same text."], b: Annotated[int, Field(description="B  text")]) -> None:
        """Do.

        Args:
            a: Same text.
            b: B text
        """

    t = tool(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t.spec
    assert diagnostics_of(t, "description.conflict") == []


def test_docstring_unknown_parameter() -> None:
    def f(a: int) -> None:
        """Do.

        Args:
            a: The a.
            ghost: Not a parameter.
        """

    t = tool(f)
    with pytest.warns(UserWarning, match="ghost"):
        t.spec
    (diag,) = diagnostics_of(t, "docstring.unknown_parameter")
    assert diag.level == "warning"
    assert diag.parameter == "ghost"
    assert "ghost" not in t.parameters_json_schema["properties"]


def test_docstring_of_context_parameter_is_not_unknown() -> None:
    def f(a: int, tool_context: ToolContext) -> None:
        """Do.

        Args:
            a: The a.
            tool_context: The context.
        """

    t = tool(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t.spec
    assert diagnostics_of(t, "docstring.unknown_parameter") == []


def test_undocumented_parameter_is_info_without_warning() -> None:
    def f(a: int, b: int = 0) -> None:
        """Do.

        Args:
            a: The a.
        """

    t = tool(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t.spec
    (diag,) = diagnostics_of(t, "docstring.undocumented_parameter")
    assert diag.level == "info"
    assert diag.parameter == "b"


def test_diagnostics_are_recorded_once_per_spec() -> None:
    def f(a: int) -> None:
        pass

    t = tool(f)
    assert [d.code for d in t.diagnostics] == ["docstring.undocumented_parameter"]
    assert [d.code for d in t.diagnostics] == ["docstring.undocumented_parameter"]


def test_no_diagnostics_when_all_documented() -> None:
    def f(a: int, b: Annotated[str, "The b."]) -> None:
        """Do.

        Args:
            a: The a.
        """

    t = tool(f)
    assert t.diagnostics == []


# -- response_json_schema ------------------------------------------------------------------------


class Result(BaseModel):
    ok: bool
    detail: str | None = None


class ResultDict(TypedDict):
    ok: bool


def response_of(func: Any) -> dict[str, Any] | None:
    schema = tool(func).response_json_schema
    if schema is not None:
        Draft202012Validator.check_schema(schema)
        assert titles_in(schema) == []
    return schema


def test_response_schema_none_without_return_annotation() -> None:
    def f(x: int):  # type: ignore[no-untyped-def]
        return x

    assert response_of(f) is None


def test_response_schema_none_for_any() -> None:
    def f(x: int) -> Any:
        return x

    assert response_of(f) is None


@pytest.mark.parametrize(
    ("annotation", "inner"),
    [
        (int, {"type": "integer"}),
        (str, {"type": "string"}),
        (bool, {"type": "boolean"}),
        (float, {"type": "number"}),
        (None, {"type": "null"}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (Optional[str], {"anyOf": [{"type": "string"}, {"type": "null"}]}),  # noqa: UP045
        (datetime.date, {"type": "string", "format": "date"}),
    ],
    ids=repr,
)
def test_response_schema_wraps_non_objects(annotation: Any, inner: dict[str, Any]) -> None:
    def f():  # type: ignore[no-untyped-def]
        pass

    f.__annotations__ = {"return": annotation}
    assert response_of(f) == {
        "type": "object",
        "properties": {"result": inner},
        "required": ["result"],
    }


def test_response_schema_dict_as_is() -> None:
    def f() -> dict[str, int]:
        return {}

    assert response_of(f) == {"type": "object", "additionalProperties": {"type": "integer"}}


def test_response_schema_model_as_is() -> None:
    def f() -> Result:
        return Result(ok=True)

    assert response_of(f) == {
        "type": "object",
        "properties": {
            "ok": {"type": "boolean"},
            "detail": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
        "required": ["ok"],
    }


def test_response_schema_typed_dict_as_is() -> None:
    def f() -> ResultDict:
        return {"ok": True}

    assert response_of(f) == {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
    }


def test_response_schema_nested_model_keeps_defs() -> None:
    def f() -> Outer:
        return Outer(inner=Inner(value=1))

    schema = response_of(f)
    assert schema is not None
    assert schema["type"] == "object"
    assert schema["properties"]["inner"] == {"$ref": "#/$defs/Inner"}
    assert "Inner" in schema["$defs"]


def test_response_schema_list_of_models_wrapped_with_defs() -> None:
    def f() -> list[Result]:
        return []

    schema = response_of(f)
    assert schema is not None
    assert schema["type"] == "object"
    assert schema["required"] == ["result"]
    assert schema["properties"]["result"] == {"type": "array", "items": {"$ref": "#/$defs/Result"}}
    assert "Result" in schema["$defs"]


async def test_response_schema_describes_actual_responses() -> None:
    @tool
    def a() -> int:
        return 3

    @tool
    def b() -> Result:
        return Result(ok=True, detail="d")

    @tool
    def c() -> list[Result]:
        return [Result(ok=False)]

    @tool
    def d() -> Result | None:
        return None

    @tool
    def e() -> Result | None:
        return Result(ok=True)

    for t in (a, b, c, d, e):
        schema = t.response_json_schema
        assert schema is not None
        Draft202012Validator(schema).validate(await t.run({}))


def test_response_schema_of_generator_is_the_yield_type() -> None:
    from collections.abc import AsyncIterator, Iterator

    def g() -> Iterator[int]:
        yield 1

    async def ag() -> AsyncIterator[Result]:
        yield Result(ok=True)

    assert response_of(g) == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    schema = response_of(ag)
    assert schema is not None and schema["type"] == "object" and "ok" in schema["properties"]


async def test_blob_return_annotation_builds_spec_and_runs() -> None:
    from tooling import Blob, FileRef

    @tool
    def image() -> Blob:
        return Blob("image/png", b"\x89PNG")

    @tool
    def files() -> list[FileRef]:
        return [FileRef("gs://b/x", "text/plain")]

    for t in (image, files):
        schema = t.response_json_schema  # must not raise
        response, parts = await _response_and_parts(t)
        assert len(parts) == 1
        if schema is not None:
            Draft202012Validator.check_schema(schema)
            Draft202012Validator(schema).validate(response)


def test_none_default_keeps_annotated_description_and_constraints() -> None:
    def f(
        a: Annotated[str, "The a."] = None,  # noqa: RUF013
        b: Annotated[int, Field(ge=1, description="The b.")] = None,  # noqa: RUF013
    ) -> None:
        pass

    t = tool(f)
    props = t.parameters_json_schema["properties"]
    assert props["a"] == {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "default": None,
        "description": "The a.",
    }
    assert props["b"] == {
        "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}],
        "default": None,
        "description": "The b.",
    }
    assert t.diagnostics == []


async def test_none_default_with_constraint_still_validates() -> None:
    @tool
    def f(b: Annotated[int, Field(ge=1)] = None) -> Any:  # noqa: RUF013
        return b

    assert await f.run({}) == {"result": None}
    assert await f.run({"b": None}) == {"result": None}
    assert await f.run({"b": 2}) == {"result": 2}
    with pytest.raises(ToolError):
        await f.run({"b": 0})


# -- return types pydantic cannot describe, Self, bytes ----------------------------------------


class Opaque:
    """A plain class: pydantic has no schema for it."""

    def __init__(self, value: int) -> None:
        self.value = value


async def test_undescribable_return_type_degrades_to_no_response_schema() -> None:
    @tool
    def find(key: str) -> Opaque | None:
        """Find the thing."""
        return None

    with pytest.warns(UserWarning, match="Opaque"):
        assert find.response_json_schema is None
    [diagnostic] = diagnostics_of(find, "schema.unsupported_return")
    assert diagnostic.level == "warning"
    assert "Opaque" in diagnostic.message and diagnostic.parameter is None
    # The tool is usable: its parameters, exports and calls work.
    assert find.parameters_json_schema["properties"] == {"key": {"type": "string"}}
    assert "outputSchema" not in find.to_mcp()
    assert find.to_gemini().response_json_schema is None
    assert await find.run({"key": "k"}) == {"result": None}


async def test_undescribable_return_value_is_sent_as_its_fields() -> None:
    @tool
    def make() -> Opaque:
        return Opaque(1)

    with pytest.warns(UserWarning):
        assert make.response_json_schema is None
    assert await make.run({}) == {"value": 1}


@dataclasses.dataclass
class Counter:
    count: int = 0

    @tool
    def bump(self, by: int) -> Self:
        """Add to the count."""
        self.count += by
        return self

    @tool
    def merged(self, other: Self) -> list[Self] | None:
        """Merge two counters."""
        return [self, other]


async def test_self_is_the_class_of_the_method() -> None:
    counter = Counter()
    counter_schema = {
        "type": "object",
        "properties": {"count": {"type": "integer", "default": 0}},
    }
    schema = counter.bump.response_json_schema
    assert schema is not None
    assert {k: v for k, v in schema.items() if k != "required"} == counter_schema
    assert await counter.bump.run({"by": 2}) == {"count": 2}
    Draft202012Validator(schema).validate({"count": 2})

    merged = counter.merged
    assert merged.parameters_json_schema["properties"]["other"] == {"$ref": "#/$defs/Counter"}
    response = merged.response_json_schema
    assert response is not None
    assert response["properties"]["result"]["anyOf"][0]["items"] == {"$ref": "#/$defs/Counter"}
    assert await merged.run({"other": {"count": 5}}) == {"result": [{"count": 2}, {"count": 5}]}


def test_self_on_a_bound_method_passed_to_tool() -> None:
    class Box(BaseModel):
        size: int = 1

        def grown(self) -> Self:
            return self.model_copy(update={"size": self.size + 1})

    t = FunctionTool(Box().grown)
    assert t.response_json_schema == {
        "type": "object",
        "properties": {"size": {"type": "integer", "default": 1}},
    }


def test_self_outside_a_class_is_an_unsupported_return() -> None:
    def lonely() -> Self:  # type: ignore[misc]
        raise NotImplementedError

    t = FunctionTool(lonely)
    with pytest.warns(UserWarning):
        assert t.response_json_schema is None
    assert diagnostics_of(t, "schema.unsupported_return")


class Utf8Model(BaseModel):
    data: bytes


class Base64Model(BaseModel):
    model_config = {"ser_json_bytes": "base64"}
    data: bytes


@dataclasses.dataclass
class BytesData:
    data: bytes


class BytesDict(TypedDict):
    data: bytes


_BASE64 = {"type": "string", "contentEncoding": "base64url"}


@pytest.mark.parametrize(
    ("annotation", "value", "path", "bytes_schema"),
    [
        (bytes, b"\xfb\xff", ["result"], _BASE64),
        (list[bytes], [b"\xfb\xff"], ["result", 0], _BASE64),
        (dict[str, bytes], {"k": b"\xfb\xff"}, ["k"], _BASE64),
        (BytesData, BytesData(b"\xfb\xff"), ["data"], _BASE64),
        (BytesDict, BytesDict(data=b"\xfb\xff"), ["data"], _BASE64),
        (Base64Model, Base64Model(data=b"\xfb\xff"), ["data"], _BASE64),
        # A model's own settings decide: pydantic's default sends bytes as UTF-8 text.
        (Utf8Model, Utf8Model(data=b"text"), ["data"], {"type": "string"}),
        (list[Utf8Model], [Utf8Model(data=b"text")], ["result", 0, "data"], {"type": "string"}),
    ],
    ids=lambda v: getattr(v, "__name__", None) or repr(v),
)
async def test_bytes_schema_says_what_is_sent(
    annotation: Any, value: Any, path: list[Any], bytes_schema: dict[str, Any]
) -> None:
    import base64

    def f():  # type: ignore[no-untyped-def]
        return value

    f.__annotations__ = {"return": annotation}
    t = tool(f)
    schema = t.response_json_schema
    assert schema is not None
    response = await t.run({})
    Draft202012Validator(schema).validate(response)

    node, sent = schema, response
    for step in path:
        sent = sent[step]
        node = _resolve(schema, node)
        if isinstance(step, int):
            node = node["items"]
        elif "properties" in node:
            node = node["properties"][step]
        else:
            node = node["additionalProperties"]
    node = _resolve(schema, node)
    assert node == bytes_schema
    if node.get("contentEncoding") == "base64url":
        assert base64.urlsafe_b64decode(sent) == b"\xfb\xff"
    else:
        assert sent == "text"


def _resolve(root: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """``node`` with a ``$ref`` followed and a one-branch-plus-null ``anyOf`` opened."""
    if "$ref" in node:
        return _resolve(root, root["$defs"][node["$ref"].removeprefix("#/$defs/")])
    return node


async def _response_and_parts(t: Any, args: dict[str, Any] | None = None) -> tuple[Any, Any]:
    """The response dict and the parts lifted out of it, for a call with ``args``."""
    final = await t.respond(t.check_arguments(args or {}))
    return final.response, final.parts
