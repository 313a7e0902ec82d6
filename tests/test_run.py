"""``FunctionTool.run``/``execute``/``stream``: arguments, errors, threads, results, generators."""

import asyncio
import contextvars
import dataclasses
import datetime
import decimal
import enum
import json
import threading
import uuid
from collections.abc import AsyncIterator, Generator
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from tooling import Blob, FileRef, SimpleToolContext, ToolError, ToolResponse, tool

MIB = 1024 * 1024


def nested_list(levels: int) -> Any:
    value: Any = 0
    for _ in range(levels):
        value = [value]
    return value


async def collect(t: Any, args: Any, ctx: Any = None) -> list[ToolResponse]:
    async with t.stream(args, ctx) as updates:
        return [u async for u in updates]


@tool
def echo(a: int, b: str = "B", c: int | None = 3, d: float = 1.5) -> dict:
    return {"a": a, "b": b, "c": c, "d": d}


@tool
def bounded(
    n: Annotated[int, Field(ge=0, le=10)],
    word: Annotated[str, Field(max_length=3)] = "abc",
    mode: Literal["fast", "slow"] = "fast",
) -> dict:
    return {"n": n, "word": word, "mode": mode}


@tool
def anything(x: Any = None) -> dict:
    return {"ok": True}


# -- argument forms and coercion ------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        {"a": 1, "b": "x"},
        '{"a": 1, "b": "x"}',
        b'{"a": 1, "b": "x"}',
        bytearray(b'{"a": 1, "b": "x"}'),
    ],
    ids=["dict", "str", "bytes", "bytearray"],
)
async def test_args_dict_or_json_text(args: Any) -> None:
    if isinstance(args, bytearray):
        args = bytes(args)
    assert await echo.run(args) == {"a": 1, "b": "x", "c": 3, "d": 1.5}


async def test_args_any_mapping() -> None:
    from types import MappingProxyType

    assert await echo.run(MappingProxyType({"a": 2})) == {"a": 2, "b": "B", "c": 3, "d": 1.5}


async def test_lax_coercion() -> None:
    assert await echo.run({"a": "5", "d": "2.5"}) == {"a": 5, "b": "B", "c": 3, "d": 2.5}
    assert await echo.run('{"a": "7", "d": 3}') == {"a": 7, "b": "B", "c": 3, "d": 3.0}


async def test_coercion_into_models_and_dates() -> None:
    class Item(BaseModel):
        name: str
        qty: int = 1

    seen: dict[str, Any] = {}

    @tool
    def f(item: Item, when: datetime.date, ident: uuid.UUID) -> bool:
        seen.update(item=item, when=when, ident=ident)
        return True

    await f.run(
        {
            "item": {"name": "x", "qty": "2"},
            "when": "2024-03-01",
            "ident": "00000000-0000-0000-0000-000000000001",
        }
    )
    assert seen["item"] == Item(name="x", qty=2)
    assert seen["when"] == datetime.date(2024, 3, 1)
    assert seen["ident"] == uuid.UUID(int=1)


async def test_empty_args_for_no_parameter_tool() -> None:
    @tool
    def ping() -> str:
        return "pong"

    assert await ping.run({}) == {"result": "pong"}
    assert await ping.run("{}") == {"result": "pong"}
    assert await ping.run(b" { } ") == {"result": "pong"}


# -- explicit nulls -------------------------------------------------------------------------------


async def test_null_for_defaulted_non_none_param_means_default_dict() -> None:
    assert await echo.run({"a": 1, "b": None, "d": None}) == {"a": 1, "b": "B", "c": 3, "d": 1.5}


async def test_null_for_defaulted_non_none_param_means_default_json() -> None:
    assert await echo.run('{"a": 1, "b": null, "d": null}') == {
        "a": 1,
        "b": "B",
        "c": 3,
        "d": 1.5,
    }
    assert await echo.run(b'{"a": 1, "b": null}') == {"a": 1, "b": "B", "c": 3, "d": 1.5}


async def test_null_for_optional_stays_none() -> None:
    assert await echo.run({"a": 1, "c": None}) == {"a": 1, "b": "B", "c": None, "d": 1.5}
    assert await echo.run('{"a": 1, "c": null}') == {"a": 1, "b": "B", "c": None, "d": 1.5}


async def test_null_for_field_default_and_constrained_param() -> None:
    @tool
    def f(n: Annotated[int, Field(ge=5)] = 9, m: int = Field(4, le=4)) -> list:
        return [n, m]

    assert await f.run({"n": None, "m": None}) == {"result": [9, 4]}


async def test_null_for_default_factory_param() -> None:
    @tool
    def f(items: list[int] = Field(default_factory=lambda: [1, 2])) -> list:
        return items

    assert await f.run({"items": None}) == {"result": [1, 2]}


async def test_null_for_required_param_is_invalid() -> None:
    with pytest.raises(ToolError) as info:
        await echo.run({"a": None})
    err = info.value
    assert err.code == "tool.invalid_arguments"
    assert len(err.details) == 1
    assert err.details[0]["loc"] == ["a"]
    assert err.details[0]["input"] is None


async def test_null_inside_nested_value_is_not_replaced() -> None:
    @tool
    def f(xs: list[int] = [1]) -> list:
        return xs

    with pytest.raises(ToolError) as info:
        await f.run({"xs": [1, None]})
    assert info.value.details[0]["loc"] == ["xs", 1]


# -- argument errors ------------------------------------------------------------------------------


def only_detail(err: ToolError) -> dict[str, Any]:
    assert err.code == "tool.invalid_arguments"
    assert err.details is not None and len(err.details) == 1
    return err.details[0]


async def test_missing_argument() -> None:
    with pytest.raises(ToolError) as info:
        await echo.run({})
    detail = only_detail(info.value)
    assert detail["loc"] == ["a"]
    assert detail["type"] == "missing"
    assert "a" in detail["msg"]


async def test_unknown_argument_lists_valid_names() -> None:
    with pytest.raises(ToolError) as info:
        await echo.run({"a": 1, "zzz": 2})
    detail = only_detail(info.value)
    assert detail["loc"] == ["zzz"]
    assert detail["type"] == "extra_forbidden"
    assert detail["input"] == 2
    for name in ("a", "b", "c", "d"):
        assert name in detail["msg"]
    assert "zzz" in detail["msg"]


async def test_wrong_type() -> None:
    with pytest.raises(ToolError) as info:
        await echo.run({"a": "abc"})
    detail = only_detail(info.value)
    assert detail == {
        "loc": ["a"],
        "msg": detail["msg"],
        "type": "int_parsing",
        "input": "abc",
    }
    assert isinstance(detail["msg"], str) and detail["msg"]


async def test_out_of_range() -> None:
    with pytest.raises(ToolError) as info:
        await bounded.run({"n": 11})
    detail = only_detail(info.value)
    assert detail["loc"] == ["n"]
    assert detail["type"] == "less_than_equal"
    assert detail["input"] == 11


async def test_literal_mismatch() -> None:
    with pytest.raises(ToolError) as info:
        await bounded.run({"n": 1, "mode": "medium"})
    detail = only_detail(info.value)
    assert detail["loc"] == ["mode"]
    assert detail["type"] == "literal_error"


async def test_one_detail_per_problem() -> None:
    with pytest.raises(ToolError) as info:
        await bounded.run({"n": -1, "word": "toolong", "mode": "x", "extra": 1, "more": 2})
    err = info.value
    assert err.code == "tool.invalid_arguments"
    locs = sorted(tuple(d["loc"]) for d in err.details)
    assert locs == [("extra",), ("mode",), ("more",), ("n",), ("word",)]
    for d in err.details:
        assert set(d) >= {"loc", "msg", "type"}


async def test_missing_and_unknown_together() -> None:
    with pytest.raises(ToolError) as info:
        await echo.run('{"b": "x", "nope": true}')
    types = sorted(d["type"] for d in info.value.details)
    assert types == ["extra_forbidden", "missing"]


async def test_nested_error_location() -> None:
    class Item(BaseModel):
        qty: int

    @tool
    def f(items: list[Item]) -> int:
        return len(items)

    with pytest.raises(ToolError) as info:
        await f.run({"items": [{"qty": 1}, {"qty": "many"}]})
    assert only_detail(info.value)["loc"] == ["items", 1, "qty"]


async def test_input_cut_to_200_chars() -> None:
    with pytest.raises(ToolError) as info:
        await echo.run({"a": "x" * 5000})
    shown = only_detail(info.value)["input"]
    assert isinstance(shown, str)
    assert len(shown) <= 200
    assert shown.startswith("xxxx")


async def test_structured_input_cut_to_200_chars() -> None:
    with pytest.raises(ToolError) as info:
        await echo.run({"a": list(range(1000))})
    shown = only_detail(info.value)["input"]
    assert isinstance(shown, str)
    assert len(shown) <= 200
    assert shown.startswith("[0, 1, 2")


async def test_error_message_and_response_are_json_safe() -> None:
    with pytest.raises(ToolError) as info:
        await echo.run({"a": float("nan"), "zz": {1, 2}})
    response = info.value.to_response()
    assert json.loads(json.dumps(response, allow_nan=False)) == response
    details = {tuple(d["loc"]): d for d in response["error"]["details"]}
    # The values that are not JSON come back as text, so the error itself is JSON.
    assert details[("a",)]["type"] == "finite_number" and details[("a",)]["input"] == "nan"
    assert details[("zz",)]["type"] == "extra_forbidden" and details[("zz",)]["input"] == "{1, 2}"


@pytest.mark.parametrize(
    "args",
    ["{bad json", '{"a": 1', "", "   ", b"\xff\xfe", '{"a": 1}}'],
    ids=["bad", "unterminated", "empty", "blank", "bad-bytes", "trailing"],
)
async def test_malformed_json(args: Any) -> None:
    with pytest.raises(ToolError) as info:
        await echo.run(args)
    err = info.value
    assert err.code == "tool.invalid_arguments"
    assert len(err.details) == 1
    assert err.details[0]["loc"] == []
    assert json.loads(json.dumps(err.to_response())) == err.to_response()


@pytest.mark.parametrize("args", ["[1, 2]", "3", '"text"', "null", "true", b"[]"])
async def test_non_object_json(args: Any) -> None:
    with pytest.raises(ToolError) as info:
        await echo.run(args)
    detail = only_detail(info.value)
    assert detail["loc"] == []


@pytest.mark.parametrize("args", [[1, 2], 3, None, 2.5])
async def test_non_mapping_args(args: Any) -> None:
    with pytest.raises(ToolError) as info:
        await echo.run(args)
    assert only_detail(info.value)["loc"] == []


async def test_oversized_dict_args() -> None:
    with pytest.raises(ToolError) as info:
        await anything.run({"x": "y" * (MIB + 10)})
    assert only_detail(info.value)["loc"] == []


async def test_oversized_json_text_and_bytes() -> None:
    text = json.dumps({"x": "y" * (MIB + 10)})
    for args in (text, text.encode()):
        with pytest.raises(ToolError) as info:
            await anything.run(args)
        assert only_detail(info.value)["loc"] == []


async def test_oversized_counts_utf8_bytes() -> None:
    # 400k three-byte characters: fewer than 1 Mi characters but more than 1 MiB of UTF-8.
    text = json.dumps({"x": "€" * 400_000}, ensure_ascii=False)
    assert len(text) < MIB < len(text.encode())
    with pytest.raises(ToolError) as info:
        await anything.run(text)
    assert info.value.code == "tool.invalid_arguments"


async def test_oversized_nested_dict_args() -> None:
    with pytest.raises(ToolError) as info:
        await anything.run({"x": [{"k": "v" * 1000} for _ in range(1100)]})
    assert info.value.code == "tool.invalid_arguments"


async def test_just_under_size_limit_is_accepted() -> None:
    value = "y" * (MIB - 100)
    assert await anything.run({"x": value}) == {"ok": True}
    assert await anything.run(json.dumps({"x": value})) == {"ok": True}


@pytest.mark.parametrize("form", ["dict", "str", "bytes"])
async def test_depth_64_ok_65_rejected(form: str) -> None:
    def encode(args: dict) -> Any:
        if form == "dict":
            return args
        text = json.dumps(args)
        return text if form == "str" else text.encode()

    # the arguments object is depth 1, so x's value may nest 63 more levels
    ok = {"x": nested_list(63)}
    assert await anything.run(encode(ok)) == {"ok": True}
    too_deep = {"x": nested_list(64)}
    with pytest.raises(ToolError) as info:
        await anything.run(encode(too_deep))
    assert only_detail(info.value)["loc"] == []


async def test_depth_counts_objects_too() -> None:
    value: Any = 0
    for _ in range(63):
        value = {"k": value}
    assert await anything.run({"x": value}) == {"ok": True}
    assert await anything.run(json.dumps({"x": value})) == {"ok": True}
    with pytest.raises(ToolError):
        await anything.run({"x": {"k": value}})
    with pytest.raises(ToolError):
        await anything.run(json.dumps({"x": {"k": value}}))


async def test_brackets_inside_strings_do_not_count_as_depth() -> None:
    args = {"x": "[{" * 500 + '"\\' + "]}" * 3}
    assert await anything.run(args) == {"ok": True}
    assert await anything.run(json.dumps(args)) == {"ok": True}


async def test_invalid_arguments_do_not_call_the_tool() -> None:
    calls: list[int] = []

    @tool
    def f(n: int) -> int:
        calls.append(n)
        return n

    with pytest.raises(ToolError):
        await f.run({"n": "x"})
    assert calls == []


# -- exceptions -----------------------------------------------------------------------------------


async def test_tool_error_propagates_as_is_sync() -> None:
    raised = ToolError("order 7 not found", code="orders.not_found", details=[{"id": 7}])

    @tool
    def f(x: int) -> int:
        raise raised

    with pytest.raises(ToolError) as info:
        await f.run({"x": 1})
    assert info.value is raised
    assert info.value.code == "orders.not_found"


async def test_tool_error_propagates_as_is_async() -> None:
    raised = ToolError("nope", code="custom.code")

    @tool
    async def f() -> int:
        raise raised

    with pytest.raises(ToolError) as info:
        await f.run({})
    assert info.value is raised


async def test_tool_error_propagates_as_is_from_generators() -> None:
    raised = ToolError("gen", code="gen.code")

    @tool
    def g():
        yield 1
        raise raised

    @tool
    async def ag():
        yield 1
        raise raised

    for t in (g, ag):
        with pytest.raises(ToolError) as info:
            await t.run({})
        assert info.value is raised


@pytest.mark.parametrize("run_in_thread", [True, False])
async def test_other_exception_becomes_tool_failed_without_its_text(run_in_thread: bool) -> None:
    secret = "password=hunter2"

    @tool(run_in_thread=run_in_thread)
    def f(x: int) -> int:
        raise ValueError(secret)

    with pytest.raises(ToolError) as info:
        await f.run({"x": 1})
    err = info.value
    assert err.code == "tool.failed"
    assert isinstance(err.__cause__, ValueError)
    assert err.__cause__.args == (secret,)
    assert secret not in err.message
    assert secret not in str(err)
    assert secret not in json.dumps(err.to_response())
    assert "ValueError" in err.message


async def test_async_exception_becomes_tool_failed() -> None:
    original = KeyError("api-key-123")

    @tool
    async def f() -> int:
        raise original

    with pytest.raises(ToolError) as info:
        await f.run({})
    assert info.value.code == "tool.failed"
    assert info.value.__cause__ is original
    assert "api-key-123" not in info.value.message


async def test_stop_iteration_from_sync_tool_is_tool_failed() -> None:
    @tool
    def f() -> int:
        raise StopIteration

    with pytest.raises(ToolError) as info:
        await f.run({})
    assert info.value.code == "tool.failed"


async def test_timeout_error_raised_by_tool_is_tool_failed() -> None:
    @tool
    async def f() -> int:
        raise TimeoutError("own timeout")

    with pytest.raises(ToolError) as info:
        await f.run({})
    assert info.value.code == "tool.failed"


async def test_keyboard_interrupt_propagates_async() -> None:
    @tool
    async def f() -> int:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        await f.run({})


async def test_keyboard_interrupt_propagates_sync_thread() -> None:
    @tool
    def f() -> int:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        await f.run({})


async def test_keyboard_interrupt_propagates_on_loop() -> None:
    @tool(run_in_thread=False)
    def f() -> int:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        await f.run({})


async def test_cancelled_error_raised_by_tool_propagates() -> None:
    @tool
    async def f() -> int:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        await f.run({})


async def test_cancelling_a_running_call_propagates_cancellation() -> None:
    started = asyncio.Event()
    finished: list[str] = []

    @tool
    async def slow() -> int:
        started.set()
        try:
            await asyncio.sleep(30)
        finally:
            finished.append("cleanup")
        return 1

    task = asyncio.create_task(slow.run({}))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert finished == ["cleanup"]


async def test_keyboard_interrupt_propagates_from_generators() -> None:
    @tool
    def g():
        yield 1
        raise KeyboardInterrupt

    @tool
    async def ag():
        yield 1
        raise KeyboardInterrupt

    for t in (g, ag):
        with pytest.raises(KeyboardInterrupt):
            await t.run({})


# -- threads and context variables ----------------------------------------------------------------

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="unset")


async def test_sync_runs_in_worker_thread_with_contextvars() -> None:
    @tool
    def f() -> dict:
        seen = request_id.get()
        request_id.set("changed-in-tool")
        return {"thread": threading.get_ident(), "seen": seen}

    request_id.set("req-42")
    result = await f.run({})
    assert result["thread"] != threading.get_ident()
    assert result["seen"] == "req-42"
    # the tool ran in a copy: its writes do not leak back
    assert request_id.get() == "req-42"


async def test_run_in_thread_false_runs_on_loop_thread() -> None:
    @tool(run_in_thread=False)
    def f() -> dict:
        return {"thread": threading.get_ident(), "seen": request_id.get()}

    request_id.set("loop")
    result = await f.run({})
    assert result == {"thread": threading.get_ident(), "seen": "loop"}


async def test_async_runs_on_loop_thread() -> None:
    @tool
    async def f() -> int:
        return threading.get_ident()

    assert await f.run({}) == {"result": threading.get_ident()}


async def test_sync_calls_overlap_in_threads() -> None:
    barrier = threading.Barrier(3, timeout=5)

    @tool
    def f(i: int) -> int:
        barrier.wait()  # deadlocks (then raises) unless three calls run at once
        return i

    results = await asyncio.gather(*(f.run({"i": i}) for i in range(3)))
    assert results == [{"result": 0}, {"result": 1}, {"result": 2}]


async def test_sync_generator_contextvars_and_threads() -> None:
    @tool
    def g(n: int):
        for _ in range(n):
            yield {"thread": threading.get_ident(), "seen": request_id.get()}

    request_id.set("gen-ctx")
    updates = await collect(g, {"n": 3})
    threads = {u.response["thread"] for u in updates}
    assert len(threads) == 1
    assert threading.get_ident() not in threads
    assert {u.response["seen"] for u in updates} == {"gen-ctx"}


async def test_sync_generator_run_in_thread_false_on_loop() -> None:
    @tool(run_in_thread=False)
    def g(n: int):
        for _ in range(n):
            yield threading.get_ident()

    updates = await collect(g, {"n": 2})
    assert {u.response["result"] for u in updates} == {threading.get_ident()}


async def test_context_usable_from_worker_thread() -> None:
    @tool
    def f(key: str, tool_context: SimpleToolContext) -> dict:
        tool_context.state[key] = threading.get_ident()
        tool_context.emit_progress("log", "hello")
        return {"ok": True}

    ctx = SimpleToolContext(caller="t", function_call_id="c1")
    assert await f.run({"key": "k"}, ctx) == {"ok": True}
    assert ctx.actions.state_delta["k"] != threading.get_ident()
    assert [p.chunk for p in ctx.progress] == ["hello"]
    assert ctx.progress[0].name == "f"
    assert ctx.progress[0].id == "c1"


# -- results --------------------------------------------------------------------------------------


class Shade(enum.Enum):
    DARK = "dark"


class Size(enum.IntEnum):
    BIG = 3


class Model(BaseModel):
    n: int
    when: datetime.datetime
    shade: Shade


@dataclasses.dataclass
class Record:
    model: Model
    tags: tuple[str, ...]
    amount: decimal.Decimal


async def test_results_made_json_safe() -> None:
    @tool
    def f() -> dict:
        return {
            "model": Model(n=1, when=datetime.datetime(2024, 1, 2, 3, 4, 5), shade=Shade.DARK),
            "record": Record(
                Model(n=2, when=datetime.datetime(2024, 1, 1), shade=Shade.DARK),
                ("a", "b"),
                decimal.Decimal("1.50"),
            ),
            "enum": Shade.DARK,
            "int_enum": Size.BIG,
            "date": datetime.date(2024, 2, 3),
            "time": datetime.time(4, 5, 6),
            "uuid": uuid.UUID(int=255),
            "path": Path("/tmp/x"),
            "pure_path": PurePosixPath("/tmp/y"),
            "decimal": decimal.Decimal("2.5"),
            "set": {7},
            "nested": [{"deep": (uuid.UUID(int=1),)}],
        }

    result = await f.run({})
    assert result == {
        "model": {"n": 1, "when": "2024-01-02T03:04:05", "shade": "dark"},
        "record": {
            "model": {"n": 2, "when": "2024-01-01T00:00:00", "shade": "dark"},
            "tags": ["a", "b"],
            "amount": "1.50",
        },
        "enum": "dark",
        "int_enum": 3,
        "date": "2024-02-03",
        "time": "04:05:06",
        "uuid": "00000000-0000-0000-0000-0000000000ff",
        "path": "/tmp/x",
        "pure_path": "/tmp/y",
        "decimal": "2.5",
        "set": [7],
        "nested": [{"deep": ["00000000-0000-0000-0000-000000000001"]}],
    }
    assert json.loads(json.dumps(result, allow_nan=False)) == result


async def test_model_result_is_the_dict() -> None:
    @tool
    def f() -> Model:
        return Model(n=1, when=datetime.datetime(2024, 1, 1), shade=Shade.DARK)

    assert await f.run({}) == {"n": 1, "when": "2024-01-01T00:00:00", "shade": "dark"}


async def test_dataclass_result_is_the_dict() -> None:
    @dataclasses.dataclass
    class Point:
        x: int
        y: int

    @tool
    def f() -> Point:
        return Point(1, 2)

    assert await f.run({}) == {"x": 1, "y": 2}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (5, {"result": 5}),
        ("s", {"result": "s"}),
        (None, {"result": None}),
        (True, {"result": True}),
        (1.5, {"result": 1.5}),
        ([1, "a"], {"result": [1, "a"]}),
        ((1, 2), {"result": [1, 2]}),
        (Shade.DARK, {"result": "dark"}),
        (datetime.date(2020, 1, 1), {"result": "2020-01-01"}),
        (uuid.UUID(int=0), {"result": "00000000-0000-0000-0000-000000000000"}),
        (decimal.Decimal("3"), {"result": "3"}),
        (b"hi", {"result": "aGk="}),
        ({"k": 1}, {"k": 1}),
        ({}, {}),
    ],
    ids=repr,
)
async def test_non_dicts_wrapped_dicts_as_is(value: Any, expected: dict) -> None:
    t = tool(name="value")(lambda: value)
    assert await t.run({}) == expected


async def test_non_finite_float_result_is_json_safe() -> None:
    t = tool(name="nan")(lambda: {"a": float("nan"), "b": float("inf")})
    result = await t.run({})
    assert result == {"a": None, "b": None}  # what JSON has for them: null


async def test_async_result_made_json_safe() -> None:
    @tool
    async def f() -> uuid.UUID:
        return uuid.UUID(int=2)

    assert await f.run({}) == {"result": "00000000-0000-0000-0000-000000000002"}


async def test_blob_and_fileref_lifted_into_parts() -> None:
    image = Blob("image/png", b"\x89PNG")
    doc = FileRef("gs://bucket/doc.pdf", "application/pdf")
    audio = Blob("audio/wav", b"RIFF")

    @tool
    def f() -> dict:
        return {"image": image, "files": [doc, audio], "note": "n"}

    response, parts = await _response_and_parts(f)
    assert parts == (image, doc, audio)
    assert response == {
        "image": {"part": 0, "mime_type": "image/png"},
        "files": [
            {"part": 1, "mime_type": "application/pdf"},
            {"part": 2, "mime_type": "audio/wav"},
        ],
        "note": "n",
    }
    assert await f.run({}) == response


async def test_lone_blob_and_list_of_blobs() -> None:
    blob = Blob("text/plain", b"x")

    @tool
    def one() -> Any:
        return blob

    @tool
    def many() -> Any:
        return [blob, FileRef("file:///a", "text/plain")]

    response, parts = await _response_and_parts(one)
    assert parts == (blob,)
    assert json.loads(json.dumps(response)) == response
    assert {"part": 0, "mime_type": "text/plain"} in (response, response.get("result"))

    response, parts = await _response_and_parts(many)
    assert len(parts) == 2
    assert response == {
        "result": [{"part": 0, "mime_type": "text/plain"}, {"part": 1, "mime_type": "text/plain"}]
    }


async def test_blob_inside_model_result_is_lifted() -> None:
    from pydantic import ConfigDict

    class WithBlob(BaseModel):
        model_config = ConfigDict(arbitrary_types_allowed=True)
        name: str
        data: Blob

    blob = Blob("image/gif", b"GIF")

    @tool
    def f() -> WithBlob:
        return WithBlob(name="g", data=blob)

    response, parts = await _response_and_parts(f)
    assert response == {"name": "g", "data": {"part": 0, "mime_type": "image/gif"}}
    assert parts == (blob,)


async def test_blob_at_limit_ok_over_limit_fails() -> None:
    limit = 10 * MIB

    @tool
    def at_limit() -> Any:
        return Blob("application/octet-stream", bytes(limit))

    @tool
    def over_limit() -> Any:
        return {"big": Blob("application/octet-stream", bytes(limit + 1))}

    _, parts = await _response_and_parts(at_limit)
    assert len(parts[0].data) == limit
    with pytest.raises(ToolError) as info:
        await over_limit.run({})
    assert info.value.code == "tool.failed"


async def test_unserializable_result_fails() -> None:
    class Opaque:
        pass

    @tool
    def f() -> Any:
        return {"x": Opaque()}

    with pytest.raises(ToolError) as info:
        await f.run({})
    assert info.value.code == "tool.failed"


async def test_unserializable_result_from_async_and_generator_fails() -> None:
    @tool
    async def f() -> Any:
        return object()

    @tool
    def g():
        yield object()

    for t in (f, g):
        with pytest.raises(ToolError) as info:
            await t.run({})
        assert info.value.code == "tool.failed"


async def test_circular_result_fails() -> None:
    @tool
    def f() -> Any:
        d: dict[str, Any] = {}
        d["self"] = d
        return d

    with pytest.raises(ToolError) as info:
        await f.run({})
    assert info.value.code == "tool.failed"


# -- generators -----------------------------------------------------------------------------------


async def test_sync_generator_stream_with_return_value() -> None:
    @tool(long_running=True)
    def job(n: int) -> Generator[dict, None, dict]:
        for i in range(n):
            yield {"progress": i}
        return {"done": n}

    updates = await collect(job, {"n": 3})
    assert [(u.response, u.final) for u in updates] == [
        ({"progress": 0}, False),
        ({"progress": 1}, False),
        ({"progress": 2}, False),
        ({"done": 3}, True),
    ]
    assert all(u.name == "job" for u in updates)
    assert await job.run({"n": 2}) == {"done": 2}


async def test_sync_generator_returning_none_resends_last_yield() -> None:
    @tool(long_running=True)
    def job(n: int):
        for i in range(n):
            yield {"progress": i}

    updates = await collect(job, {"n": 2})
    assert [(u.response, u.final) for u in updates] == [
        ({"progress": 0}, False),
        ({"progress": 1}, False),
        ({"progress": 1}, True),
    ]
    assert await job.run({"n": 2}) == {"progress": 1}


async def test_async_generator_resends_last_yield() -> None:
    @tool(long_running=True)
    async def job(n: int) -> AsyncIterator[int]:
        for i in range(n):
            await asyncio.sleep(0)
            yield i

    updates = await collect(job, {"n": 3})
    assert [(u.response, u.final) for u in updates] == [
        ({"result": 0}, False),
        ({"result": 1}, False),
        ({"result": 2}, False),
        ({"result": 2}, True),
    ]
    assert await job.run({"n": 3}) == {"result": 2}


async def test_stream_updates_arrive_as_they_happen() -> None:
    gate = asyncio.Event()

    @tool(long_running=True)
    async def job():
        yield "first"
        await gate.wait()
        yield "second"

    async with job.stream({}) as updates:
        first = await updates.__anext__()
        assert first.response == {"result": "first"}
        assert first.final is False
        gate.set()
        rest = [u async for u in updates]
    assert [(u.response["result"], u.final) for u in rest] == [("second", False), ("second", True)]


async def test_sync_generator_steps_on_demand_in_one_thread() -> None:
    log: list[tuple[str, int]] = []

    @tool(long_running=True)
    def job(n: int):
        for i in range(n):
            log.append(("next", threading.get_ident()))
            yield i

    async with job.stream({"n": 5}) as updates:
        await updates.__anext__()
        await asyncio.sleep(0.05)
        # only what was asked for has run
        assert len(log) == 1
        async for _ in updates:
            pass
    assert len(log) == 5
    assert len({t for _, t in log}) == 1
    assert log[0][1] != threading.get_ident()


async def test_leaving_stream_early_stops_sync_generator_on_its_thread() -> None:
    log: list[tuple[str, int]] = []

    @tool(long_running=True)
    def job(n: int):
        try:
            for i in range(n):
                log.append(("next", threading.get_ident()))
                yield i
        finally:
            log.append(("finally", threading.get_ident()))

    async with job.stream({"n": 1000}) as updates:
        async for u in updates:
            if u.response["result"] == 2:
                break
    # the tool has stopped once the block is left
    assert log[-1][0] == "finally"
    assert [kind for kind, _ in log].count("next") == 3
    assert len({tid for _, tid in log}) == 1
    assert log[0][1] != threading.get_ident()


async def test_leaving_stream_early_on_exception_stops_sync_generator() -> None:
    log: list[str] = []

    @tool(long_running=True)
    def job():
        try:
            while True:
                yield 1
        finally:
            log.append("finally")

    with pytest.raises(RuntimeError, match="consumer"):
        async with job.stream({}) as updates:
            await updates.__anext__()
            raise RuntimeError("consumer failed")
    assert log == ["finally"]


async def test_leaving_stream_early_stops_async_generator() -> None:
    log: list[str] = []

    @tool(long_running=True)
    async def job():
        try:
            i = 0
            while True:
                yield i
                i += 1
        finally:
            log.append("finally")

    async with job.stream({}) as updates:
        async for u in updates:
            if u.response["result"] == 1:
                break
    assert log == ["finally"]


async def test_leaving_stream_before_first_update_never_starts_generator() -> None:
    log: list[str] = []

    @tool(long_running=True)
    def job():
        log.append("started")
        yield 1

    async with job.stream({}):
        pass
    await asyncio.sleep(0.02)
    assert log == []


async def test_cancelling_stream_consumer_stops_async_generator() -> None:
    log: list[str] = []
    started = asyncio.Event()

    @tool(long_running=True)
    async def job():
        try:
            yield 0
            started.set()
            await asyncio.sleep(30)
            yield 1
        finally:
            log.append("finally")

    async def consume() -> None:
        async with job.stream({}) as updates:
            async for _ in updates:
                pass

    task = asyncio.create_task(consume())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert log == ["finally"]


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_generator_raising_after_yields(kind: str) -> None:
    if kind == "sync":

        @tool(long_running=True)
        def job():
            yield "a"
            yield "b"
            raise RuntimeError("secret detail")

    else:

        @tool(long_running=True)
        async def job():
            yield "a"
            yield "b"
            raise RuntimeError("secret detail")

    got: list[ToolResponse] = []
    with pytest.raises(ToolError) as info:
        async with job.stream({}) as updates:
            async for u in updates:
                got.append(u)
    assert [(u.response, u.final) for u in got] == [
        ({"result": "a"}, False),
        ({"result": "b"}, False),
    ]
    assert info.value.code == "tool.failed"
    assert isinstance(info.value.__cause__, RuntimeError)
    assert "secret detail" not in info.value.message
    with pytest.raises(ToolError) as info:
        await job.run({})
    assert info.value.code == "tool.failed"


async def test_generator_raising_before_first_yield() -> None:
    @tool(long_running=True)
    def job():
        raise ValueError("x")
        yield  # pragma: no cover

    with pytest.raises(ToolError) as info:
        await collect(job, {})
    assert info.value.code == "tool.failed"


async def test_empty_generator_final_is_none_result() -> None:
    @tool(long_running=True)
    def job():
        return
        yield  # pragma: no cover

    updates = await collect(job, {})
    assert [(u.response, u.final) for u in updates] == [({"result": None}, True)]


async def test_generator_yields_are_made_json_safe_and_lift_parts() -> None:
    blob = Blob("image/png", b"p")

    @tool(long_running=True)
    def job():
        yield {"when": datetime.date(2024, 1, 1)}
        return {"image": blob}

    updates = await collect(job, {})
    assert updates[0].response == {"when": "2024-01-01"}
    assert updates[-1].response == {"image": {"part": 0, "mime_type": "image/png"}}
    assert updates[-1].parts == (blob,)
    _, parts = await _response_and_parts(job)
    assert parts == (blob,)


async def test_stream_invalid_arguments_raise_on_enter() -> None:
    @tool(long_running=True)
    def job(n: int):
        yield n

    with pytest.raises(ToolError) as info:
        async with job.stream({"n": "x"}):
            pytest.fail("should not enter")
    assert info.value.code == "tool.invalid_arguments"


@pytest.mark.parametrize("kind", ["sync", "async", "loop"])
async def test_non_generator_stream_yields_one_final_response(kind: str) -> None:
    if kind == "async":

        @tool
        async def f(x: int) -> int:
            return x * 2

    else:

        @tool(run_in_thread=kind == "sync")
        def f(x: int) -> int:
            return x * 2

    ctx = SimpleToolContext(function_call_id="call-9")
    updates = await collect(f, {"x": 4}, ctx)
    assert len(updates) == 1
    (only,) = updates
    assert only.response == {"result": 8}
    assert only.final is True
    assert only.name == "f"
    assert only.id == "call-9"
    assert only.duration_s >= 0


async def test_stream_response_ids_come_from_context() -> None:
    @tool(long_running=True)
    def job(tool_context: SimpleToolContext):
        yield 1
        yield 2

    ctx = SimpleToolContext(function_call_id="abc")
    updates = await collect(job, {}, ctx)
    assert {u.id for u in updates} == {"abc"}
    assert {u.name for u in updates} == {"job"}


async def test_generator_tool_without_long_running_flag_streams_too() -> None:
    @tool
    def job():
        yield 1
        return 2

    updates = await collect(job, {})
    assert [(u.response, u.final) for u in updates] == [
        ({"result": 1}, False),
        ({"result": 2}, True),
    ]


async def test_method_generator_tool_streams() -> None:
    class Worker:
        def __init__(self, prefix: str) -> None:
            self.prefix = prefix

        @tool(long_running=True)
        def work(self, n: int):
            for i in range(n):
                yield f"{self.prefix}{i}"

    updates = await collect(Worker("w").work, {"n": 2})
    assert [u.response["result"] for u in updates] == ["w0", "w1", "w1"]


# -- ToolError ------------------------------------------------------------------------------------


def test_tool_error_defaults_and_response_shape() -> None:
    err = ToolError("it broke")
    assert err.code == "tool.failed"
    assert err.message == "it broke"
    assert err.details is None
    assert err.to_response() == {
        "status": "error",
        "error": {"code": "tool.failed", "message": "it broke"},
    }


def test_tool_error_with_details_response_shape() -> None:
    details = [{"loc": ["number"], "msg": "bad", "type": "int_parsing", "input": "abc"}]
    err = ToolError("bad args", code="tool.invalid_arguments", details=details)
    assert err.to_response() == {
        "status": "error",
        "error": {"code": "tool.invalid_arguments", "message": "bad args", "details": details},
    }
    assert isinstance(err, Exception)
    assert str(err) == "bad args"


async def test_invalid_arguments_response_shape() -> None:
    with pytest.raises(ToolError) as info:
        await echo.run({"a": "abc"})
    response = info.value.to_response()
    assert response["status"] == "error"
    assert response["error"]["code"] == "tool.invalid_arguments"
    assert isinstance(response["error"]["message"], str)
    assert response["error"]["details"] == [
        {
            "loc": ["a"],
            "msg": response["error"]["details"][0]["msg"],
            "type": "int_parsing",
            "input": "abc",
        }
    ]
    assert json.loads(json.dumps(response)) == response


async def test_failed_response_shape_has_no_details() -> None:
    @tool
    def f() -> int:
        raise RuntimeError("x")

    with pytest.raises(ToolError) as info:
        await f.run({})
    response = info.value.to_response()
    assert set(response) == {"status", "error"}
    assert set(response["error"]) == {"code", "message"}


async def _response_and_parts(t: Any, args: dict[str, Any] | None = None) -> tuple[Any, Any]:
    """The response dict and the parts lifted out of it, for a call with ``args``."""
    final = await t.respond(t.check_arguments(args or {}))
    return final.response, final.parts


# -- run() of a plain function takes a shortcut; it answers as the one run path does ------


def _outcome(value: Any) -> Any:
    if isinstance(value, ToolError):
        return ("error", value.code, value.message, value.details)
    return ("ok", value)


async def _both_paths(t: Any, args: Any) -> tuple[Any, Any]:
    try:
        shortcut = _outcome(await t.run(args))
    except ToolError as error:
        shortcut = _outcome(error)
    try:
        one_path = _outcome((await t.respond(t.check_arguments(args))).response)
    except ToolError as error:
        one_path = _outcome(error)
    return shortcut, one_path


@tool(run_in_thread=False)
def _inline(a: int, b: str = "B") -> dict[str, Any]:
    if a < 0:
        raise ValueError("negative")
    if a == 13:
        raise ToolError("unlucky", code="tool.unlucky")
    return {"a": a, "b": b}


@tool
def _threaded(a: int, b: str = "B") -> int:
    if a < 0:
        raise ValueError("negative")
    return a + len(b)


@tool
async def _awaited(a: int, b: str = "B") -> list[Any]:
    if a < 0:
        raise ValueError("negative")
    return [a, b]


@pytest.mark.parametrize("t", [_inline, _threaded, _awaited], ids=["inline", "thread", "async"])
@pytest.mark.parametrize(
    "args",
    [
        {"a": 1},
        {"a": 2, "b": "x"},
        '{"a": 3}',
        {"a": -1},
        {"a": 13},
        {"a": "nope"},
        {},
        [1, 2],
        {"a": nested_list(70)},
    ],
)
async def test_run_of_a_plain_function_answers_as_respond_does(t: Any, args: Any) -> None:
    shortcut, one_path = await _both_paths(t, args)
    assert shortcut == one_path


async def test_run_of_an_unbound_method_tool_is_a_type_error_on_the_shortcut_too() -> None:
    class Store:
        @tool
        def add(self, n: int) -> int:
            return n

    with pytest.raises(TypeError, match="is a method"):
        await Store.add.run({"n": 1})
    assert await Store().add.run({"n": 2}) == {"result": 2}
