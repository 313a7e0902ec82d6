"""MCP: the ``Tool`` definition a server lists in ``tools/list``.

``{"name", "description", "inputSchema", "outputSchema"?, "annotations"}``. Checked
2026-11-29 against https://modelcontextprotocol.io/specification/2025-06-18/server/tools
and the schema reference (``Tool``, ``ToolAnnotations``):

* ``inputSchema`` is a JSON Schema object with ``type: "object"`` at the top: the
  parameters schema, copied unchanged (``"type": "object"`` added if a hand-written one
  leaves it out).
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
