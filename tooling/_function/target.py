"""What ``@tool`` was given, reduced to what a tool needs, with the cheap checks done.

Everything here runs at decoration time, so it never resolves type annotations: a module
with ``from __future__ import annotations`` may name types that do not exist yet.
"""

from __future__ import annotations

import functools
import inspect
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

__all__: list[str] = []

CONTEXT_PARAM_NAME = "tool_context"
_SELF_NAMES = {"self": "instance", "cls": "class"}

Kind = Literal["sync", "async", "gen", "asyncgen"]
Binding = Literal["none", "instance", "class"]
Isolation = Literal["thread", "process"]


@dataclass(frozen=True, slots=True)
class Target:
    """A callable ready to become a tool.

    ``call`` is what gets invoked (for ``binding != "none"`` the plain function, to be
    bound to an instance or class first); ``source`` is the function whose annotations,
    globals and docstring describe it; ``parameters`` the signature's parameters without
    ``self``/``cls`` and without the keywords a ``functools.partial`` binds;
    :meth:`source_parameter_names` gives every parameter name of ``source`` (hidden
    ones included).
    """

    call: Callable[..., Any]
    source: Callable[..., Any]
    name: str
    qualname: str
    doc: str | None
    parameters: tuple[inspect.Parameter, ...]
    binding: Binding
    kind: Kind

    def source_parameter_names(self) -> frozenset[str]:
        """Every parameter name of ``source``, the ones a partial or binding hides included."""
        try:
            return frozenset(inspect.signature(self.source).parameters)
        except (TypeError, ValueError):
            return frozenset()


def _innermost(func: Any) -> Any:
    while isinstance(func, functools.partial):
        func = func.func
    return func


def _partial_keywords(func: Any) -> set[str]:
    """The names a (possibly nested) ``functools.partial`` binds by keyword."""
    names: set[str] = set()
    while isinstance(func, functools.partial):
        names.update(func.keywords)
        func = func.func
    return names


def _kind_of(func: Any) -> Kind:
    if inspect.isasyncgenfunction(func):
        return "asyncgen"
    if inspect.iscoroutinefunction(func):
        return "async"
    if inspect.isgeneratorfunction(func):
        return "gen"
    return "sync"


def analyze_target(obj: Any) -> Target:
    """Inspect ``obj`` (function, coroutine or generator function, partial, bound method,
    static or class method, or callable object) and check what needs no type resolution:
    no ``*args``/``**kwargs``, an annotation on every parameter the model will see."""
    binding: Binding = "none"
    if isinstance(obj, staticmethod):
        obj = obj.__func__
    elif isinstance(obj, classmethod):
        obj = obj.__func__
        binding = "class"

    inner = _innermost(obj)
    if isinstance(inner, types.MethodType):
        source = inner.__func__
        kind = _kind_of(inner)
    elif inspect.isfunction(inner) or inspect.isbuiltin(inner):
        source = inner
        kind = _kind_of(inner)
    elif callable(inner) and not isinstance(inner, type):
        source = type(inner).__call__
        kind = _kind_of(source)
    else:
        raise TypeError(f"@tool needs a function or callable object, got {obj!r}")

    if isinstance(inner, types.FunctionType | types.MethodType | types.BuiltinFunctionType):
        name = inner.__name__
        qualname = getattr(inner, "__qualname__", name)
        doc = inner.__doc__
    else:  # a callable object: named after its class, described by __call__ or the class
        name = type(inner).__name__
        qualname = type(inner).__qualname__
        doc = type(inner).__call__.__doc__ or type(inner).__doc__

    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"cannot read the signature of {qualname}: {exc}") from exc

    # A keyword bound by a partial is the developer's (a key, a client): the model neither
    # sees it (its value would show as a default) nor may override it.
    bound_keywords = _partial_keywords(obj)
    parameters = [p for p in signature.parameters.values() if p.name not in bound_keywords]
    if binding == "class":
        parameters = parameters[1:]
    elif (
        binding == "none"
        and inspect.isfunction(obj)
        and parameters
        and parameters[0].name in _SELF_NAMES
        and parameters[0].kind <= inspect.Parameter.POSITIONAL_OR_KEYWORD
    ):
        binding = "instance" if parameters[0].name == "self" else "class"
        parameters = parameters[1:]

    for param in parameters:
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            raise TypeError(
                f"tool {qualname}: parameter '*{param.name}' is not supported; "
                "a model calls tools with named arguments only"
            )
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            raise TypeError(
                f"tool {qualname}: parameter '**{param.name}' is not supported; "
                "declare each argument the model may send"
            )
        if param.annotation is inspect.Parameter.empty and param.name != CONTEXT_PARAM_NAME:
            raise TypeError(
                f"tool {qualname}: parameter {param.name!r} has no type annotation; "
                "the schema the model sees is built from annotations"
            )

    return Target(
        call=obj,
        source=source,
        name=name,
        qualname=qualname,
        doc=doc,
        parameters=tuple(parameters),
        binding=binding,
        kind=kind,
    )


def process_reference(target: Target) -> ProcessRef:
    """Where a worker process imports ``target`` from: its module and qualified name.

    Raises ``TypeError`` saying why when a fresh process could not find it that way: a
    closure, a lambda, a method, a partial or callable object, or a function of a script
    run as ``__main__`` (a worker does not run the script; a module run with
    ``python -m`` is found by its name).
    """
    where = f"tool {target.qualname}: isolation='process' needs"
    if target.kind in ("async", "asyncgen"):
        raise TypeError(
            f"{where} a sync function or sync generator; an async function already runs "
            "on the event loop and is cancelled there"
        )
    if target.binding != "none":
        raise TypeError(
            f"{where} a module-level function: a method's instance cannot be sent to a "
            "worker process"
        )
    func = target.call
    if not inspect.isfunction(func) or func is not target.source:
        raise TypeError(
            f"{where} a plain function: a partial, bound method or callable object cannot "
            "be imported by name in a worker process"
        )
    if target.name == "<lambda>":
        raise TypeError(f"{where} a named function: a lambda cannot be imported by name")
    if "<locals>" in target.qualname.split("."):
        raise TypeError(
            f"{where} a function defined at the top level of a module; this one is defined "
            "inside another function (a closure), which a worker process cannot import"
        )
    module = getattr(func, "__module__", None)
    if module == "__main__":
        # Run with ``python -m pkg.mod``, the module has a name a worker can import.
        main = sys.modules.get("__main__")
        named = getattr(getattr(main, "__spec__", None), "name", None)
        if named and getattr(func, "__globals__", None) is getattr(main, "__dict__", ()):
            return ProcessRef(named, target.qualname, None)
        raise TypeError(
            f"{where} a function in an importable module; this one is in __main__ (the "
            "script being run), which a worker process (a fresh interpreter) does not "
            "run: move it into a module and import it"
        )
    if not module or module not in sys.modules:
        raise TypeError(
            f"{where} a function in an importable module; its module {module!r} is not "
            "one (it was not imported)"
        )
    # A module loaded by path under a made-up name (``tooling call file.py``, an agent
    # folder) is loaded the same way in the worker.
    file = getattr(sys.modules[module], "__file__", None)
    return ProcessRef(module, target.qualname, file if isinstance(file, str) else None)


class ProcessRef(NamedTuple):
    """Where a worker process finds a tool's function."""

    module: str
    qualname: str
    file: str | None
