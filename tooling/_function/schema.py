"""The canonical JSON Schemas of a tool: pydantic's, without titles, as the model sees them."""

from __future__ import annotations

import functools
import types
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter
from pydantic.dataclasses import is_pydantic_dataclass
from pydantic.errors import PydanticSchemaGenerationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from .._jsonschema import is_object_schema, strip_titles
from .._types import Blob, FileRef

__all__: list[str] = []


class _QuickGenerator(GenerateJsonSchema):
    """Pydantic's generator, whose table of handlers is looked up once per class.

    Pydantic rebuilds the table (a walk over every core schema type) for each generator,
    and a tool's schemas take one or two: a fifth of declaring a small tool.
    """

    _handlers: dict[type, dict[Any, Any]] = {}  # noqa: RUF012 - per class, filled once

    def build_schema_type_to_method(self) -> dict[Any, Any]:
        unbound = _QuickGenerator._handlers.get(type(self))
        if unbound is None:
            bound = super().build_schema_type_to_method()
            _QuickGenerator._handlers[type(self)] = {
                key: getattr(method, "__func__", method) for key, method in bound.items()
            }
            return bound
        return {key: types.MethodType(func, self) for key, func in unbound.items()}


class ArgsSchemaGenerator(_QuickGenerator):
    """Pydantic's generator, with plain JSON defaults written as they are.

    Pydantic builds a ``TypeAdapter`` to encode each default; for the ``str``/``int``/
    ``bool``/``None`` defaults most tools have, that was a third of the schema's cost.
    """

    def encode_default(self, dft: Any) -> Any:
        if plain_json(dft):
            return dft
        return super().encode_default(dft)


def plain_json(value: Any, depth: int = 0) -> bool:
    kind = type(value)
    if kind in (str, int, bool) or value is None:
        return True
    if kind is float:
        return value == value and value not in (float("inf"), float("-inf"))
    if depth > 8:
        return False
    if kind is list:
        return all(plain_json(v, depth + 1) for v in value)
    if kind is dict:
        return all(type(k) is str and plain_json(v, depth + 1) for k, v in value.items())
    return False


def parameters_schema(args_model: type[BaseModel]) -> dict[str, Any]:
    """Validation-mode schema of the arguments (draft 2020-12), root closed, no titles."""
    schema = strip_titles(
        args_model.model_json_schema(mode="validation", schema_generator=ArgsSchemaGenerator)
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
    if is_object_schema(schema, defs):
        out = schema
    elif "anyOf" in schema and any(is_object_schema(s, defs) for s in schema["anyOf"]):
        objects = [s for s in schema["anyOf"] if is_object_schema(s, defs)]
        others = [s for s in schema["anyOf"] if not is_object_schema(s, defs)]
        out = {"anyOf": [*objects, _wrap(others[0] if len(others) == 1 else {"anyOf": others})]}
    else:
        out = _wrap(schema)
    if defs:
        out["$defs"] = defs
    return out


# How bytes reach the model (pydantic's ``ser_json_bytes``) -> the JSON Schema
# ``contentEncoding`` that says so (RFC 4648 names); UTF-8 text is just a string.
_BYTES_ENCODINGS: dict[str, str | None] = {"base64": "base64url", "hex": "base16", "utf8": None}


class _ResponseSchemaGenerator(_QuickGenerator):
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
