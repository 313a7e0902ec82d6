"""The exporters' rewrites of a JSON Schema a provider cannot take as it is, each small
and named: "this or null" folded, tuples as ``items``, ``allOf`` merged, a description
appended, and the ``export.lossy`` diagnostics of what a rewrite lost.

Like ``_jsonschema.py`` (whose walkers and tables they use), they return new values and
never change their input.
"""

from __future__ import annotations

import json
from typing import Any

from ._jsonschema import ANNOTATION_KEYS, MISSING, JSONSchema, is_null_schema, strip_keys
from ._types import Diagnostic

__all__: list[str] = []


def split_null(schema: JSONSchema) -> tuple[JSONSchema, bool]:
    """Collapse "this or null" into ``(this, True)``; ``(schema, False)`` otherwise.

    Handles ``anyOf`` with ``{"type": "null"}`` branches, ``type`` lists with
    ``"null"``, and ``enum`` lists holding ``None``. With one branch left it is merged into
    the schema (the outer keywords win: an outer ``description`` or ``default`` is more
    specific than the branch's); with several they stay an ``anyOf``. A schema that is
    nothing but null is returned unchanged with ``False``.
    """
    any_of = schema.get("anyOf")
    if isinstance(any_of, list) and any(is_null_schema(b) for b in any_of):
        rest = [b for b in any_of if not is_null_schema(b)]
        outer = strip_keys(schema, {"anyOf"})
        if not rest:
            return schema, False
        if len(rest) == 1 and isinstance(rest[0], dict):
            return {**rest[0], **outer}, True
        return {**outer, "anyOf": rest}, True
    typ = schema.get("type")
    if isinstance(typ, list) and "null" in typ and len(typ) > 1:
        rest_types = [t for t in typ if t != "null"]
        return {**schema, "type": rest_types[0] if len(rest_types) == 1 else rest_types}, True
    enum = schema.get("enum")
    if isinstance(enum, list) and None in enum and len(enum) > 1:
        return {**schema, "enum": [v for v in enum if v is not None]}, True
    return schema, False


def _canonical(schema: Any) -> str:
    return json.dumps(schema, sort_keys=True, default=repr)


def tuple_to_items(schema: JSONSchema) -> tuple[JSONSchema, bool]:
    """Turn tuple validation (``prefixItems``) into plain ``items``.

    Returns the new schema and whether positions were lost. When every position has the
    same schema (``tuple[int, int]``) nothing is lost: ``items`` plus the existing
    ``minItems``/``maxItems`` say the same. Otherwise ``items`` is the ``anyOf`` of the
    distinct position schemas (and of an open tail's ``items``).
    """
    prefix = schema.get("prefixItems")
    if not isinstance(prefix, list):
        return schema, False
    tail = schema.get("items", MISSING)
    choices: list[Any] = []
    seen: set[str] = set()
    for sub in [*prefix, *([tail] if tail not in (MISSING, False) else [])]:
        key = _canonical(sub)
        if key not in seen:
            seen.add(key)
            choices.append(sub)
    out = strip_keys(schema, {"prefixItems", "items"})
    if not choices:
        out.setdefault("maxItems", 0)
        return out, False
    out["items"] = choices[0] if len(choices) == 1 else {"anyOf": choices}
    return out, len(choices) > 1


def merge_all_of(schema: JSONSchema) -> tuple[JSONSchema, bool]:
    """Fold ``allOf`` entries into ``schema``; also return whether any keyword conflicted.

    The schema's own keywords win over an entry's; between entries the first wins. A
    conflict (two different values for one keyword) means the result is wider than the
    intersection ``allOf`` meant.
    """
    entries = schema.get("allOf")
    if not isinstance(entries, list):
        return schema, False
    merged = strip_keys(schema, {"allOf"})
    conflict = False
    for entry in entries:
        if not isinstance(entry, dict):
            conflict = conflict or entry is False
            continue
        entry, inner_conflict = merge_all_of(entry)
        conflict = conflict or inner_conflict
        for key, value in entry.items():
            if key not in merged:
                merged[key] = value
            elif key not in ANNOTATION_KEYS and _canonical(merged[key]) != _canonical(value):
                conflict = True
    return merged, conflict


def describe(schema: JSONSchema, text: str) -> JSONSchema:
    """A copy of ``schema`` whose ``description`` ends with ``text``."""
    current = schema.get("description")
    joined = f"{current.rstrip()} {text}" if isinstance(current, str) and current else text
    return {**schema, "description": joined}


class LossRecorder:
    """Collects ``export.lossy`` diagnostics, once per (parameter, message)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self._seen: set[tuple[str | None, str]] = set()
        self.diagnostics: list[Diagnostic] = []

    def lossy(self, parameter: str | None, what: str) -> None:
        """Record that the ``target`` form of ``parameter`` cannot say ``what``."""
        where = f"parameter {parameter!r}" if parameter is not None else "schema"
        message = f"{self.target}: {where}: {what}"
        if (parameter, message) in self._seen:
            return
        self._seen.add((parameter, message))
        self.diagnostics.append(
            Diagnostic(level="warning", code="export.lossy", message=message, parameter=parameter)
        )
