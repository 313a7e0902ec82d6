"""Random tool signatures for the property tests: a small type grammar, values per type.

A :class:`TypeNode` is one annotation together with a strategy for valid Python values of
it and a precise ``check(got, expected, path)``: the value pydantic handed the function
must mean the value that was sent, with the right Python type at every level (tuples
stay tuples, sets stay sets, enum members are the members, models, dataclasses and
TypedDicts are of the right class, an ``int`` is not a ``bool`` or a ``float``).

:func:`type_nodes` draws annotations from the grammar (primitives, ``Optional``, unions of
distinct simple kinds, ``list``/``dict``/``tuple``/``set``, ``Literal``, ``Enum``, nested
pydantic models, TypedDicts and dataclasses, built on the fly). :func:`signatures` draws a
whole signature, and :meth:`Sig.build` turns it into a real function that records the
arguments it was called with: either ``def`` source run through ``exec``, or a generic
``(*args, **kwargs)`` function carrying ``__signature__`` and ``__annotations__``.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import inspect
import itertools
import keyword
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import pydantic
import pydantic_core
import typing_extensions
from hypothesis import strategies as st

__all__ = [
    "Param",
    "Sig",
    "TypeNode",
    "arguments",
    "showable_default",
    "signatures",
    "type_nodes",
]

Check = Callable[[Any, Any, str], None]
EMPTY = inspect.Parameter.empty
POSITIONAL_ONLY = inspect.Parameter.POSITIONAL_ONLY
POSITIONAL_OR_KEYWORD = inspect.Parameter.POSITIONAL_OR_KEYWORD
KEYWORD_ONLY = inspect.Parameter.KEYWORD_ONLY

_ids = itertools.count()


def _fail(path: str, message: str) -> typing.NoReturn:
    raise AssertionError(f"at {path or '(arguments)'}: {message}")


@dataclass(eq=False)
class TypeNode:
    """An annotation, valid Python values for it, and how to compare what arrives."""

    ann: Any
    text: str
    values: st.SearchStrategy[Any]
    check: Check
    nullable: bool = False
    #: Somewhere inside is an object with free keys (``dict[str, T]``).
    open_dict: bool = False
    #: The node of what sits under a key or index of this node's JSON form (leaves: None).
    child: Callable[[Any], TypeNode] | None = None
    #: Keys of this object that may be left out: fields with a default, ``NotRequired`` keys.
    omittable: frozenset[str] = frozenset()

    def __repr__(self) -> str:
        return self.text


# -- leaves ----------------------------------------------------------------------------------


def _exact(tp: type) -> Check:
    def check(got: Any, expected: Any, path: str) -> None:
        if type(got) is not tp:
            _fail(path, f"expected a {tp.__name__}, got {type(got).__name__} {got!r}")
        if got != expected:
            _fail(path, f"expected {expected!r}, got {got!r}")

    return check


_PRIMITIVE_VALUES: dict[type, st.SearchStrategy[Any]] = {
    str: st.text(max_size=8),
    int: st.integers(-(2**70), 2**70),
    float: st.floats(allow_nan=False, allow_infinity=False),
    bool: st.booleans(),
}


def primitive(tp: type) -> TypeNode:
    return TypeNode(tp, tp.__name__, _PRIMITIVE_VALUES[tp], _exact(tp))


_NAMED: dict[str, type] = {"str": str, "int": int, "float": float, "bool": bool}


def _list_of_int() -> TypeNode:
    return list_of(primitive(int))


# Union members are distinct in JSON: no int with float (1.0 is an integer to JSON Schema).
_UNION_KINDS: tuple[str, ...] = ("str", "int", "float", "bool", "list[int]")


@st.composite
def simple_union(draw: st.DrawFn) -> TypeNode:
    kinds = draw(st.lists(st.sampled_from(_UNION_KINDS), min_size=2, max_size=3, unique=True))
    if "int" in kinds and "float" in kinds:
        kinds.remove(draw(st.sampled_from(["int", "float"])))
    members = [_list_of_int() if k == "list[int]" else primitive(_NAMED[k]) for k in kinds]
    by_type = {list if m.text.startswith("list") else m.ann: m for m in members}

    def check(got: Any, expected: Any, path: str) -> None:
        by_type[type(expected)].check(got, expected, path)

    ann = typing.Union[tuple(m.ann for m in members)]  # noqa: UP007
    text = " | ".join(m.text for m in members)
    lists = [m for m in members if m.child is not None]
    child = lists[0].child if lists else None
    return TypeNode(ann, text, st.one_of(*(m.values for m in members)), check, child=child)


@st.composite
def literal(draw: st.DrawFn) -> TypeNode:
    options = draw(
        st.lists(
            st.text(max_size=4) | st.integers(-3, 9),
            min_size=1,
            max_size=4,
            unique_by=lambda v: (type(v), v),
        )
    )
    ann = Literal[tuple(options)]
    return TypeNode(ann, f"Literal{options!r}", st.sampled_from(options), _same_typed_value)


def _same_typed_value(got: Any, expected: Any, path: str) -> None:
    if type(got) is not type(expected) or got != expected:
        _fail(path, f"expected {expected!r}, got {got!r}")


def _is_member(got: Any, expected: Any, path: str) -> None:
    if got is not expected:
        _fail(path, f"expected the member {expected!r}, got {type(got).__name__} {got!r}")


@st.composite
def enum_class(draw: st.DrawFn) -> TypeNode:
    base = draw(st.sampled_from(["Enum", "StrEnum", "IntEnum"]))
    if base == "StrEnum":
        element: st.SearchStrategy[Any] = st.text(max_size=4)
    elif base == "IntEnum":
        element = st.integers(-3, 9)
    else:
        element = st.text(max_size=4) | st.integers(-3, 9)
    options = draw(st.lists(element, min_size=1, max_size=4, unique_by=lambda v: (type(v), v)))
    name = f"Choice{next(_ids)}"
    members = [(f"M{i}", v) for i, v in enumerate(options)]
    cls = getattr(enum, base)(name, members, module=__name__)
    text = f"{name}({base}: {', '.join(repr(v) for v in options)})"
    return TypeNode(cls, text, st.sampled_from(list(cls)), _is_member)


@st.composite
def set_of(draw: st.DrawFn) -> TypeNode:
    element_kind = draw(st.sampled_from(["int", "str", "int | str"]))
    element = {
        "int": st.integers(-100, 100),
        "str": st.text(max_size=4),
        "int | str": st.integers(-100, 100) | st.text(max_size=4),
    }[element_kind]
    frozen = draw(st.booleans())
    container = frozenset if frozen else set
    ann = container[int | str if element_kind == "int | str" else _NAMED[element_kind]]

    def check(got: Any, expected: Any, path: str) -> None:
        if type(got) is not container:
            _fail(path, f"expected a {container.__name__}, got {type(got).__name__} {got!r}")
        if {(type(x), x) for x in got} != {(type(x), x) for x in expected}:
            _fail(path, f"expected {expected!r}, got {got!r}")

    values = st.frozensets(element, max_size=4) if frozen else st.sets(element, max_size=4)
    return TypeNode(ann, f"{container.__name__}[{element_kind}]", values, check)


# -- containers ------------------------------------------------------------------------------


def optional(inner: TypeNode) -> TypeNode:
    """``Optional[inner]``; ``inner`` itself when it already admits None."""
    if inner.nullable:
        return inner

    def check(got: Any, expected: Any, path: str) -> None:
        if expected is None:
            if got is not None:
                _fail(path, f"expected None, got {got!r}")
        else:
            inner.check(got, expected, path)

    return TypeNode(
        typing.Optional[inner.ann],  # noqa: UP045
        f"{inner.text} | None",
        st.none() | inner.values,
        check,
        nullable=True,
        open_dict=inner.open_dict,
        child=inner.child,
        omittable=inner.omittable,
    )


def _sequence_check(container: type, inner: Check) -> Check:
    def check(got: Any, expected: Any, path: str) -> None:
        if type(got) is not container:
            _fail(path, f"expected a {container.__name__}, got {type(got).__name__} {got!r}")
        if len(got) != len(expected):
            _fail(path, f"expected {len(expected)} items, got {len(got)}: {got!r}")
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            inner(g, e, f"{path}[{i}]")

    return check


def list_of(inner: TypeNode) -> TypeNode:
    return TypeNode(
        list[inner.ann],
        f"list[{inner.text}]",
        st.lists(inner.values, max_size=3),
        _sequence_check(list, inner.check),
        open_dict=inner.open_dict,
        child=lambda _: inner,
    )


def tuple_of(inner: TypeNode) -> TypeNode:
    return TypeNode(
        tuple[inner.ann, ...],
        f"tuple[{inner.text}, ...]",
        st.lists(inner.values, max_size=3).map(tuple),
        _sequence_check(tuple, inner.check),
        open_dict=inner.open_dict,
        child=lambda _: inner,
    )


def fixed_tuple(items: list[TypeNode]) -> TypeNode:
    def check(got: Any, expected: Any, path: str) -> None:
        if type(got) is not tuple or len(got) != len(items):
            _fail(path, f"expected a tuple of {len(items)}, got {type(got).__name__} {got!r}")
        for i, (node, g, e) in enumerate(zip(items, got, expected, strict=True)):
            node.check(g, e, f"{path}[{i}]")

    return TypeNode(
        tuple[tuple(n.ann for n in items)],
        f"tuple[{', '.join(n.text for n in items)}]",
        st.tuples(*(n.values for n in items)),
        check,
        open_dict=any(n.open_dict for n in items),
        child=items.__getitem__,
    )


def dict_of(inner: TypeNode) -> TypeNode:
    def check(got: Any, expected: Any, path: str) -> None:
        if type(got) is not dict:
            _fail(path, f"expected a dict, got {type(got).__name__} {got!r}")
        if set(got) != set(expected):
            _fail(path, f"expected keys {sorted(expected)!r}, got {sorted(got)!r}")
        for key, e in expected.items():
            inner.check(got[key], e, f"{path}[{key!r}]")

    return TypeNode(
        dict[str, inner.ann],
        f"dict[str, {inner.text}]",
        st.dictionaries(st.text(max_size=4), inner.values, max_size=3),
        check,
        open_dict=True,
        child=lambda _: inner,
    )


# Field names for nested models and dataclasses: some are JSON Schema keywords, which a
# schema walker must not confuse with keywords. (No BaseModel attribute names here:
# pydantic refuses those in user models; the tool's own arguments model is another matter.)
_FIELD_NAMES = ("alpha", "beta", "gamma", "title", "items", "type", "default")
# TypedDict keys need not be identifiers.
_TYPEDDICT_KEYS = ("alpha", "beta", "title", "$ref", "with space", "properties")


@st.composite
def _fields(
    draw: st.DrawFn, names: tuple[str, ...], depth: int, dicts: bool
) -> list[tuple[str, TypeNode, Any]]:
    """``(name, node, default or EMPTY)`` for up to three fields."""
    chosen = draw(st.lists(st.sampled_from(names), max_size=3, unique=True))
    out = []
    for name in chosen:
        node = draw(type_nodes(depth, dicts))
        default = draw(node.values.filter(showable_default)) if draw(st.booleans()) else EMPTY
        out.append((name, node, default))
    return out


def showable_default(value: Any) -> bool:
    """False for a default pydantic cannot put in a JSON Schema: one holding a
    ``{"$ref": "<text>"}`` object makes ``model_json_schema`` raise ``KeyError`` (a
    pydantic bug; the tool then refuses the signature, see ``test_properties``)."""
    stack = [pydantic_core.to_jsonable_python(value)]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("$ref"), str):
                return False
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


def _fields_text(fields: list[tuple[str, TypeNode, Any]]) -> str:
    return ", ".join(
        f"{n}: {node.text}" + ("" if d is EMPTY else f" = {d!r}") for n, node, d in fields
    )


def _attribute_check(cls: type, fields: list[tuple[str, TypeNode, Any]]) -> Check:
    def check(got: Any, expected: Any, path: str) -> None:
        if type(got) is not cls:
            _fail(path, f"expected a {cls.__name__}, got {type(got).__name__} {got!r}")
        for name, node, _ in fields:
            node.check(getattr(got, name), getattr(expected, name), f"{path}.{name}")

    return check


def _instances(cls: Callable[..., Any], fields: list[tuple[str, TypeNode, Any]]) -> Any:
    required = {n: node.values for n, node, d in fields if d is EMPTY}
    optional_ = {n: node.values for n, node, d in fields if d is not EMPTY}
    return st.fixed_dictionaries(required, optional=optional_).map(lambda kw: cls(**kw))


@st.composite
def model(draw: st.DrawFn, depth: int, dicts: bool) -> TypeNode:
    fields = draw(_fields(_FIELD_NAMES, depth, dicts))
    name = f"Model{next(_ids)}"
    cls = pydantic.create_model(
        name,
        __module__=__name__,
        **{n: (node.ann, ... if d is EMPTY else d) for n, node, d in fields},
    )
    return TypeNode(
        cls,
        f"{name}{{{_fields_text(fields)}}}",
        _instances(cls, fields),
        _attribute_check(cls, fields),
        open_dict=any(node.open_dict for _, node, _ in fields),
        child={n: node for n, node, _ in fields}.__getitem__,
        omittable=frozenset(n for n, _, d in fields if d is not EMPTY),
    )


@st.composite
def dataclass_type(draw: st.DrawFn, depth: int, dicts: bool) -> TypeNode:
    fields = draw(_fields(_FIELD_NAMES, depth, dicts))
    fields.sort(key=lambda f: f[2] is not EMPTY)  # fields without a default come first
    spec: list[Any] = []
    for n, node, d in fields:
        if d is EMPTY:
            spec.append((n, node.ann))
        elif type(d).__hash__ is None:  # dataclasses refuse mutable defaults
            factory = functools.partial(copy.deepcopy, d)
            spec.append((n, node.ann, dataclasses.field(default_factory=factory)))
        else:
            spec.append((n, node.ann, dataclasses.field(default=d)))
    name = f"Data{next(_ids)}"
    cls = dataclasses.make_dataclass(name, spec, namespace={"__module__": __name__})
    return TypeNode(
        cls,
        f"@dataclass {name}({_fields_text(fields)})",
        _instances(cls, fields),
        _attribute_check(cls, fields),
        open_dict=any(node.open_dict for _, node, _ in fields),
        child={n: node for n, node, _ in fields}.__getitem__,
        omittable=frozenset(n for n, _, d in fields if d is not EMPTY),
    )


@st.composite
def typed_dict(draw: st.DrawFn, depth: int, dicts: bool) -> TypeNode:
    keys = draw(st.lists(st.sampled_from(_TYPEDDICT_KEYS), max_size=3, unique=True))
    nodes = {k: draw(type_nodes(depth, dicts)) for k in keys}
    required = {k: draw(st.booleans()) for k in keys}
    annotations = {
        k: node.ann if required[k] else typing_extensions.NotRequired[node.ann]
        for k, node in nodes.items()
    }
    name = f"Typed{next(_ids)}"
    cls = typing_extensions.TypedDict(name, annotations)  # type: ignore[operator]
    cls.__module__ = __name__

    def check(got: Any, expected: Any, path: str) -> None:
        if type(got) is not dict:
            _fail(path, f"expected a dict, got {type(got).__name__} {got!r}")
        if set(got) != set(expected):
            _fail(path, f"expected keys {sorted(expected)!r}, got {sorted(got)!r}")
        for key, e in expected.items():
            nodes[key].check(got[key], e, f"{path}[{key!r}]")

    values = st.fixed_dictionaries(
        {k: n.values for k, n in nodes.items() if required[k]},
        optional={k: n.values for k, n in nodes.items() if not required[k]},
    )
    text = ", ".join(
        f"{k!r}: {n.text if required[k] else f'NotRequired[{n.text}]'}" for k, n in nodes.items()
    )
    return TypeNode(
        cls,
        f"TypedDict {name}{{{text}}}",
        values,
        check,
        open_dict=any(n.open_dict for n in nodes.values()),
        child=nodes.__getitem__,
        omittable=frozenset(k for k in keys if not required[k]),
    )


# -- the grammar -----------------------------------------------------------------------------


@functools.cache
def _leaves() -> st.SearchStrategy[TypeNode]:
    return st.one_of(
        st.sampled_from([str, int, float, bool]).map(primitive),
        literal(),
        enum_class(),
        simple_union(),
        set_of(),
    )


@functools.cache  # one strategy object per depth: hypothesis validates each new one
def type_nodes(depth: int = 2, dicts: bool = True) -> st.SearchStrategy[TypeNode]:
    """An annotation from the grammar, nested at most ``depth`` levels below the top;
    without open mappings (``dict[str, T]``) unless ``dicts``."""
    if depth <= 0:
        return _leaves()
    inner = type_nodes(depth - 1, dicts)
    return st.one_of(
        _leaves(),
        inner.map(optional),
        inner.map(list_of),
        *([inner.map(dict_of)] if dicts else []),
        inner.map(tuple_of),
        st.lists(inner, min_size=1, max_size=3).map(fixed_tuple),
        model(depth - 1, dicts),
        typed_dict(depth - 1, dicts),
        dataclass_type(depth - 1, dicts),
    )


# -- signatures ------------------------------------------------------------------------------

# Names that collide with pydantic's BaseModel attributes, start with "_", or look like the
# field names the tool gives such parameters internally: the spec must alias them.
_AWKWARD_NAMES = (
    "json",
    "copy",
    "schema",
    "model_config",
    "model_fields",
    "validate",
    "_private",
    "__dunder",
    "arg_0_",
    "arg_1_",
    "title",
    "type",
    "properties",
)
_NOT_PARAMETERS = frozenset({"self", "cls", "tool_context"})

parameter_names = st.one_of(
    st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True).filter(
        lambda s: not keyword.iskeyword(s) and s not in _NOT_PARAMETERS
    ),
    st.sampled_from(_AWKWARD_NAMES),
)


@dataclass(eq=False)
class Param:
    """One parameter: ``node`` says what values mean, ``annotation`` is what is written."""

    name: str
    node: TypeNode
    annotation: Any
    kind: inspect._ParameterKind
    default: Any = EMPTY
    description: str | None = None
    annotation_text: str = ""

    @property
    def required(self) -> bool:
        return self.default is EMPTY


@dataclass(eq=False)
class Sig:
    """A drawn signature; :meth:`build` makes a recording function with it."""

    params: list[Param]
    style: Literal["exec", "signature"]
    is_async: bool

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.params]

    def _param_texts(
        self, annotation: Callable[[int, Param], str], default: Callable[[int, Param], str]
    ) -> str:
        parts: list[str] = []
        for i, p in enumerate(self.params):
            if p.kind is KEYWORD_ONLY and not any(x.kind is KEYWORD_ONLY for x in self.params[:i]):
                parts.append("*")
            parts.append(
                f"{p.name}: {annotation(i, p)}" + ("" if p.required else f" = {default(i, p)}")
            )
            last_positional_only = p.kind is POSITIONAL_ONLY and (
                i + 1 == len(self.params) or self.params[i + 1].kind is not POSITIONAL_ONLY
            )
            if last_positional_only:
                parts.append("/")
        return ", ".join(parts)

    def source(self) -> str:
        header = self._param_texts(lambda i, p: f"T__{i}", lambda i, p: f"D__{i}")
        received = ", ".join(f"{p.name!r}: {p.name}" for p in self.params)
        prefix = "async def" if self.is_async else "def"
        return (
            f"{prefix} generated_tool({header}):\n"
            f"    RECORD__.append({{{received}}})\n"
            f"    return dict(RECORD__[-1])\n"
        )

    def __repr__(self) -> str:
        header = self._param_texts(lambda i, p: p.annotation_text, lambda i, p: repr(p.default))
        prefix = "async def" if self.is_async else "def"
        return f"<{self.style}: {prefix} generated_tool({header})>"

    def build(self) -> tuple[Callable[..., Any], list[dict[str, Any]]]:
        """A function with this signature, and the list each call's arguments go into."""
        calls: list[dict[str, Any]] = []
        if self.style == "exec":
            namespace: dict[str, Any] = {"RECORD__": calls, "__name__": __name__}
            for i, p in enumerate(self.params):
                namespace[f"T__{i}"] = p.annotation
                namespace[f"D__{i}"] = p.default
            exec(compile(self.source(), "<generated tool>", "exec"), namespace)
            return namespace["generated_tool"], calls

        signature = inspect.Signature(
            [
                inspect.Parameter(p.name, p.kind, default=p.default, annotation=p.annotation)
                for p in self.params
            ]
        )

        def record(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            calls.append(dict(bound.arguments))
            return dict(bound.arguments)

        if self.is_async:

            async def generated_tool(*args: Any, **kwargs: Any) -> Any:
                return record(args, kwargs)

        else:

            def generated_tool(*args: Any, **kwargs: Any) -> Any:
                return record(args, kwargs)

        generated_tool.__signature__ = signature  # type: ignore[attr-defined]
        generated_tool.__annotations__ = {p.name: p.annotation for p in self.params}
        return generated_tool, calls


@st.composite
def signatures(draw: st.DrawFn, max_params: int = 6, depth: int = 2, dicts: bool = True) -> Sig:
    """A signature of 0..max_params parameters whose types nest at most depth + 1 deep
    (with ``dict[str, T]`` among them unless ``dicts`` is false)."""
    names = draw(st.lists(parameter_names, max_size=max_params, unique=True))
    params: list[Param] = []
    state = 0  # 0: positional-only still allowed, 1: positional-or-keyword, 2: keyword-only
    positional_default_seen = False
    for name in names:
        node = draw(type_nodes(depth, dicts))
        annotation, text = node.ann, node.text
        default: Any = EMPTY
        if draw(st.booleans()):
            if not node.nullable and draw(st.integers(0, 4)) == 0:
                default = None  # ``x: T = None`` means ``Optional[T]``
                node = optional(node)
            else:
                default = draw(node.values.filter(showable_default))
        description = None
        if draw(st.integers(0, 3)) == 0:
            description = draw(st.from_regex(r"[A-Z][a-z ]{0,15}[a-z]", fullmatch=True))
            annotation = Annotated[annotation, description]
            text = f"Annotated[{text}, {description!r}]"

        required = default is EMPTY
        positional_ok = not (required and positional_default_seen)
        kinds = []
        if positional_ok and state <= 1:
            kinds.append(POSITIONAL_OR_KEYWORD)
        if positional_ok and state == 0:
            kinds.append(POSITIONAL_ONLY)
        kinds.append(KEYWORD_ONLY)
        kind = draw(st.sampled_from(kinds))
        state = {POSITIONAL_ONLY: 0, POSITIONAL_OR_KEYWORD: 1, KEYWORD_ONLY: 2}[kind]
        if kind is not KEYWORD_ONLY and not required:
            positional_default_seen = True
        params.append(Param(name, node, annotation, kind, default, description, text))
    style = draw(st.sampled_from(["exec", "signature"]))
    return Sig(params, style, draw(st.booleans()))


@st.composite
def arguments(draw: st.DrawFn, sig: Sig) -> dict[str, Any]:
    """Python values for every required parameter and some of the others."""
    out: dict[str, Any] = {}
    for p in sig.params:
        if p.required or draw(st.booleans()):
            out[p.name] = draw(p.node.values)
    return out
