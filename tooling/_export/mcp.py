"""MCP: the ``Tool`` definition a server lists in ``tools/list``.

``{"name", "description", "inputSchema", "outputSchema"?, "annotations"}``. Checked
2026-11-29 against https://modelcontextprotocol.io/specification/2025-06-18/server/tools
and the schema reference (``Tool``, ``ToolAnnotations``):

* ``inputSchema`` is a JSON Schema object with ``type: "object"`` at the top: the
  parameters schema (``"type": "object"`` added if a hand-written one leaves it out).
  A parameter whose schema has no ``type`` but takes only objects (a model's ``$ref``) or
  only arrays, besides null (``Optional[list]``'s ``anyOf``), is given that ``type``:
  clients that send every value as text (the MCP Inspector's CLI) parse a value as JSON
  only for a property typed ``"object"`` or ``"array"``. For an optional parameter the
  null branch is left out (a null there means the default, as leaving it out does: the
  server still takes it); a required one gets ``[kind, "null"]``.
* ``outputSchema`` (optional) describes ``structuredContent`` and must also be an
  object schema. A tool's response is always a dict (a non-dict return is sent as
  ``{"result": value}``), so: a schema whose top is ``type: object`` is used as is; one
  with no ``type`` (an ``anyOf`` of models, a ``$ref``) gets ``"type": "object"`` added,
  which every response satisfies (if one of its branches is clearly not an object, an
  ``export.lossy`` diagnostic says so); one with another ``type`` is wrapped the way the
  value is wrapped at run time, as ``{"type": "object", "properties": {"result": ...},
  "required": ["result"]}`` with its ``$defs`` moved to the top.
* ``annotations``: ``readOnlyHint``, ``idempotentHint``, ``destructiveHint`` from the
  tool's ``read_only``, ``idempotent`` and ``is_destructive``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import _jsonschema as ops
from .. import _schema_rewrites as rewrites
from .._jsonschema import JSONSchema
from .._types import Diagnostic
from .names import provider_name

if TYPE_CHECKING:
    from .._base import BaseTool


def export(tool: BaseTool) -> tuple[dict[str, Any], list[Diagnostic]]:
    """The tool as an MCP ``Tool`` dict."""
    input_schema = ops.deep_copy(tool.parameters_json_schema)
    input_schema.setdefault("type", "object")
    _type_structured_parameters(input_schema)
    result: dict[str, Any] = {
        "name": provider_name(tool.name, "mcp"),
        "description": tool.description,
        "inputSchema": input_schema,
    }
    diagnostics: list[Diagnostic] = []
    if tool.response_json_schema is not None:
        result["outputSchema"], diagnostics = output_schema(tool.response_json_schema)
    result["annotations"] = {
        "readOnlyHint": bool(tool.read_only),
        "idempotentHint": bool(tool.idempotent),
        "destructiveHint": bool(tool.is_destructive),
    }
    return result, diagnostics


def structured_kind(schema: Any, defs: dict[str, Any]) -> tuple[str | None, bool]:
    """``("object" | "array", admits_null)`` for a schema whose values other than null are
    all objects or all arrays; ``(None, ...)`` for any other schema."""
    kinds: set[Any] = set()
    nullable = False
    for branch in ops.branches(schema, defs):
        kind = branch.get("type")
        if ops.is_null_schema(branch):
            nullable = True
        elif isinstance(kind, list):
            nullable = nullable or "null" in kind
            kinds.update(k for k in kind if k != "null")
        else:
            kinds.add(kind)
    if len(kinds) == 1 and kinds <= {"object", "array"}:
        return str(next(iter(kinds))), nullable
    return None, nullable


def _type_structured_parameters(schema: JSONSchema) -> None:
    """Give untyped object or array parameters their ``type`` (see the module docs)."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return
    defs = schema.get("$defs")
    defs = defs if isinstance(defs, dict) else {}
    required = schema.get("required") or ()
    for name, prop in list(properties.items()):
        if not isinstance(prop, dict) or "type" in prop:
            continue
        kind, nullable = structured_kind(prop, defs)
        if kind is None:
            continue
        if nullable and name not in required:
            prop, _ = rewrites.split_null(prop)  # "this or null" as "this": null is the default
            properties[name] = prop = dict(prop)
            nullable = False
        if "type" not in prop:
            prop["type"] = [kind, "null"] if nullable else kind


def output_schema(response: JSONSchema) -> tuple[JSONSchema, list[Diagnostic]]:
    """An object schema for a tool's response schema (see the module docs)."""
    recorder = rewrites.LossRecorder("MCP outputSchema")
    schema = ops.deep_copy(response)
    typ = schema.get("type")
    if typ == "object":
        return schema, []
    if typ is None and "const" not in schema and "enum" not in schema:
        branches = schema.get("anyOf") or schema.get("oneOf") or []
        if any(_clearly_not_object(b, schema) for b in branches):
            recorder.lossy(
                None,
                "the response schema admits non-object values; outputSchema keeps only "
                "its object branches",
            )
        schema["type"] = "object"
        return schema, recorder.diagnostics
    defs = schema.pop("$defs", None)
    wrapped: JSONSchema = {
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
    }
    if defs is not None:
        wrapped["$defs"] = defs
    return wrapped, []


def _clearly_not_object(branch: Any, root: JSONSchema) -> bool:
    if isinstance(branch, dict) and isinstance(branch.get("$ref"), str):
        try:
            branch = ops.resolve_ref(root, branch["$ref"])
        except ValueError:
            return False
    if not isinstance(branch, dict):
        return False
    typ = branch.get("type")
    if isinstance(typ, str):
        return typ != "object"
    if isinstance(typ, list):
        return "object" not in typ
    return False
