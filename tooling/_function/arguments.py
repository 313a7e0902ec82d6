"""A call's arguments checked against a tool's spec: bounds, validation, and errors that
say where, what and what was given."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError
from pydantic_core import from_json

from .._bounds import check_dict_bounds, check_text_bounds
from .._errors import ToolError, error_details_from_validation

if TYPE_CHECKING:
    from .spec import ToolSpec

__all__: list[str] = []

Args = Mapping[str, Any] | str | bytes


def validate_arguments(tool_name: str, spec: ToolSpec, args: Args) -> BaseModel:
    """``args`` (a mapping, or JSON text) as an instance of ``spec.args_model``.

    Raises ``ToolError`` (``tool.invalid_arguments``, with pydantic-style details) for
    arguments over the size or nesting limit, not an object, or not valid.
    """
    cell = spec.model
    validator = cell.validator or cell.build()  # the model is made on first use
    try:
        if type(args) is dict:
            check_dict_bounds(args)
            validated = validator.validate_python(args)
        elif isinstance(args, str | bytes):
            check_text_bounds(args)
            validated = validator.validate_json(args)
        elif isinstance(args, Mapping):
            check_dict_bounds(args)
            validated = spec.args_model.model_validate(dict(args))
        else:
            raise ToolError(
                f"arguments for tool {tool_name!r} must be a JSON object, "
                f"not {type(args).__name__}",
                code="tool.invalid_arguments",
                details=[{"loc": [], "msg": "Input should be an object", "type": "model_type"}],
            )
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_context=False)
        retried, errors = _without_rejected_nulls(spec, args, errors)
        if retried is not None:
            return retried
        details = error_details_from_validation(errors, spec.parameter_names)
        raise invalid_arguments(tool_name, details) from None
    except ToolError:
        raise
    except (ValueError, TypeError, RecursionError, UnicodeError) as exc:
        details = [{"loc": [], "msg": str(exc)[:200], "type": "value_error"}]
        raise invalid_arguments(tool_name, details) from None
    return validated  # type: ignore[no-any-return]


def invalid_arguments(tool_name: str, details: list[dict[str, Any]]) -> ToolError:
    """The ``tool.invalid_arguments`` error for ``details``, the first three summed up."""
    summary = "; ".join(
        f"{'.'.join(str(x) for x in d['loc']) or '(arguments)'}: {d['msg']}" for d in details[:3]
    )
    if len(details) > 3:
        summary += f"; and {len(details) - 3} more"
    return ToolError(
        f"invalid arguments for tool {tool_name!r}: {summary}",
        code="tool.invalid_arguments",
        details=details,
    )


def _without_rejected_nulls(
    spec: ToolSpec, args: Any, errors: list[Any]
) -> tuple[BaseModel | None, list[Any]]:
    """Validate again with the ``null`` values that mean "the default" left out.

    A strict-mode model sends ``null`` for every argument it means to leave out, at any
    depth; where the field has a default (and its type does not admit None), that is what
    the null means. Which nulls those are is read from the parameters schema (see
    ``drop_default_nulls``), so a null for an entry of a ``dict[str, T]`` stays an error.
    Only tried after a failure that involved a null, so valid calls pay nothing. Gives
    the model, or the errors to report.
    """
    from .._jsonschema import drop_default_nulls  # only on the failure path

    if not any(e.get("input", 0) is None for e in errors):
        return None, errors
    try:
        data = from_json(args) if isinstance(args, str | bytes) else copy.deepcopy(dict(args))
        if not drop_default_nulls(spec.parameters_json_schema, data):
            return None, errors
        return spec.validator.validate_python(data), []
    except ValidationError as retry:
        return None, retry.errors(include_url=False, include_context=False)
    except Exception:
        return None, errors
