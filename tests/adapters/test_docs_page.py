"""docs/adapters.md runs as pasted, here where its frameworks are installed (the main
run's page test skips its blocks, which are marked as needing the extras)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.test_docs import PageRunner, python_blocks

PAGE = Path(__file__).resolve().parents[2] / "docs" / "adapters.md"


def test_the_adapters_page_runs_as_pasted(monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = list(python_blocks(PAGE.read_text(encoding="utf-8")))
    assert blocks and all(b.skip and "tests/adapters runs this page" in b.skip for b in blocks)
    monkeypatch.chdir(PAGE.parents[1])
    PageRunner(PAGE).run([replace(b, skip=None) for b in blocks])
