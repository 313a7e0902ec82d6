"""A call's arguments refused by a JSON Schema, as the ``tool.invalid_arguments`` error a
model reads: jsonschema's errors become pydantic-style problems (one per missing or
unknown name), then details with the valid names, then one ``ToolError``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ._errors import ToolError, error_details_from_validation

__all__: list[str] = []


def schema_problems(error: Any) -> list[dict[str, Any]]:
    """A jsonschema ``ValidationError`` as pydantic-style problems (one per missing or
    unknown name)."""
    where = list(error.absolute_path)
    instance = error.instance
    required = error.validator_value
    if error.validator == "required" and isinstance(instance, dict) and isinstance(required, list):
        # jsonschema reports each missing name as an error of its own, naming it first.
        name = error.message.split("'")[1] if error.message.count("'") >= 2 else None
        missing = [n for n in required if n not in instance and (name is None or n == name)]
        return [{"loc": [*where, n], "type": "missing", "msg": "Field required"} for n in missing]
    if error.validator == "additionalProperties" and isinstance(instance, dict):
        known = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        extra = [n for n in instance if n not in known]
        if extra:
            return [
                {
                    "loc": [*where, n],
                    "type": "extra_forbidden",
                    "msg": "Extra inputs are not permitted",
                    "input": instance[n],
                }
                for n in extra
            ]
    return [{"loc": where, "type": str(error.validator), "msg": error.message, "input": instance}]


def invalid_arguments(
    tool_name: str, problems: Iterable[dict[str, Any]], valid_names: Sequence[str]
) -> ToolError:
    """The ``tool.invalid_arguments`` error for ``problems``, naming each and the valid
    argument names."""
    details = error_details_from_validation(problems, valid_names)
    summary = "; ".join(
        f"{'.'.join(map(str, d['loc'])) or '(arguments)'}: {d['msg']}" for d in details
    )
    return ToolError(
        f"invalid arguments for tool {tool_name!r}: {summary}",
        code="tool.invalid_arguments",
        details=details,
    )
