"""A real browser for the inspector tests: Debian's chromium driven by playwright.

Never ``playwright install`` (it downloads browsers): the tests use the chromium on the
machine (``.ci/run`` installs Debian's package when it is missing). Without playwright
or chromium the browser tests skip, saying why; with ``CI`` set they fail instead.
Test modules import ``browser_fixture`` and ``page_fixture`` (registered as the fixtures
``browser`` and ``page``). Pages are read through ``data-*`` attributes, never pixels,
and any page error (an uncaught exception in the page) fails the test that caused it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Set to write the docs' screenshots (docs/img/inspector-*.png) from the browser tests.
SCREENSHOTS_ENV = "INSPECTOR_SCREENSHOTS"


def chromium_path() -> str | None:
    """Debian's chromium (or CHROMIUM_PATH), if there is one."""
    given = os.environ.get("CHROMIUM_PATH")
    if given:
        return given
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def unavailable(reason: str) -> None:
    """Skip (or, under CI, fail) a test that needs the browser."""
    if os.environ.get("CI"):
        pytest.fail(f"the browser tests cannot run under CI: {reason}")
    pytest.skip(reason)


def run_async(work: Any) -> Any:
    """Run a coroutine to its end on a thread of its own: while playwright's sync API is
    active, this thread counts as running an event loop."""
    import asyncio
    import threading

    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(work)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


# Module scope: playwright's sync API marks this thread as running an event loop while it
# is active, so it must be stopped before other modules' async tests run.
@pytest.fixture(scope="module", name="browser")
def browser_fixture() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright is not installed (pip install -e '.[dev]')")
    path = chromium_path()
    if path is None:
        unavailable("chromium is not installed (apt-get install chromium)")
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=path, args=CHROMIUM_FLAGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(name="page")
def page_fixture(browser: Any) -> Iterator[Any]:
    """A fresh page; the test fails if the page throws."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    opened = context.new_page()
    opened.set_default_timeout(15_000)
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    opened.errors = errors
    try:
        yield opened
    finally:
        context.close()
    assert not errors, f"page errors: {errors}"


def screenshot(page: Any, name: str) -> None:
    """Save the page as docs/img/inspector-NAME.png, only when SCREENSHOTS_ENV is set."""
    if os.environ.get(SCREENSHOTS_ENV):
        target = ROOT / "docs" / "img" / f"inspector-{name}.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(target))


def ready(page: Any, url: str) -> None:
    """Open ``url`` and wait until the page has its info."""
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]")
