"""What the ``tooling`` and ``agent-core`` commands tell a developer when something breaks.

Run as subprocesses, in ``tmp_path``, with no API key in the environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KEYS = ("GOOGLE_API_KEY", "GEMINI_API_KEY")


def run(module: str, *args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in KEYS}
    environment["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), environment.get("PYTHONPATH", "")) if p
    )
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment,
        timeout=120,
    )


def tooling_cli(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return run("tooling.cli", *args, cwd=cwd, stdin=stdin)


CRASHING = '''
"""A tool that breaks."""
from tooling import tool


def lookup(table: dict, key: str) -> str:
    return table[key]


@tool
def crash(key: str) -> str:
    """Look a key up in an empty table.

    Args:
        key: What to look up.
    """
    return lookup({}, key)
'''


@pytest.fixture
def crash_dir(tmp_path: Path) -> Path:
    (tmp_path / "crashing.py").write_text(textwrap.dedent(CRASHING))
    return tmp_path


def test_tooling_call_debug_prints_the_traceback_of_a_failed_tool(crash_dir: Path) -> None:
    result = tooling_cli("--debug", "call", "crashing:crash", '{"key": "k"}', cwd=crash_dir)
    assert result.returncode == 1
    assert json.loads(result.stdout)["error"]["code"] == "tool.failed"
    assert "Traceback" in result.stderr
    assert "KeyError" in result.stderr and "in lookup" in result.stderr


def test_tooling_call_without_debug_says_in_one_line_where_to_look(crash_dir: Path) -> None:
    result = tooling_cli("call", "crashing:crash", '{"key": "k"}', cwd=crash_dir)
    assert result.returncode == 1
    assert json.loads(result.stdout)["error"]["code"] == "tool.failed"
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "crash" in line and "KeyError" in line and "--debug" in line
