"""The canonical JSON Schemas of a tool: pydantic's, without titles, as the model sees them."""

from __future__ import annotations

import functools
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter
from pydantic.dataclasses import is_pydantic_dataclass
from pydantic.errors import PydanticSchemaGenerationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from ._types import Blob, FileRef

__all__: list[str] = []

# Keywords whose value is a schema, a list of schemas, or a name -> schema mapping. Only
# these are walked, so a property that happens to be called "title" is kept.
_SCHEMA_KEYS = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
    }
)
_SCHEMA_LIST_KEYS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_MAP_KEYS = frozenset({"properties", "patternProperties", "$defs", "dependentSchemas"})


def strip_titles(schema: dict[str, Any]) -> dict[str, Any]:
    """Remove every ``title`` keyword, in place, and return ``schema``."""
    schema.pop("title", None)
    for key, value in schema.items():
        if key in _SCHEMA_KEYS:
            if isinstance(value, dict):
                strip_titles(value)
        elif key in _SCHEMA_LIST_KEYS:
            for item in value:
                if isinstance(item, dict):
                    strip_titles(item)
        elif key in _SCHEMA_MAP_KEYS:
            for item in value.values():
                if isinstance(item, dict):
                    strip_titles(item)
    return schema


class _ArgsSchemaGenerator(GenerateJsonSchema):
    """Pydantic's generator, with plain JSON defaults written as they are.

    Pydantic builds a ``TypeAdapter`` to encode each default; for the ``str``/``int``/
    ``bool``/``None`` defaults most tools have, that was a third of the schema's cost.
    """

    def encode_default(self, dft: Any) -> Any:
        if _plain_json(dft):
            return dft
        return super().encode_default(dft)


def _plain_json(value: Any, depth: int = 0) -> bool:
    kind = type(value)
    if kind in (str, int, bool) or value is None:
        return True
    if kind is float:
        return value == value and value not in (float("inf"), float("-inf"))
    if depth > 8:
        return False
    if kind is list:
        return all(_plain_json(v, depth + 1) for v in value)
    if kind is dict:
        return all(type(k) is str and _plain_json(v, depth + 1) for k, v in value.items())
    return False


def parameters_schema(args_model: type[BaseModel]) -> dict[str, Any]:
    """Validation-mode schema of the arguments (draft 2020-12), root closed, no titles."""
    schema = strip_titles(
        args_model.model_json_schema(mode="validation", schema_generator=_ArgsSchemaGenerator)
    )
    schema["additionalProperties"] = False
    schema.setdefault("properties", {})
    return schema


_SIMPLE: dict[Any, dict[str, Any]] = {
    bool: {"type": "boolean"},
    int: {"type": "integer"},
    float: {"type": "number"},
    str: {"type": "string"},
    list: {"type": "array", "items": {}},
    type(None): {"type": "null"},
    None: {"type": "null"},
}


def response_schema(annotation: Any) -> dict[str, Any]:
    """Serialization-mode schema of what the model receives for a return ``annotation``.

    Cached per annotation: many tools share return types (``dict``, ``list[dict]``, a
    model). The result is shared, like every spec value: treat it as read-only.
    """
    try:
        return _cached_response_schema(annotation)
    except TypeError:  # an unhashable annotation
        return _response_schema(annotation)


@functools.lru_cache(maxsize=512)
def _cached_response_schema(annotation: Any) -> dict[str, Any]:
    return _response_schema(annotation)


def _response_schema(annotation: Any) -> dict[str, Any]:
    """Serialization-mode schema of what the model receives for a return ``annotation``.

    A value that is not an object arrives as ``{"result": value}``, so its schema is
    wrapped the same way; a union of objects and non-objects gets both shapes.
    """
    if annotation is dict:
        return {"type": "object", "additionalProperties": True}
    simple = _SIMPLE.get(annotation) if isinstance(annotation, type | None) else None
    if simple is not None:
        return _wrap(dict(simple))
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(annotation)
    except PydanticSchemaGenerationError:  # Blob / FileRef, which pydantic does not know
        adapter = TypeAdapter(annotation, config=ConfigDict(arbitrary_types_allowed=True))
    schema = strip_titles(
        adapter.json_schema(mode="serialization", schema_generator=_ResponseSchemaGenerator)
    )
    defs = schema.pop("$defs", None)
    if _is_object(schema, defs):
        out = schema
    elif "anyOf" in schema and any(_is_object(s, defs) for s in schema["anyOf"]):
        objects = [s for s in schema["anyOf"] if _is_object(s, defs)]
        others = [s for s in schema["anyOf"] if not _is_object(s, defs)]
        out = {"anyOf": [*objects, _wrap(others[0] if len(others) == 1 else {"anyOf": others})]}
    else:
        out = _wrap(schema)
    if defs:
        out["$defs"] = defs
    return out


# How bytes reach the model (pydantic's ``ser_json_bytes``) -> the JSON Schema
# ``contentEncoding`` that says so (RFC 4648 names); UTF-8 text is just a string.
_BYTES_ENCODINGS: dict[str, str | None] = {"base64": "base64url", "hex": "base16", "utf8": None}


class _ResponseSchemaGenerator(GenerateJsonSchema):
    """Pydantic's serialization-mode generator, saying what the model really receives.

    A returned ``Blob``/``FileRef`` is the part reference that replaces it. ``bytes`` are
    base64url text (how results are made JSON) except inside a pydantic model or pydantic
    dataclass, which serializes itself: there its ``ser_json_bytes`` setting decides
    (UTF-8 text by default).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._bytes_modes: list[str] = []  # the innermost self-serializing class's setting

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        mode = schema["cls"].model_config.get("ser_json_bytes", "utf8")
        return self._with_bytes_mode(mode, super().model_schema, schema)

    def dataclass_schema(self, schema: core_schema.DataclassSchema) -> JsonSchemaValue:
        cls = schema["cls"]
        if not is_pydantic_dataclass(cls):  # serialized field by field, like any value
            return super().dataclass_schema(schema)
        mode = (getattr(cls, "__pydantic_config__", None) or {}).get("ser_json_bytes", "utf8")
        return self._with_bytes_mode(mode, super().dataclass_schema, schema)

    def _with_bytes_mode(self, mode: str, generate: Any, schema: Any) -> JsonSchemaValue:
        self._bytes_modes.append(mode)
        try:
            return generate(schema)  # type: ignore[no-any-return]
        finally:
            self._bytes_modes.pop()

    def bytes_schema(self, schema: core_schema.BytesSchema) -> JsonSchemaValue:
        mode = self._bytes_modes[-1] if self._bytes_modes else "base64"
        encoding = _BYTES_ENCODINGS.get(mode)
        # No length bounds: they count bytes, not the characters of the encoded text.
        if encoding is None:
            return {"type": "string"}
        return {"type": "string", "contentEncoding": encoding}

    def is_instance_schema(self, schema: core_schema.IsInstanceSchema) -> JsonSchemaValue:
        cls = schema["cls"]
        if isinstance(cls, type) and issubclass(cls, Blob | FileRef):
            return {
                "type": "object",
                "properties": {"part": {"type": "integer"}, "mime_type": {"type": "string"}},
                "required": ["part", "mime_type"],
            }
        return super().is_instance_schema(schema)


def _wrap(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"result": schema}, "required": ["result"]}


def _is_object(schema: dict[str, Any], defs: dict[str, Any] | None) -> bool:
    ref = schema.get("$ref")
    if isinstance(ref, str) and defs and ref.startswith("#/$defs/"):
        return _is_object(defs.get(ref.removeprefix("#/$defs/"), {}), defs)
    if "anyOf" in schema:
        return all(_is_object(s, defs) for s in schema["anyOf"])
    return schema.get("type") == "object"


def drop_default_nulls(schema: dict[str, Any], data: Any) -> bool:
    """Remove, in place, each ``null`` in ``data`` sent for an object property that may be
    left out (not ``required``: it has a default) and whose schema does not admit null.

    That is what a strict-mode model sends for an argument it leaves out, at any depth.
    Guided by the parameters ``schema``, not by error locations: a null for an entry of an
    open mapping (``dict[str, int]``) or for a required field is never removed, and a null
    for a field typed as a union is found like any other. Returns whether any was removed.
    """
    defs = schema.get("$defs")
    return _drop_nulls(schema, data, defs if isinstance(defs, dict) else {})


def _drop_nulls(schema: Any, data: Any, defs: dict[str, Any]) -> bool:
    changed = False
    branches = _branches(schema, defs)
    if isinstance(data, dict):
        objects = [b for b in branches if "properties" in b or "additionalProperties" in b]
        for key in list(data):
            subs = []
            removable = False
            for branch in objects:
                props = branch.get("properties")
                if isinstance(props, dict) and key in props:
                    subs.append(props[key])
                    removable = removable or (
                        data[key] is None
                        and key not in branch.get("required", ())
                        and not _admits_null(props[key], defs)
                    )
                elif isinstance(branch.get("additionalProperties"), dict):
                    subs.append(branch["additionalProperties"])
            if removable:
                del data[key]
                changed = True
            else:
                for sub in subs:
                    changed = _drop_nulls(sub, data[key], defs) or changed
    elif isinstance(data, list):
        arrays = [b for b in branches if "items" in b or "prefixItems" in b]
        for i, item in enumerate(data):
            for branch in arrays:
                prefix = branch.get("prefixItems")
                positional = isinstance(prefix, list) and i < len(prefix)
                sub = prefix[i] if positional else branch.get("items")  # type: ignore[index]
                if isinstance(sub, dict):
                    changed = _drop_nulls(sub, item, defs) or changed
    return changed


def _branches(schema: Any, defs: dict[str, Any]) -> list[dict[str, Any]]:
    """The alternatives ``schema`` allows, with ``$ref`` resolved and ``anyOf``/``oneOf``/
    ``allOf`` flattened (a loose reading: enough to find objects, arrays and null)."""
    out: list[dict[str, Any]] = []
    seen: set[int] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            stack.append(defs.get(ref.removeprefix("#/$defs/")))
        combined = False
        for key in ("anyOf", "oneOf", "allOf"):
            if isinstance(node.get(key), list):
                stack.extend(node[key])
                combined = True
        if not combined and ref is None:
            out.append(node)
    return out


_TYPE_FREE = frozenset({"description", "default", "examples", "title", "deprecated"})


def _admits_null(schema: Any, defs: dict[str, Any]) -> bool:
    for branch in _branches(schema, defs):
        kind = branch.get("type")
        if kind == "null" or (isinstance(kind, list) and "null" in kind):
            return True
        if "const" in branch and branch["const"] is None:
            return True
        if None in (branch.get("enum") or ()):
            return True
        if kind is None and set(branch) <= _TYPE_FREE:  # Any
            return True
    return False
