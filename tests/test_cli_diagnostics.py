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


def agent_cli(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return run("agent_core.cli", *args, cwd=cwd, stdin=stdin)


# -- tooling call grants only the scopes it is told to -------------------------------------

SCOPED = '''
"""A tool that needs a scope."""
from tooling import tool


@tool(scopes=("files:write", "files:read"))
def wipe(path: str) -> str:
    """Wipe a file (pretend).

    Args:
        path: Which file.
    """
    return f"wiped {path}"
'''


def test_tooling_call_grants_no_scope_unless_told(tmp_path: Path) -> None:
    (tmp_path / "scoped.py").write_text(textwrap.dedent(SCOPED))
    refused = tooling_cli("call", "scoped:wipe", '{"path": "a"}', cwd=tmp_path)
    assert refused.returncode == 1
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "tool.forbidden" and "files:write" in error["message"]
    partly = tooling_cli(
        "call", "scoped:wipe", '{"path": "a"}', "--grant", "files:write", cwd=tmp_path
    )
    assert json.loads(partly.stdout)["error"]["code"] == "tool.forbidden"
    granted = tooling_cli(
        "call",
        "scoped:wipe",
        '{"path": "a"}',
        "--grant",
        "files:write",
        "--grant",
        "files:read",
        cwd=tmp_path,
    )
    assert granted.returncode == 0, granted.stderr
    assert json.loads(granted.stdout) == {"result": "wiped a"}


# -- an instance's method tools are tools ---------------------------------------------------

NOTES = '''
"""Method tools on a module-level instance."""
from tooling import tool


class NotesStore:
    def __init__(self) -> None:
        self.notes: list[str] = []

    @tool
    def add_note(self, text: str) -> int:
        """Add a note; return how many there are.

        Args:
            text: The note.
        """
        self.notes.append(text)
        return len(self.notes)

    @tool(read_only=True)
    def count_notes(self) -> int:
        """How many notes there are."""
        return len(self.notes)


store = NotesStore()
'''


@pytest.fixture
def notes_dir(tmp_path: Path) -> Path:
    (tmp_path / "notes_tools.py").write_text(textwrap.dedent(NOTES))
    return tmp_path


@pytest.mark.parametrize("target", ["notes_tools.py:store", "notes_tools.py", "notes_tools"])
def test_tooling_inspect_finds_an_instances_method_tools(notes_dir: Path, target: str) -> None:
    result = tooling_cli("inspect", target, "--json", cwd=notes_dir)
    assert result.returncode == 0, result.stderr
    names = sorted(entry["name"] for entry in json.loads(result.stdout))
    assert names == ["add_note", "count_notes"]


@pytest.mark.parametrize("target", ["notes_tools.py:add_note", "notes_tools:store.add_note"])
def test_tooling_call_runs_an_instances_method_tool(notes_dir: Path, target: str) -> None:
    result = tooling_cli("call", target, '{"text": "hi"}', cwd=notes_dir)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"result": 1}


# -- agent-core run shows the real error first ----------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import no_such_dependency_xyz\n", "No module named 'no_such_dependency_xyz'"),
        ("x = 1\n", "defines no root_agent"),
        (
            "from agent_core import Agent\n"
            "def bad(*items: str) -> str:\n"
            "    return ''\n"
            "root_agent = Agent('a', 'gemini-2.0-flash', tools=[bad])\n",
            "'*items' is not supported",
        ),
    ],
    ids=["import-error", "no-root-agent", "invalid-tool"],
)
def test_agent_core_run_shows_the_real_error_before_the_missing_key(
    tmp_path: Path, source: str, expected: str
) -> None:
    folder = tmp_path / "app"
    folder.mkdir()
    (folder / "agent.py").write_text(source)
    result = agent_cli("run", str(folder), cwd=tmp_path)  # no key, no replay file
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert expected in line
    assert "no API key" not in line


# -- offline, a replay replays ----------------------------------------------------------------


def test_agent_core_run_on_a_terminal_replays_the_recorded_answers(tmp_path: Path) -> None:
    """No prompt is asked: the recorded confirmation is played, as recorded."""
    import pty

    master, slave = pty.openpty()
    environment = {k: v for k, v in os.environ.items() if k not in KEYS}
    environment["PYTHONPATH"] = str(ROOT)
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "agent_core.cli", "run", "examples/approvals"],
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=environment,
        )
        try:
            out, err = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
            pytest.fail(f"it waited for the terminal: {out!r} {err!r}")
    finally:
        os.close(slave)
        os.close(master)
    assert process.returncode == 0, err
    lines = out.splitlines()
    assert "user> [confirms]" in lines and "user> [declines]" in lines
    assert "[assistant] Done: the Globex record (r2) is deleted." in lines or any(
        "Done: the Globex record (r2) is deleted." in line for line in lines
    )
    assert not any("tool.rejected" in line for line in lines[: lines.index("user> [confirms]")])
    assert "replaying" in err and "recorded" in err
