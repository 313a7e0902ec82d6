"""Gemini: a ``google.genai.types.FunctionDeclaration``.

Two forms (rules checked 2026-11-29 against google-genai 3.6 and the public pages below):

* Default: ``parameters_json_schema`` carries the tool's JSON Schema as it is (``$defs``,
  ``$ref``, ``anyOf``, ``additionalProperties`` included), and ``response_json_schema``
  the response schema when the tool has one. ``FunctionDeclaration`` documents both as
  JSON Schema, mutually exclusive with ``parameters``/``response``.
  https://ai.google.dev/api/caching#FunctionDeclaration

* ``legacy=True``: ``parameters`` is a ``google.genai.types.Schema``, "a select subset of
  an OpenAPI 3.0 schema object" (https://ai.google.dev/api/caching#Schema,
  https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/Schema). Its
  keywords, and the only ones this exporter emits (:data:`LEGACY_KEYS`): ``type``,
  ``format``, ``description``, ``nullable``, ``enum`` (strings only), ``items``,
  ``properties``, ``required``, ``minItems``, ``maxItems``, ``minimum``, ``maximum``,
  ``minLength``, ``maxLength``, ``pattern``, ``anyOf``, ``default``, ``example``,
  ``minProperties``, ``maxProperties`` (the Schema also has ``title`` and
  ``propertyOrdering``, not used here). ``format`` may be any string. This form sets
  ``parameters`` only: no ``response``/``response_json_schema``.

How the JSON Schema becomes that subset (each change that narrows or widens what the
schema says is recorded as an ``export.lossy`` diagnostic naming the top-level parameter):

* ``$ref`` is inlined and ``$defs`` dropped; sibling keywords of a ``$ref`` override the
  inlined definition's (an outer ``description`` is the more specific one). Siblings
  qualify the referenced schema: a described model or enum parameter is the model or
  enum with that description, never widened to "any value".
* A recursive reference cannot be inlined: the cycle is cut where a definition refers to
  itself (directly or not) with ``{"type": <its type>, "description": "... not expanded"}``
  (lossy).
* ``anyOf`` with a ``{"type": "null"}`` branch, a ``type`` list with ``"null"`` and an
  ``enum`` holding ``null`` become ``nullable: true``; one remaining branch is merged in,
  several stay an ``anyOf``. ``oneOf`` becomes ``anyOf`` (lossy unless it carries a
  ``discriminator``, whose branches exclude each other anyway); ``allOf`` is merged.
* ``enum``/``const``: string values give ``{"type": "string", "format": "enum", "enum":
  [...]}``; integer values use the integer form documented for ``Schema.enum`` (google-genai,
  Vertex reference): ``{"type": "integer", "format": "enum", "enum": ["1", "2"]}`` (values
  as strings, the type stays integer, so the model still sends numbers). Values of
  other types (floats, a single boolean, objects) cannot be listed: the type is kept, the
  ``enum`` dropped and the allowed values written into the ``description`` (lossy). Mixed
  kinds give an ``anyOf`` of those forms.
* ``prefixItems`` (tuples) becomes ``items``: the one schema when every position has the
  same (lossless with ``minItems``/``maxItems``), else the ``anyOf`` of the positions'
  schemas (lossy: positions are lost).
* ``exclusiveMinimum``/``exclusiveMaximum`` become ``minimum``/``maximum``: exact for
  integers (``> 0`` is ``>= 1``), lossy for numbers (the bound becomes inclusive).
* ``additionalProperties: false`` (and ``true``/``{}``) is dropped silently: a legacy
  object lists its properties and the model produces those; a schema for extra values
  (``dict[str, int]``) is dropped with a diagnostic. Empty ``properties``/``required``
  are left out (the API rejects an empty ``properties`` on an object).
* A property schema with no type (``Any``) is narrowed to ``{"anyOf": [string, number,
  boolean], "nullable": true}`` (lossy): whether the API takes a typeless schema here is
  not documented, and a scalar or null is what a model can always send.
* ``examples`` gives ``example`` (its first item). Annotations with no effect on values
  (``title``, ``$comment``, ``deprecated``, ``readOnly``, ...) are dropped silently; any
  other keyword (``multipleOf``, ``uniqueItems``, ``patternProperties``,
  ``propertyNames``, ``not``, ...) is dropped with a diagnostic.

``google.genai`` is imported inside :func:`export` only.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, Final, TypeGuard

from .. import _jsonschema as ops
from .. import _schema_rewrites as rewrites
from .._jsonschema import JSONSchema
from .._types import Diagnostic
from .names import provider_name

if TYPE_CHECKING:
    from google.genai import types as genai_types

    from .._base import BaseTool


#: Every keyword a legacy (OpenAPI-subset) schema produced here may contain.
LEGACY_KEYS: Final = frozenset(
    {
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
)

# Copied as they are.
_COPIED: Final = frozenset(
    {
        "format",
        "description",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
        "minProperties",
        "maxProperties",
        "example",
    }
)

# Dropped without a diagnostic: they describe, they do not constrain (or are handled).
_SILENT: Final = ops.ANNOTATIONS | {"title"}

# Inlining shared definitions can multiply a schema's size; past this many nodes the
# export is refused rather than produce a declaration no model would accept.
_MAX_NODES: Final = 20_000

_TARGET: Final = "Gemini legacy schema"


def export(
    tool: BaseTool, *, legacy: bool = False
) -> tuple[genai_types.FunctionDeclaration, list[Diagnostic]]:
    """The tool as a ``FunctionDeclaration``, with the diagnostics found on the way."""
    from google.genai import types

    if not legacy:
        response = tool.response_json_schema
        declaration = types.FunctionDeclaration(
            name=provider_name(tool.name, "gemini"),
            description=tool.description or None,
            # The spec's schemas as they are: shared and read-only, like the export itself
            # (a copy per export doubled a declared tool's memory).
            parameters_json_schema=tool.parameters_json_schema,
            response_json_schema=response,
        )
        return declaration, []

    try:
        parameters, diagnostics = legacy_schema(tool.parameters_json_schema)
    except ValueError as exc:
        raise ValueError(
            f"cannot export tool {tool.name!r} as a legacy Gemini schema: {exc}"
        ) from exc
    declaration = types.FunctionDeclaration(
        name=provider_name(tool.name, "gemini"),
        description=tool.description or None,
        parameters=types.Schema.model_validate(parameters),
    )
    return declaration, diagnostics


def legacy_schema(parameters: JSONSchema) -> tuple[JSONSchema, list[Diagnostic]]:
    """The OpenAPI-subset dict for a parameters schema, and what could not be said.

    The result uses only :data:`LEGACY_KEYS`; ``parameters`` is not changed.
    """
    converter = _LegacyConverter(parameters)
    root = ops.strip_keys(parameters, {"$defs", "definitions"})
    out = converter.convert(root, None)
    out.setdefault("type", "object")
    return out, converter.recorder.diagnostics


#: Keywords that give a schema a shape; a schema with none of them accepts any value.
_TYPED_KEYS = frozenset(
    {
        "type",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "enum",
        "const",
        "properties",
        "items",
        "prefixItems",
        "not",
    }
)


class _LegacyConverter:
    def __init__(self, root: JSONSchema) -> None:
        self.root = root
        defs = root.get("$defs")
        self.defs: dict[str, Any] = defs if isinstance(defs, dict) else {}
        self.recursive = ops.recursive_defs(root)
        self.recorder = rewrites.LossRecorder(_TARGET)
        self.expanding: list[str] = []
        self.nodes = 0

    def lossy(self, param: str | None, what: str) -> None:
        inside = f" (in {self.expanding[-1]})" if self.expanding else ""
        self.recorder.lossy(param, what + inside)

    def convert(self, node: Any, param: str | None) -> JSONSchema:
        self.nodes += 1
        if self.nodes > _MAX_NODES:
            raise ValueError(f"the schema exceeds {_MAX_NODES} nodes once references are inlined")
        if node is True:
            return {}
        if not isinstance(node, dict):
            self.lossy(param, "a schema that accepts no value cannot be expressed; it was dropped")
            return {}
        if "allOf" in node:
            node, conflict = rewrites.merge_all_of(node)
            if conflict:
                self.lossy(param, "allOf with conflicting keywords was merged, widening it")
        if "oneOf" in node:
            if "discriminator" not in node:
                self.lossy(param, "oneOf became anyOf (one-and-only-one is not expressible)")
            node = {
                **ops.strip_keys(node, {"oneOf"}),
                "anyOf": [*node.get("anyOf", []), *node["oneOf"]],
            }
        core, nullable = rewrites.split_null(node)
        if nullable:
            out = self.convert(core, param)
            out["nullable"] = True
            return out
        if "$ref" in node:
            return self._inline(node, param)
        if param is not None and not _TYPED_KEYS.intersection(node):  # not the root
            return self._any(node, param)
        return self._plain(node, param)

    def _any(self, node: JSONSchema, param: str | None) -> JSONSchema:
        # A schema without a type (``Any``) is not reliably accepted in this subset: say
        # what a model can always send (a scalar or null), and say that it was narrowed.
        self.lossy(
            param,
            "any JSON value cannot be expressed; narrowed to a string, number, boolean or null",
        )
        out: JSONSchema = {
            "anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}],
            "nullable": True,
        }
        if isinstance(node.get("description"), str):
            out["description"] = node["description"]
        return out

    def _inline(self, node: JSONSchema, param: str | None) -> JSONSchema:
        ref = node["$ref"]
        if not isinstance(ref, str):
            raise ValueError(f"$ref must be a string, not {ref!r}")
        siblings = ops.strip_keys(node, {"$ref"})
        name = ops.ref_name(ref)
        target = (
            self.defs[name]
            if name is not None and name in self.defs
            else ops.resolve_ref(self.root, ref)
        )
        label = name or ref
        cut = label in self.expanding and (name is None or name in self.recursive)
        if cut:
            typ = target.get("type") if isinstance(target, dict) else None
            out: JSONSchema = {
                "type": typ if isinstance(typ, str) else "object",
                "description": f"A {label} (recursive reference, not expanded).",
            }
            self.lossy(param, f"recursive reference to {label} was cut: its fields are not shown")
        else:
            self.expanding.append(label)
            try:
                out = self.convert(target, param)
            finally:
                self.expanding.pop()
        if siblings:
            # Keywords next to a ``$ref`` (a description, a default) qualify the referenced
            # schema; on their own they would read as a schema that accepts any value.
            typed = _TYPED_KEYS.intersection(siblings)
            extra = self.convert(siblings, param) if typed else self._plain(siblings, param)
            if cut and "description" in extra:
                extra["description"] = f"{extra['description']} {out['description']}"
            out.update(extra)
        return out

    def _plain(self, node: JSONSchema, param: str | None) -> JSONSchema:
        out: JSONSchema = {}
        if "prefixItems" in node:
            node, lost = rewrites.tuple_to_items(node)
            if lost:
                self.lossy(param, "tuple positions were merged into one item schema (anyOf)")
        typ = node.get("type")
        if isinstance(typ, list):
            if len(typ) == 1:
                typ = typ[0]
            else:
                branches = [{"type": t} for t in typ]
                rest = ops.strip_keys(node, {"type"})
                return self.convert({**rest, "anyOf": branches}, param)
        if isinstance(typ, str):
            out["type"] = typ
        for key, value in node.items():
            if key in _COPIED:
                out[key] = value
            elif key == "properties" and isinstance(value, dict):
                props = {
                    k: self.convert(v, k if param is None else param) for k, v in value.items()
                }
                if props:
                    out["properties"] = props
            elif key == "required" and isinstance(value, list):
                declared = node.get("properties") or {}
                required = [r for r in value if r in declared]
                if required:
                    out["required"] = required
            elif key == "items":
                if isinstance(value, list):
                    return self._plain(
                        {**ops.strip_keys(node, {"items"}), "prefixItems": value}, param
                    )
                out["items"] = self.convert(value, param)
            elif key == "anyOf" and isinstance(value, list):
                out["anyOf"] = [self.convert(b, param) for b in value]
            elif key == "additionalProperties":
                if isinstance(value, dict) and ops.strip_keys(value, ops.ANNOTATION_KEYS):
                    self.lossy(param, "the schema of extra keys (additionalProperties) was dropped")
            elif key == "default":
                if value is not None:
                    out["default"] = value
            elif key == "examples":
                if isinstance(value, list) and value and "example" not in node:
                    out["example"] = value[0]
            elif key == "nullable":
                if value is True:
                    out["nullable"] = True
            elif key == "uniqueItems":
                if value is True:
                    self.lossy(param, "uniqueItems was dropped (items may repeat)")
            elif key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
                continue  # handled with _bounds below
            elif key in ("enum", "const", "type", "prefixItems") or key in _SILENT:
                continue
            else:
                self.lossy(param, f"{key} was dropped")
        self._bounds(node, out, param)
        if "enum" in node or "const" in node:
            out = self._enum(node, out, param)
        return out

    def _bounds(self, node: JSONSchema, out: JSONSchema, param: str | None) -> None:
        integer = node.get("type") == "integer"
        for incl, excl, lower in (
            ("minimum", "exclusiveMinimum", True),
            ("maximum", "exclusiveMaximum", False),
        ):
            bounds: list[float] = []
            value = node.get(incl)
            if _is_number(value):
                bounds.append(value)
            value = node.get(excl)
            if _is_number(value) and math.isfinite(value):
                if integer:
                    bounds.append(math.floor(value) + 1 if lower else math.ceil(value) - 1)
                else:
                    bounds.append(value)
                    sign = ">" if lower else "<"
                    self.lossy(param, f"{excl} (value {sign} {value}) became the inclusive {incl}")
            elif excl in node:
                self.lossy(param, f"{excl} was dropped")
            if bounds:
                out[incl] = max(bounds) if lower else min(bounds)

    def _enum(self, node: JSONSchema, out: JSONSchema, param: str | None) -> JSONSchema:
        if not isinstance(node.get("enum", []), list):
            self.lossy(param, "a malformed enum was dropped")
            return out
        values = list(node["enum"]) if "enum" in node else [node["const"]]
        groups: dict[str, list[Any]] = {}
        for value in values:
            groups.setdefault(ops.json_type_of(value), []).append(value)
        nullable = groups.pop("null", None) is not None
        forms: list[JSONSchema] = []
        unlisted: list[Any] = []
        for kind, members in groups.items():
            if kind == "string":
                forms.append({"type": "string", "format": "enum", "enum": members})
            elif kind == "integer":
                forms.append(
                    {"type": "integer", "format": "enum", "enum": [str(v) for v in members]}
                )
            elif kind == "boolean" and len(set(members)) == 2:
                forms.append({"type": "boolean"})
            else:
                forms.append({"type": kind})
                unlisted.extend(members)
        base = ops.strip_keys(out, {"type", "format", "enum"}) if forms else dict(out)
        if len(forms) == 1:
            result = {**base, **forms[0]}
            if "format" in out and out["format"] != "enum" and forms[0].get("format") is None:
                result["format"] = out["format"]
        elif forms:
            result = {**base, "anyOf": forms}
        else:
            result = base
        if nullable:
            result["nullable"] = True
        if unlisted:
            allowed = ", ".join(json.dumps(v, default=str) for v in values if v is not None)
            result = rewrites.describe(result, f"Allowed values: {allowed}.")
            self.lossy(
                param, "non-string enum values cannot be listed; they are named in the description"
            )
        return result


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)
