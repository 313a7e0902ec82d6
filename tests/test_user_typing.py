"""After the README's install, a user's own module that decorates tools type-checks.

mypy --strict runs on a copy of ``tests/data/user_tools.py`` placed outside the project,
with the interpreter running the tests, so it sees the packages exactly as that
environment installed them (CI installs them the README's way: ``pip install -e``). An
editable install that hides the packages from type checkers (an import hook instead of a
path entry) makes every ``@tool`` an "untyped decorator" here.
"""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

USER_MODULE = Path(__file__).parent / "data" / "user_tools.py"


def test_a_users_tool_module_passes_mypy_strict(tmp_path: Path) -> None:
    try:
        importlib.metadata.distribution("agent-tooling")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("the package is not installed in this environment")
    shutil.copy(USER_MODULE, tmp_path / "user_tools.py")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "user_tools.py"],
        cwd=tmp_path,  # outside the project: its mypy settings and sources play no part
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_docs_annotate_returns_as_mypy_strict_wants() -> None:
    """The docs recommend ``mypy --strict`` on a tools module: their own examples pass it,
    so no tool returns a bare ``dict`` or ``list`` (a missing type parameter there)."""
    import re

    root = USER_MODULE.parent.parent.parent
    bare = re.compile(r"-> (dict|list|tuple|set)\s*:")
    found = [
        f"{page.relative_to(root)}:{number}"
        for page in [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
        for number, line in enumerate(page.read_text().splitlines(), 1)
        if bare.search(line)
    ]
    assert found == []
