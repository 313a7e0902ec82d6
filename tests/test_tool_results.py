"""What a tool's return value becomes: values that cannot be JSON are ``tool.failed`` and
logged like every failure; an instance of a plain class is sent as its public fields."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tooling import Scheduler, ToolCall, ToolError, tool


def returning(value: Any) -> Any:
    @tool
    def produce() -> Any:
        """Return the value."""
        return value

    return produce


def circular() -> list[Any]:
    loop: list[Any] = []
    loop.append(loop)
    return loop


@pytest.mark.parametrize(
    "value",
    [object(), circular(), {"inner": object()}, {"a": "\ud800"}],
    ids=["object", "circular", "nested-object", "surrogate"],
)
async def test_a_result_that_cannot_be_json_fails_and_is_logged(
    value: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="tooling"), pytest.raises(ToolError) as caught:
        await returning(value).run({})
    assert caught.value.code == "tool.failed"
    assert "cannot be sent to the model" in caught.value.message
    records = [r for r in caplog.records if r.name == "tooling" and r.levelno >= logging.WARNING]
    assert len(records) == 1
    assert "produce" in records[0].getMessage()


class Point:
    """A plain class: no pydantic schema, no dataclass."""

    def __init__(self, x: int, y: int) -> None:
        self.x = x
        self.y = y
        self._cache = "private"


class Slotted:
    __slots__ = ("_hidden", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._hidden = 1


class Route:
    def __init__(self, start: Point, stops: list[Point]) -> None:
        self.start = start
        self.stops = stops


async def test_a_plain_class_instance_is_sent_as_its_public_fields() -> None:
    @tool
    def where() -> Point:
        """Where the robot is."""
        return Point(2, 3)

    with pytest.warns(UserWarning, match="Point"):
        assert where.response_json_schema is None
    assert await where.run({}) == {"x": 2, "y": 3}


async def test_plain_class_fields_nest_and_slots_count() -> None:
    route = returning(Route(Point(0, 0), [Point(1, 1)]))
    assert await route.run({}) == {"start": {"x": 0, "y": 0}, "stops": [{"x": 1, "y": 1}]}
    assert await returning(Slotted("n")).run({}) == {"name": "n"}
    assert await returning([Point(1, 2)]).run({}) == {"result": [{"x": 1, "y": 2}]}


async def test_an_object_that_refers_to_itself_fails() -> None:
    point = Point(1, 1)
    point.x = point  # type: ignore[assignment]
    with pytest.raises(ToolError) as caught:
        await returning(point).run({})
    assert caught.value.code == "tool.failed"


async def test_a_process_tools_unsendable_result_is_logged_by_the_caller(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import _process_tools as pt

    scheduler = Scheduler([pt.unsendable, pt.refuse], max_processes=1)
    try:
        with caplog.at_level(logging.WARNING, logger="tooling"):
            failed, refused = await scheduler.dispatch(
                [ToolCall("a", "unsendable", {}), ToolCall("b", "refuse", {"reason": "no"})]
            )
    finally:
        scheduler.close()
    assert failed.error is not None and failed.error.code == "tool.failed"
    assert refused.error is not None and refused.error.code == "demo.refused"
    # The failure is logged in this process; the tool's own ToolError is not a failure.
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert logged == [f"tool 'unsendable' failed: {failed.error.message}"]
