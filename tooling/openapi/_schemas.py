"""OpenAPI Schema Objects to JSON Schema (draft 2020-12), as a tool's schemas are written.

What changes, and why:

* ``$ref`` is resolved against the document (or the file it sits in). A reference that can
  reach itself (a recursive model) becomes ``{"$ref": "#/$defs/<Name>"}`` with the model
  once under the root's ``$defs``; any other reference is inlined, its sibling
  keywords (a description) laid over it. A loop of bare references is an error.
* OpenAPI 3.0 dialect: ``nullable: true`` becomes an ``anyOf`` with a ``null`` branch (the
  form pydantic writes; annotations stay outside it); boolean ``exclusiveMinimum`` and
  ``exclusiveMaximum`` become the numeric 2020-12 form; ``example`` is dropped.
* Kept as they are: ``oneOf``/``anyOf``/``allOf``/``not``, ``enum``, ``const``, ``format``
  (an unknown format is noted, never refused: formats annotate), ``default``,
  constraints, ``readOnly``/``writeOnly``, ``deprecated``; ``discriminator`` keeps only its
  ``propertyName`` (its mapping names references that no longer exist once inlined).
* Dropped: ``xml``, ``externalDocs`` and ``x-`` extensions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from .._types import Diagnostic
from ._document import Document, SpecError, pointer

__all__: list[str] = []

JSONSchema = dict[str, Any]

# Keywords whose value is one subschema, a list of them, or a map of them.
_ONE: Final = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "contains",
        "propertyNames",
        "if",
        "then",
        "else",
        "unevaluatedItems",
        "unevaluatedProperties",
        "additionalItems",
    }
)
_LIST: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_MAP: Final = frozenset({"properties", "patternProperties", "dependentSchemas"})
# Values that are data, not schemas: never searched for references.
_DATA: Final = frozenset({"enum", "const", "default", "example", "examples"})
_DROPPED: Final = frozenset({"xml", "externalDocs", "example"})
# Kept outside the anyOf that a 3.0 ``nullable`` becomes.
_HOISTED: Final = ("title", "description", "default", "deprecated", "readOnly", "writeOnly")

#: Formats OpenAPI's format registry and JSON Schema name; any other is noted.
KNOWN_FORMATS: Final = frozenset(
    {
        "int32",
        "int64",
        "float",
        "double",
        "byte",
        "binary",
        "base64",
        "date",
        "date-time",
        "time",
        "duration",
        "password",
        "email",
        "idn-email",
        "hostname",
        "idn-hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "uri-template",
        "iri",
        "iri-reference",
        "url",
        "uuid",
        "json-pointer",
        "relative-json-pointer",
        "regex",
        "char",
        "decimal",
        "int8",
        "int16",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "double-int",
        "sf-boolean",
        "sf-decimal",
        "sf-integer",
        "sf-string",
        "sf-token",
        "sf-binary",
        "html",
        "commonmark",
        "media-range",
        "http-date",
    }
)


def _child_refs(node: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every ``$ref`` below ``node`` (itself included), with the location of each."""
    stack = [(node, where)]
    while stack:
        current, at = stack.pop()
        if isinstance(current, Mapping):
            ref = current.get("$ref")
            if isinstance(ref, str):
                yield ref, at
            for key, value in current.items():
                if key not in _DATA and isinstance(value, Mapping | list):
                    stack.append((value, f"{at}/{_escape(key)}"))
        elif isinstance(current, list):
            stack.extend((value, f"{at}/{i}") for i, value in enumerate(current))


def _escape(key: Any) -> str:
    return pointer(str(key))[2:]


class RefGraph:
    """Which referenced schemas of a document can reach themselves (shared by a toolset's
    converters; each answer is computed once)."""

    def __init__(self, document: Document) -> None:
        self.document = document
        self._edges: dict[str, set[str]] = {}
        self._recursive: dict[str, bool] = {}

    def _targets(self, location: str) -> set[str]:
        found = self._edges.get(location)
        if found is None:
            node, _ = self.document.resolve(location, location)
            found = set()
            for ref, at in _child_refs(node, location):
                found.add(self.document.resolve(ref, at)[1])
            self._edges[location] = found
        return found

    def is_recursive(self, location: str) -> bool:
        """Whether the schema at ``location`` refers back to itself, however deep."""
        known = self._recursive.get(location)
        if known is not None:
            return known
        seen: set[str] = set()
        stack = list(self._targets(location))
        result = False
        while stack:
            current = stack.pop()
            if current == location:
                result = True
                break
            if current not in seen:
                seen.add(current)
                stack.extend(self._targets(current))
        self._recursive[location] = result
        return result


class SchemaConverter:
    """Converts the schemas of one tool's parameters (or its response): the recursive
    models they use are collected in :attr:`defs`, to become the root's ``$defs``."""

    def __init__(self, document: Document, graph: RefGraph, *, owner: str) -> None:
        self.document = document
        self.graph = graph
        self.owner = owner  # "operation listPets (GET /pets)", for messages
        self.defs: dict[str, JSONSchema | bool] = {}
        self._def_names: dict[str, str] = {}  # location -> name under $defs
        self._expanding: list[str] = []
        self.diagnostics: list[Diagnostic] = []
        self._noted_formats: set[str] = set()

    @property
    def legacy(self) -> bool:
        return self.document.version == "3.0"

    def convert(self, node: Any, where: str, parameter: str | None = None) -> JSONSchema | bool:
        """The JSON Schema for the OpenAPI schema ``node`` found at ``where``."""
        if isinstance(node, bool):
            if self.legacy:
                raise SpecError(f"{self.owner}: the schema at {where} is a boolean (3.1 only)")
            return node
        if not isinstance(node, Mapping):
            raise SpecError(f"{self.owner}: the schema at {where} is not an object")
        if isinstance(node.get("$ref"), str):
            return self._reference(node, where, parameter)
        out: JSONSchema = {}
        for key, value in node.items():
            if key in _DROPPED or (isinstance(key, str) and key.startswith("x-")):
                continue
            if key == "nullable" and self.legacy:
                continue
            at = f"{where}/{_escape(key)}"
            if key in _MAP and isinstance(value, Mapping):
                out[key] = {
                    name: self.convert(sub, f"{at}/{_escape(name)}", parameter)
                    for name, sub in value.items()
                }
            elif (key in _LIST and isinstance(value, list)) or (
                key in _ONE and isinstance(value, list) and key == "items"
            ):
                out[key] = [
                    self.convert(sub, f"{at}/{i}", parameter) for i, sub in enumerate(value)
                ]
            elif key in _ONE and isinstance(value, Mapping | bool):
                if isinstance(value, bool):
                    out[key] = value
                else:
                    out[key] = self.convert(value, at, parameter)
            elif key == "discriminator" and isinstance(value, Mapping):
                if isinstance(value.get("propertyName"), str):
                    out[key] = {"propertyName": value["propertyName"]}
            elif key in ("exclusiveMinimum", "exclusiveMaximum") and isinstance(value, bool):
                bound = node.get("minimum" if key == "exclusiveMinimum" else "maximum")
                if value and isinstance(bound, int | float):
                    out[key] = bound
            elif key in _CHECKED:
                problem = _keyword_problem(key, value)
                if not problem:
                    out[key] = value
                elif key == "type":
                    raise SpecError(f"{self.owner}: the schema at {at}: {problem}")
                else:  # left out, so that checking the arguments cannot fail on it
                    self.diagnostics.append(
                        Diagnostic(
                            "warning",
                            "openapi.invalid_schema",
                            f"{self.owner}: the schema at {at}: {problem}; it is ignored",
                            parameter,
                        )
                    )
            elif key == "format" and isinstance(value, str):
                out[key] = value
                self._note_format(value, at, parameter)
            else:
                out[key] = value
        if self.legacy:
            for key, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
                if node.get(key) is True and bound in out:
                    del out[bound]
            if node.get("nullable") is True:
                return _nullable(out)
        return out

    def _note_format(self, value: str, where: str, parameter: str | None) -> None:
        if value in KNOWN_FORMATS or value in self._noted_formats:
            return
        self._noted_formats.add(value)
        self.diagnostics.append(
            Diagnostic(
                "info",
                "openapi.unknown_format",
                f"{self.owner}: format {value!r} at {where} is not a known format; it is kept "
                "as an annotation and not checked",
                parameter,
            )
        )

    def _reference(
        self, node: Mapping[str, Any], where: str, parameter: str | None
    ) -> JSONSchema | bool:
        self.document.deref(node, where)  # a loop of bare references is an error here
        target, location = self.document.resolve(node["$ref"], where)
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        if location in self._expanding or self.graph.is_recursive(location):
            name = self._definition(target, location, parameter)
            ref: JSONSchema = {"$ref": f"#/$defs/{name}"}
            extra = self.convert(siblings, where, parameter) if siblings else {}
            return {**ref, **extra} if isinstance(extra, dict) else ref
        self._expanding.append(location)
        try:
            body = self.convert(target, location, parameter)
        finally:
            self._expanding.pop()
        if not siblings:
            return body
        extra = self.convert(siblings, where, parameter)
        if not isinstance(body, dict) or not isinstance(extra, dict):
            return body
        if self.legacy or all(k in _HOISTED for k in extra):
            return {**body, **extra}  # 3.0 ignores siblings but annotations, laid over
        return {"allOf": [body, extra]}

    def _definition(self, target: Any, location: str, parameter: str | None) -> str:
        name = self._def_names.get(location)
        if name is not None:
            return name
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", location.rsplit("/", 1)[-1]) or "Schema"
        name = base
        taken = set(self._def_names.values())
        number = 2
        while name in taken:
            name = f"{base}_{number}"
            number += 1
        self._def_names[location] = name
        self.defs[name] = {}  # reserved: a recursive model refers to itself while built
        self._expanding.append(location)
        try:
            self.defs[name] = self.convert(target, location, parameter)
        finally:
            self._expanding.pop()
        return name

    def resolve_local(self, schema: Any) -> Any:
        """``schema`` with a ``#/$defs/<Name>`` reference followed (one step)."""
        if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
            name = schema["$ref"].removeprefix("#/$defs/")
            return self.defs.get(name, schema)
        return schema


_JSON_TYPES: Final = frozenset(
    {"string", "number", "integer", "boolean", "array", "object", "null"}
)
_NUMBERS: Final = frozenset({"minimum", "maximum", "multipleOf"})
_COUNTS: Final = frozenset(
    {"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"}
)
# Keywords whose malformed value would make checking a call's arguments fail.
_CHECKED: Final = frozenset({"type", "required", "enum", "pattern"} | _NUMBERS | _COUNTS)


def _keyword_problem(key: str, value: Any) -> str:
    """What is wrong with a keyword's value, for JSON Schema (empty: nothing)."""
    problem = ""
    if key == "type":
        kinds = value if isinstance(value, list) else [value]
        unknown = [k for k in kinds if k not in _JSON_TYPES]
        if unknown:
            problem = f"type {unknown[0]!r} is not a JSON Schema type"
            if unknown[0] == "file":
                problem += " (Swagger 2.0's file type: describe a binary body instead)"
    elif key in _NUMBERS:
        if isinstance(value, bool) or not isinstance(value, int | float):
            problem = f"{key} must be a number, not {value!r}"
    elif key in _COUNTS:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            problem = f"{key} must be a non-negative integer, not {value!r}"
    elif key == "required":
        if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
            problem = f"required must be a list of names, not {value!r}"
    elif key == "enum":
        if not isinstance(value, list):
            problem = f"enum must be a list, not {value!r}"
    elif key == "pattern":
        try:
            re.compile(value)
        except (re.error, TypeError) as exc:
            problem = f"pattern {value!r} is not a regular expression ({exc})"
    return problem


def _nullable(schema: JSONSchema) -> JSONSchema:
    """``schema`` that also admits ``null`` (3.0's ``nullable: true``)."""
    if not schema or schema.get("type") == "null":
        return schema
    kind = schema.get("type")
    if isinstance(kind, list) and "null" in kind:
        return schema
    notes: JSONSchema = {k: schema[k] for k in _HOISTED if k in schema}
    core = {k: v for k, v in schema.items() if k not in notes}
    if set(core) == {"anyOf"} and isinstance(core["anyOf"], list):
        return {"anyOf": [*core["anyOf"], {"type": "null"}], **notes}
    return {"anyOf": [core, {"type": "null"}], **notes}
