"""The JSON Schema operations of the project, each small and named: the spec's (titles,
response shapes, nulls that mean "the default") and the exporters' (references, copies,
nullability); the exporters' lossy rewrites are in ``_schema_rewrites.py``.

Every function here reads its input and returns new values (the schemas a tool hands to
an exporter are shared and cached), except the two that say they work in place:
``strip_titles`` (on a schema before it is shared) and ``drop_default_nulls`` (on a call's
arguments).
Schemas are JSON Schema draft 2020-12 as pydantic produces them (``$defs`` at the root,
``$ref: "#/$defs/Name"``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final
from urllib.parse import unquote

__all__: list[str] = []

JSONSchema = dict[str, Any]


class _Missing:
    """Marks an absent keyword (``None`` is a JSON value: ``"default": null``)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()

#: Keywords that describe a value without constraining it.
ANNOTATION_KEYS: Final = frozenset(
    {
        "$anchor",
        "$comment",
        "$id",
        "$schema",
        "contentEncoding",
        "contentMediaType",
        "default",
        "deprecated",
        "description",
        "example",
        "examples",
        "readOnly",
        "title",
        "writeOnly",
    }
)

# Keywords whose value is one subschema, a list of them, or a map of them.
_ONE_SUBSCHEMA: Final = (
    "items",
    "additionalProperties",
    "additionalItems",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
)
_LIST_OF_SUBSCHEMAS: Final = ("anyOf", "oneOf", "allOf", "prefixItems")
_MAP_OF_SUBSCHEMAS: Final = (
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
)


#: Keywords that describe without constraining (or are handled by the inlining of
#: references): every target may drop them without a diagnostic.
ANNOTATIONS: Final = frozenset(
    {
        "$anchor",
        "$comment",
        "$defs",
        "$id",
        "$schema",
        "contentEncoding",
        "contentMediaType",
        "definitions",
        "deprecated",
        "discriminator",
        "readOnly",
        "writeOnly",
    }
)


def deep_copy(schema: JSONSchema) -> JSONSchema:
    """A fully independent copy of ``schema`` (JSON data: dicts, lists and scalars)."""
    return _copy_json(schema)  # type: ignore[no-any-return]


def _copy_json(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {k: _copy_json(v) for k, v in value.items()}
    if kind is list:
        return [_copy_json(v) for v in value]
    if kind in (str, int, float, bool) or value is None:
        return value
    return copy.deepcopy(value)


def strip_keys(schema: Mapping[str, Any], keys: Iterable[str]) -> JSONSchema:
    """A shallow copy of ``schema`` without ``keys`` (this level only)."""
    drop = frozenset(keys)
    return {k: v for k, v in schema.items() if k not in drop}


def ref_name(ref: str) -> str | None:
    """``"#/$defs/Name"`` -> ``"Name"``; ``None`` for any other kind of reference."""
    prefix = "#/$defs/"
    if not ref.startswith(prefix) or "/" in ref[len(prefix) :]:
        return None
    return unquote(ref[len(prefix) :]).replace("~1", "/").replace("~0", "~")


def resolve_ref(root: Mapping[str, Any], ref: str) -> Any:
    """The subschema a local reference (``#`` or ``#/json/pointer``) points at.

    Raises ``ValueError`` for a remote reference or a pointer that leads nowhere.
    """
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        raise ValueError(f"unsupported $ref {ref!r}: only local references (#/...) are allowed")
    node: Any = root
    for raw in ref[2:].split("/"):
        key = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            raise ValueError(f"$ref {ref!r} does not resolve in this schema")
    return node


def referenced_defs(schema: Any) -> set[str]:
    """Names of the ``$defs`` entries that ``schema`` references directly.

    Nested ``$defs`` maps are not entered; references are not followed.
    """
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        ref = node.get("$ref")
        if isinstance(ref, str) and (name := ref_name(ref)) is not None:
            found.add(name)
        stack.extend(sub for _, sub in _children_without_defs(node))
    return found


def _children_without_defs(node: JSONSchema) -> Iterator[tuple[str, Any]]:
    for key, value in node.items():
        if key in ("$defs", "definitions"):
            continue
        if key in _ONE_SUBSCHEMA:
            if isinstance(value, list):
                yield from ((key, v) for v in value)
            else:
                yield key, value
        elif key in _LIST_OF_SUBSCHEMAS and isinstance(value, list):
            yield from ((key, v) for v in value)
        elif key in _MAP_OF_SUBSCHEMAS and isinstance(value, dict):
            yield from ((key, v) for v in value.values())


def recursive_defs(root: Mapping[str, Any]) -> frozenset[str]:
    """Names of the ``$defs`` entries that can reach themselves through ``$ref``\\ s."""
    defs = root.get("$defs")
    if not isinstance(defs, dict):
        return frozenset()
    edges = {name: referenced_defs(body) & defs.keys() for name, body in defs.items()}
    recursive: set[str] = set()
    for start in edges:
        seen: set[str] = set()
        stack = list(edges[start])
        while stack:
            name = stack.pop()
            if name == start:
                recursive.add(start)
                break
            if name not in seen:
                seen.add(name)
                stack.extend(edges[name])
    return frozenset(recursive)


def json_type_of(value: Any) -> str:
    """The JSON Schema type name of a JSON value (``True`` is ``"boolean"``, not integer)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    return "object"


def is_null_schema(schema: Any) -> bool:
    """True for a schema whose only value is ``null`` (``{"type": "null"}`` and kin)."""
    if not isinstance(schema, dict):
        return False
    core = strip_keys(schema, ANNOTATION_KEYS)
    return core in ({"type": "null"}, {"const": None}, {"enum": [None]})


def admits_null(schema: Any, root: Mapping[str, Any] | None = None) -> bool:
    """Whether ``null`` is certainly a valid instance of ``schema``.

    ``root`` resolves ``$ref``\\ s; without it a reference counts as not admitting null.
    """
    seen: set[str] = set()

    def check(node: Any) -> bool:
        if node is True:
            return True
        if not isinstance(node, dict):
            return False
        ref = node.get("$ref")
        if isinstance(ref, str):
            if root is None or ref in seen:
                return False
            seen.add(ref)
            try:
                target = resolve_ref(root, ref)
            except ValueError:
                return False
            rest = strip_keys(node, {"$ref", *ANNOTATION_KEYS})
            return check(target) and (not rest or check(rest))
        if "anyOf" in node or "oneOf" in node:
            branches = node.get("anyOf") or node.get("oneOf") or []
            rest = strip_keys(node, {"anyOf", "oneOf"})
            return any(check(b) for b in branches) and check(rest)
        if "allOf" in node:
            rest = strip_keys(node, {"allOf"})
            return all(check(b) for b in node["allOf"]) and check(rest)
        if "const" in node and node["const"] is not None:
            return False
        if "enum" in node and None not in node["enum"]:
            return False
        if "not" in node:
            return False
        typ = node.get("type")
        if typ is None:
            return True
        if isinstance(typ, list):
            return "null" in typ
        return bool(typ == "null")

    return check(schema)


def strip_titles(schema: dict[str, Any]) -> dict[str, Any]:
    """Remove every ``title`` keyword, in place, and return ``schema``.

    Only subschema keywords are walked, so a property that happens to be called "title"
    is kept. (With :func:`drop_default_nulls`, one of the two operations here that change
    what they are given: this one runs on schemas before they are shared.)
    """
    schema.pop("title", None)
    for key, value in schema.items():
        if key in _ONE_SUBSCHEMA:
            if isinstance(value, dict):
                strip_titles(value)
        elif key in _LIST_OF_SUBSCHEMAS:
            for item in value if isinstance(value, list) else ():
                if isinstance(item, dict):
                    strip_titles(item)
        elif key in _MAP_OF_SUBSCHEMAS:
            for item in value.values() if isinstance(value, dict) else ():
                if isinstance(item, dict):
                    strip_titles(item)
    return schema


def is_object_schema(schema: dict[str, Any], defs: dict[str, Any] | None) -> bool:
    """Whether every value ``schema`` allows is an object (``$ref`` followed, each
    ``anyOf`` branch an object): a response of this shape is sent as it is."""
    ref = schema.get("$ref")
    name = ref_name(ref) if isinstance(ref, str) else None
    if name is not None and defs:
        return is_object_schema(defs.get(name, {}), defs)
    if "anyOf" in schema:
        return all(is_object_schema(s, defs) for s in schema["anyOf"])
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
    alternatives = branches(schema, defs)
    if isinstance(data, dict):
        objects = [b for b in alternatives if "properties" in b or "additionalProperties" in b]
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
                        and not may_admit_null(props[key], defs)
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
        arrays = [b for b in alternatives if "items" in b or "prefixItems" in b]
        for i, item in enumerate(data):
            for branch in arrays:
                prefix = branch.get("prefixItems")
                positional = isinstance(prefix, list) and i < len(prefix)
                sub = prefix[i] if positional else branch.get("items")  # type: ignore[index]
                if isinstance(sub, dict):
                    changed = _drop_nulls(sub, item, defs) or changed
    return changed


def branches(schema: Any, defs: dict[str, Any]) -> list[dict[str, Any]]:
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
        name = ref_name(ref) if isinstance(ref, str) else None
        if name is not None:
            stack.append(defs.get(name))
        combined = False
        for key in ("anyOf", "oneOf", "allOf"):
            if isinstance(node.get(key), list):
                stack.extend(node[key])
                combined = True
        if not combined and ref is None:
            out.append(node)
    return out


_TYPE_FREE = frozenset({"description", "default", "examples", "title", "deprecated"})


def may_admit_null(schema: Any, defs: dict[str, Any]) -> bool:
    """Whether some branch of ``schema`` might take ``null`` (an untyped branch is "any
    value"): a null sent for it is never taken for "use the default". Looser than
    :func:`admits_null`, which says whether null is certainly valid."""
    for branch in branches(schema, defs):
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
