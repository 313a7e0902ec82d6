"""Anthropic: the Messages API tool dict ``{"name", "description", "input_schema"}``.

Checked 2026-11-29 against
https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use:
``input_schema`` is a JSON Schema object describing the tool's input; its top level is
``type: object``. Full JSON Schema is accepted (``$defs``/``$ref``, ``anyOf``,
``additionalProperties``, constraints), so the parameters schema is passed as a copy,
unchanged; the only adjustment is ``"type": "object"`` added at the top when a
hand-written schema leaves it out. Nothing is lost: no diagnostics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._types import Diagnostic
from .names import provider_name

if TYPE_CHECKING:
    from .._base import BaseTool


def export(tool: BaseTool) -> tuple[dict[str, Any], list[Diagnostic]]:
    """The tool as an Anthropic tool dict (never lossy)."""
    schema = tool.parameters_json_schema  # shared and read-only, like the export itself
    if "type" not in schema:
        schema = {**schema, "type": "object"}
    return {
        "name": provider_name(tool.name, "anthropic"),
        "description": tool.description,
        "input_schema": schema,
    }, []
