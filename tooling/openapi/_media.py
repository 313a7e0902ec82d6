"""Media types and bodies: which content of a request body a tool sends, an object
body's properties, and the schema of what the model receives for an answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

from ._schemas import JSONSchema, SchemaConverter

__all__: list[str] = []

_FORM: Final = "application/x-www-form-urlencoded"

_MULTIPART: Final = "multipart/form-data"

BodyKind = Literal["json", "form", "multipart", "text"]


def is_binary_schema(schema: Any) -> bool:
    """A value only bytes can be (``format: binary``, or 3.1's ``contentMediaType``)."""
    return isinstance(schema, dict) and (
        schema.get("format") == "binary" or "contentMediaType" in schema
    )


def is_json_media_type(media_type: str) -> bool:
    """``application/json``, ``application/problem+json``, ``...; charset=utf-8``."""
    essence = media_type.split(";", 1)[0].strip().lower()
    return essence == "application/json" or (
        essence.startswith("application/") and essence.endswith("+json")
    )


def is_text_media_type(media_type: str) -> bool:
    essence = media_type.split(";", 1)[0].strip().lower()
    return (
        essence.startswith("text/")
        or essence in ("application/xml", "*/*")
        or (essence.startswith("application/") and essence.endswith("+xml"))
    )


def choose_body(content: Mapping[str, Any]) -> tuple[BodyKind, str] | None:
    media_types = [str(m) for m in content]
    for media_type in media_types:
        if is_json_media_type(media_type):
            return "json", media_type
    for media_type in media_types:
        if media_type.split(";", 1)[0].strip().lower() == _FORM:
            return "form", media_type
    for media_type in media_types:
        if media_type.split(";", 1)[0].strip().lower() == _MULTIPART:
            return "multipart", media_type
    for media_type in media_types:
        if is_text_media_type(media_type):
            return "text", media_type
    return None


def object_properties(
    schema: Any, converter: SchemaConverter
) -> tuple[dict[str, Any], set[str]] | None:
    """An object body's properties and its required names, or None for another body (an
    array, a scalar, a ``oneOf``/``anyOf``, a free-form object...). ``allOf`` parts that
    are all objects are merged; read-only properties (set by the server) are left out."""
    schema = converter.resolve_local(schema)
    if not isinstance(schema, dict):
        return None
    parts = [schema]
    if "allOf" in schema:
        parts = [converter.resolve_local(p) for p in schema["allOf"]]
        rest = {k: v for k, v in schema.items() if k != "allOf"}
        if set(rest) - {"type", "description", "title", "properties", "required"}:
            return None
        parts.append(rest)
    properties: dict[str, Any] = {}
    required: set[str] = set()
    for part in parts:
        if not isinstance(part, dict):
            return None
        if part.keys() & {"oneOf", "anyOf", "not", "$ref", "allOf", "if"}:
            return None
        kind = part.get("type", "object")
        if kind != "object":
            return None
        for name, sub in (part.get("properties") or {}).items():
            if isinstance(sub, dict) and sub.get("readOnly") is True:
                continue
            properties[name] = sub if name not in properties else {"allOf": [properties[name], sub]}
        required.update(n for n in part.get("required") or () if isinstance(n, str))
    return properties, required


def _is_object(schema: Any, defs: dict[str, Any], depth: int = 0) -> bool:
    """Whether every value ``schema`` allows is a JSON object (so it is sent as it is)."""
    if isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and depth < 8:
        return _is_object(defs.get(schema["$ref"].removeprefix("#/$defs/")), defs, depth + 1)
    if not isinstance(schema, dict):
        return False
    if schema.get("type") == "object" or ("properties" in schema and "type" not in schema):
        return True
    if isinstance(schema.get("allOf"), list):
        return any(_is_object(p, defs, depth + 1) for p in schema["allOf"])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return all(_is_object(p, defs, depth + 1) for p in schema[key])
    return False


def answer_schema(schema: Any, defs: dict[str, Any]) -> JSONSchema:
    """What the model receives: an object answer as it is, any other as ``{"result": ...}``."""
    if _is_object(schema, defs):
        out: JSONSchema = dict(schema)
    else:
        out = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
    if defs:
        out["$defs"] = defs
    return out
