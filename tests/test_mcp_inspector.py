"""``tooling serve`` seen by the official MCP Inspector's CLI (the TypeScript SDK's client).

The Inspector is run by ``npx`` (Node.js) against one ``tooling serve --http`` server on
127.0.0.1 for the module. Its client checks ``structuredContent`` against the tool's
``outputSchema``, and it JSON-parses a ``--tool-arg`` value only for a property whose
``type`` is ``"object"`` or ``"array"``: both are what these tests pin.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("mcp")

from tests._mcp_helpers import TOOLS, http_server

NPX = shutil.which("npx")
pytestmark = pytest.mark.skipif(NPX is None, reason="the MCP Inspector needs Node.js (npx)")

INSPECTOR = "@modelcontextprotocol/inspector"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with http_server(TOOLS) as (address, _process):
        yield address


def inspector(url: str, *args: str) -> tuple[int, Any, str]:
    """Runs the Inspector's CLI once: its exit code, its JSON answer (or None), its errors."""
    assert NPX is not None
    done = subprocess.run(
        [NPX, "-y", INSPECTOR, "--cli", url, *args],
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        answer = None
    return done.returncode, answer, done.stdout + done.stderr


def call(url: str, tool: str, **arguments: str) -> tuple[int, Any, str]:
    pairs = [f"{k}={v}" for k, v in arguments.items()]
    extra = ["--tool-arg", *pairs] if pairs else []
    return inspector(url, "--method", "tools/call", "--tool-name", tool, *extra)


def error_of(answer: Any) -> dict[str, Any]:
    """The error a failed call's text carries (errors travel as text content only)."""
    assert answer["isError"] is True
    assert "structuredContent" not in answer
    (block,) = answer["content"]
    body = json.loads(block["text"])
    assert body["status"] == "error"
    return body["error"]  # type: ignore[no-any-return]


def test_the_inspector_lists_object_parameters_it_can_parse(url: str) -> None:
    code, answer, output = inspector(url, "--method", "tools/list")
    assert code == 0, output
    place = next(t for t in answer["tools"] if t["name"] == "place")
    properties = place["inputSchema"]["properties"]
    assert properties["point"]["type"] == "object"
    assert properties["tags"]["type"] == "array"


def test_a_success_and_object_arguments_sent_as_text(url: str) -> None:
    code, answer, output = call(url, "add", a="2", b="3")
    assert code == 0, output
    assert answer["structuredContent"] == {"result": 5} and answer["isError"] is False

    code, answer, output = call(url, "place", point='{"x": 1, "y": 2}', tags='["a", "b"]')
    assert code == 0, output
    assert answer["structuredContent"] == {"x": 1, "y": 2, "tags": ["a", "b"]}


def test_a_crash_reaches_the_inspector_as_an_error_result(url: str) -> None:
    code, answer, output = call(url, "explode")
    assert code == 0, output
    assert error_of(answer)["code"] == "tool.failed"


def test_a_bad_value_and_an_unknown_argument_reach_it_as_error_results(url: str) -> None:
    code, answer, output = call(url, "add", a="two", b="3")
    assert code == 0, output
    error = error_of(answer)
    assert error["code"] == "tool.invalid_arguments"
    assert [d["loc"] for d in error["details"]] == [["a"]]

    code, answer, output = call(url, "add", a="1", b="2", c="3")
    assert code == 0, output
    error = error_of(answer)
    assert error["code"] == "tool.invalid_arguments"
    assert [(d["loc"], d["type"]) for d in error["details"]] == [(["c"], "extra_forbidden")]
