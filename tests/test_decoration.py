"""``@tool`` and ``FunctionTool``: the forms a tool can take, and what is checked when."""

import asyncio
import functools
import importlib.util
import inspect
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

from tooling import FunctionTool, SimpleToolContext, ToolContext, ToolError, tool

# -- helpers -------------------------------------------------------------------------------


def props(t: FunctionTool) -> dict[str, Any]:
    return t.parameters_json_schema["properties"]


def import_module_from(tmp_path: Path, source: str) -> Any:
    """Write ``source`` to a fresh module file under ``tmp_path`` and import it."""
    name = f"_tooling_test_mod_{uuid.uuid4().hex}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@pytest.fixture
def load_module(tmp_path: Path):
    loaded: list[str] = []

    def load(source: str) -> Any:
        module = import_module_from(tmp_path, source)
        loaded.append(module.__name__)
        return module

    yield load
    for name in loaded:
        sys.modules.pop(name, None)


# -- @tool bare, with options, and FunctionTool ----------------------------------------------


def test_bare_decorator_gives_function_tool_named_after_function() -> None:
    @tool
    def is_even(n: int) -> bool:
        """Tell whether n is even."""
        return n % 2 == 0

    assert isinstance(is_even, FunctionTool)
    assert is_even.name == "is_even"
    assert is_even.description == "Tell whether n is even."
    assert is_even(4) is True
    assert is_even(3) is False


def test_decorator_with_options_sets_flags() -> None:
    @tool(
        name="renamed",
        description="Custom.",
        read_only=True,
        concurrency_safe=True,
        idempotent=True,
        timeout=2.5,
        scopes=["a", "b"],
        run_in_thread=False,
        require_confirmation=True,
    )
    def f(x: int) -> int:
        """Original docstring."""
        return x

    assert f.name == "renamed"
    assert f.description == "Custom."
    assert f.read_only is True
    assert f.concurrency_safe is True
    assert f.idempotent is True
    assert f.timeout == 2.5
    assert f.scopes == ("a", "b")
    assert f.run_in_thread is False
    assert f.require_confirmation is True
    assert f.long_running is False
    # destructive=None means "not read_only".
    assert f.destructive is None
    assert f.is_destructive is False
    # the Python name is still the function's
    assert f.__name__ == "f"


def test_default_flags() -> None:
    @tool
    def f(x: int) -> int:
        return x

    assert f.read_only is False
    assert f.concurrency_safe is False
    assert f.long_running is False
    assert f.idempotent is False
    assert f.is_destructive is True
    assert f.require_confirmation is False
    assert f.timeout is None
    assert f.scopes == ()
    assert f.run_in_thread is True


def test_explicit_destructive_overrides_read_only_default() -> None:
    @tool(read_only=True, destructive=True)
    def f(x: int) -> int:
        return x

    assert f.is_destructive is True


def test_require_confirmation_accepts_a_predicate() -> None:
    def needs(args: dict) -> bool:
        return args["x"] > 3

    @tool(require_confirmation=needs)
    def f(x: int) -> int:
        return x

    assert f.require_confirmation is needs


def test_function_tool_constructor_is_equivalent_to_decorator() -> None:
    def greet(name: str, punctuation: str = "!") -> str:
        """Greet someone.

        Args:
            name: Who to greet.
            punctuation: How to end.
        """
        return f"hi {name}{punctuation}"

    a = FunctionTool(greet, read_only=True, long_running=True)
    b = tool(read_only=True, long_running=True)(greet)
    c = tool(greet)
    assert type(a) is type(b) is type(c) is FunctionTool
    assert a.name == b.name == c.name == "greet"
    assert a.description == b.description
    assert a.parameters_json_schema == b.parameters_json_schema == c.parameters_json_schema
    assert a.response_json_schema == b.response_json_schema == c.response_json_schema
    assert a.read_only and b.read_only and not c.read_only
    assert a.long_running and b.long_running and not c.long_running
    assert a("x") == b("x") == c("x") == "hi x!"


async def test_function_tool_runs_like_decorated() -> None:
    def add(a: int, b: int) -> int:
        return a + b

    assert await FunctionTool(add).run({"a": 1, "b": 2}) == {"result": 3}
    assert await tool(add).run({"a": 1, "b": 2}) == {"result": 3}


# -- forms ---------------------------------------------------------------------------------


async def test_plain_function() -> None:
    @tool
    def double(x: int) -> int:
        return 2 * x

    assert double(3) == 6
    assert not inspect.iscoroutinefunction(double)
    assert await double.run({"x": 3}) == {"result": 6}


async def test_async_function_returns_coroutine_when_called() -> None:
    @tool
    async def double(x: int) -> int:
        await asyncio.sleep(0)
        return 2 * x

    assert inspect.iscoroutinefunction(double)
    coro = double(4)
    assert inspect.iscoroutine(coro)
    assert await coro == 8
    assert await double.run({"x": 4}) == {"result": 8}


async def test_generator_function() -> None:
    @tool
    def count(n: int):
        yield from range(n)

    gen = count(3)
    assert inspect.isgenerator(gen)
    assert list(gen) == [0, 1, 2]
    assert await count.run({"n": 3}) == {"result": 2}


async def test_async_generator_function() -> None:
    @tool
    async def count(n: int):
        for i in range(n):
            yield i

    agen = count(3)
    assert inspect.isasyncgen(agen)
    assert [i async for i in agen] == [0, 1, 2]
    assert await count.run({"n": 3}) == {"result": 2}


async def test_partial_takes_wrapped_name_and_hides_positional_bound_args() -> None:
    def scale(factor: int, value: int, offset: int = 0) -> int:
        """Scale a value.

        Args:
            factor: Multiplier.
            value: The value.
            offset: Added after.
        """
        return factor * value + offset

    t = FunctionTool(functools.partial(scale, 10))
    assert t.name == "scale"
    assert t.description == "Scale a value."
    assert list(props(t)) == ["value", "offset"]
    assert t.parameters_json_schema["required"] == ["value"]
    assert props(t)["value"]["description"] == "The value."
    assert await t.run({"value": 2}) == {"result": 20}
    assert t(3) == 30
    with pytest.raises(ToolError) as info:
        await t.run({"value": 2, "factor": 3})
    assert info.value.code == "tool.invalid_arguments"


async def test_partial_hides_keyword_bound_args() -> None:
    # A keyword bound by a partial (an API key, a client) must neither show in the schema
    # (its value would leak as a default) nor be overridable by the model.
    def fetch(url: str, api_key: str, retries: int = 1) -> str:
        return f"{url}|{api_key}|{retries}"

    t = tool(functools.partial(fetch, api_key="s3cret"))
    assert t.name == "fetch"
    schema = t.parameters_json_schema
    assert list(schema["properties"]) == ["url", "retries"]
    assert "s3cret" not in repr(schema)
    assert await t.run({"url": "u"}) == {"result": "u|s3cret|1"}
    with pytest.raises(ToolError) as info:
        await t.run({"url": "u", "api_key": "mine"})
    assert info.value.code == "tool.invalid_arguments"


async def test_nested_partial() -> None:
    def f(a: int, b: int, c: int) -> int:
        return a * 100 + b * 10 + c

    t = FunctionTool(functools.partial(functools.partial(f, 1), 2))
    assert t.name == "f"
    assert list(props(t)) == ["c"]
    assert await t.run({"c": 3}) == {"result": 123}


async def test_partial_of_async_function_is_coroutine_function() -> None:
    async def f(a: int, b: int) -> int:
        return a + b

    t = FunctionTool(functools.partial(f, 1))
    assert inspect.iscoroutinefunction(t)
    assert await t(2) == 3
    assert await t.run({"b": 5}) == {"result": 6}


class Counter:
    def __init__(self, start: int) -> None:
        self.start = start

    def add(self, n: int) -> int:
        """Add n to the start."""
        return self.start + n

    async def add_async(self, n: int) -> int:
        return self.start + n


async def test_bound_method_via_function_tool() -> None:
    c = Counter(10)
    t = FunctionTool(c.add)
    assert t.name == "add"
    assert t.description == "Add n to the start."
    assert list(props(t)) == ["n"]
    assert "self" not in props(t)
    assert t(1) == 11
    assert await t.run({"n": 5}) == {"result": 15}


async def test_bound_async_method_via_function_tool() -> None:
    t = FunctionTool(Counter(1).add_async)
    assert inspect.iscoroutinefunction(t)
    assert await t(2) == 3
    assert await t.run({"n": 2}) == {"result": 3}


class Greeter:
    def __init__(self, greeting: str) -> None:
        self.greeting = greeting

    @tool
    def greet(self, name: str) -> str:
        """Greet someone.

        Args:
            name: Who.
        """
        return f"{self.greeting}, {name}"

    @tool
    async def greet_async(self, name: str) -> str:
        return f"{self.greeting}, {name}"

    @tool
    @staticmethod
    def static_first(x: int) -> int:
        return x + 1

    @staticmethod
    @tool
    def static_second(x: int) -> int:
        return x + 2

    @tool
    @classmethod
    def class_tool(cls, x: int) -> str:
        return f"{cls.__name__}:{x}"


class PoliteGreeter(Greeter):
    pass


async def test_method_tool_binds_per_instance() -> None:
    a, b = Greeter("hi"), Greeter("hello")
    assert isinstance(a.greet, FunctionTool)
    assert a.greet is a.greet
    assert a.greet is not b.greet
    assert a.greet("x") == "hi, x"
    assert b.greet("x") == "hello, x"
    assert await a.greet.run({"name": "y"}) == {"result": "hi, y"}
    assert await b.greet.run({"name": "y"}) == {"result": "hello, y"}
    assert a.greet.name == "greet"
    assert list(props(a.greet)) == ["name"]
    assert a.greet.parameters_json_schema["required"] == ["name"]


async def test_method_tool_hides_self_and_model_cannot_send_it() -> None:
    g = Greeter("hi")
    assert "self" not in props(g.greet)
    with pytest.raises(ToolError) as info:
        await g.greet.run({"name": "x", "self": 1})
    assert info.value.code == "tool.invalid_arguments"


async def test_method_tool_bound_spec_is_shared_with_class_attribute() -> None:
    g = Greeter("hi")
    assert g.greet.spec is Greeter.greet.spec


async def test_unbound_method_tool_run_raises_clear_error() -> None:
    unbound = Greeter.greet
    assert isinstance(unbound, FunctionTool)
    with pytest.raises(TypeError, match="method"):
        await unbound.run({"name": "x"})


async def test_async_method_tool() -> None:
    g = Greeter("yo")
    assert inspect.iscoroutinefunction(g.greet_async)
    assert inspect.iscoroutinefunction(Greeter.greet_async)
    coro = g.greet_async("a")
    assert inspect.iscoroutine(coro)
    assert await coro == "yo, a"
    assert await g.greet_async.run({"name": "b"}) == {"result": "yo, b"}


async def test_staticmethod_tool_above_staticmethod() -> None:
    g = Greeter("x")
    assert Greeter.static_first(1) == 2
    assert g.static_first(1) == 2
    assert isinstance(Greeter.static_first, FunctionTool)
    assert Greeter.static_first.name == "static_first"
    assert list(props(Greeter.static_first)) == ["x"]
    assert await Greeter.static_first.run({"x": 1}) == {"result": 2}
    assert await g.static_first.run({"x": 5}) == {"result": 6}


async def test_staticmethod_above_tool() -> None:
    g = Greeter("x")
    assert isinstance(Greeter.static_second, FunctionTool)
    assert Greeter.static_second(1) == 3
    assert g.static_second(1) == 3
    assert list(props(Greeter.static_second)) == ["x"]
    assert await Greeter.static_second.run({"x": 1}) == {"result": 3}
    assert await g.static_second.run({"x": 1}) == {"result": 3}


async def test_classmethod_tool() -> None:
    assert Greeter.class_tool(1) == "Greeter:1"
    assert Greeter("x").class_tool(2) == "Greeter:2"
    assert PoliteGreeter.class_tool(3) == "PoliteGreeter:3"
    assert list(props(Greeter.class_tool)) == ["x"]
    assert await Greeter.class_tool.run({"x": 4}) == {"result": "Greeter:4"}
    assert await PoliteGreeter.class_tool.run({"x": 5}) == {"result": "PoliteGreeter:5"}
    with pytest.raises(ToolError):
        await Greeter.class_tool.run({"x": 1, "cls": 2})


class Multiplier:
    """Multiplies by a factor."""

    def __init__(self, factor: int) -> None:
        self.factor = factor

    def __call__(self, x: int) -> int:
        """Multiply x.

        Args:
            x: The number.
        """
        return x * self.factor


async def test_callable_object() -> None:
    t = FunctionTool(Multiplier(3))
    assert t.name == "Multiplier"
    assert t.description == "Multiply x."
    assert list(props(t)) == ["x"]
    assert props(t)["x"]["description"] == "The number."
    assert t(2) == 6
    assert await t.run({"x": 4}) == {"result": 12}


async def test_callable_object_with_name_option() -> None:
    t = FunctionTool(Multiplier(2), name="double")
    assert t.name == "double"
    assert await t.run({"x": 4}) == {"result": 8}


async def test_lambda_needs_name() -> None:
    with pytest.raises(TypeError, match="name="):
        tool(lambda: 1)
    t = tool(name="one")(lambda: 1)
    assert t.name == "one"
    assert t() == 1
    assert await t.run({}) == {"result": 1}


async def test_future_annotations_module(load_module) -> None:
    module = load_module(
        """
        from __future__ import annotations

        from dataclasses import dataclass

        from tooling import ToolContext, tool


        @tool
        def place(
            order: Order, note: str | None = None, tool_context: ToolContext = None
        ) -> Receipt:
            '''Place an order.

            Args:
                order: The order.
                note: A note.
            '''
            return Receipt(id=f"{order.item}x{order.quantity}", note=note)


        class Shop:
            def __init__(self, prefix: str) -> None:
                self.prefix = prefix

            @tool
            async def lookup(self, item: str, quantity: int = 1) -> dict[str, str]:
                return {"id": f"{self.prefix}-{item}-{quantity}"}


        @dataclass
        class Order:
            item: str
            quantity: int


        @dataclass
        class Receipt:
            id: str
            note: str | None
        """
    )
    place = module.place
    schema = place.parameters_json_schema
    assert list(schema["properties"]) == ["order", "note"]
    assert schema["required"] == ["order"]
    assert schema["properties"]["order"] == {"$ref": "#/$defs/Order", "description": "The order."}
    assert set(schema["$defs"]["Order"]["properties"]) == {"item", "quantity"}
    assert place.spec.context_parameter == "tool_context"
    assert await place.run({"order": {"item": "tea", "quantity": 2}}) == {
        "id": "teax2",
        "note": None,
    }
    shop = module.Shop("s")
    assert list(props(shop.lookup)) == ["item", "quantity"]
    assert await shop.lookup.run({"item": "x"}) == {"id": "s-x-1"}


async def test_future_annotations_unresolvable_name_fails_on_spec(load_module) -> None:
    module = load_module(
        """
        from __future__ import annotations

        from tooling import tool


        @tool
        def broken(good: int, bad: DoesNotExist) -> int:
            return good
        """
    )
    broken = module.broken  # decoration succeeded
    assert broken(1, None) == 1
    with pytest.raises(TypeError) as info:
        broken.spec
    assert "broken" in str(info.value)
    assert "'bad'" in str(info.value)


# -- what the decorated object looks like -------------------------------------------------------


def test_keeps_name_doc_wrapped_and_signature() -> None:
    def original(x: int, y: str = "a") -> str:
        """Docs here."""
        return y * x

    t = tool(original)
    assert t.__name__ == "original"
    assert t.__doc__ == "Docs here."
    assert t.__wrapped__ is original
    assert inspect.signature(t) == inspect.signature(original)
    assert t(2) == "aa"
    assert t(x=2, y="b") == "bb"
    assert not inspect.iscoroutinefunction(t)


def test_keeps_name_when_tool_name_differs() -> None:
    @tool(name="other")
    def original(x: int) -> int:
        return x

    assert original.name == "other"
    assert original.__name__ == "original"


def test_wrapped_of_bound_method_tool_calls_instance() -> None:
    g = Greeter("hey")
    assert g.greet.__wrapped__("z") == "hey, z"


def test_call_propagates_exceptions_unchanged() -> None:
    @tool
    def boom(x: int) -> int:
        raise KeyError("raw")

    with pytest.raises(KeyError):
        boom(1)


# -- names -----------------------------------------------------------------------------------


def _identity(x: int) -> int:
    return x


@pytest.mark.parametrize(
    "name",
    ["a", "_", "A1", "snake_case", "kebab-case", "_leading", "x" * 64, "a-1_b-2"],
)
def test_valid_names(name: str) -> None:
    assert FunctionTool(_identity, name=name).name == name


@pytest.mark.parametrize(
    "name",
    [
        "",
        "x" * 65,
        "1leading_digit",
        "-leading-dash",
        "has space",
        "dot.ted",
        "slash/ed",
        "colon:ed",
        "ünïcode",
        "trailing_newline\n",
        "tab\tname",
    ],
)
def test_invalid_names_raise_value_error(name: str) -> None:
    with pytest.raises(ValueError):
        FunctionTool(_identity, name=name)
    with pytest.raises(ValueError):
        tool(name=name)(_identity)


def test_invalid_function_name_is_rejected() -> None:
    def f(x: int) -> int:
        return x

    f.__name__ = "not valid"
    with pytest.raises(ValueError):
        tool(f)


# -- checks at decoration ------------------------------------------------------------------------


def test_var_positional_rejected_at_decoration() -> None:
    def f(*items: int) -> int:
        return 0

    with pytest.raises(TypeError, match=r"\*items"):
        tool(f)


def test_var_keyword_rejected_at_decoration() -> None:
    def f(a: int, **extra: int) -> int:
        return 0

    with pytest.raises(TypeError, match=r"\*\*extra"):
        tool(f)


def test_missing_annotation_rejected_at_decoration() -> None:
    def f(a: int, b) -> int:  # type: ignore[no-untyped-def]
        return 0

    with pytest.raises(TypeError, match="'b'"):
        tool(f)


def test_missing_annotation_on_method_rejected() -> None:
    with pytest.raises(TypeError, match="'x'"):

        class _C:
            @tool
            def m(self, x) -> int:  # type: ignore[no-untyped-def]
                return 0


def test_unresolvable_forward_reference_raises_only_on_spec() -> None:
    @tool
    def lookup(key: str, payload: "NotDefinedAnywhere") -> int:  # type: ignore[name-defined]  # noqa: F821
        return 1

    assert lookup.name == "lookup"  # decoration worked
    with pytest.raises(TypeError) as info:
        lookup.spec
    message = str(info.value)
    assert "lookup" in message
    assert "'payload'" in message
    # it keeps failing the same way (no half-built spec is cached)
    with pytest.raises(TypeError, match="payload"):
        lookup.parameters_json_schema


async def test_unresolvable_forward_reference_fails_run_with_type_error() -> None:
    @tool
    def lookup(key: "Missing") -> int:  # type: ignore[name-defined]  # noqa: F821
        return 1

    with pytest.raises(TypeError, match="key"):
        await lookup.run({"key": 1})


def test_default_not_matching_annotation_raises_on_spec() -> None:
    @tool
    def f(ok: int, x: int = "abc") -> int:  # type: ignore[assignment]
        return x

    with pytest.raises(TypeError) as info:
        f.spec
    assert "f" in str(info.value)
    assert "'x'" in str(info.value)


def test_field_default_not_matching_annotation_raises_on_spec() -> None:
    from pydantic import Field

    @tool
    def f(count: int = Field("many")) -> int:  # type: ignore[assignment]
        return count

    with pytest.raises(TypeError, match="'count'"):
        f.spec


def test_default_violating_constraint_raises_on_spec() -> None:
    from typing import Annotated

    from pydantic import Field

    @tool
    def f(n: Annotated[int, Field(ge=1)] = 0) -> int:
        return n

    with pytest.raises(TypeError, match="'n'"):
        f.spec


def test_spec_is_cached_and_built_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import tooling._function.spec as spec_module

    calls: list[str] = []
    real = spec_module.build_spec

    def counting(target, **kwargs):
        calls.append(target.name)
        return real(target, **kwargs)

    monkeypatch.setattr(spec_module, "build_spec", counting)

    @tool
    def f(x: int) -> int:
        return x

    assert calls == []  # nothing built at decoration
    first = f.spec
    assert f.spec is first
    assert f.parameters_json_schema is first.parameters_json_schema
    assert f.args_model is first.args_model
    f.description
    assert calls == ["f"]


async def test_spec_built_once_across_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    import tooling._function.spec as spec_module

    calls: list[str] = []
    real = spec_module.build_spec

    def counting(target, **kwargs):
        calls.append(target.name)
        return real(target, **kwargs)

    monkeypatch.setattr(spec_module, "build_spec", counting)

    @tool
    def f(x: int) -> int:
        return x

    for i in range(3):
        assert await f.run({"x": i}) == {"result": i}
    assert calls == ["f"]


def test_none_default_means_optional() -> None:
    @tool
    def f(x: int = None) -> int:  # type: ignore[assignment]  # noqa: RUF013
        return 0 if x is None else x

    assert f.parameters_json_schema["properties"]["x"] == {
        "anyOf": [{"type": "integer"}, {"type": "null"}],
        "default": None,
    }
    assert "required" not in f.parameters_json_schema or f.parameters_json_schema["required"] == []


async def test_none_default_accepts_null_and_missing() -> None:
    @tool
    def f(x: int = None) -> dict:  # type: ignore[assignment]  # noqa: RUF013
        return {"x": x}

    assert await f.run({}) == {"x": None}
    assert await f.run({"x": None}) == {"x": None}
    assert await f.run('{"x": null}') == {"x": None}
    assert await f.run({"x": 3}) == {"x": 3}


# -- injected context ----------------------------------------------------------------------------


async def test_context_by_annotation_is_hidden_and_injected() -> None:
    seen: list[Any] = []

    @tool
    def f(x: int, ctx: ToolContext) -> int:
        seen.append(ctx)
        return x

    assert list(props(f)) == ["x"]
    assert f.parameters_json_schema["required"] == ["x"]
    assert f.spec.context_parameter == "ctx"
    assert await f.run({"x": 1}) == {"result": 1}
    assert isinstance(seen[0], SimpleToolContext)


async def test_context_subclass_annotation_is_injected() -> None:
    seen: list[Any] = []

    @tool
    def f(ctx: SimpleToolContext, x: int) -> int:
        seen.append(ctx)
        return x

    assert list(props(f)) == ["x"]
    given = SimpleToolContext(caller="tester")
    assert await f.run({"x": 2}, given) == {"result": 2}
    assert seen == [given]


async def test_context_by_name_unannotated() -> None:
    seen: list[Any] = []

    @tool
    def f(x: int, tool_context) -> int:  # type: ignore[no-untyped-def]
        seen.append(tool_context)
        return x

    assert list(props(f)) == ["x"]
    assert await f.run({"x": 1}) == {"result": 1}
    assert isinstance(seen[0], SimpleToolContext)


async def test_context_by_name_annotated_otherwise() -> None:
    seen: list[Any] = []

    @tool
    def f(tool_context: object, x: int) -> int:
        seen.append(tool_context)
        return x

    assert list(props(f)) == ["x"]
    ctx = SimpleToolContext()
    await f.run({"x": 1}, ctx)
    assert seen == [ctx]


async def test_given_context_is_passed_through_and_labelled() -> None:
    seen: list[Any] = []

    @tool
    async def probe(tool_context: ToolContext) -> str:
        seen.append(tool_context)
        return tool_context.agent_name

    ctx = SimpleToolContext(caller="agent-x", function_call_id="call-1")
    assert await probe.run({}, ctx) == {"result": "agent-x"}
    assert seen == [ctx]
    assert ctx.tool_name == "probe"


async def test_fresh_simple_context_each_run_without_ctx() -> None:
    seen: list[Any] = []

    @tool
    def f(tool_context: ToolContext) -> int:
        seen.append(tool_context)
        tool_context.state["k"] = len(seen)
        return 0

    await f.run({})
    await f.run({})
    assert isinstance(seen[0], SimpleToolContext)
    assert seen[0] is not seen[1]
    assert seen[1].actions.state_delta == {"k": 2}


async def test_model_supplied_context_key_is_unknown_argument() -> None:
    @tool
    def f(x: int, tool_context: ToolContext) -> int:
        return x

    with pytest.raises(ToolError) as info:
        await f.run({"x": 1, "tool_context": {"evil": True}})
    err = info.value
    assert err.code == "tool.invalid_arguments"
    assert len(err.details) == 1
    assert err.details[0]["loc"] == ["tool_context"]
    assert err.details[0]["type"] == "extra_forbidden"


async def test_model_supplied_key_for_annotated_context_param_is_unknown() -> None:
    @tool
    def f(x: int, ctx: ToolContext) -> int:
        return x

    with pytest.raises(ToolError) as info:
        await f.run('{"x": 1, "ctx": "hi"}')
    assert info.value.code == "tool.invalid_arguments"
    assert info.value.details[0]["loc"] == ["ctx"]


def test_two_context_parameters_raise_type_error() -> None:
    @tool
    def f(a: ToolContext, tool_context: ToolContext) -> int:
        return 0

    with pytest.raises(TypeError, match="context"):
        f.spec


def test_two_annotated_context_parameters_raise_type_error() -> None:
    @tool
    def f(a: ToolContext, b: SimpleToolContext, x: int) -> int:
        return 0

    with pytest.raises(TypeError):
        f.spec


async def test_context_in_method_tool() -> None:
    class Svc:
        @tool
        def whoami(self, tool_context: ToolContext, suffix: str) -> str:
            return tool_context.agent_name + suffix

    s = Svc()
    assert list(props(s.whoami)) == ["suffix"]
    assert await s.whoami.run({"suffix": "!"}, SimpleToolContext(caller="bob")) == {
        "result": "bob!"
    }
