"""From a :class:`Target` to one frozen :class:`ToolSpec`: built once, read by everything.

The steps, each a small function below: resolve the annotations; split off the injected
context; settle each parameter's description (``Field`` > ``Annotated[T, "text"]`` >
docstring) and record disagreements; describe the parameters and check their defaults
(``args_model.py``: the pydantic arguments model itself is made on first use); derive
the response schema (``typing.Self`` is the class of a method; a return type without a
schema gives none, with a diagnostic).
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
import warnings
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Generator,
    Iterable,
    Iterator,
)
from dataclasses import dataclass
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, Field
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from .._types import Diagnostic, ToolResult
from .args_model import ArgsModel, describe_parameters
from .docstrings import parse_docstring
from .schema import response_schema
from .target import CONTEXT_PARAM_NAME, Target

__all__: list[str] = []

LONG_RUNNING_NOTE = (
    "This tool runs for a while: once it has answered with a pending status, do not call it "
    "again for the same request; wait for its result."
)

_NONE_TYPES = (type(None), None)
_RESERVED = frozenset(dir(BaseModel))


@dataclass(frozen=True, slots=True)
class ParameterSpec:
    """One parameter the model sees: its name, the args-model field behind it, and how
    the function takes it."""

    name: str
    field: str
    positional_only: bool
    required: bool
    description: str | None


_NO_ARGS: list[Any] = []  # shared, never mutated: most functions take keywords only


@dataclass(frozen=True, slots=True, eq=False)
class ToolSpec:
    """Everything derived from a function's signature and docstring, computed once.

    Shared by every copy of a tool (bound methods, prefixed copies): read-only.
    """

    name: str
    description: str
    parameters: tuple[ParameterSpec, ...]
    context_parameter: str | None
    #: The arguments model, made when a call is first checked (declaring needs none).
    model: ArgsModel
    parameters_json_schema: dict[str, Any]
    response_json_schema: dict[str, Any] | None
    diagnostics: tuple[Diagnostic, ...]
    #: True when the validated model's fields can be passed straight as keyword arguments.
    plain_keywords: bool

    @property
    def args_model(self) -> type[BaseModel]:
        """The pydantic model the arguments are validated with (made on first use)."""
        cell = self.model
        if cell.model is None:
            cell.build()
        assert cell.model is not None
        return cell.model

    @property
    def validator(self) -> Any:
        """``args_model.__pydantic_validator__`` (the model is made on first use)."""
        return self.model.validator or self.model.build()

    @property
    def parameter_names(self) -> tuple[str, ...]:
        """The names a model may send, in signature order."""
        return tuple(p.name for p in self.parameters)

    def to_call_args(
        self, validated: BaseModel, context: Any = None
    ) -> tuple[list[Any], dict[str, Any]]:
        """The positional and keyword arguments to call the function with.

        ``validated`` is an instance of :attr:`args_model`; ``context`` is passed as the
        context parameter when the function has one.
        """
        values = validated.__dict__
        if self.plain_keywords:
            call_args: list[Any] = _NO_ARGS
            call_kwargs = values.copy()
        else:
            call_args, call_kwargs = [], {}
            for p in self.parameters:
                if p.positional_only:
                    call_args.append(values[p.field])
                else:
                    call_kwargs[p.name] = values[p.field]
        if self.context_parameter is not None:
            call_kwargs[self.context_parameter] = context
        return call_args, call_kwargs


def build_spec(
    target: Target,
    *,
    description: str | None,
    long_running: bool,
    owner: type | None = None,
) -> ToolSpec:
    """Resolve ``target``'s types and build its spec; errors name the function and parameter.

    ``owner`` is the class a method tool was defined in: ``typing.Self`` means it.
    """
    hints = _resolve_hints(target, owner)
    docstring = parse_docstring(target.doc)
    diagnostics: list[Diagnostic] = []

    context_parameter: str | None = None
    params: list[ParameterSpec] = []
    fields: dict[str, Any] = {}
    defaults_to_check: dict[str, Any] = {}
    taken = {p.name for p in target.parameters}  # field names an alias must not reuse

    for param in target.parameters:
        annotation = hints.get(param.name, Any)
        if _is_context(param.name, annotation):
            if context_parameter is not None:
                raise TypeError(
                    f"tool {target.qualname}: parameters {context_parameter!r} and "
                    f"{param.name!r} both ask for the tool context; keep one"
                )
            context_parameter = param.name
            continue

        field_info = param.default if isinstance(param.default, FieldInfo) else None
        if field_info is not None:
            default: Any = field_info.default
            has_default = default is not PydanticUndefined or field_info.default_factory is not None
        else:
            default = param.default
            has_default = default is not inspect.Parameter.empty

        # Read descriptions before widening: ``Annotated[T, "text"] | None`` is no longer
        # an ``Annotated`` form, and its text would be lost.
        text = _settle_description(
            target.qualname, param.name, annotation, field_info, docstring.params, diagnostics
        )
        if has_default and default is None and not _admits_none(annotation):
            annotation = _optional(annotation)  # ``x: int = None`` means Optional[int]
        field_name = (
            param.name if _usable_field_name(param.name) else _fresh_field_name(len(params), taken)
        )
        kwargs: dict[str, Any] = {"description": text}
        if field_name != param.name:
            kwargs["alias"] = param.name
        if field_info is not None:
            merged = FieldInfo.merge_field_infos(field_info, **kwargs)
        elif has_default:
            merged = Field(default, **kwargs)
        else:
            merged = Field(**kwargs)
        fields[field_name] = (annotation, merged)

        if has_default and default is not PydanticUndefined:
            defaults_to_check[param.name] = default
        params.append(
            ParameterSpec(
                name=param.name,
                field=field_name,
                positional_only=param.kind is inspect.Parameter.POSITIONAL_ONLY,
                required=not has_default,
                description=text,
            )
        )

    visible = {p.name for p in target.parameters}
    for documented in docstring.params:
        if documented not in visible and documented not in target.source_parameter_names():
            diagnostics.append(
                Diagnostic(
                    "warning",
                    "docstring.unknown_parameter",
                    f"the docstring of {target.qualname} documents {documented!r}, "
                    "which is not a parameter",
                    documented,
                )
            )

    parameters_json_schema, args_model = describe_parameters(
        target, fields, params, defaults_to_check
    )

    text = description if description is not None else docstring.description
    if long_running:
        text = f"{text}\n\n{LONG_RUNNING_NOTE}" if text else LONG_RUNNING_NOTE

    response_json_schema = _response_schema(target, hints, diagnostics)
    for diagnostic in diagnostics:
        if diagnostic.level == "warning":
            warnings.warn(f"{target.qualname}: {diagnostic.message}", UserWarning, stacklevel=4)

    return ToolSpec(
        name=target.name,
        description=text,
        parameters=tuple(params),
        context_parameter=context_parameter,
        model=ArgsModel(target, fields, args_model),
        parameters_json_schema=parameters_json_schema,
        response_json_schema=response_json_schema,
        diagnostics=tuple(diagnostics),
        plain_keywords=all(p.field == p.name and not p.positional_only for p in params),
    )


# -- steps ---------------------------------------------------------------------------------


def _resolve_hints(target: Target, owner: type | None) -> dict[str, Any]:
    try:
        hints = typing.get_type_hints(target.source, include_extras=True)
    except Exception as exc:  # NameError for a missing name, anything from a bad string
        culprit = _unresolvable_parameter(target)
        where = f"parameter {culprit!r}" if culprit else "an annotation"
        raise TypeError(
            f"tool {target.qualname}: cannot resolve the type of {where}: {exc}"
        ) from exc
    owner = owner or _receiver_class(target)
    if owner is None:
        return hints
    return {name: _replace_self(hint, owner) for name, hint in hints.items()}


def _receiver_class(target: Target) -> type | None:
    """The class of a bound method given to ``@tool`` (``tool(obj.method)``), if it is one."""
    call: Any = target.call
    while isinstance(call, functools.partial):
        call = call.func
    receiver = getattr(call, "__self__", None) if isinstance(call, types.MethodType) else None
    if receiver is None:
        return None
    return receiver if isinstance(receiver, type) else type(receiver)


def _replace_self(annotation: Any, owner: type) -> Any:
    """``annotation`` with ``typing.Self`` replaced by ``owner``, at any depth."""
    if annotation is typing.Self:
        return owner
    args = get_args(annotation)
    if not args:
        return annotation
    replaced = tuple(_replace_self(arg, owner) for arg in args)
    if all(new is old for new, old in zip(replaced, args, strict=True)):
        return annotation
    origin = get_origin(annotation)
    if origin is Annotated:
        return Annotated[(replaced[0], *annotation.__metadata__)]
    if origin is Union or origin is types.UnionType:
        return Union[replaced]  # noqa: UP007 - any number of members
    if isinstance(annotation, types.GenericAlias):
        return types.GenericAlias(origin, replaced)
    copy_with = getattr(annotation, "copy_with", None)  # typing's generic aliases
    return copy_with(replaced) if copy_with is not None else annotation


def _unresolvable_parameter(target: Target) -> str | None:
    source = inspect.unwrap(target.source)
    globalns = getattr(source, "__globals__", {})
    for param in target.parameters:
        annotation = param.annotation
        if not isinstance(annotation, str):
            continue
        try:
            eval(annotation, globalns)
        except Exception:
            return param.name
    return None


def _is_context(name: str, annotation: Any) -> bool:
    if name == CONTEXT_PARAM_NAME:
        return True
    from .._context import ToolContext

    return isinstance(annotation, type) and issubclass(annotation, ToolContext)


def _optional(annotation: Any) -> Any:
    """``annotation`` admitting None; ``Annotated`` metadata (descriptions, constraints)
    stays on the outside, where it describes the whole parameter."""
    if get_origin(annotation) is Annotated:
        inner, *metadata = get_args(annotation)
        return Annotated[(_optional(inner), *metadata)]
    return Union[annotation, None]  # noqa: UP007 - works for any annotation object


def _admits_none(annotation: Any) -> bool:
    if annotation in _NONE_TYPES or annotation is Any or annotation is object:
        return True
    origin = get_origin(annotation)
    if origin is Annotated:
        return _admits_none(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return any(_admits_none(arg) for arg in get_args(annotation))
    if origin is typing.Literal:
        return None in get_args(annotation)
    return False


def _usable_field_name(name: str) -> bool:
    return not name.startswith("_") and name not in _RESERVED


def _fresh_field_name(index: int, taken: set[str]) -> str:
    """A field name for a parameter pydantic cannot use as one, unlike any other name."""
    name = f"arg_{index}_"
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def _settle_description(
    qualname: str,
    name: str,
    annotation: Any,
    field_info: FieldInfo | None,
    documented: dict[str, str],
    diagnostics: list[Diagnostic],
) -> str | None:
    """Pick the description by precedence and record where sources disagree."""
    sources: list[tuple[str, str]] = []
    if field_info is not None and field_info.description:
        sources.append(("Field(description=)", field_info.description))
    if get_origin(annotation) is Annotated:
        for meta in get_args(annotation)[1:]:
            if isinstance(meta, FieldInfo) and meta.description:
                sources.append(("Field(description=)", meta.description))
        for meta in get_args(annotation)[1:]:
            if isinstance(meta, str) and meta.strip():
                sources.append(("Annotated text", meta))
                break
    if name in documented:
        sources.append(("docstring", documented[name]))

    if not sources:
        diagnostics.append(
            Diagnostic(
                "info",
                "docstring.undocumented_parameter",
                f"parameter {name!r} has no description",
                name,
            )
        )
        return None
    chosen_from, chosen = sources[0]
    for other_from, other in sources[1:]:
        if " ".join(other.split()) != " ".join(chosen.split()):
            diagnostics.append(
                Diagnostic(
                    "warning",
                    "description.conflict",
                    f"parameter {name!r}: {chosen_from} says {chosen!r} but {other_from} says "
                    f"{other!r}; using {chosen_from}",
                    name,
                )
            )
    return chosen


_GENERATOR_ORIGINS = (Generator, Iterator, Iterable, AsyncGenerator, AsyncIterator, AsyncIterable)


def _response_schema(
    target: Target, hints: dict[str, Any], diagnostics: list[Diagnostic]
) -> dict[str, Any] | None:
    """The response schema, or None when there is none to give.

    A return type pydantic cannot describe (a plain class) leaves the tool usable without
    a response schema, with a ``schema.unsupported_return`` diagnostic.
    """
    if "return" not in hints:
        return None
    annotation = hints["return"]
    if target.kind in ("gen", "asyncgen"):
        if get_origin(annotation) not in _GENERATOR_ORIGINS or not get_args(annotation):
            return None
        annotation = get_args(annotation)[0]  # what each update carries
    if annotation is ToolResult or get_origin(annotation) is ToolResult:
        # The model receives the content: ``ToolResult[T]`` describes it, a bare one not.
        if not get_args(annotation):
            return None
        annotation = get_args(annotation)[0]
    if annotation is Any or annotation is object:
        return None
    try:
        return response_schema(annotation)
    except Exception as exc:
        diagnostics.append(
            Diagnostic(
                "warning",
                "schema.unsupported_return",
                f"the return type {_type_name(annotation)} has no JSON schema, so the tool "
                f"has no response schema ({type(exc).__name__}: {_first_line(exc)})",
                None,
            )
        )
        return None


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__qualname__
    return repr(annotation).replace("typing.", "")


def _first_line(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else ""
