"""``ToolError(details=...)``: a dict stays the dict given, a list of dicts stays a list,
and anything else is refused when the error is built, not turned into something else."""

from __future__ import annotations

import pytest

from tooling import ToolError, tool


def test_a_dict_of_details_is_kept_as_given() -> None:
    error = ToolError("not found", code="orders.not_found", details={"status": 404, "id": 7})
    assert error.details == {"status": 404, "id": 7}
    assert error.to_response() == {
        "status": "error",
        "error": {
            "code": "orders.not_found",
            "message": "not found",
            "details": {"status": 404, "id": 7},
        },
    }


def test_a_list_of_dicts_is_kept_as_a_list() -> None:
    error = ToolError("bad", details=({"loc": ["n"], "msg": "no"},))
    assert error.details == [{"loc": ["n"], "msg": "no"}]


@pytest.mark.parametrize("details", ["status 404", 404, [1, 2], ["a"], {1, 2}, b"x"])
def test_other_details_are_a_type_error_at_construction(details: object) -> None:
    with pytest.raises(TypeError, match="details"):
        ToolError("bad", details=details)  # type: ignore[arg-type]


async def test_a_tool_raising_dict_details_tells_the_model_the_dict() -> None:
    @tool
    def lookup(order: int) -> dict:
        """Find an order."""
        raise ToolError("no such order", code="orders.not_found", details={"status": 404})

    with pytest.raises(ToolError) as caught:
        await lookup.run({"order": 3})
    assert caught.value.to_response()["error"]["details"] == {"status": 404}
