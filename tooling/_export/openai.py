"""OpenAI: the Chat Completions tool dict.

``{"type": "function", "function": {"name", "description", "parameters", "strict"}}``.

Non-strict (the default): ``parameters`` is a copy of the tool's JSON Schema, unchanged;
OpenAI accepts any JSON Schema there and the model follows it on a best-effort basis.

Strict (``strict=True``): the model's arguments are constrained to the schema, which must
stay inside the Structured Outputs subset. Rules checked 2026-11-29 against
https://platform.openai.com/docs/guides/structured-outputs#supported-schemas and
https://platform.openai.com/docs/guides/function-calling#strict-mode:

* types: string, number, integer, boolean, object, array, null (also in ``type`` lists),
  ``enum``, ``const``, ``anyOf`` (not at the root), ``$defs`` with ``$ref`` (recursion
  allowed); ``description`` and ``title`` are kept.
* every object has ``additionalProperties: false`` and lists every property in
  ``required``; an optional field is written as a union with ``null``.
* supported constraints: strings ``pattern`` and ``format`` (date-time, time, date,
  duration, email, hostname, ipv4, ipv6, uuid); numbers ``multipleOf``, ``minimum``,
  ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``; arrays ``minItems``,
  ``maxItems``. Not supported: ``default``, ``minLength``/``maxLength``, other formats,
  ``uniqueItems``, ``prefixItems``, ``allOf``, ``not``, ``if``/``then``/``else``,
  ``patternProperties``, ``propertyNames``, ``minProperties``/``maxProperties``, ...
* limits (not checked here): 5000 object properties, 10 levels of nesting, 1000 enum
  values in total.

What this exporter does in strict mode (each change that narrows or widens what the
schema says is an ``export.lossy`` diagnostic naming the top-level parameter):

* Every object is closed and every property required. A property that was optional
  becomes nullable (``anyOf: [X, {"type": "null"}]`` unless X admits null already): a
  strict model then sends ``null`` for it, and ``run()`` treats an explicit ``null`` for
  a parameter whose type does not admit None as "use the default". This applies to the
  fields of nested models too.
* ``default`` is removed everywhere; a non-null default of a property is kept for the
  model in its description ("Default: 5; null means the default.").
* A ``$ref`` has no sibling keywords: a described reference becomes ``{"anyOf": [{"$ref":
  ...}], "description": ...}`` (not inlined, so shared and recursive definitions stay
  shared). Only definitions that are referenced are kept in ``$defs``.
* An open mapping (``dict[str, int]``, ``dict``, an object with no declared properties,
  ``additionalProperties`` a schema or ``true``) cannot be expressed: every object must be
  closed, and a closed object without properties accepts only ``{}``. Changing it into,
  say, a list of key/value pairs would change the arguments the tool receives, so the
  export is **refused** with a ``ValueError`` naming the tool and the parameter (use a
  model or ``TypedDict`` there, or ``strict=False``). A model that also allows extra keys
  (``extra="allow"``) is closed instead, with a diagnostic: what it declares still works.
* A schema with no type at all (``Any``) is narrowed to ``anyOf`` string, number,
  boolean, null, or an array of those (lossy: objects and nested arrays are left out).
* ``prefixItems`` (tuples) becomes ``items`` (the ``anyOf`` of the positions' schemas when
  they differ, lossy); ``oneOf`` becomes ``anyOf`` (lossy unless it has a
  ``discriminator``); ``allOf`` is merged; unsupported formats and constraints are
  removed with a diagnostic; pure annotations (``examples``, ``deprecated``, ...) are
  removed silently.

The strict ``parameters`` are a fixed point of the OpenAI Agents SDK's
``agents.strict_schema.ensure_strict_json_schema``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from .. import _jsonschema as ops
from .. import _schema_rewrites as rewrites
from .._jsonschema import MISSING, JSONSchema
from .._types import Diagnostic
from .names import provider_name

if TYPE_CHECKING:
    from .._base import BaseTool


#: String formats strict mode accepts.
STRICT_FORMATS: Final = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)

# Kept as they are in strict mode.
_COPIED: Final = frozenset(
    {
        "description",
        "title",
        "enum",
        "const",
        "pattern",
        "multipleOf",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
    }
)

# Removed silently: annotations, and keywords handled elsewhere.
_SILENT: Final = ops.ANNOTATIONS | {"default", "example", "examples"}

# Any JSON value strict mode can describe without an open object.
_SCALARS: Final = ({"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"})

_TARGET: Final = "OpenAI strict schema"

# A property default longer than this (as JSON) is not spelled out in the description.
_MAX_DEFAULT_NOTE: Final = 200


class _OpenMapping(ValueError):
    def __init__(self, param: str | None, what: str) -> None:
        super().__init__(what)
        self.param = param
        self.what = what


def export(tool: BaseTool, *, strict: bool = False) -> tuple[dict[str, Any], list[Diagnostic]]:
    """The tool as a Chat Completions tool dict, with the diagnostics found on the way.

    Raises ``ValueError`` when ``strict`` and the parameters hold an open mapping (or a
    ``$ref`` other than ``#`` and ``#/$defs/<name>``).
    """
    diagnostics: list[Diagnostic] = []
    if strict:
        try:
            parameters, diagnostics = strict_schema(tool.parameters_json_schema)
        except _OpenMapping as exc:
            where = f"parameter {exc.param!r}" if exc.param is not None else "its parameters"
            raise ValueError(
                f"cannot export tool {tool.name!r} in OpenAI strict mode: {where} is {exc.what}; "
                "strict mode requires every object to list its properties (closed), so an "
                "open mapping cannot be expressed without changing the arguments. Use a "
                "pydantic model or TypedDict for it, or export with strict=False."
            ) from exc
        except ValueError as exc:
            raise ValueError(
                f"cannot export tool {tool.name!r} in OpenAI strict mode: {exc}"
            ) from exc
    else:  # the spec's schema as it is: shared and read-only, like the export itself
        parameters = tool.parameters_json_schema
    function: dict[str, Any] = {
        "name": provider_name(tool.name, "openai"),
        "description": tool.description,
        "parameters": parameters,
        "strict": strict,
    }
    return {"type": "function", "function": function}, diagnostics


def strict_schema(parameters: JSONSchema) -> tuple[JSONSchema, list[Diagnostic]]:
    """The strict-mode form of a parameters schema, and what could not be said.

    Raises ``ValueError`` (naming the parameter) for an open mapping.
    """
    converter = _StrictConverter(parameters)
    return converter.convert_root(), converter.recorder.diagnostics


class _StrictConverter:
    def __init__(self, root: JSONSchema) -> None:
        self.root = root
        defs = root.get("$defs")
        self.defs_in: dict[str, Any] = defs if isinstance(defs, dict) else {}
        self.defs_out: dict[str, JSONSchema] = {}
        self.started: set[str] = set()
        self.recorder = rewrites.LossRecorder(_TARGET)

    def convert_root(self) -> JSONSchema:
        root = ops.strip_keys(self.root, {"$defs", "definitions"})
        if "type" not in root and "properties" not in root:
            root = {**root, "type": "object"}
        if root.get("type") == "object" and "properties" not in root:
            if root.get("additionalProperties", False) is not False:
                raise _OpenMapping(None, "an open mapping (no declared properties)")
            root = {**root, "properties": {}}
        out = self.convert(root, None)
        if out.get("type") != "object" or "anyOf" in out:
            raise ValueError("the parameters schema must be an object")
        if self.defs_out:
            out["$defs"] = {n: self.defs_out[n] for n in self.defs_in if n in self.defs_out}
        return out

    def lossy(self, param: str | None, what: str) -> None:
        self.recorder.lossy(param, what)

    # -- nodes ---------------------------------------------------------------------------

    def convert(self, node: Any, param: str | None) -> JSONSchema:
        if node is True:
            return self._any({}, param)
        if not isinstance(node, dict):
            self.lossy(param, "a schema that accepts no value was widened to any value")
            return self._any({}, param)
        if "allOf" in node:
            node, conflict = rewrites.merge_all_of(node)
            if conflict:
                self.lossy(param, "allOf with conflicting keywords was merged, widening it")
        if "oneOf" in node:
            if "discriminator" not in node:
                self.lossy(param, "oneOf became anyOf (one-and-only-one is not expressible)")
            branches = [*node.get("anyOf", []), *node["oneOf"]]
            node = {**ops.strip_keys(node, {"oneOf"}), "anyOf": branches}
        if "$ref" in node:
            return self._ref(node, param)
        if isinstance(node.get("items"), list):  # draft-04 tuple form
            node = {**ops.strip_keys(node, {"items"}), "prefixItems": node["items"]}
        if "prefixItems" in node:
            node, lost = rewrites.tuple_to_items(node)
            if lost:
                self.lossy(param, "tuple positions were merged into one item schema (anyOf)")

        out: JSONSchema = {}
        nullable = False
        if _is_object(node):
            self._object(node, out, param)
        for key, value in node.items():
            if key in ("properties", "required", "additionalProperties"):
                continue  # _object
            if key == "type":
                out.setdefault("type", value)
            elif key in _COPIED:
                out[key] = value
            elif key == "items":
                out["items"] = self.convert(value, param)
            elif key == "anyOf" and isinstance(value, list):
                out["anyOf"] = [self.convert(b, param) for b in value]
            elif key == "format":
                if value in STRICT_FORMATS:
                    out["format"] = value
                else:
                    self.lossy(param, f"format {value!r} is not supported and was dropped")
            elif key == "nullable":
                nullable = value is True
            elif key == "uniqueItems":
                if value is True:
                    self.lossy(param, "uniqueItems was dropped (items may repeat)")
            elif key in _SILENT:
                continue
            else:
                self.lossy(param, f"{key} is not supported and was dropped")
        if not (out.keys() & {"type", "anyOf", "$ref", "enum", "const", "properties", "items"}):
            out = self._any(out, param)
        elif out.get("type") == "array" and "items" not in out:
            out["items"] = self._any({}, param)
        return self._nullable(out) if nullable else out

    def _object(self, node: JSONSchema, out: JSONSchema, param: str | None) -> None:
        properties = node.get("properties")
        extra = node.get("additionalProperties", MISSING)
        if not isinstance(properties, dict):
            if extra is False:
                out["type"] = node.get("type", "object")
                out["additionalProperties"] = False
                return
            kind = "an open mapping"
            if isinstance(extra, dict) and extra:
                kind += " (additionalProperties is a schema: a dict[str, ...])"
            else:
                kind += " (an object with no declared properties)"
            raise _OpenMapping(param, kind)
        if extra is not MISSING and extra is not False:
            self.lossy(param, "extra keys (additionalProperties) are no longer accepted")
        required = node.get("required")
        required_set = set(required) if isinstance(required, list) else set()
        out["type"] = node.get("type", "object")
        out["properties"] = {
            name: self._property(sub, name in required_set, name if param is None else param)
            for name, sub in properties.items()
        }
        out["required"] = list(properties)
        out["additionalProperties"] = False

    def _property(self, schema: Any, required: bool, param: str) -> JSONSchema:
        default = schema.get("default", MISSING) if isinstance(schema, dict) else MISSING
        out = self.convert(schema, param)
        admitted_null = ops.admits_null(out, self.root)
        if not required and not admitted_null:
            out = self._nullable(out)
        if default is not MISSING and default is not None:
            text = json.dumps(default, ensure_ascii=False, sort_keys=True, default=str)
            note = f"Default: {text}" if len(text) <= _MAX_DEFAULT_NOTE else "Has a default value"
            if not required and not admitted_null:
                note += "; null means the default."
            else:
                note += "."
            out = _with_description(out, note)
        return out

    def _ref(self, node: JSONSchema, param: str | None) -> JSONSchema:
        ref = node["$ref"]
        if not isinstance(ref, str):
            raise ValueError(f"$ref must be a string, not {ref!r}")
        name = ops.ref_name(ref)
        if name is not None and name in self.defs_in:
            self._definition(name, param)
        elif ref != "#":
            # The strict form rebuilds the document, so only references it keeps resolve.
            raise ValueError(f"unsupported $ref {ref!r}: expected '#' or '#/$defs/<name>'")
        kept: JSONSchema = {}
        for key, value in node.items():
            if key in ("description", "title"):
                kept[key] = value
            elif key == "$ref" or key in _SILENT:
                continue
            else:
                self.lossy(param, f"{key} next to a $ref is not supported and was dropped")
        if kept:
            return {"anyOf": [{"$ref": ref}], **kept}
        return {"$ref": ref}

    def _definition(self, name: str, param: str | None) -> None:
        if name in self.started:
            return
        self.started.add(name)
        self.defs_out[name] = self.convert(self.defs_in[name], param)

    def _nullable(self, schema: JSONSchema) -> JSONSchema:
        if ops.admits_null(schema, self.root):
            return schema
        if "anyOf" in schema:
            return {**schema, "anyOf": [*schema["anyOf"], {"type": "null"}]}
        notes = {k: v for k, v in schema.items() if k in ("description", "title")}
        core = ops.strip_keys(schema, notes)
        return {"anyOf": [core, {"type": "null"}], **notes}

    def _any(self, annotations: JSONSchema, param: str | None) -> JSONSchema:
        self.lossy(
            param,
            "any JSON value cannot be expressed; narrowed to a string, number, boolean, null "
            "or an array of those",
        )
        array = {"type": "array", "items": {"anyOf": [dict(s) for s in _SCALARS]}}
        return {**annotations, "anyOf": [*(dict(s) for s in _SCALARS), array]}


def _is_object(node: JSONSchema) -> bool:
    typ = node.get("type")
    if typ == "object" or (isinstance(typ, list) and "object" in typ):
        return True
    return "properties" in node or (typ is None and "additionalProperties" in node)


def _with_description(schema: JSONSchema, text: str) -> JSONSchema:
    if "$ref" in schema:
        schema = {"anyOf": [schema]}
    return rewrites.describe(schema, text)
