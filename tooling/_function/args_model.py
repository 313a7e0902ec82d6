"""The arguments' pydantic model, built when a call is first checked, and the parameters'
JSON Schema, described without it.

Declaring a tool (its schema, its exports) needs no model: each parameter is described
by a ``TypeAdapter`` of its annotated type, all through one schema generator (so shared
``$defs`` are named as a model would name them), sorted as pydantic sorts a model's
schema, and each default is checked by its parameter's adapter. The model is made on
first use (:class:`ArgsModel`), once. When a parameter cannot be described that way,
the model is built at once and the schema is the model's, with the errors that name the
parameter at fault.
"""

from __future__ import annotations

import functools
import json
import threading
from typing import TYPE_CHECKING, Annotated, Any, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    PydanticUserError,
    TypeAdapter,
    ValidationError,
    create_model,
)

from .._jsonschema import strip_titles
from .schema import ArgsSchemaGenerator, parameters_schema, plain_json

if TYPE_CHECKING:
    from .spec import ParameterSpec
    from .target import Target

__all__: list[str] = []

#: A field of the arguments model: (annotation, FieldInfo), by field name.
Fields = dict[str, Any]


class ArgsModel:
    """A tool's arguments model, made on first use (thread-safe), and its validator."""

    __slots__ = ("_fields", "_lock", "_target", "model", "validator")

    def __init__(self, target: Target, fields: Fields, model: type[BaseModel] | None) -> None:
        self._target = target
        self._fields = fields
        self._lock = threading.Lock()
        self.model = model
        #: ``model.__pydantic_validator__`` once the model is made (the hot path's read).
        self.validator: Any = model.__pydantic_validator__ if model is not None else None

    def build(self) -> Any:
        """Make the model if it is not made yet; its validator."""
        with self._lock:
            if self.model is None:
                self.model = build_model(self._target, self._fields)
                self.validator = self.model.__pydantic_validator__
        return self.validator


def describe_parameters(
    target: Target, fields: Fields, params: list[ParameterSpec], defaults: dict[str, Any]
) -> tuple[dict[str, Any], type[BaseModel] | None]:
    """The parameters schema (root closed, no titles), and the model when it had to be
    built for it (None: it is built on first use)."""
    try:
        schema = _described(fields, params, defaults)
    except Exception:  # a type or default only the model's errors can explain
        model = build_model(target, fields)
        check_defaults(target, model, defaults)
        return model_schema(target, model, fields, params), model
    return schema, None


def _described(
    fields: Fields, params: list[ParameterSpec], defaults: dict[str, Any]
) -> dict[str, Any]:
    adapters: list[tuple[str, Any, TypeAdapter[Any]]] = []
    plain: dict[str, dict[str, Any]] = {}  # parameters described without an adapter of their own
    for param in params:
        annotation, info = fields[param.field]
        if (
            info.alias is not None
            or info.validation_alias is not None
            or info.serialization_alias is not None
            or param.name in _UNSORTED
        ):
            # A renamed field is the model's to describe; so is one pydantic leaves unsorted
            # (its keys then keep the order the model writes them in).
            raise _ModelOnly
        simple = _simple_schema(annotation, info, defaults.get(param.name, _NO_DEFAULT))
        if simple is not None:
            plain[param.name] = simple
            continue
        adapter = _adapter(Annotated[annotation, info], annotation)
        if param.name in defaults:
            adapter.validate_python(defaults[param.name])  # raises: the model explains it
        adapters.append((param.name, "validation", adapter))
    described, definitions = (
        TypeAdapter.json_schemas(adapters, schema_generator=ArgsSchemaGenerator)
        if adapters
        else ({}, {})
    )
    root: dict[str, Any] = {
        "additionalProperties": False,
        "properties": {
            p.name: plain[p.name] if p.name in plain else described[(p.name, "validation")]
            for p in params
        },
    }
    required = [p.name for p in params if p.required]
    if required:
        root["required"] = required
    root["type"] = "object"
    root = _sorted(root)  # a model's schema is sorted the same way
    defs = definitions.get("$defs")
    if defs:
        root = {"$defs": defs, **root}
    return strip_titles(root)


#: Parameter names whose schema pydantic's sort leaves as written.
_UNSORTED = frozenset({"properties", "default"})


class _ModelOnly(Exception):
    """This parameter is described through the model."""


#: The model's configuration, as the parameters' types see it inside the model.
_CONFIG = ConfigDict(extra="forbid", protected_namespaces=(), populate_by_name=False)


def _adapter(annotated: Any, annotation: Any) -> TypeAdapter[Any]:
    """An adapter that sees the model's configuration: a nested TypedDict or dataclass
    is closed as in the model. A model parameter keeps its own configuration; a TypedDict
    or dataclass parameter would take the model's, which only the model can give it."""
    try:
        return TypeAdapter(annotated, config=_CONFIG)
    except PydanticUserError:  # the type has a configuration of its own
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return TypeAdapter(annotated)
        raise _ModelOnly from None


def _sorted(value: Any, parent_key: str | None = None) -> Any:
    """``value`` sorted as pydantic sorts a schema (``GenerateJsonSchema.sort``): keys
    alphabetically at every level, except the members of ``properties`` and ``default``."""
    if isinstance(value, dict):
        keys = value if parent_key in _UNSORTED else sorted(value)
        return {key: _sorted(value[key], key) for key in keys}
    if isinstance(value, list):
        return [_sorted(item, parent_key) for item in value]
    return value


_NO_DEFAULT: Any = object()


def _simple_schema(annotation: Any, info: Any, default: Any) -> dict[str, Any] | None:
    """The schema of a parameter whose field says no more than a description and a plain
    JSON default, of a type described without ``$defs``: the type's schema (its adapter
    made once per annotation) with the description and default, as a model writes them.
    None for anything else (its own adapter describes it)."""
    if (
        info.metadata
        or info.examples is not None
        or info.json_schema_extra is not None
        or info.title is not None
        or info.deprecated is not None
        or info.discriminator is not None
        or info.default_factory is not None
        or get_origin(annotation) is Annotated
        or (default is not _NO_DEFAULT and not plain_json(default))
    ):
        return None
    try:
        # Keyed by the text too: unions equal in any order (``int | str == str | int``)
        # are written in their own order.
        adapter, schema = _type_schema(annotation, repr(annotation))
    except TypeError:  # an unhashable annotation
        return None
    if adapter is None or schema is None:
        return None
    if default is not _NO_DEFAULT:
        adapter.validate_python(default)  # raises: the model explains it
    out = dict(schema)
    if info.description is not None:
        out["description"] = info.description
    if default is not _NO_DEFAULT:
        out["default"] = default
    return out


@functools.lru_cache(maxsize=256)
def _type_schema(
    annotation: Any, text: str
) -> tuple[TypeAdapter[Any] | None, dict[str, Any] | None]:
    """A type's adapter (the model's configuration) and schema, or None for a schema with
    references (those are named with the other parameters' definitions)."""
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(annotation, config=_CONFIG)
    except PydanticUserError:  # a model, dataclass or TypedDict: described with the others
        return None, None
    # Described as a list's items: a type pydantic gives a definition of its own (an enum,
    # a model) is then a reference, as it is inside a model, and is described with the
    # other parameters; at the root of its own schema it would be written inline.
    items = TypeAdapter(list[annotation], config=_CONFIG).json_schema(
        mode="validation", schema_generator=ArgsSchemaGenerator
    )
    if "$defs" in items or "$ref" in json.dumps(items):
        return adapter, None
    return adapter, strip_titles(items["items"])


def build_model(target: Target, fields: Fields) -> type[BaseModel]:
    """The arguments model: closed, by field name (aliases: the parameters' names)."""
    try:
        return create_model(
            f"{target.name}_arguments",
            __config__=_CONFIG,
            __module__=getattr(target.source, "__module__", None) or __name__,
            **fields,
        )
    except Exception as exc:
        culprit = _unsupported_field(fields)
        where = f"parameter {culprit!r}" if culprit else "its parameters"
        raise TypeError(
            f"tool {target.qualname}: cannot build a schema for {where}: {exc}"
        ) from exc


def _unsupported_field(fields: Fields) -> str | None:
    for name, (annotation, _) in fields.items():
        try:
            TypeAdapter(annotation)
        except Exception:
            return name
    return None


def model_schema(
    target: Target, model: type[BaseModel], fields: Fields, params: list[ParameterSpec]
) -> dict[str, Any]:
    """The parameters schema from the model (the way when a parameter resists adapters)."""
    try:
        return parameters_schema(model)
    except Exception as exc:  # pydantic fails on some defaults, e.g. one holding {"$ref": "x"}
        culprit = None
        for param in params:
            try:
                create_model("probe", **{param.field: fields[param.field]}).model_json_schema()
            except Exception:
                culprit = param.name
                break
        where = f"parameter {culprit!r}" if culprit else "its parameters"
        raise TypeError(
            f"tool {target.qualname}: cannot build a JSON schema for {where}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc


def check_defaults(target: Target, model: type[BaseModel], defaults: dict[str, Any]) -> None:
    """A ``TypeError`` naming the parameter whose default its annotation rejects."""
    if not defaults:
        return
    try:
        model.model_validate(defaults)
    except ValidationError as exc:
        for error in exc.errors():
            if error["type"] != "missing" and error["loc"] and error["loc"][0] in defaults:
                raise TypeError(
                    f"tool {target.qualname}: the default of parameter {error['loc'][0]!r} "
                    f"does not match its annotation: {error['msg']}"
                ) from exc
