"""Property tests of the tool core over random signatures (see ``_signatures.py``).

For any signature the grammar can draw, the arguments schema is well formed and says
exactly what the signature says; values of the declared types pass the schema and reach
the function with the same meaning; arguments the schema rejects are rejected by
``run()`` as ``tool.invalid_arguments``; no input whatsoever makes ``run()`` raise
anything but ``ToolError``; and every export obeys its target's rules.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import enum
import importlib.util
import inspect
import json
from collections.abc import Iterator
from typing import Any, Literal

import pytest
import typing_extensions
from _signatures import Param, Sig, TypeNode, arguments, signatures
from hypothesis import event, given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from pydantic import BaseModel, TypeAdapter
from pydantic_core import to_jsonable_python

from tooling import FunctionTool, ToolContext, ToolError, tool

# Exports report what a target cannot say as diagnostics, which also go to warnings.warn.
pytestmark = pytest.mark.filterwarnings("ignore:generated_tool.*:UserWarning")


# -- helpers -----------------------------------------------------------------------------------


def _tool(sig: Sig) -> tuple[FunctionTool[..., Any], list[dict[str, Any]]]:
    func, calls = sig.build()
    built = FunctionTool(func)
    built.spec  # build it now: a spec error then names this signature
    return built, calls


def _run(t: Any, args: Any) -> dict[str, Any]:
    return asyncio.run(t.run(args))


def _run_error(t: Any, args: Any) -> ToolError:
    with pytest.raises(ToolError) as info:
        _run(t, args)
    return info.value


def _jsonable(values: dict[str, Any]) -> dict[str, Any]:
    out = to_jsonable_python(values)
    assert json.loads(json.dumps(out, allow_nan=False)) == out
    return out


def _expected(sig: Sig, values: dict[str, Any]) -> dict[str, Any]:
    return {p.name: values[p.name] if p.name in values else p.default for p in sig.params}


def _check_received(sig: Sig, received: dict[str, Any], expected: dict[str, Any]) -> None:
    assert list(received) == sig.names
    for p in sig.params:
        p.node.check(received[p.name], expected[p.name], p.name)


# Draft 2020-12 keywords by what their value holds.
_SCHEMA_VALUED = frozenset(
    {"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
     "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
)  # fmt: skip
_SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "dependentSchemas"})
_OTHER_KEYWORDS = frozenset(
    {"type", "enum", "const", "required", "default", "description", "title", "examples",
     "format", "$ref", "$schema", "$id", "$anchor", "$comment", "minItems", "maxItems",
     "uniqueItems", "minLength", "maxLength", "pattern", "minimum", "maximum",
     "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minProperties", "maxProperties",
     "dependentRequired", "deprecated", "readOnly", "writeOnly", "contentEncoding",
     "contentMediaType", "minContains", "maxContains"}
)  # fmt: skip
_KNOWN_KEYWORDS = _SCHEMA_VALUED | _SCHEMA_LISTS | _SCHEMA_MAPS | _OTHER_KEYWORDS


def _subschemas(schema: dict[str, Any], where: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema inside ``schema`` (itself included), by keyword semantics: a property
    named "title" or a default holding a "title" key is not a schema keyword."""
    yield where, schema
    for key, value in schema.items():
        if key in _SCHEMA_VALUED and isinstance(value, dict):
            yield from _subschemas(value, f"{where}/{key}")
        elif key in _SCHEMA_LISTS:
            for i, item in enumerate(value):
                yield from _subschemas(item, f"{where}/{key}/{i}")
        elif key in _SCHEMA_MAPS:
            for name, item in value.items():
                yield from _subschemas(item, f"{where}/{key}/{name}")


def _types(schema: dict[str, Any]) -> set[str]:
    kind = schema.get("type", ())
    return {kind} if isinstance(kind, str) else set(kind)


# -- a. the parameters schema --------------------------------------------------------------------


@given(sig=signatures())
def test_parameters_schema_says_exactly_what_the_signature_says(sig: Sig) -> None:
    t, _ = _tool(sig)
    schema = t.parameters_json_schema
    Draft202012Validator.check_schema(schema)
    for where, sub in _subschemas(schema):
        assert "title" not in sub, f"title at {where}"
        assert set(sub) <= _KNOWN_KEYWORDS, (
            f"unknown keywords at {where}: {set(sub) - _KNOWN_KEYWORDS}"
        )
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert list(schema["properties"]) == sig.names
    assert schema.get("required", []) == [p.name for p in sig.params if p.required]
    assert t.spec.parameter_names == tuple(sig.names)
    # The signature the tool read is the one drawn (``__signature__`` honoured), kinds too.
    assert list(inspect.signature(t).parameters) == sig.names
    assert [p.positional_only for p in t.spec.parameters] == [
        p.kind is inspect.Parameter.POSITIONAL_ONLY for p in sig.params
    ]

    for p in sig.params:
        prop = schema["properties"][p.name]
        assert prop.get("description") == p.description, p.name
        if p.required:
            assert "default" not in prop, p.name
            continue
        # Defaults are shown, valid for the property, and mean the default itself.
        assert "default" in prop, p.name
        bare = {k: v for k, v in prop.items() if k != "default"}
        Draft202012Validator({**bare, "$defs": schema.get("$defs", {})}).validate(prop["default"])
        back = TypeAdapter(p.node.ann).validate_json(json.dumps(prop["default"]))
        p.node.check(back, p.default, f"default of {p.name}")


async def test_declaring_a_tool_makes_no_arguments_model_its_first_call_does() -> None:
    class Point(BaseModel):
        x: int

    def place(where: Point, tags: list[str] | None = None, copies: int = 1) -> int:
        """Place copies of a thing."""
        return copies

    t = tool(place)
    assert t.parameters_json_schema["required"] == ["where"]
    assert t.to_openai()["function"]["name"] == "place"
    assert t.spec.model.model is None
    assert await t.run({"where": {"x": 1}, "copies": 2}) == {"result": 2}
    assert t.spec.model.model is t.args_model


def test_a_default_pydantic_cannot_describe_is_refused_naming_the_parameter() -> None:
    # pydantic's model_json_schema raises KeyError for a default holding {"$ref": "x"};
    # the signatures above avoid such defaults (showable_default), this pins the outcome.
    def f(a: int, b: dict[str, str] = {"$ref": "x"}) -> None: ...

    t = FunctionTool(f)
    try:
        schema = t.parameters_json_schema
    except TypeError as exc:
        assert "f" in str(exc) and "parameter 'b'" in str(exc), exc
    else:  # a pydantic that gets it right
        assert schema["properties"]["b"]["default"] == {"$ref": "x"}


# -- b. valid values pass the schema and reach the function ----------------------------------------


@given(sig=signatures())
def test_the_parameters_schema_is_the_arguments_models_own_key_for_key(sig: Sig) -> None:
    # Declaring describes the parameters without the model (which is made on first use):
    # the schema is the one the model gives, in the same order, with the same $defs.
    from tooling._function.schema import parameters_schema

    t, _ = _tool(sig)
    described = t.parameters_json_schema
    from_model = parameters_schema(t.args_model)
    assert json.dumps(described) == json.dumps(from_model)


@given(sig=signatures(), data=st.data())
def test_valid_values_pass_the_schema_and_reach_the_function(sig: Sig, data: st.DataObject) -> None:
    t, calls = _tool(sig)
    values = data.draw(arguments(sig), label="values")
    args = _jsonable(values)
    Draft202012Validator(t.parameters_json_schema).validate(args)

    form = data.draw(st.sampled_from(["dict", "str", "bytes"]), label="sent as")
    text = json.dumps(args, ensure_ascii=False)
    response = _run(t, {"dict": args, "str": text, "bytes": text.encode()}[form])

    assert len(calls) == 1
    _check_received(sig, calls[0], _expected(sig, values))
    # The function returns what it received: the response is that, made JSON-safe.
    assert response == to_jsonable_python(calls[0])
    json.dumps(response, allow_nan=False)


# -- c. what the schema rejects, run() rejects -----------------------------------------------------

# Values that are wrong wherever the schema rejects them, also for pydantic's lax mode: no
# numeric strings, no booleans (lax mode reads them as numbers) and no 0 or 1 anywhere
# inside (lax mode reads those as booleans).
_WRONG_VALUES: tuple[Any, ...] = (
    {},
    {"zz_unknown": [[]]},
    [],
    [{}],
    "🙃 not a number",
    1.5,
    7,
    None,
)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if path:
        yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, (*path, i))


def _replaced(root: dict[str, Any], path: tuple[Any, ...], new: Any) -> dict[str, Any]:
    out = copy.deepcopy(root)
    target: Any = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = copy.deepcopy(new)
    return out


def _null_means_default(param: Param, path: tuple[Any, ...]) -> bool:
    """Whether ``null`` at ``path`` inside ``param`` means "the default" rather than a wrong
    value: for a parameter or field with a default, or a ``NotRequired`` key, ``run()``
    reads an explicit null as "left out" (strict-mode models send one for every optional
    field), although the canonical schema, which shows the field's own type, rejects it."""
    if not path:
        return not param.required
    node = param.node
    for key in path[:-1]:
        assert node.child is not None, (param, path)
        node = node.child(key)
    return path[-1] in node.omittable


def _assert_rejected(t: Any, calls: list[Any], args: dict[str, Any]) -> list[ToolError]:
    errors = []
    for payload in (args, json.dumps(args)):
        err = _run_error(t, payload)
        assert err.code == "tool.invalid_arguments", (payload, err)
        assert err.details, (payload, err)
        json.dumps(err.to_response(), allow_nan=False)
        errors.append(err)
    assert calls == [], "the function ran with invalid arguments"
    return errors


@given(sig=signatures(), data=st.data())
def test_arguments_the_schema_rejects_are_rejected_by_run(sig: Sig, data: st.DataObject) -> None:
    t, calls = _tool(sig)
    validator = Draft202012Validator(t.parameters_json_schema)
    args = _jsonable(data.draw(arguments(sig), label="valid values"))
    by_name = {p.name: p for p in sig.params}
    kinds = ["wrong value"] * 4 if args else []  # the richest mutation, drawn most often
    if any(p.required for p in sig.params):
        kinds.append("missing key")
    kinds.append("unknown key")
    kind = data.draw(st.sampled_from(kinds), label="mutation")
    event(f"mutation: {kind}")

    if kind == "unknown key":
        # The internal field names of aliased parameters and injected names are unknown too.
        key = data.draw(
            st.sampled_from(["arg_0_", "arg_1_", "tool_context", "self", "kwargs"])
            | st.text(min_size=1, max_size=6),
            label="unknown key",
        )
        if key in by_name:
            key += "_"
        mutated = {**args, key: data.draw(st.sampled_from((*_WRONG_VALUES[:-1], 0, "x")))}
        assert not validator.is_valid(mutated)
        for err in _assert_rejected(t, calls, mutated):
            unknown = [d for d in err.details if d["loc"] == [key]]
            assert [d["type"] for d in unknown] == ["extra_forbidden"], err.details
            assert all(name in unknown[0]["msg"] for name in sig.names), unknown[0]["msg"]
    elif kind == "missing key":
        name = data.draw(st.sampled_from([p.name for p in sig.params if p.required]), label="drop")
        mutated = {k: v for k, v in args.items() if k != name}
        assert not validator.is_valid(mutated)
        for err in _assert_rejected(t, calls, mutated):
            assert {
                "loc": [name],
                "msg": f"Missing required argument {name!r}",
                "type": "missing",
            } in err.details
    else:
        paths = sorted(_paths(args), key=len, reverse=True)  # shrinks toward the deepest
        path = data.draw(st.sampled_from(paths), label="path")
        param = by_name[path[0]]
        event(f"mutation depth: {len(path)}")
        for wrong in _WRONG_VALUES:
            if wrong is None and _null_means_default(param, path[1:]):
                continue  # by design, not a wrong value: see _null_means_default
            mutated = _replaced(args, path, wrong)
            if validator.is_valid(mutated):
                continue
            event(f"rejected wrong value: {type(wrong).__name__}")
            for err in _assert_rejected(t, calls, mutated):
                assert all(d["loc"][:1] == [param.name] for d in err.details), err.details


# -- d. no input makes run() raise anything but ToolError ----------------------------------------


class Point(BaseModel):
    x: int
    y: int = 0


class Mode(enum.Enum):
    A = "a"
    B = "b"


@dataclasses.dataclass
class Box:
    label: str
    size: float = 1.0


class Shape(typing_extensions.TypedDict):
    kind: Literal["circle", "square"]
    side: typing_extensions.NotRequired[float]


@tool
def rich(
    name: str,
    count: int = 1,
    ratio: float | None = None,
    tags: list[str] = [],
    point: Point | None = None,
    mode: Mode = Mode.A,
    pair: tuple[int, str] = (1, "x"),
    ids: set[int] = set(),
    meta: dict[str, int] = {},
    box: Box | None = None,
    shape: Shape | None = None,
) -> dict[str, Any]:
    """Echo everything back."""
    return {"name": name, "count": count, "point": point, "mode": mode, "box": box, "ids": ids}


@tool
async def fragile(numerator: int, denominator: int = 1, /) -> float:
    """Divide (a zero denominator fails inside the tool)."""
    return numerator / denominator


@tool
def nothing() -> None:
    """Take nothing."""


@tool
def awkward(json: str, tool_context: ToolContext, copy: list[int] | None = None) -> str:
    """Parameters named like BaseModel attributes, and an injected context."""
    tool_context.state["seen"] = json
    return json * len(copy or [])


@tool(long_running=True)
def countdown(n: int):  # type: ignore[no-untyped-def]
    """Count down, yielding each step."""
    for i in range(min(n, 3)):
        yield {"left": n - i}


_FIXED_TOOLS = (rich, fragile, nothing, awkward, countdown)
_KEYS = st.sampled_from(
    sorted({n for t in _FIXED_TOOLS for n in t.spec.parameter_names})
) | st.text(max_size=5)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=10)
    | st.text(st.characters(categories=["Cs", "Nd"]), max_size=3)
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=20,
)


def _nested(depth: int, leaf: Any) -> Any:
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"x": value}
    return value


_ANY_INPUT = st.one_of(
    st.dictionaries(_KEYS, _JSON, max_size=6),
    _JSON,
    _JSON.map(lambda v: json.dumps(v)),
    st.text(),
    st.text(st.characters(categories=["Cs", "Ll", "Po"])),  # lone surrogates too
    st.binary(),
    st.integers(1, 150).map(lambda n: "[" * n + "]" * n),
    st.integers(1, 150).map(lambda n: {"name": _nested(n, "x")}),
    st.integers(1, 150).map(lambda n: json.dumps({"name": _nested(n, 1)}).encode()),
)


@given(args=_ANY_INPUT, target=st.sampled_from(_FIXED_TOOLS))
def test_run_answers_any_input_with_a_dict_or_a_tool_error(args: Any, target: Any) -> None:
    try:
        response = _run(target, args)
    except ToolError as err:
        assert err.code in ("tool.invalid_arguments", "tool.failed"), err
        json.dumps(err.to_response(), allow_nan=False)
    except Exception as exc:  # anything else is a bug
        pytest.fail(f"run({args!r}) raised {type(exc).__name__}: {exc}")
    else:
        assert type(response) is dict
        json.dumps(response)


# -- e. exports obey their targets' rules ---------------------------------------------------------

_HAVE_EXPORTERS = all(
    importlib.util.find_spec(f"tooling._export.{m}")
    for m in ("openai", "gemini", "mcp", "anthropic")
)
needs_exporters = pytest.mark.skipif(
    not _HAVE_EXPORTERS, reason="tooling._export modules not written yet"
)


def _assert_openai_strict(schema: dict[str, Any]) -> None:
    for where, sub in _subschemas(schema):
        if "object" in _types(sub) or "properties" in sub:
            assert sub.get("additionalProperties") is False, f"open object at {where}"
            assert sorted(sub.get("required", [])) == sorted(sub.get("properties", {})), (
                f"not every property required at {where}"
            )
        if "$ref" in sub:
            assert set(sub) == {"$ref"}, f"$ref with siblings at {where}"
        assert sub.get("default", 0) is not None, f"null default at {where}"
    from agents.strict_schema import ensure_strict_json_schema

    assert ensure_strict_json_schema(copy.deepcopy(schema)) == schema


def _gemini_schema_nodes(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every ``google.genai.types.Schema`` (dumped, python names) inside ``schema``."""
    yield schema
    for key in ("items", "additional_properties"):
        if isinstance(schema.get(key), dict):
            yield from _gemini_schema_nodes(schema[key])
    for item in schema.get("any_of") or ():
        yield from _gemini_schema_nodes(item)
    for mapping in ("properties", "defs"):
        for item in (schema.get(mapping) or {}).values():
            yield from _gemini_schema_nodes(item)


def _null_means(p: Param) -> Any:
    """What a strict model's null for parameter ``p`` (which has a default) means."""
    return None if p.node.nullable else p.default


def _strict_nulls(node: TypeNode, value: Any, draw: Any) -> tuple[Any, Any]:
    """``value`` (JSON) as a strict model may send it: every key an object may leave out
    present, as null where it is left out (always, if it was absent; sometimes, if not).
    Also gives what that means: the same with those nulls removed, except where the
    field's type admits None (there null is None, as at the top level)."""
    if isinstance(value, dict) and node.child is not None:
        sent: dict[str, Any] = {}
        meant: dict[str, Any] = {}
        for key in node.omittable - set(value):
            sent[key] = None
            if node.child(key).nullable:
                meant[key] = None
        for key, item in value.items():
            if key in node.omittable and draw(st.booleans()):
                sent[key] = None
                if node.child(key).nullable:
                    meant[key] = None
            else:
                sent[key], meant[key] = _strict_nulls(node.child(key), item, draw)
        return sent, meant
    if isinstance(value, list) and node.child is not None:
        pairs = [_strict_nulls(node.child(i), item, draw) for i, item in enumerate(value)]
        return [a for a, _ in pairs], [b for _, b in pairs]
    return value, value


@needs_exporters
@given(sig=st.one_of(signatures(dicts=False), signatures()), data=st.data())
def test_run_accepts_what_a_strict_model_sends(sig: Sig, data: st.DataObject) -> None:
    t, calls = _tool(sig)
    values = data.draw(arguments(sig), label="values")

    # Every optional parameter null: each means its default (or None, where allowed).
    nulls = {p.name: to_jsonable_python(values[p.name]) if p.required else None for p in sig.params}
    assert isinstance(_run(t, nulls), dict)
    expected = {p.name: values[p.name] if p.required else _null_means(p) for p in sig.params}
    _check_received(sig, calls[-1], expected)

    # Nulls at any depth, for fields with a default and NotRequired keys, as the strict
    # schema has them: the strict schema accepts them, and run() reads them as left out.
    try:
        strict = t.to_openai(strict=True)["function"]["parameters"]
    except ValueError:
        event("strict export refused (open mapping)")
        return  # see test_exports_obey_their_targets_rules
    sent: dict[str, Any] = {}
    meant: dict[str, Any] = {}
    for p in sig.params:
        if p.name not in values or (not p.required and data.draw(st.booleans())):
            sent[p.name] = None
            continue
        sent[p.name], meant[p.name] = _strict_nulls(
            p.node, to_jsonable_python(values[p.name]), data.draw
        )
    Draft202012Validator(strict).validate(sent)
    event(f"nulls sent: {json.dumps(sent).count('null')}")
    as_text = data.draw(st.booleans(), label="as JSON text")
    assert isinstance(_run(t, json.dumps(sent) if as_text else sent), dict)
    for p in sig.params:
        if p.name in meant:
            expected_value = TypeAdapter(p.node.ann).validate_python(meant[p.name])
        else:
            expected_value = _null_means(p)
        p.node.check(calls[-1][p.name], expected_value, p.name)


@needs_exporters
@given(sig=signatures())
def test_exports_obey_their_targets_rules(sig: Sig) -> None:
    from google.genai import types as genai_types
    from mcp import types as mcp_types

    t, _ = _tool(sig)
    before = copy.deepcopy(t.parameters_json_schema)

    # OpenAI strict: closed objects, every property required, a fixed point of the SDK; an
    # open mapping (dict[str, T]) cannot be said, and the export is refused naming it.
    open_dicts = [p.name for p in sig.params if p.node.open_dict]
    try:
        strict = t.to_openai(strict=True)
    except ValueError as exc:
        assert open_dicts, f"strict export refused without cause: {exc}"
        assert f"parameter {open_dicts[0]!r}" in str(exc), exc
    else:
        assert not open_dicts, "an open mapping was exported in strict mode"
        assert strict["type"] == "function"
        assert strict["function"]["strict"] is True
        _assert_openai_strict(strict["function"]["parameters"])
    assert t.to_openai()["function"]["parameters"] == t.parameters_json_schema

    # Gemini: both forms are FunctionDeclarations; legacy has no $ref/$defs/additionalProperties.
    current = t.to_gemini()
    assert isinstance(current, genai_types.FunctionDeclaration)
    genai_types.FunctionDeclaration.model_validate(current.model_dump())
    assert current.parameters_json_schema == t.parameters_json_schema
    legacy = t.to_gemini(legacy=True)
    assert isinstance(legacy, genai_types.FunctionDeclaration)
    genai_types.FunctionDeclaration.model_validate(legacy.model_dump())
    assert legacy.parameters_json_schema is None
    if legacy.parameters is not None:
        for node in _gemini_schema_nodes(legacy.parameters.model_dump(exclude_none=True)):
            assert not {"ref", "defs", "additional_properties"} & set(node), node
            kind = node.get("type")
            assert getattr(kind, "value", kind) != "NULL", f"null as a type, not nullable: {node}"

    # MCP: a valid mcp.types.Tool whose input schema is an object schema.
    exported = t.to_mcp()
    mcp_types.Tool.model_validate(exported)
    assert exported["inputSchema"]["type"] == "object"
    Draft202012Validator.check_schema(exported["inputSchema"])

    anthropic = t.to_anthropic()
    assert anthropic["name"] == t.name
    Draft202012Validator.check_schema(anthropic["input_schema"])

    assert t.parameters_json_schema == before, "an export changed the tool's own schema"


def _without_descriptions(node: Any) -> Any:
    """A legacy Gemini schema without its ``description`` keywords (properties named
    "description" stay)."""
    if isinstance(node, list):
        return [_without_descriptions(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties":
            out[key] = {name: _without_descriptions(sub) for name, sub in value.items()}
        elif key in ("items", "anyOf"):
            out[key] = _without_descriptions(value)
        elif key != "description":
            out[key] = value
    return out


def _described(sig: Sig, describe: bool) -> Sig:
    """``sig`` with every parameter described (``Annotated[T, "text"]``), or with none."""
    params = []
    for p in sig.params:
        base = p.annotation
        if typing_extensions.get_origin(base) is typing_extensions.Annotated:
            base = typing_extensions.get_args(base)[0]
        text = f"About {p.name}." if describe else None
        annotation = typing_extensions.Annotated[base, text] if describe else base
        params.append(dataclasses.replace(p, annotation=annotation, description=text))
    return dataclasses.replace(sig, params=params)


@needs_exporters
@given(sig=signatures())
def test_descriptions_change_no_legacy_gemini_export_but_their_own_keywords(sig: Sig) -> None:
    from tooling._export import gemini

    bare, _ = _tool(_described(sig, describe=False))
    described, _ = _tool(_described(sig, describe=True))
    bare_legacy, bare_lossy = gemini.legacy_schema(bare.parameters_json_schema)
    described_legacy, described_lossy = gemini.legacy_schema(described.parameters_json_schema)

    assert _without_descriptions(described_legacy) == _without_descriptions(bare_legacy)
    assert {(d.parameter, d.message) for d in described_lossy} == {
        (d.parameter, d.message) for d in bare_lossy
    }
    for name, prop in described_legacy.get("properties", {}).items():
        assert prop.get("description", "").startswith(f"About {name}."), prop
    # The grammar has no ``Any``: nothing may be widened to "any value".
    assert not [d for d in described_lossy + bare_lossy if "any JSON value" in d.message]


@given(sig=signatures(), data=st.data())
def test_mcp_types_every_object_or_array_parameter_and_its_json_text_is_read(
    sig: Sig, data: st.DataObject
) -> None:
    from tooling._export.mcp import structured_kind
    from tooling.mcp._server import lenient_arguments

    t, _ = _tool(sig)
    schema = t.parameters_json_schema
    exported = t.to_mcp()["inputSchema"]
    defs = schema.get("$defs", {})
    kinds: dict[str, str | None] = {}
    for name, prop in schema.get("properties", {}).items():
        kinds[name] = kind = structured_kind(prop, defs)[0]
        typed = exported["properties"][name].get("type")
        if kind is not None:  # a client that sends text can tell to send JSON
            assert typed == kind or typed == [kind, "null"], (name, typed)
        else:
            assert typed == prop.get("type"), (name, typed)

    # What the function takes passes the exported schema (a null for an optional
    # parameter means the default there: left out) ...
    values = _jsonable(data.draw(arguments(sig), label="values"))
    required = set(schema.get("required", ()))
    sent = {k: v for k, v in values.items() if v is not None or k in required}
    Draft202012Validator(exported).validate(sent)
    # ... and each object or array sent as its JSON text reaches the function the same.
    textual = [k for k, v in sent.items() if isinstance(v, dict | list) and kinds[k]]
    as_text = {
        k: json.dumps(v) if k in textual and data.draw(st.booleans()) else v
        for k, v in sent.items()
    }
    fixed = lenient_arguments(t, as_text)
    assert fixed == sent


class _Shade(enum.Enum):
    LIGHT = "light"
    DARK = "dark"


class _Spot(BaseModel):
    x: int


_BARE = [
    (int, 3),
    (float, 0.5),
    (str, "s"),
    (bool, True),
    (int | None, None),
    (str | int | None, None),  # equal to the next as a key: each keeps its own order
    (int | str | None, None),
    (list[int], [1, 2]),
    (dict[str, float], {"a": 1.0}),
    (tuple[int, str], None),
    (set[str], None),
    (Literal["a", "b"], "a"),
    (_Shade, None),
    (_Shade | None, None),
    (list[_Shade], None),
    (_Spot, None),
    (list[_Spot] | None, None),
    (typing_extensions.TypedDict("_Row", {"k": int}), None),
    (Any, None),
    (bytes, None),
]


@pytest.mark.parametrize("annotation,default", _BARE, ids=[repr(a) for a, _ in _BARE])
@pytest.mark.parametrize("required", [True, False], ids=["required", "defaulted"])
def test_a_bare_parameter_is_described_as_the_model_describes_it(
    annotation: Any, default: Any, required: bool
) -> None:
    # Bare annotations with a docstring description and a plain default take the
    # quickest description (the type's schema, made once); the model must agree.
    from tooling._function.schema import parameters_schema

    def f(a: int, b: Any, c: str = "c") -> int:
        """Args:
        a: First.
        b: Second.
        c: Third.
        """
        return a

    f.__annotations__ = {"a": int, "b": annotation, "c": str, "return": int}
    if not required:
        f.__defaults__ = (default, "c")
        f.__code__ = f.__code__.replace()  # the signature reads __defaults__
    t = tool(f)
    assert [p.required for p in t.spec.parameters] == [True, required, False]
    assert json.dumps(t.parameters_json_schema) == json.dumps(parameters_schema(t.args_model))
