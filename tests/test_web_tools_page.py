"""The Tools page in a real browser: the catalogue as the CLI prints it, and try-it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser import ROOT, browser_fixture, page_fixture, ready, screenshot  # noqa: F401
from pydantic import BaseModel

from tooling import tool
from tooling.cli import PROVIDERS, load_target
from tooling.web import WebServer, serve_tools

#: The examples this environment can load (those needing other frameworks are checked in
#: their own environment, by tests/adapters).
OTHER_ENVIRONMENT = ("third_party_tools",)
EXAMPLES = sorted(
    p
    for p in (ROOT / "examples").iterdir()
    if (p / "agent.py").is_file() and p.name not in OTHER_ENVIRONMENT
)

TOOLS = '''
"""Tools for the try-it tests."""
import base64
import threading

from tooling import Blob, ToolContext, tool

ERASED: list[str] = []
GATE = threading.Event()
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg=="
)


@tool
def scale(values: list[float], factor: float = 2.0, label: str = "x") -> dict:
    """Scale numbers.

    Args:
        values: The numbers.
        factor: By how much.
        label: A name for the result.
    """
    return {"label": label, "scaled": [v * factor for v in values]}


@tool(require_confirmation=True, destructive=True)
def erase(name: str) -> dict:
    """Erase a thing (the test counts the runs).

    Args:
        name: What to erase.
    """
    ERASED.append(name)
    return {"erased": name}


@tool(long_running=True)
def build(steps: int, tool_context: ToolContext):
    """Build in steps, reporting each; the last step waits for the test's go.

    Args:
        steps: How many steps.
    """
    for step in range(1, steps + 1):
        tool_context.emit_progress("stdout", f"step {step} of {steps}")
        yield {"percent": 100 * step // steps}
    GATE.wait(30)
    yield {"built": steps}


@tool(read_only=True, concurrency_safe=True)
def picture(title: str) -> dict:
    """A tiny picture.

    Args:
        title: Its title.
    """
    return {"title": title, "image": Blob("image/png", PNG)}
'''


def _cli_reports() -> dict[str, dict[str, list[dict[str, Any]]]]:
    """What ``tooling inspect --json --provider P`` prints for every example: one process
    per provider (each tool is exported for that provider only, as in a fresh CLI), the
    processes running side by side."""
    folders = [str(p.relative_to(ROOT)) for p in EXAMPLES]
    script = textwrap.dedent(
        f"""
        import contextlib, io, json, sys
        from tooling.cli import main
        out = {{}}
        for folder in {folders!r}:
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                main(["inspect", folder, "--json", "--provider", sys.argv[1]])
            out[folder] = json.loads(buffer.getvalue())
        sys.stdout.write(json.dumps(out))
        """
    )
    running = {
        provider: subprocess.Popen(
            [sys.executable, "-c", script, provider],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for provider in PROVIDERS
    }
    out = {}
    for provider, process in running.items():
        stdout, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr
        out[provider] = json.loads(stdout)
    return out


TAB_SCRIPT = """providers => {
    const out = {};
    for (const provider of providers) {
        const tab = document.querySelector(`[data-provider-tab="${provider}"]`);
        tab.click();
        const shown = document.querySelector(`[data-provider-json="${provider}"]`);
        out[provider] = {
            selected: tab.getAttribute("aria-selected"),
            diagnostics: tab.dataset.diagnostics,
            json: shown.dataset.json,
        };
    }
    return out;
}"""


def _serve_examples(tmp_path: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agent_core.cli",
            "web",
            "examples",
            "--port",
            "0",
            "--no-browser",
            "--session-db",
            str(tmp_path / "s.db"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    for _ in range(5):
        found = re.search(r"(http://\S+)", process.stdout.readline())
        if found:
            return process, found.group(1)
    process.kill()
    raise AssertionError("agent-core web printed no URL")


def test_every_example_tool_and_provider_is_as_the_cli_prints_it(page, tmp_path) -> None:
    process, url = _serve_examples(tmp_path)
    try:
        expected = _cli_reports()
        compared = 0
        for folder in EXAMPLES:
            label = str(folder.relative_to(ROOT))
            cli = {p: expected[p][label] for p in PROVIDERS}
            names = [r["name"] for r in cli["gemini"]]
            ready(page, f"{url}&app={folder.name}#tools")
            page.wait_for_selector("[data-tool-list][data-count]")
            shown = page.eval_on_selector_all(
                "[data-tool-list] [data-tool]", "els => els.map(e => e.dataset.tool)"
            )
            assert shown == names, folder.name
            for name in dict.fromkeys(names):
                page.evaluate(
                    "name => { location.hash = '#tools/' + encodeURIComponent(name) }", name
                )
                page.wait_for_selector(f'#tool-detail[data-name="{name}"][data-loaded="true"]')
                # Click every provider's tab (in the page: one round trip per tool).
                tabs = page.evaluate(TAB_SCRIPT, list(PROVIDERS))
                for provider in PROVIDERS:
                    report = next(r for r in cli[provider] if r["name"] == name)
                    assert tabs[provider]["selected"] == "true"
                    assert tabs[provider]["diagnostics"] == str(len(report.get("diagnostics", [])))
                    assert json.loads(tabs[provider]["json"]) == report, (
                        folder.name,
                        name,
                        provider,
                    )
                    compared += 1
        assert compared >= 6 * len(EXAMPLES)
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def tools_module(tmp_path) -> Iterator[Any]:
    (tmp_path / "trytools.py").write_text(TOOLS)
    _, module = load_target(str(tmp_path / "trytools.py"))
    yield module
    module.GATE.set()


@pytest.fixture
def try_server(tools_module) -> Iterator[WebServer]:
    tools = [tools_module.scale, tools_module.erase, tools_module.build, tools_module.picture]
    with serve_tools(tools, title="trytools") as server:
        yield server


def _open_tool(page, server: WebServer, name: str) -> None:
    ready(page, f"{server.url}#tools/{name}")
    page.wait_for_selector(f'#tool-detail[data-name="{name}"][data-loaded="true"]')


def _result(page) -> dict[str, Any]:
    page.wait_for_selector('[data-try-form][data-call-state="done"]')
    return json.loads(page.get_attribute("[data-result]", "data-json"))


def test_a_submitted_form_gives_what_tooling_call_prints(page, try_server, tmp_path) -> None:
    args = {"values": [1, 2.5], "factor": 4, "label": "twice"}
    cli = subprocess.run(
        [sys.executable, "-m", "tooling.cli", "call", "trytools.py:scale", json.dumps(args)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cli.returncode == 0, cli.stderr
    _open_tool(page, try_server, "scale")
    assert page.get_attribute('[data-input="values"]', "data-kind") == "json"
    assert page.get_attribute('[data-input="factor"]', "data-kind") == "number"
    page.fill('[data-input="values"]', "[1, 2.5]")
    page.fill('[data-input="factor"]', "4")
    page.fill('[data-input="label"]', "twice")
    page.click("[data-submit]")
    assert _result(page) == json.loads(cli.stdout)
    page.evaluate("document.querySelector('#tool-detail').scrollTop = 0")
    screenshot(page, "tools")
    # The raw JSON mode sends exactly what is typed.
    page.click("[data-raw-toggle]")
    assert json.loads(page.input_value("[data-raw-json]")) == args
    page.fill("[data-raw-json]", json.dumps({"values": [3], "factor": 0.5}))
    page.click("[data-submit]")
    assert _result(page) == {"label": "x", "scaled": [1.5]}


def test_an_invalid_value_is_shown_next_to_its_field(page, try_server) -> None:
    _open_tool(page, try_server, "scale")
    page.fill('[data-input="values"]', "[1]")
    page.fill('[data-input="factor"]', "lots")
    page.click("[data-submit]")
    page.wait_for_selector('[data-try-form][data-call-state="done"]')
    error = page.locator('[data-field-error="factor"]')
    assert "tool.invalid_arguments" in error.inner_text()
    assert error.get_attribute("data-error-code") == "tool.invalid_arguments"
    assert page.locator('[data-field-error="values"]').inner_text() == ""
    assert page.get_attribute("[data-try-form]", "data-field-errors") == "1"
    # A missing required value is shown at its field too (the page checks nothing itself).
    page.fill('[data-input="values"]', "")
    page.fill('[data-input="factor"]', "")
    page.click("[data-submit]")
    page.wait_for_selector('[data-field-error="values"][data-error-code="tool.invalid_arguments"]')


def test_a_confirmation_tool_runs_only_after_yes(page, try_server, tools_module) -> None:
    _open_tool(page, try_server, "erase")
    page.fill('[data-input="name"]', "db")
    page.click("[data-submit]")
    dialog = page.wait_for_selector("[data-confirm-dialog][open]")
    fingerprint = dialog.get_attribute("data-fingerprint")
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", fingerprint)
    assert page.inner_text("#confirm-fingerprint") == fingerprint
    time.sleep(0.3)
    assert tools_module.ERASED == []  # asked, not run
    page.click('[data-confirm-answer="no"]')
    assert _result(page)["error"]["code"] == "tool.rejected"
    assert tools_module.ERASED == []
    page.click("[data-submit]")
    page.wait_for_selector("[data-confirm-dialog][open]")
    assert tools_module.ERASED == []
    page.click('[data-confirm-answer="yes"]')
    assert _result(page) == {"erased": "db"}
    assert tools_module.ERASED == ["db"]


def test_a_generator_shows_its_progress_before_the_final_response(
    page, try_server, tools_module
) -> None:
    _open_tool(page, try_server, "build")
    page.fill('[data-input="steps"]', "2")
    page.click("[data-submit]")
    page.wait_for_selector('[data-partials][data-count="2"]')
    page.wait_for_selector('[data-progress][data-count="2"]')
    assert "step 2 of 2" in page.inner_text("[data-progress]")
    assert page.get_attribute("[data-try-form]", "data-call-state") == "running"
    assert page.locator("[data-result]").count() == 0  # the tool is still waiting
    tools_module.GATE.set()
    assert _result(page) == {"built": 2}


def test_images_in_a_response_are_shown(page, try_server) -> None:
    _open_tool(page, try_server, "picture")
    page.fill('[data-input="title"]', "dots")
    page.click("[data-submit]")
    result = _result(page)
    assert result["image"]["mime_type"] == "image/png"
    image = page.wait_for_selector('img[data-part="0"]')
    assert image.get_attribute("data-mime") == "image/png"
    page.wait_for_function("() => document.querySelector('img[data-part]').naturalWidth === 2")


def test_schedule_and_flags_are_shown(page, try_server) -> None:
    _open_tool(page, try_server, "picture")
    assert page.get_attribute("[data-schedule-mode]", "data-schedule-mode") == "concurrent"
    _open_tool(page, try_server, "erase")
    assert page.get_attribute("[data-schedule-mode]", "data-schedule-mode") == "barrier"
    assert "conflict_key" in page.inner_text("[data-schedule-mode]")
    flags = page.eval_on_selector_all(
        "[data-flags] [data-flag]", "els => els.map(e => e.dataset.flag)"
    )
    assert "require_confirmation" in flags and "destructive" in flags


class Address(BaseModel):
    city: str
    zip_code: str | None = None


class Order(BaseModel):
    sku: str
    quantity: int = 1
    gift: bool
    ship_to: Address


@tool
def place(order: Order) -> str:
    """Place an order."""
    return f"{order.quantity} x {order.sku} to {order.ship_to.city}"


def test_a_model_argument_starts_from_a_skeleton_of_its_fields(page) -> None:
    with serve_tools([place], title="orders") as server:
        _open_tool(page, server, "place")
        box = '[data-input="order"]'
        assert page.get_attribute(box, "data-kind") == "json"
        expected = {
            "sku": "",
            "quantity": 1,
            "gift": False,
            "ship_to": {"city": "", "zip_code": None},
        }
        assert json.loads(page.get_attribute(box, "data-skeleton")) == expected
        assert json.loads(page.get_attribute(box, "placeholder")) == expected
        assert page.input_value(box) == ""  # shown, not sent
        filled = {**expected, "sku": "tea", "ship_to": {"city": "Oslo", "zip_code": None}}
        page.fill(box, json.dumps(filled))
        page.click("[data-submit]")
        assert _result(page) == {"result": "1 x tea to Oslo"}
