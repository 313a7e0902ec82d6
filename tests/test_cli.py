"""The ``tooling`` and ``agent-core`` commands, run as subprocesses.

Each test writes a small tools module or agent folder into ``tmp_path`` and runs
``python -m tooling.cli`` / ``python -m agent_core.cli`` there, with no API key in the
environment, checking output and exit status. Error cases must print one line on stderr
and never a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agent_core import Event

ROOT = Path(__file__).resolve().parent.parent
KEYS = ("GOOGLE_API_KEY", "GEMINI_API_KEY")

TOOLS = '''
"""Tools for the CLI tests."""
import asyncio
import time

from tooling import BaseToolset, ToolContext, ToolError, tool


@tool(read_only=True, concurrency_safe=True, idempotent=True)
def is_even(number: int) -> bool:
    """Check whether a number is even.

    Args:
        number: The number to check.
    """
    return number % 2 == 0


@tool(require_confirmation=True, scopes=("files:write",), timeout=5)
def delete_file(path: str) -> dict:
    """Delete a file (pretend).

    Args:
        path: Which file.
        force: Documented, but not a parameter.
    """
    return {"deleted": path}


@tool(long_running=True)
def process(steps: int = 3, tool_context: ToolContext = None):
    """Process things in steps.

    Args:
        steps: How many steps.
    """
    for i in range(steps):
        tool_context.emit_progress("stdout", f"step {i}")
        time.sleep(0.05)
        yield {"status": "running", "percent": (i + 1) * 100 // steps}
    return {"status": "done", "steps": steps}


@tool
def refuse(reason: str) -> str:
    """Always fail.

    Args:
        reason: Why.
    """
    raise ToolError(f"refused: {reason}", code="demo.refused")


@tool(timeout=0.2)
async def slow() -> str:
    """Take too long."""
    await asyncio.sleep(10)
    return "late"


class MathTools(BaseToolset):
    async def get_tools(self, readonly_context=None):
        return [is_even]


math = MathTools(tool_name_prefix="math")
'''

BROKEN = '''
"""One good tool and one whose types cannot be resolved."""
from tooling import tool


@tool
def fine(text: str) -> str:
    """Echo the text.

    Args:
        text: What to echo.
    """
    return text


@tool
def broken(x: "NoSuchType") -> int:  # noqa: F821
    """Cannot be built."""
    return 1
'''

AGENT = '''
"""A small agent for the CLI tests."""
import os

from agent_core import Agent
from tooling import ToolContext, tool


@tool(read_only=True)
def is_even(number: int) -> bool:
    """Check whether a number is even.

    Args:
        number: The number to check.
    """
    return number % 2 == 0


def count_visit(tool_context: ToolContext) -> int:
    """Count this session's visits in its state."""
    visits = tool_context.state.get("visits", 0) + 1
    tool_context.state["visits"] = visits
    return visits


@tool(require_confirmation=True)
def delete_file(path: str) -> dict:
    """Delete a file (pretend).

    Args:
        path: Which file.
    """
    return {"deleted": path}


@tool(long_running=True)
def process(steps: int, tool_context: ToolContext):
    """Work in steps, reporting progress.

    Args:
        steps: How many steps.
    """
    for i in range(steps):
        tool_context.emit_progress("stdout", f"step {i}")
        yield {"status": "running", "percent": (i + 1) * 100 // steps}
    return {"status": "done", "marker": os.environ.get("CLI_TEST_MARKER")}


REPLAY_ENV = {"CLI_TEST_MARKER": "from-replay-env"}

root_agent = Agent(
    "helper",
    "gemini-2.0-flash",
    instruction="Help the user.",
    tools=[is_even, count_visit, delete_file, process],
)
'''


def call_turn(name: str, args: dict) -> dict:
    return {"role": "model", "parts": [{"functionCall": {"name": name, "args": args}}]}


REPLAY = {
    "prompts": ["is 4 even?", "delete a.txt", {"confirm": True}, "process two steps"],
    "turns": [
        call_turn("is_even", {"number": 4}),
        "Yes, 4 is even.",
        call_turn("delete_file", {"path": "a.txt"}),
        "Deleted a.txt.",
        call_turn("process", {"steps": 2}),
        "Processing finished.",
    ],
}


def run(
    module: str, *args: str, cwd: Path, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in KEYS}
    environment["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), environment.get("PYTHONPATH", "")) if p
    )
    environment.update(env or {})
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


def agent_cli(
    *args: str, cwd: Path, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run("agent_core.cli", *args, cwd=cwd, stdin=stdin, env=env)


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture
def tools_dir(tmp_path: Path) -> Path:
    (tmp_path / "cli_tools.py").write_text(textwrap.dedent(TOOLS))
    (tmp_path / "cli_broken.py").write_text(textwrap.dedent(BROKEN))
    return tmp_path


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "helper_app"
    folder.mkdir()
    (folder / "agent.py").write_text(textwrap.dedent(AGENT))
    (folder / "replay.json").write_text(json.dumps(REPLAY))
    return folder


# -- tooling inspect -------------------------------------------------------------------------


PROVIDER_MARKS = {
    "gemini": '"parameters_json_schema"',
    "gemini-legacy": '"parameters"',
    "openai": '"type": "function"',
    "openai-strict": '"strict": true',
    "anthropic": '"input_schema"',
    "mcp": '"inputSchema"',
}


@pytest.mark.parametrize("provider", list(PROVIDER_MARKS))
def test_inspect_every_provider(tools_dir: Path, provider: str) -> None:
    result = tooling_cli("inspect", "cli_tools", "--provider", provider, cwd=tools_dir)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for name in ("is_even", "delete_file", "process", "refuse", "slow", "math_is_even"):
        assert f"\n{name}  (" in f"\n{out}"
    assert f"schema ({provider}):" in out
    assert PROVIDER_MARKS[provider] in out
    assert "flags: read_only, concurrency_safe, idempotent" in out
    assert "scopes: files:write" in out
    assert "timeout: 5 s" in out
    assert "docstring.unknown_parameter [force]" in out
    assert "Traceback" not in result.stderr


def test_inspect_json_is_one_document(tools_dir: Path) -> None:
    result = tooling_cli("inspect", "cli_tools", "--json", "--provider", "mcp", cwd=tools_dir)
    assert result.returncode == 0, result.stderr
    reports = json.loads(result.stdout)
    by_name = {r["name"]: r for r in reports}
    assert set(by_name) == {"is_even", "delete_file", "process", "refuse", "slow", "math_is_even"}
    delete = by_name["delete_file"]
    assert delete["flags"] == {
        "read_only": False,
        "concurrency_safe": False,
        "long_running": False,
        "idempotent": False,
        "destructive": True,
        "require_confirmation": True,
        "timeout": 5,
        "scopes": ["files:write"],
    }
    assert delete["schema"]["inputSchema"]["required"] == ["path"]
    assert delete["schema"]["annotations"]["destructiveHint"] is True
    assert [d["code"] for d in delete["diagnostics"]] == ["docstring.unknown_parameter"]
    assert by_name["process"]["flags"]["long_running"] is True
    assert by_name["math_is_even"]["origin"].endswith("toolset MathTools")


def test_inspect_shows_how_auto_schedules_each_tool(tools_dir: Path) -> None:
    result = tooling_cli("inspect", "cli_tools", "--json", cwd=tools_dir)
    assert result.returncode == 0, result.stderr
    by_name = {r["name"]: r for r in json.loads(result.stdout)}
    assert by_name["is_even"]["scheduling"]["mode"] == "concurrent"
    assert by_name["delete_file"]["scheduling"]["mode"] == "barrier"
    assert "conflict_key=" in by_name["delete_file"]["scheduling"]["summary"]
    text = tooling_cli("inspect", "cli_tools:delete_file", cwd=tools_dir).stdout
    assert "scheduling (auto): a barrier: runs alone;" in text


def test_inspect_gemini_json_is_the_declaration(tools_dir: Path) -> None:
    result = tooling_cli("inspect", "cli_tools:is_even", "--json", cwd=tools_dir)
    assert result.returncode == 0, result.stderr
    (report,) = json.loads(result.stdout)
    assert report["schema"]["name"] == "is_even"
    assert report["schema"]["parameters_json_schema"]["required"] == ["number"]
    assert report["diagnostics"] == []


def test_inspect_by_path_and_attribute(tools_dir: Path) -> None:
    result = tooling_cli("inspect", str(tools_dir / "cli_tools.py") + ":math", cwd=tools_dir)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("math_is_even  (")
    assert "\nis_even  (" not in result.stdout


def test_inspect_a_broken_tool_fails_with_one_line(tools_dir: Path) -> None:
    result = tooling_cli("inspect", "cli_broken.py", cwd=tools_dir)
    assert result.returncode == 1
    assert "fine  (" in result.stdout  # the good tool is still shown
    line = one_error_line(result)
    assert "'broken'" in line and "NoSuchType" in line
    as_json = tooling_cli("inspect", "cli_broken", "--json", cwd=tools_dir)
    assert as_json.returncode == 1
    reports = {r["name"]: r for r in json.loads(as_json.stdout)}
    assert "NoSuchType" in reports["broken"]["error"]
    assert "error" not in reports["fine"]


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("no_such_module_here", "module not found: no_such_module_here"),
        ("cli_tools:nothing", "has no attribute 'nothing'"),
        ("missing.py", "no such file"),
        ("not a module!", "not a module name"),
    ],
)
def test_inspect_bad_targets(tools_dir: Path, target: str, expected: str) -> None:
    result = tooling_cli("inspect", target, cwd=tools_dir)
    assert result.returncode == 2
    assert expected in one_error_line(result)
    assert result.stdout == ""


def test_inspect_module_that_fails_to_import(tools_dir: Path) -> None:
    (tools_dir / "cli_raises.py").write_text("raise RuntimeError('boom at import')\n")
    result = tooling_cli("inspect", "cli_raises", cwd=tools_dir)
    assert result.returncode == 2
    assert "RuntimeError: boom at import" in one_error_line(result)


def test_debug_shows_the_traceback(tools_dir: Path) -> None:
    result = tooling_cli("--debug", "inspect", "no_such_module_here", cwd=tools_dir)
    assert result.returncode != 0
    assert "Traceback" in result.stderr


# -- tooling call --------------------------------------------------------------------------

GRANT = ("--grant", "files:write")  # delete_file declares this scope


def test_call_success(tools_dir: Path) -> None:
    result = tooling_cli("call", "cli_tools:is_even", '{"number": 4}', cwd=tools_dir)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"result": True}
    by_path = tooling_cli("call", "cli_tools.py:is_even", '{"number": 3}', cwd=tools_dir)
    assert json.loads(by_path.stdout) == {"result": False}
    prefixed = tooling_cli("call", "cli_tools:math_is_even", '{"number": 8}', cwd=tools_dir)
    assert json.loads(prefixed.stdout) == {"result": True}


def test_call_validation_error_is_structured(tools_dir: Path) -> None:
    result = tooling_cli("call", "cli_tools:is_even", '{"number": "abc"}', cwd=tools_dir)
    assert result.returncode == 1
    body = json.loads(result.stdout)
    assert body["status"] == "error"
    assert body["error"]["code"] == "tool.invalid_arguments"
    (detail,) = body["error"]["details"]
    assert detail["loc"] == ["number"] and detail["input"] == "abc"
    assert "Traceback" not in result.stderr


def test_call_tool_error(tools_dir: Path) -> None:
    result = tooling_cli("call", "cli_tools:refuse", '{"reason": "no"}', cwd=tools_dir)
    assert result.returncode == 1
    assert json.loads(result.stdout)["error"] == {"code": "demo.refused", "message": "refused: no"}


def test_call_timeout(tools_dir: Path) -> None:
    result = tooling_cli("call", "cli_tools:slow", cwd=tools_dir)
    assert result.returncode == 1
    assert json.loads(result.stdout)["error"]["code"] == "tool.timeout"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("cli_tools:is_even", '{"number": '), "invalid JSON arguments"),
        (("cli_tools:is_even", "[1, 2]"), "must be a JSON object"),
        (("cli_tools:nope", "{}"), "no tool named 'nope'"),
        (("no_such_module_here:tool", "{}"), "module not found"),
        (("cli_tools", "{}"), "expected TARGET:TOOL"),
        (("cli_tools:is_even", "{}", "--timeout", "soon"), "invalid float value"),
    ],
)
def test_call_usage_errors_are_one_line(
    tools_dir: Path, args: tuple[str, ...], expected: str
) -> None:
    result = tooling_cli("call", *args, cwd=tools_dir)
    assert result.returncode == 2
    assert expected in one_error_line(result)
    assert result.stdout == ""


def test_call_not_found_lists_the_tools(tools_dir: Path) -> None:
    line = one_error_line(tooling_cli("call", "cli_tools:nope", "{}", cwd=tools_dir))
    assert "delete_file" in line and "is_even" in line and "math_is_even" in line


def test_call_confirmation_answered_yes(tools_dir: Path) -> None:
    result = tooling_cli(
        "call", "cli_tools:delete_file", '{"path": "a.txt"}', *GRANT, cwd=tools_dir, stdin="y\n"
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"deleted": "a.txt"}
    assert 'Confirm delete_file {"path": "a.txt"}? [y/N]' in result.stderr


def test_call_confirmation_answered_no(tools_dir: Path) -> None:
    result = tooling_cli(
        "call", "cli_tools:delete_file", '{"path": "a.txt"}', *GRANT, cwd=tools_dir, stdin="n\n"
    )
    assert result.returncode == 1
    assert json.loads(result.stdout)["error"]["code"] == "tool.rejected"


def test_call_confirmation_without_an_answer_is_no(tools_dir: Path) -> None:
    result = tooling_cli(
        "call", "cli_tools:delete_file", '{"path": "a.txt"}', *GRANT, cwd=tools_dir
    )
    assert result.returncode == 1
    assert json.loads(result.stdout)["error"]["code"] == "tool.rejected"


def test_call_yes_confirms_in_advance(tools_dir: Path) -> None:
    result = tooling_cli(
        "call", "cli_tools:delete_file", '{"path": "b.txt"}', "--yes", *GRANT, cwd=tools_dir
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"deleted": "b.txt"}


def test_call_long_running_shows_progress_and_updates(tools_dir: Path) -> None:
    result = tooling_cli("call", "cli_tools:process", '{"steps": 2}', cwd=tools_dir)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"status": "done", "steps": 2}
    lines = result.stderr.splitlines()
    assert lines == [
        "[stdout] step 0",
        '… process 50% {"status": "running", "percent": 50}',
        "[stdout] step 1",
        '… process 100% {"status": "running", "percent": 100}',
    ]


# -- agent-core run --------------------------------------------------------------------------


EXPECTED_CONVERSATION = [
    "user> is 4 even?",
    "[helper] calls is_even(number=4)",
    '[helper] is_even -> {"result": true}',
    "[helper] Yes, 4 is even.",
    "user> delete a.txt",
    '[helper] calls delete_file(path="a.txt")',
    '[helper] asks to confirm delete_file(path="a.txt"): Confirm running delete_file.',
    "user> [confirms]",
    '[helper] delete_file -> {"deleted": "a.txt"}',
    "[helper] Deleted a.txt.",
    "user> process two steps",
    "[helper] calls process(steps=2)",
    "  [stdout] step 0",
    '[helper] process ~> {"status": "running", "percent": 50}',
    "  [stdout] step 1",
    '[helper] process ~> {"status": "running", "percent": 100}',
    '[helper] process -> {"status": "done", "marker": "from-replay-env"}',
    "[helper] Processing finished.",
]


def test_run_replays_the_scripted_conversation(agent_dir: Path) -> None:
    result = agent_cli("run", str(agent_dir), cwd=agent_dir.parent)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == EXPECTED_CONVERSATION
    line = one_error_line(result)  # the one notice: a replay, not a live model
    assert line.startswith("agent-core: replaying") and "ScriptedModel" in line


def test_run_json_prints_events(agent_dir: Path) -> None:
    result = agent_cli("run", str(agent_dir), "--json", cwd=agent_dir.parent)
    assert result.returncode == 0, result.stderr
    events = [Event.from_json(line) for line in result.stdout.splitlines()]
    assert {e.author for e in events} == {"helper"}
    texts = [e.content.text for e in events if e.content is not None and e.is_final_response()]
    assert "Yes, 4 is even." in texts and "Processing finished." in texts
    assert any(e.progress is not None and e.progress.chunk == "step 1" for e in events)
    requests = [
        c for e in events for c in e.get_function_calls() if c.name == "request_confirmation"
    ]
    assert len(requests) == 1


def test_run_reads_user_turns_from_stdin(agent_dir: Path) -> None:
    result = agent_cli(
        "run", str(agent_dir), cwd=agent_dir.parent, stdin="is 4 even?\ndelete a.txt\nn\n"
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    assert out[:8] == [*EXPECTED_CONVERSATION[:7], "user> [declines]"]
    assert "[helper] delete_file -> ! tool.rejected: the user declined to run 'delete_file'" in out


def test_run_stdin_json_prompt(agent_dir: Path) -> None:
    stdin = 'is 4 even?\ndelete a.txt\n{"confirm": true}\n'
    result = agent_cli("run", str(agent_dir), cwd=agent_dir.parent, stdin=stdin)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == EXPECTED_CONVERSATION[:10]


def test_run_session_db_continues_the_conversation(agent_dir: Path, tmp_path: Path) -> None:
    script = tmp_path / "count.json"
    script.write_text(
        json.dumps({"prompts": ["count me"], "turns": [call_turn("count_visit", {}), "Counted."]})
    )
    db = str(tmp_path / "sessions.db")
    base = ["run", str(agent_dir), "--replay", str(script), "--session-db", db]
    first = agent_cli(*base, "--session", "s1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert '[helper] count_visit -> {"result": 1}' in first.stdout.splitlines()
    again = agent_cli(*base, "--session", "s1", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert '[helper] count_visit -> {"result": 2}' in again.stdout.splitlines()
    assert "continuing session s1" in again.stderr
    other = agent_cli(*base, "--session", "s2", cwd=tmp_path)
    assert '[helper] count_visit -> {"result": 1}' in other.stdout.splitlines()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_run_session_db_takes_a_url(
    backend: str, agent_dir: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    script = tmp_path / "count.json"
    script.write_text(
        json.dumps({"prompts": ["count me"], "turns": [call_turn("count_visit", {}), "Counted."]})
    )
    url = (
        f"sqlite:///{tmp_path / 'sessions.db'}"
        if backend == "sqlite"
        else request.getfixturevalue("postgres_dsn")
    )
    base = ["run", str(agent_dir), "--replay", str(script), "--session-db", url]
    for visit in (1, 2):
        result = agent_cli(*base, "--session", "s1", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert f'[helper] count_visit -> {{"result": {visit}}}' in result.stdout.splitlines()
    if backend == "sqlite":
        assert (tmp_path / "sessions.db").is_file()


def test_run_session_db_with_an_unknown_scheme_is_one_error_line(
    agent_dir: Path, tmp_path: Path
) -> None:
    result = agent_cli("run", str(agent_dir), "--session-db", "mongodb://x/y", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("agent-core: cannot open session database mongodb://x/y: unknown")


def test_run_session_db_resumes_a_pending_confirmation(agent_dir: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "sessions.db")
    base = ["run", str(agent_dir), "--session-db", db, "--session", "s1"]
    first = agent_cli(*base, cwd=tmp_path, stdin="is 4 even?\ndelete a.txt\n")
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[-1].startswith("[helper] asks to confirm delete_file")
    assert "waiting for the user (delete_file)" in first.stderr
    # A new process: the script starts again, so skip to the turn after the confirmation.
    script = tmp_path / "after.json"
    script.write_text(json.dumps({"prompts": [], "turns": ["Deleted a.txt."]}))
    second = agent_cli(*base, "--replay", str(script), cwd=tmp_path, stdin="y\n")
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines() == [
        "user> [confirms]",
        '[helper] delete_file -> {"deleted": "a.txt"}',
        "[helper] Deleted a.txt.",
    ]


def test_run_script_that_runs_out_is_an_error(agent_dir: Path, tmp_path: Path) -> None:
    script = tmp_path / "short.json"
    script.write_text(json.dumps({"prompts": ["one", "two"], "turns": ["First answer."]}))
    result = agent_cli("run", str(agent_dir), "--replay", str(script), cwd=tmp_path)
    assert result.returncode == 1
    out = result.stdout.splitlines()
    assert out[:3] == ["user> one", "[helper] First answer.", "user> two"]
    assert out[3].startswith("! model.failed: ScriptExhausted")
    assert "Traceback" not in result.stderr


def test_run_without_key_or_replay_is_one_line(agent_dir: Path) -> None:
    (agent_dir / "replay.json").unlink()
    result = agent_cli("run", str(agent_dir), cwd=agent_dir.parent)
    assert result.returncode == 2
    assert one_error_line(result) == (
        "agent-core: no API key and no replay file: set GOOGLE_API_KEY or pass --replay FILE"
    )
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        ("missing", "not a directory"),
        ("empty", "has no agent.py"),
        ("no_root", "defines no root_agent"),
        ("wrong_root", "not an agent_core.Agent"),
        ("import_error", "ModuleNotFoundError: No module named 'no_such_dependency'"),
        ("syntax_error", "SyntaxError"),
        ("bad_replay", "invalid replay file"),
        ("missing_replay", "replay file not found"),
    ],
)
def test_run_bad_folders_are_one_line(tmp_path: Path, setup: str, expected: str) -> None:
    folder = tmp_path / "app"
    args: list[str] = []
    if setup != "missing":
        folder.mkdir()
    (tmp_path / "replay.json").write_text(json.dumps({"prompts": ["hi"], "turns": ["Hello."]}))
    sources = {
        "no_root": "x = 1\n",
        "wrong_root": "root_agent = 'not an agent'\n",
        "import_error": "import no_such_dependency\n",
        "syntax_error": "def broken(:\n",
        "bad_replay": textwrap.dedent(AGENT),
        "missing_replay": textwrap.dedent(AGENT),
    }
    if setup in sources:
        (folder / "agent.py").write_text(sources[setup])
    replay = tmp_path / "replay.json"
    if setup == "bad_replay":
        replay.write_text('{"prompts": [], "turns": ')
    if setup == "missing_replay":
        replay = tmp_path / "nowhere.json"
    args = ["--replay", str(replay)]
    result = agent_cli("run", str(folder), *args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert expected in one_error_line(result)
    assert result.stdout == ""


def test_run_usage_error_is_one_line(tmp_path: Path) -> None:
    result = agent_cli("run", cwd=tmp_path)
    assert result.returncode == 2
    assert "AGENT_DIR" in one_error_line(result)


def test_run_folder_with_relative_imports(tmp_path: Path) -> None:
    folder = tmp_path / "relative_app"
    folder.mkdir()
    (folder / "helpers.py").write_text(
        'def shout(text: str) -> str:\n    """Say it loudly."""\n    return text.upper()\n'
    )
    (folder / "agent.py").write_text(
        "from agent_core import Agent\n"
        "from .helpers import shout\n"
        "root_agent = Agent('shouter', 'gemini-2.0-flash', tools=[shout])\n"
    )
    (folder / "replay.json").write_text(
        json.dumps({"prompts": ["hi"], "turns": [call_turn("shout", {"text": "hi"}), "Done."]})
    )
    result = agent_cli("run", str(folder), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert '[shouter] shout -> {"result": "HI"}' in result.stdout.splitlines()


# -- the README's main command ---------------------------------------------------------------


FUNCTION_TOOLS = ROOT / "examples" / "function_tools"


@pytest.mark.skipif(not (FUNCTION_TOOLS / "agent.py").is_file(), reason="example not present")
def test_function_tools_example_runs_offline() -> None:
    with open(os.devnull) as devnull:
        environment = {k: v for k, v in os.environ.items() if k not in KEYS}
        environment["PYTHONPATH"] = str(ROOT)
        result = subprocess.run(
            [sys.executable, "-m", "agent_core.cli", "run", "examples/function_tools"],
            stdin=devnull,
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=environment,
            timeout=120,
        )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    prompts = json.loads((FUNCTION_TOOLS / "replay.json").read_text())["prompts"]
    assert len(prompts) == 3
    blocks: list[list[str]] = []
    for line in result.stdout.splitlines():
        if line.startswith("user> "):
            blocks.append([])
        elif blocks:
            blocks[-1].append(line)
    assert len(blocks) == 3
    for block in blocks:
        answers = [
            line
            for line in block
            if line.startswith("[") and " calls " not in line and " -> " not in line
        ]
        assert answers, block
        assert not any(line.startswith("! ") for line in block)


def test_session_db_keeps_artifacts_across_runs(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    versions = []
    for _ in range(2):
        result = agent_cli(
            "run",
            str(ROOT / "examples" / "document_analysis"),
            "--session-db",
            str(db),
            "--session",
            "s1",
            cwd=tmp_path,
        )
        assert result.returncode == 0, result.stderr
        versions += [
            json.loads(line.split("-> ", 1)[1])["version"]
            for line in result.stdout.splitlines()
            if "analyze_document -> " in line
        ]
    # The second run saves new versions after the first run's, in the same database.
    assert versions == [0, 1, 2, 3]
